//! The blocking pool behind `spawn_blocking`: every closure that finds no thread free gets a
//! thread of its own (up to `max_blocking_threads`), so closures that wait for each other
//! never deadlock below the bound; and durations too large for `Instant` mean "no deadline".
//!
//! Every scenario runs under a watchdog: a deadlock or a hang becomes a test failure.

mod common;

use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

use spinpark_executor::{Builder, Runtime};

/// Generous: these scenarios take milliseconds when they work.
const WATCHDOG: Duration = Duration::from_secs(30);

fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    common::within(WATCHDOG, what, f)
}

/// Runs `n` closures one after the other (each waits for the last) so that `n` pool threads
/// exist and sit idle afterwards.
fn warm_up(rt: &Runtime, n: usize) {
    let barrier = Arc::new(Barrier::new(n + 1));
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let b = barrier.clone();
            rt.spawn_blocking(move || {
                b.wait();
            })
        })
        .collect();
    barrier.wait();
    for t in tasks {
        rt.block_on(t).unwrap();
    }
}

#[test]
fn two_closures_that_wait_for_each_other_both_finish_with_one_idle_thread() {
    within("recv/send pair", || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        for round in 0..50 {
            // One pool thread, idle: both closures used to see it, both only notified it,
            // and no second thread started.
            warm_up(&rt, 1);
            let (tx, rx) = mpsc::channel::<u32>();
            let recv = rt.spawn_blocking(move || rx.recv().unwrap());
            let send = rt.spawn_blocking(move || tx.send(round).unwrap());
            rt.block_on(send).unwrap();
            assert_eq!(rt.block_on(recv).unwrap(), round);
        }
    });
}

#[test]
fn closures_that_find_every_thread_busy_start_threads_up_to_the_bound() {
    within("16 closures meeting at a barrier", || {
        let rt = Builder::new()
            .worker_threads(2)
            .max_blocking_threads(16)
            .build()
            .unwrap();
        warm_up(&rt, 4);
        // All 16 must run at once to pass the barrier: 4 idle threads plus 12 new ones.
        let barrier = Arc::new(Barrier::new(16));
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let b = barrier.clone();
                rt.spawn_blocking(move || {
                    b.wait();
                    i
                })
            })
            .collect();
        let sum: usize = tasks.into_iter().map(|t| rt.block_on(t).unwrap()).sum();
        assert_eq!(sum, (0..16).sum());
        assert!(rt.handle().blocking_threads() <= 16);
    });
}

#[test]
fn closures_past_the_bound_wait_for_a_thread_and_all_run() {
    within("bounded pool", || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(2)
            .build()
            .unwrap();
        let tasks: Vec<_> = (0..50)
            .map(|i| {
                rt.spawn_blocking(move || {
                    std::thread::sleep(Duration::from_micros(200));
                    i
                })
            })
            .collect();
        let sum: usize = tasks.into_iter().map(|t| rt.block_on(t).unwrap()).sum();
        assert_eq!(sum, (0..50).sum());
        assert!(rt.handle().blocking_threads() <= 2);
    });
}

#[test]
fn keep_alive_of_duration_max_means_threads_never_time_out() {
    within("keep_alive(Duration::MAX)", || {
        let rt = Builder::new()
            .worker_threads(1)
            .thread_keep_alive(Duration::MAX)
            .build()
            .unwrap();
        for i in 0..3 {
            assert_eq!(rt.block_on(rt.spawn_blocking(move || i)).unwrap(), i);
        }
        assert!(rt.handle().blocking_threads() >= 1);
        // Dropping the runtime wakes the idle threads, which exit.
        drop(rt);
    });
}

#[test]
fn shutdown_timeout_of_duration_max_means_no_deadline() {
    within("shutdown_timeout(Duration::MAX)", || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let (tx, rx) = mpsc::channel();
        let (started_tx, started) = mpsc::channel();
        rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            tx.send(()).unwrap();
        });
        // A closure still queued at shutdown is cancelled (as in tokio): wait until it runs.
        started.recv().unwrap();
        rt.shutdown_timeout(Duration::MAX);
        // "No deadline": the running closure was waited for.
        rx.try_recv()
            .expect("shutdown_timeout(MAX) waits for running closures");
    });
}

#[test]
fn block_in_place_leaves_the_blocking_bound_to_spawn_blocking() {
    within("max_blocking_threads(1) after block_in_place", || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        // The pool thread that takes the worker's place keeps it (it runs the worker loop)
        // until shutdown; the one blocking slot must stay free for closures. The task blocks
        // in place until a task queued on its worker has run, which only the thread that took
        // the place over can do: so the hand-off did happen.
        rt.block_on(rt.spawn(async {
            let (tx, rx) = mpsc::channel();
            spinpark_executor::spawn(async move { tx.send(()).unwrap() });
            spinpark_executor::block_in_place(|| rx.recv().unwrap());
        }))
        .unwrap();
        for _ in 0..3 {
            assert_eq!(rt.block_on(rt.spawn_blocking(|| 7)).unwrap(), 7);
        }
    });
}

#[test]
fn every_worker_carried_by_the_pool_still_leaves_the_whole_bound() {
    within("two carried workers, two blocking slots", || {
        let rt = Builder::new()
            .worker_threads(2)
            .max_blocking_threads(2)
            .build()
            .unwrap();
        // Both workers hand their places to pool threads (each task blocks in place until
        // both have, so neither can run the other's).
        let both = Arc::new(Barrier::new(2));
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                let both = both.clone();
                rt.spawn(async move {
                    spinpark_executor::block_in_place(move || {
                        both.wait();
                    });
                })
            })
            .collect();
        for t in tasks {
            rt.block_on(t).unwrap();
        }
        // Two closures that wait for each other need both blocking slots at once.
        let pair = Arc::new(Barrier::new(2));
        let closures: Vec<_> = (0..2)
            .map(|i| {
                let pair = pair.clone();
                rt.spawn_blocking(move || {
                    pair.wait();
                    i
                })
            })
            .collect();
        let got: Vec<_> = closures
            .into_iter()
            .map(|c| rt.block_on(c).unwrap())
            .collect();
        assert_eq!(got, [0, 1]);
    });
}

#[test]
fn a_closure_queued_just_before_shutdown_timeout_still_runs() {
    within("spawn_blocking then shutdown_timeout", || {
        // As tokio: the thread started for the closure runs it, even if the shutdown comes
        // before that thread has looked at the queue. Many rounds, since that is a race.
        for round in 0..200 {
            let rt = common::rt(1);
            let (tx, rx) = mpsc::channel();
            let handle = rt.spawn_blocking(move || {
                std::thread::sleep(Duration::from_millis(1));
                tx.send(round).unwrap();
                round
            });
            rt.shutdown_timeout(Duration::from_secs(20));
            assert_eq!(
                rx.try_recv(),
                Ok(round),
                "round {round}: the closure did not run"
            );
            let out = futures_util::FutureExt::now_or_never(handle).expect("finished");
            assert_eq!(out.unwrap(), round);
        }
    });
}

#[test]
fn closures_queued_past_the_bound_run_before_the_busy_thread_exits() {
    within("queued past the bound at shutdown", || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let busy = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        started_rx.recv().unwrap();
        // Past the bound: waits for the busy thread, which runs it before it exits.
        let queued = rt.spawn_blocking(|| 5);
        release_tx.send(()).unwrap();
        rt.shutdown_timeout(Duration::from_secs(20));
        assert!(futures_util::FutureExt::now_or_never(busy).unwrap().is_ok());
        assert_eq!(
            futures_util::FutureExt::now_or_never(queued)
                .unwrap()
                .unwrap(),
            5
        );
    });
}
