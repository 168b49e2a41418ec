//! `block_in_place`: blocking code on a worker hands the worker's tasks to another thread, so
//! the runtime keeps running them; it refuses on a current-thread runtime, as tokio's does,
//! and leaves a runtime that shuts down, or runs under load, in order.
//!
//! Every scenario runs under a watchdog: a deadlock becomes a test failure.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use spinpark_executor::{block_in_place, spawn, yield_now, Builder, Handle};

const WATCHDOG: Duration = Duration::from_secs(60);

fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    common::within(WATCHDOG, what, f)
}

#[test]
fn the_only_worker_blocks_in_place_while_another_task_feeds_it() {
    within("one worker", || {
        let rt = common::rt(1);
        for round in 0..50 {
            let got = rt
                .block_on(rt.spawn(async move {
                    let (tx, rx) = mpsc::channel();
                    // Queued on this worker; runs only if another thread takes the worker over.
                    spawn(async move { tx.send(round).unwrap() });
                    block_in_place(|| rx.recv().unwrap())
                }))
                .unwrap();
            assert_eq!(got, round);
        }
    });
}

#[test]
fn the_task_goes_on_after_block_in_place_and_every_task_still_runs() {
    within("go on", || {
        let rt = common::rt(2);
        let done = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let done = done.clone();
                rt.spawn(async move {
                    let borrowed = [i; 8];
                    let sum: usize = block_in_place(|| {
                        std::thread::sleep(Duration::from_micros(200));
                        borrowed.iter().sum()
                    });
                    yield_now().await;
                    // Nested: the second call finds no place to hand on and just runs.
                    let again = block_in_place(|| block_in_place(|| sum + 1));
                    done.fetch_add(1, SeqCst);
                    again
                })
            })
            .collect();
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(rt.block_on(t).unwrap(), i * 8 + 1);
        }
        assert_eq!(done.load(SeqCst), 64);
    });
}

#[test]
fn block_on_works_inside_block_in_place() {
    within("block_on inside", || {
        let rt = common::rt(2);
        let v = rt
            .block_on(rt.spawn(async {
                let parent = spinpark_executor::task::id();
                block_in_place(|| {
                    Handle::current().block_on(async move {
                        let child = spawn(async { spinpark_executor::task::id() })
                            .await
                            .unwrap();
                        assert_ne!(child, parent);
                        assert_eq!(spinpark_executor::task::id(), parent);
                        7
                    })
                })
            }))
            .unwrap();
        assert_eq!(v, 7);
    });
}

#[test]
fn outside_a_worker_the_closure_just_runs() {
    assert_eq!(block_in_place(|| 1), 1); // no runtime
    within("off workers", || {
        let rt = common::rt(2);
        assert_eq!(rt.block_on(async { block_in_place(|| 2) }), 2);
        let on_pool = rt.block_on(rt.spawn_blocking(|| block_in_place(|| 3)));
        assert_eq!(on_pool.unwrap(), 3);
    });
}

#[test]
fn a_current_thread_runtime_refuses_and_stays_usable() {
    within("current-thread", || {
        let rt = Builder::new_current_thread().build().unwrap();
        let err = rt
            .block_on(rt.spawn(async { block_in_place(|| 1) }))
            .unwrap_err();
        assert!(common::panic_text(err).contains("current-thread"));
        assert_eq!(rt.block_on(rt.spawn(async { 5 })).unwrap(), 5);
    });
}

#[test]
fn shutdown_while_a_worker_place_runs_on_another_thread() {
    within("shutdown after a handoff", || {
        for _ in 0..20 {
            let rt = common::rt(2);
            let (blocked_tx, blocked_rx) = mpsc::channel();
            let (release_tx, release_rx) = mpsc::channel::<()>();
            let waiting = rt.spawn(std::future::pending::<()>());
            rt.spawn(async move {
                block_in_place(|| {
                    blocked_tx.send(()).unwrap();
                    let _ = release_rx.recv();
                });
            });
            blocked_rx.recv().unwrap();
            // Some work for the place that moved.
            for _ in 0..16 {
                rt.spawn(async { yield_now().await });
            }
            let releaser = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(5));
                drop(release_tx);
            });
            drop(rt);
            releaser.join().unwrap();
            use futures_util::FutureExt;
            assert!(waiting.now_or_never().unwrap().unwrap_err().is_cancelled());
        }
    });
}

#[test]
fn many_tasks_blocking_in_place_under_load() {
    within("load", || {
        let rt = Builder::new()
            .worker_threads(2)
            .max_blocking_threads(64)
            .build()
            .unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        rt.block_on(async {
            let tasks: Vec<_> = (0..400)
                .map(|i| {
                    let count = count.clone();
                    spawn(async move {
                        if i % 3 == 0 {
                            block_in_place(|| std::thread::sleep(Duration::from_micros(100)));
                        }
                        for _ in 0..3 {
                            yield_now().await;
                        }
                        count.fetch_add(1, SeqCst);
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        });
        assert_eq!(count.load(SeqCst), 400);
        assert!(rt.handle().blocking_threads() <= 64);
    });
}
