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
        // The blocking bound, plus at most one thread per worker carrying its place (as
        // tokio's pool: max_blocking_threads plus the workers).
        assert!(rt.handle().blocking_threads() <= 64 + 2);
    });
}

#[test]
fn blocking_code_may_block_on_futures_that_yield_or_spend_a_budget() {
    within("block_on inside block_in_place", || {
        let rt = common::rt(1);
        let spent = rt
            .block_on(rt.spawn(async {
                // Yields and spent budgets inside `f` wake at once: nobody would run the
                // worker's deferred list while `f` blocks this thread.
                block_in_place(|| Handle::current().block_on(yield_now()));
                // The budget is off inside `f`, as in tokio: twice the task's budget of
                // operations and not one yield.
                block_in_place(|| {
                    Handle::current().block_on(async {
                        let mut ready = 0;
                        for _ in 0..spinpark_executor::coop::BUDGET * 2 {
                            std::future::poll_fn(|cx| match spinpark_executor::coop::poll_proceed(
                                cx,
                            ) {
                                std::task::Poll::Ready(unit) => {
                                    unit.made_progress();
                                    std::task::Poll::Ready(())
                                }
                                std::task::Poll::Pending => std::task::Poll::Pending,
                            })
                            .await;
                            ready += 1;
                        }
                        ready
                    })
                })
            }))
            .unwrap();
        assert_eq!(spent, spinpark_executor::coop::BUDGET * 2);
    });
}

#[test]
fn tasks_that_yielded_are_woken_before_blocking_code_runs() {
    within("deferred wake-ups and block_in_place", || {
        struct Flag(std::sync::atomic::AtomicBool);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, SeqCst);
            }
        }
        let rt = common::rt(1);
        let woken = Arc::new(Flag(std::sync::atomic::AtomicBool::new(false)));
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let task = {
            let woken = woken.clone();
            rt.spawn(async move {
                // A yield polled inside this task's poll: its wake-up waits in the worker's
                // deferred list for the worker's next reactor turn...
                let mut y = Box::pin(yield_now());
                let waker = std::task::Waker::from(woken);
                let cx = &mut std::task::Context::from_waker(&waker);
                assert!(std::future::Future::poll(y.as_mut(), cx).is_pending());
                // ...which must not wait for blocking code that may run for long.
                block_in_place(move || {
                    started_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                });
            })
        };
        started_rx.recv().unwrap();
        let woken_while_blocking = woken.0.load(SeqCst);
        release_tx.send(()).unwrap();
        rt.block_on(task).unwrap();
        assert!(
            woken_while_blocking,
            "the yield waited for the blocking code to end"
        );
    });
}
