//! `JoinSet`: results in completion order, panics and aborts as `JoinError`s,
//! `abort_all` / `detach_all` / `shutdown` / drop, cancel safety under `select!`, and many tasks.
//!
//! Every scenario runs under a watchdog, as in `faults.rs`: a hang becomes a test failure.
//! No assertion depends on timing: the tasks wait on channels the test releases.

mod common;
use common::{panic_text, rt, PanicOnDrop};

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use futures_util::FutureExt;
use spinpark_executor::{yield_now, JoinSet, Runtime};
use tokio::sync::{oneshot, Semaphore};

/// Generous: these scenarios take milliseconds when they work.
const WATCHDOG: Duration = Duration::from_secs(60);

/// [`common::within`] with this file's [`WATCHDOG`].
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    common::within(WATCHDOG, what, f)
}

/// Counts its drops: a task holding one has had its future dropped once the count goes up.
struct DropGuard(Arc<AtomicUsize>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// Blocks the only worker of `rt` (a task stuck in a blocking `recv`) until the returned
/// sender sends or is dropped, so tasks spawned meanwhile stay queued, never polled.
fn block_the_worker(rt: &Runtime) -> mpsc::Sender<()> {
    assert_eq!(rt.handle().worker_threads(), 1);
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel();
    drop(rt.spawn(async move {
        started_tx.send(()).unwrap();
        let _ = release_rx.recv();
    }));
    started_rx.recv().unwrap();
    release_tx
}

#[test]
fn results_come_in_completion_order_not_spawn_order() {
    within("completion order", || {
        let rt = rt(2);
        rt.block_on(async {
            let mut set = JoinSet::new();
            let mut release = Vec::new();
            for i in 0..5 {
                let (tx, rx) = oneshot::channel::<()>();
                release.push(Some(tx));
                set.spawn(async move {
                    rx.await.unwrap();
                    i
                });
            }
            // Each task finishes only when released; joining in spawn order would wait on
            // task 0 forever.
            for i in [3, 0, 4, 1, 2] {
                release[i].take().unwrap().send(()).unwrap();
                assert_eq!(set.join_next().await.unwrap().unwrap(), i);
                assert_eq!(set.len(), release.iter().filter(|r| r.is_some()).count());
            }
            assert!(set.join_next().await.is_none());
        });
    });
}

#[test]
fn join_next_on_an_empty_set_is_none() {
    within("empty", || {
        let rt = rt(1);
        rt.block_on(async {
            let mut set = JoinSet::<u32>::new();
            assert!(set.join_next().await.is_none());
            assert!(set.try_join_next().is_none());
            set.spawn(async { 1 });
            assert_eq!(set.len(), 1);
            assert_eq!(set.join_next().await.unwrap().unwrap(), 1);
            assert!(set.is_empty());
            assert!(set.join_next().await.is_none());
            assert!(set.join_next().await.is_none());
            // The set is reusable once empty.
            set.spawn(async { 2 });
            assert_eq!(set.join_next().await.unwrap().unwrap(), 2);
            assert!(set.join_next().await.is_none());
        });
    });
}

#[test]
fn a_panicking_task_reaches_join_next_as_a_panic_and_the_others_still_report() {
    within("panic", || {
        let rt = rt(2);
        rt.block_on(async {
            let mut set = JoinSet::new();
            for i in 0..10u32 {
                set.spawn(async move {
                    if i == 4 {
                        panic!("task four failed");
                    }
                    i
                });
            }
            let (mut ok, mut panics) = (Vec::new(), Vec::new());
            while let Some(res) = set.join_next().await {
                match res {
                    Ok(v) => ok.push(v),
                    Err(e) => panics.push(panic_text(e)),
                }
            }
            ok.sort();
            assert_eq!(ok, [0, 1, 2, 3, 5, 6, 7, 8, 9]);
            assert_eq!(panics, ["task four failed"]);
        });
    });
}

#[test]
fn a_panicking_destructor_of_an_aborted_task_reaches_join_next() {
    within("panicking drop on abort", || {
        let rt = rt(2);
        rt.block_on(async {
            let mut set = JoinSet::new();
            let (polled_tx, polled_rx) = oneshot::channel();
            set.spawn(async move {
                let _guard = PanicOnDrop("boom on abort_all");
                polled_tx.send(()).unwrap();
                std::future::pending::<()>().await;
            });
            polled_rx.await.unwrap();
            set.abort_all();
            let err = set.join_next().await.unwrap().unwrap_err();
            assert_eq!(panic_text(err), "boom on abort_all");
        });
    });
}

#[test]
fn abort_all_cancels_unfinished_tasks_and_finished_ones_keep_their_output() {
    within("abort_all", || {
        let rt = rt(2);
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = dropped.clone();
        rt.block_on(async move {
            let mut set = JoinSet::new();
            let (done_tx, done_rx) = mpsc::channel();
            for i in 0..3u32 {
                let done_tx = done_tx.clone();
                // Returns in its first poll, right after saying so: once the message is in,
                // the task is past its last abort check and finishes with its output.
                set.spawn(async move {
                    done_tx.send(()).unwrap();
                    Some(i)
                });
            }
            let mut polled = Vec::new();
            for _ in 0..4 {
                let guard = DropGuard(d.clone());
                let (tx, rx) = oneshot::channel();
                polled.push(rx);
                set.spawn(async move {
                    let _guard = guard;
                    tx.send(()).unwrap();
                    std::future::pending::<Option<u32>>().await
                });
            }
            for _ in 0..3 {
                done_rx.recv().unwrap();
            }
            for rx in polled {
                rx.await.unwrap();
            }
            set.abort_all();
            assert_eq!(set.len(), 7, "abort_all leaves the tasks in the set");
            let (mut outputs, mut cancelled) = (Vec::new(), 0);
            while let Some(res) = set.join_next().await {
                match res {
                    Ok(v) => outputs.push(v.unwrap()),
                    Err(e) => {
                        assert!(e.is_cancelled(), "{e:?}");
                        cancelled += 1;
                    }
                }
            }
            outputs.sort();
            assert_eq!(outputs, [0, 1, 2]);
            assert_eq!(cancelled, 4);
        });
        assert_eq!(dropped.load(SeqCst), 4);
    });
}

#[test]
fn abort_all_reaches_tasks_not_polled_yet() {
    within("abort_all unpolled", || {
        let rt = rt(1);
        let release = block_the_worker(&rt);
        let ran = Arc::new(AtomicBool::new(false));
        let mut set = JoinSet::new();
        for _ in 0..5 {
            let ran = ran.clone();
            set.spawn_on(async move { ran.store(true, SeqCst) }, rt.handle());
        }
        set.abort_all();
        drop(release);
        rt.block_on(async {
            let mut cancelled = 0;
            while let Some(res) = set.join_next().await {
                assert!(res.unwrap_err().is_cancelled());
                cancelled += 1;
            }
            assert_eq!(cancelled, 5);
        });
        assert!(
            !ran.load(SeqCst),
            "an aborted task that had not started never runs"
        );
    });
}

#[test]
fn dropping_the_set_aborts_its_tasks() {
    within("drop", || {
        let rt = rt(2);
        let dropped = Arc::new(AtomicUsize::new(0));
        let (polled_tx, polled_rx) = mpsc::channel();
        let mut set = JoinSet::new();
        for _ in 0..8 {
            let guard = DropGuard(dropped.clone());
            let polled_tx = polled_tx.clone();
            set.spawn_on(
                async move {
                    let _guard = guard;
                    polled_tx.send(()).unwrap();
                    std::future::pending::<()>().await;
                },
                rt.handle(),
            );
        }
        for _ in 0..8 {
            polled_rx.recv().unwrap();
        }
        drop(set);
        // Each aborted task drops its future on a worker; wait for all eight (bounded by
        // the watchdog). The runtime is still running, so only the abort can drop them.
        while dropped.load(SeqCst) < 8 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(dropped.load(SeqCst), 8);
        drop(rt);
    });
}

#[test]
fn dropping_the_set_aborts_tasks_not_polled_yet() {
    within("drop unpolled", || {
        let rt = rt(1);
        let release = block_the_worker(&rt);
        let ran = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        for _ in 0..5 {
            let (ran, guard) = (ran.clone(), DropGuard(dropped.clone()));
            set.spawn_on(
                async move {
                    let _guard = guard;
                    ran.store(true, SeqCst)
                },
                rt.handle(),
            );
        }
        drop(set);
        drop(release);
        while dropped.load(SeqCst) < 5 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(
            !ran.load(SeqCst),
            "an aborted task that had not started never runs"
        );
    });
}

#[test]
fn detach_all_lets_the_tasks_run_to_completion() {
    within("detach_all", || {
        let rt = rt(2);
        let (out_tx, out_rx) = mpsc::channel();
        let mut release = Vec::new();
        let mut set = JoinSet::new();
        for i in 0..6u32 {
            let (tx, rx) = oneshot::channel::<()>();
            release.push(tx);
            let out_tx = out_tx.clone();
            set.spawn_on(
                async move {
                    rx.await.unwrap();
                    out_tx.send(i).unwrap();
                },
                rt.handle(),
            );
        }
        set.detach_all();
        assert!(set.is_empty());
        assert!(set.try_join_next().is_none());
        assert!(rt.block_on(set.join_next()).is_none());
        drop(set); // must not abort the detached tasks
        for tx in release {
            tx.send(()).unwrap();
        }
        let mut got: Vec<u32> = (0..6).map(|_| out_rx.recv().unwrap()).collect();
        got.sort();
        assert_eq!(got, [0, 1, 2, 3, 4, 5]);
    });
}

#[test]
fn shutdown_aborts_and_waits_for_every_task() {
    within("shutdown", || {
        let rt = rt(2);
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = dropped.clone();
        rt.block_on(async move {
            let mut set = JoinSet::new();
            for i in 0..50 {
                let guard = SlowDropGuard {
                    _counted: DropGuard(d.clone()),
                };
                set.spawn(async move {
                    let _guard = guard;
                    if i % 2 == 0 {
                        std::future::pending::<()>().await;
                    }
                });
            }
            set.shutdown().await;
            assert!(set.is_empty());
            // Every task has ended and dropped its future (slowly): none is still running.
            assert_eq!(d.load(SeqCst), 50);
            assert!(set.join_next().await.is_none());
        });
    });
}

/// A [`DropGuard`] that takes a while to drop, so a `shutdown` that returned before the tasks
/// had ended would be caught.
struct SlowDropGuard {
    /// Dropped (counted) after the wait.
    _counted: DropGuard,
}

impl Drop for SlowDropGuard {
    fn drop(&mut self) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The tasks of the `select!` tests: each waits for a permit of `gate`, which only the other
/// branch hands out, so `join_next` is often polled (and registers) while nothing is ready,
/// then dropped when the other branch wins.
const SELECT_TASKS: u64 = 500;

fn select_tasks(set: &mut JoinSet<u64>, gate: &Arc<Semaphore>) {
    for i in 0..SELECT_TASKS {
        let gate = gate.clone();
        set.spawn(async move {
            gate.acquire().await.unwrap().forget();
            i
        });
    }
}

/// The other branch: ready at its second poll (it yields once), then lets one more task
/// finish. While that task finishes, the losing `join_next` may already have been woken for
/// it: its result must still come out of a later `join_next`.
async fn other_branch(fired: &AtomicUsize, gate: &Semaphore) {
    yield_now().await;
    fired.fetch_add(1, SeqCst);
    gate.add_permits(1);
}

#[test]
fn join_next_in_futures_select_loses_no_result() {
    within("futures select", || {
        let rt = rt(2);
        let (sum, count, fired) = rt.block_on(async {
            let (mut set, gate) = (JoinSet::new(), Arc::new(Semaphore::new(0)));
            select_tasks(&mut set, &gate);
            let fired = AtomicUsize::new(0);
            let (mut sum, mut count) = (0, 0);
            for _ in 0..1_000_000 {
                futures_util::select! {
                    res = set.join_next().fuse() => match res {
                        Some(res) => {
                            sum += res.unwrap();
                            count += 1;
                        }
                        None => break,
                    },
                    () = other_branch(&fired, &gate).fuse() => {}
                }
            }
            (sum, count, fired.load(SeqCst))
        });
        assert_eq!(count, SELECT_TASKS);
        assert_eq!(sum, SELECT_TASKS * (SELECT_TASKS - 1) / 2);
        // Each task needed a permit from the other branch.
        assert!(fired >= SELECT_TASKS as usize, "{fired}");
    });
}

#[test]
fn join_next_in_tokio_select_loses_no_result() {
    within("tokio select", || {
        let rt = rt(2);
        let (sum, count, fired) = rt.block_on(async {
            let (mut set, gate) = (JoinSet::new(), Arc::new(Semaphore::new(0)));
            select_tasks(&mut set, &gate);
            let fired = AtomicUsize::new(0);
            let (mut sum, mut count) = (0, 0);
            for _ in 0..1_000_000 {
                tokio::select! {
                    res = set.join_next() => match res {
                        Some(res) => {
                            sum += res.unwrap();
                            count += 1;
                        }
                        None => break,
                    },
                    () = other_branch(&fired, &gate) => {}
                }
            }
            (sum, count, fired.load(SeqCst))
        });
        assert_eq!(count, SELECT_TASKS);
        assert_eq!(sum, SELECT_TASKS * (SELECT_TASKS - 1) / 2);
        assert!(fired >= SELECT_TASKS as usize, "{fired}");
    });
}

#[test]
fn ten_thousand_tasks_are_joined_from_a_task() {
    within("10k", || {
        const N: u64 = 10_000;
        let rt = rt(2);
        let sum = rt.block_on(async {
            // The set lives in a task on a worker, as a server's would.
            spinpark_executor::spawn(async {
                let mut set = JoinSet::new();
                for i in 0..N {
                    set.spawn(async move {
                        for _ in 0..i % 3 {
                            yield_now().await;
                        }
                        i
                    });
                }
                assert_eq!(set.len(), N as usize);
                let mut sum = 0;
                while let Some(res) = set.join_next().await {
                    sum += res.unwrap();
                }
                sum
            })
            .await
            .unwrap()
        });
        assert_eq!(sum, N * (N - 1) / 2);
    });
}

#[test]
fn spawn_blocking_spawn_on_and_join_all() {
    within("spawn_blocking / join_all", || {
        let rt = rt(2);
        let mut set = JoinSet::new();
        set.spawn_blocking_on(|| 1u32, rt.handle());
        set.spawn_on(async { 2 }, rt.handle());
        let mut outputs = rt.block_on(async move {
            set.spawn_blocking(|| 3);
            set.spawn(async { 4 });
            set.extend([async { 5 }]);
            set.join_all().await
        });
        outputs.sort();
        assert_eq!(outputs, [1, 2, 3, 4, 5]);
    });
}

#[test]
fn join_all_resumes_a_task_panic_and_aborts_the_rest() {
    within("join_all panic", || {
        let rt = rt(2);
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = dropped.clone();
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async move {
                let mut set = JoinSet::new();
                let guard = DropGuard(d.clone());
                set.spawn(async move {
                    let _guard = guard;
                    std::future::pending::<()>().await
                });
                set.spawn(async { panic!("join_all saw this") });
                set.join_all().await
            })
        }));
        let payload = res.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"join_all saw this"));
        // The pending task was aborted when the set was dropped by the unwind.
        while dropped.load(SeqCst) < 1 {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

#[test]
fn spawn_outside_a_runtime_panics_with_a_clear_message() {
    let res = std::panic::catch_unwind(|| JoinSet::new().spawn(async {}));
    let payload = res.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_else(|| {
            payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .unwrap_or_default()
        });
    assert!(
        msg.contains("JoinSet::spawn called outside a spinpark runtime"),
        "{msg}"
    );
    let res = std::panic::catch_unwind(|| JoinSet::new().spawn_blocking(|| ()));
    assert!(res.is_err());
}

#[test]
fn a_join_set_is_send_and_sync_when_its_output_is_send() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<JoinSet<u32>>();
    assert_send_sync::<JoinSet<Box<dyn std::any::Any + Send>>>();
}

#[test]
fn spawn_returns_an_abort_handle_for_that_task() {
    within("abort handles", || {
        let rt = rt(2);
        rt.block_on(async {
            let mut set = JoinSet::new();
            let stuck: spinpark_executor::AbortHandle = set.spawn(std::future::pending::<u32>());
            let quick = set.spawn(async { 7 });
            assert!(!stuck.is_finished());
            stuck.abort();
            let mut cancelled = 0;
            let mut outputs = Vec::new();
            while let Some(res) = set.join_next().await {
                match res {
                    Ok(v) => outputs.push(v),
                    Err(e) => {
                        assert!(e.is_cancelled());
                        cancelled += 1;
                    }
                }
            }
            assert_eq!((cancelled, outputs), (1, vec![7]));
            assert!(stuck.is_finished() && quick.is_finished());
            // Aborting a finished task does nothing.
            quick.abort();
        });
    });
}

#[test]
fn a_join_handle_gives_abort_handles_that_outlive_it() {
    within("JoinHandle::abort_handle", || {
        let rt = rt(2);
        rt.block_on(async {
            let handle = spinpark_executor::spawn(std::future::pending::<()>());
            let abort = handle.abort_handle();
            let again = abort.clone();
            // The abort handle works from another task, whoever holds the JoinHandle.
            spinpark_executor::spawn(async move { again.abort() })
                .await
                .unwrap();
            assert!(handle.await.unwrap_err().is_cancelled());
            assert!(abort.is_finished());
        });
    });
}

#[test]
fn join_next_past_the_budget_over_finished_tasks_does_not_spin() {
    // The unit join_next takes must not also be demanded by the handle it polls: with the
    // budget spent on the last unit the entry would wake itself for ever (in a current-thread
    // runtime's block_on, where a wake-up is not deferred).
    async fn join_all() -> usize {
        let mut set = JoinSet::new();
        for i in 0..1000 {
            set.spawn(async move { i });
        }
        // Let them all finish first.
        for _ in 0..10 {
            yield_now().await;
        }
        // An odd budget left, so that some join_next takes the last unit (each result costs
        // one unit when the handle does not charge again, two when it does).
        spinpark_executor::coop::consume_budget().await;
        let mut joined = 0;
        while let Some(r) = set.join_next().await {
            r.unwrap();
            joined += 1;
        }
        joined
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let current = spinpark_executor::Builder::new_current_thread()
            .build()
            .unwrap();
        let _ = tx.send(current.block_on(join_all()));
        let one = spinpark_executor::Builder::new()
            .worker_threads(1)
            .build()
            .unwrap();
        let _ = tx.send(one.block_on(one.spawn(join_all())).unwrap());
    });
    for flavor in ["current-thread block_on", "a task on one worker"] {
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(30)),
            Ok(1000),
            "{flavor}: join_next hung"
        );
    }
}
