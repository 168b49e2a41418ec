//! The current-thread runtime: tasks run on the thread in `block_on`, with the multi-thread
//! runtime's task machinery (spawn, wake, JoinHandle, abort, panics, shutdown).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use spinpark_executor::{
    spawn, spawn_blocking, yield_now, Builder, Handle, Runtime, RuntimeFlavor,
};

/// Bounds a failing (hanging) run; never reached when things work.
const WATCHDOG: Duration = Duration::from_secs(60);

fn current() -> Runtime {
    Builder::new_current_thread().build().unwrap()
}

/// Runs `f` on a thread of its own and fails the test if it does not finish in time.
fn within_watchdog<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung for {WATCHDOG:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: failed (see above)"),
    }
}

/// A future that is ready once `flag` is set by another thread, which wakes it.
struct SetElsewhere {
    flag: Arc<AtomicBool>,
    started: bool,
}

impl Future for SetElsewhere {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.flag.load(SeqCst) {
            return Poll::Ready(());
        }
        if !std::mem::replace(&mut self.started, true) {
            let (flag, waker) = (self.flag.clone(), cx.waker().clone());
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(5));
                flag.store(true, SeqCst);
                waker.wake();
            });
        }
        Poll::Pending
    }
}

fn set_elsewhere() -> SetElsewhere {
    SetElsewhere {
        flag: Arc::new(AtomicBool::new(false)),
        started: false,
    }
}

#[test]
fn tasks_run_on_the_thread_in_block_on() {
    within_watchdog("tasks on the caller", || {
        let rt = current();
        assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
        assert_eq!(rt.handle().worker_threads(), 1);
        let me = thread::current().id();
        let ids = rt.block_on(async {
            let tasks: Vec<_> = (0..50)
                .map(|_| {
                    spawn(async {
                        yield_now().await;
                        // A task spawned from a task, awaited by it.
                        spawn(async { thread::current().id() }).await.unwrap()
                    })
                })
                .collect();
            let mut ids = Vec::new();
            for t in tasks {
                ids.push(t.await.unwrap());
            }
            ids
        });
        assert_eq!(ids.len(), 50);
        assert!(
            ids.iter().all(|id| *id == me),
            "a task ran on another thread"
        );
    });
}

#[test]
fn a_block_on_future_that_keeps_waking_itself_does_not_starve_the_tasks() {
    within_watchdog("main future yielding", || {
        let rt = current();
        rt.block_on(async {
            let count = Arc::new(AtomicUsize::new(0));
            let c = count.clone();
            spawn(async move {
                for _ in 0..100 {
                    c.fetch_add(1, SeqCst);
                    yield_now().await;
                }
            });
            // Only the tasks move the counter: the loop ends only if they run between polls
            // of this future.
            while count.load(SeqCst) < 100 {
                yield_now().await;
            }
        });
    });
}

#[test]
fn the_block_on_future_is_woken_from_another_thread_while_the_thread_parks() {
    within_watchdog("cross-thread wake", || {
        let rt = current();
        for _ in 0..20 {
            rt.block_on(set_elsewhere());
        }
        // A task waiting on another thread, awaited by the block_on future.
        let t = rt.spawn(set_elsewhere());
        rt.block_on(t).unwrap();
    });
}

#[test]
fn tasks_spawned_from_other_threads_run_while_a_thread_is_in_block_on() {
    within_watchdog("remote spawns", || {
        let rt = current();
        let handle = rt.handle().clone();
        let (tx, rx) = oneshot();
        let spawner = thread::spawn(move || {
            thread::sleep(Duration::from_millis(10));
            let tasks: Vec<_> = (0..100u64)
                .map(|i| handle.spawn(async move { i }))
                .collect();
            tx.send(tasks).unwrap();
        });
        let sum = rt.block_on(async move {
            let tasks = rx.await;
            let mut sum = 0;
            for t in tasks {
                sum += t.await.unwrap();
            }
            sum
        });
        spawner.join().unwrap();
        assert_eq!(sum, 4950);
    });
}

#[test]
fn tasks_spawned_outside_block_on_wait_for_a_caller() {
    within_watchdog("no caller, no progress", || {
        let rt = current();
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let task = rt.spawn(async move { r.store(true, SeqCst) });
        // No thread of the runtime exists to run it.
        thread::sleep(Duration::from_millis(20));
        assert!(!ran.load(SeqCst), "a task ran with nobody in block_on");
        assert!(!task.is_finished());
        rt.block_on(task).unwrap();
        assert!(ran.load(SeqCst));
    });
}

#[test]
fn panics_reach_the_join_handle_and_abort_cancels() {
    within_watchdog("panics and aborts", || {
        let rt = current();
        rt.block_on(async {
            let err = spawn(async { panic!("boom in a task") }).await.unwrap_err();
            assert!(err.is_panic());
            assert_eq!(
                err.to_string(),
                format!("task {} panicked with message \"boom in a task\"", err.id())
            );
            let stuck = spawn(std::future::pending::<()>());
            stuck.abort();
            assert!(stuck.await.unwrap_err().is_cancelled());
            // The thread survived both and still runs tasks.
            assert_eq!(spawn(async { 3 }).await.unwrap(), 3);
        });
    });
}

#[test]
fn handle_current_works_in_tasks_and_block_on_inside_a_task_panics() {
    within_watchdog("handle and nested block_on", || {
        let rt = current();
        rt.block_on(async {
            let flavor = spawn(async { Handle::current().runtime_flavor() }).await;
            assert_eq!(flavor.unwrap(), RuntimeFlavor::CurrentThread);
            let nested = spawn(async { Handle::current().block_on(async { 1 }) }).await;
            let err = nested.unwrap_err();
            let msg = err.into_panic();
            let msg = msg.downcast_ref::<&str>().copied().unwrap_or_default();
            assert!(msg.contains("inside a spinpark runtime"), "{msg}");
        });
        // Another runtime's block_on from inside the first one's block_on panics too.
        let other = current();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { other.block_on(async {}) })
        }));
        assert!(r.is_err());
    });
}

#[test]
fn spawn_blocking_runs_off_the_thread() {
    within_watchdog("spawn_blocking", || {
        let rt = current();
        let me = thread::current().id();
        let there = rt.block_on(async {
            spawn(async { spawn_blocking(|| thread::current().id()).await.unwrap() })
                .await
                .unwrap()
        });
        assert_ne!(there, me);
    });
}

#[test]
fn dropping_the_runtime_drops_its_tasks() {
    within_watchdog("shutdown", || {
        struct Flag(Arc<AtomicUsize>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.fetch_add(1, SeqCst);
            }
        }
        let dropped = Arc::new(AtomicUsize::new(0));
        let rt = current();
        // One task that waits forever (polled once), one queued and never polled.
        let (d1, d2) = (dropped.clone(), dropped.clone());
        let waiting = rt.spawn(async move {
            let _f = Flag(d1);
            std::future::pending::<()>().await
        });
        // The task runs (and starts waiting) while the caller is in block_on.
        rt.block_on(yield_now());
        let flag = Flag(d2);
        let queued = rt.spawn(async move {
            let _f = flag;
        });
        drop(rt);
        assert_eq!(dropped.load(SeqCst), 2, "shutdown left a task alive");
        use futures_util::FutureExt;
        assert!(waiting.now_or_never().unwrap().unwrap_err().is_cancelled());
        assert!(queued.now_or_never().unwrap().unwrap_err().is_cancelled());
    });
}

#[test]
fn two_block_on_callers_whose_futures_depend_on_each_other() {
    within_watchdog("two block_on callers", || {
        for _ in 0..20 {
            let rt = Arc::new(current());
            let (a_tx, a_rx) = oneshot::<u32>();
            let (b_tx, b_rx) = oneshot::<u32>();
            let other = rt.clone();
            // B: waits for A's message, has a task (run by whoever drives) double it, answers.
            let b = thread::spawn(move || {
                other.block_on(async move {
                    let n = a_rx.await;
                    let doubled = spawn(async move { n * 2 }).await.unwrap();
                    b_tx.send(doubled).unwrap();
                })
            });
            // A: sends, then waits for B's answer; meanwhile B may hold the seat, or A does.
            let got = rt.block_on(async move {
                yield_now().await;
                a_tx.send(21).unwrap();
                b_rx.await
            });
            assert_eq!(got, 42);
            b.join().unwrap();
        }
    });
}

#[test]
fn a_waiting_caller_takes_over_the_tasks_when_the_driver_leaves() {
    within_watchdog("handover", || {
        let rt = Arc::new(current());
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = oneshot::<()>();
        let other = rt.clone();
        // B enters block_on while A drives, and needs tasks run after A has left.
        let b = thread::spawn(move || {
            started_rx.recv().unwrap();
            other.block_on(async move {
                release_tx.send(()).unwrap();
                let tasks: Vec<_> = (0..10u32)
                    .map(|i| {
                        spawn(async move {
                            yield_now().await;
                            i
                        })
                    })
                    .collect();
                let mut sum = 0;
                for t in tasks {
                    sum += t.await.unwrap();
                }
                sum
            })
        });
        rt.block_on(async move {
            started_tx.send(()).unwrap();
            release_rx.await;
        });
        // A has left; only B is in block_on now, so B must be running its own tasks.
        assert_eq!(b.join().unwrap(), 45);
    });
}

#[cfg(feature = "test-util")]
#[test]
fn start_paused_needs_a_current_thread_runtime() {
    let err = Builder::new().start_paused(true).build().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("current-thread"), "{err}");
}

/// A minimal one-shot channel that works across threads and runtimes (this crate does not
/// depend on tokio).
fn oneshot<T: Send + 'static>() -> (OneTx<T>, OneRx<T>) {
    let shared = Arc::new(std::sync::Mutex::new((None, None::<std::task::Waker>)));
    (OneTx(shared.clone()), OneRx(shared))
}

struct OneTx<T>(Arc<std::sync::Mutex<(Option<T>, Option<std::task::Waker>)>>);
struct OneRx<T>(Arc<std::sync::Mutex<(Option<T>, Option<std::task::Waker>)>>);

impl<T> OneTx<T> {
    fn send(self, v: T) -> Result<(), ()> {
        let waker = {
            let mut s = self.0.lock().unwrap();
            s.0 = Some(v);
            s.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }
}

impl<T> Future for OneRx<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut s = self.0.lock().unwrap();
        match s.0.take() {
            Some(v) => Poll::Ready(v),
            None => {
                s.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Records, when dropped, whether a runtime was current, and spawns cleanup work there.
struct CleanUpOnDrop {
    runtime_current: Arc<AtomicUsize>,
    spawned: Arc<AtomicUsize>,
}

impl Drop for CleanUpOnDrop {
    fn drop(&mut self) {
        if let Ok(h) = Handle::try_current() {
            self.runtime_current.fetch_add(1, SeqCst);
            // A destructor may spawn cleanup work, as on tokio (the runtime is going away, so
            // the task is cancelled, but spawning must not panic).
            drop(h.spawn(async {}));
            self.spawned.fetch_add(1, SeqCst);
        }
    }
}

#[test]
fn tasks_left_at_shutdown_are_dropped_inside_the_runtime() {
    within_watchdog("shutdown context", || {
        let current_seen = Arc::new(AtomicUsize::new(0));
        let spawned = Arc::new(AtomicUsize::new(0));
        let guard = || CleanUpOnDrop {
            runtime_current: current_seen.clone(),
            spawned: spawned.clone(),
        };
        let rt = current();
        // One task that waits (polled once), one queued and never polled.
        let g1 = guard();
        rt.spawn(async move {
            let _g = g1;
            std::future::pending::<()>().await
        });
        rt.block_on(yield_now());
        let g2 = guard();
        rt.spawn(async move {
            let _g = g2;
        });
        drop(rt);
        assert_eq!(
            current_seen.load(SeqCst),
            2,
            "a task was dropped outside the runtime"
        );
        assert_eq!(spawned.load(SeqCst), 2);
    });
}

#[test]
fn tasks_left_at_multi_thread_shutdown_are_dropped_inside_the_runtime() {
    within_watchdog("multi-thread shutdown context", || {
        let current_seen = Arc::new(AtomicUsize::new(0));
        let spawned = Arc::new(AtomicUsize::new(0));
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let (polled_tx, polled_rx) = mpsc::channel();
        for _ in 0..8 {
            let g = CleanUpOnDrop {
                runtime_current: current_seen.clone(),
                spawned: spawned.clone(),
            };
            let polled = polled_tx.clone();
            rt.spawn(async move {
                let _g = g;
                polled.send(()).unwrap();
                std::future::pending::<()>().await
            });
        }
        for _ in 0..8 {
            polled_rx.recv().unwrap();
        }
        drop(rt);
        assert_eq!(
            current_seen.load(SeqCst),
            8,
            "a task was dropped outside the runtime"
        );
        assert_eq!(spawned.load(SeqCst), 8);
    });
}

/// Records the order in which tasks ran.
#[derive(Clone, Default)]
struct Order(Arc<std::sync::Mutex<Vec<usize>>>);

impl Order {
    fn push(&self, i: usize) {
        self.0.lock().unwrap().push(i);
    }

    fn take(&self) -> Vec<usize> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

#[test]
fn tasks_spawned_from_block_on_run_in_spawn_order() {
    let rt = current();
    let order = Order::default();
    rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let order = order.clone();
                spawn(async move { order.push(i) })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(order.take(), (0..8).collect::<Vec<_>>());
}

#[test]
fn tasks_spawned_from_a_task_run_in_spawn_order() {
    let rt = current();
    let order = Order::default();
    let tasks = rt.block_on({
        let order = order.clone();
        rt.spawn(async move {
            (0..8)
                .map(|i| {
                    let order = order.clone();
                    spawn(async move { order.push(i) })
                })
                .collect::<Vec<_>>()
        })
    });
    rt.block_on(async {
        for t in tasks.unwrap() {
            t.await.unwrap();
        }
    });
    assert_eq!(order.take(), (0..8).collect::<Vec<_>>());
}

/// A future that is pending until `open` is set, leaving its waker in `waker`.
struct Gate {
    open: Arc<AtomicBool>,
    waker: Arc<std::sync::Mutex<Option<std::task::Waker>>>,
}

impl Future for Gate {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.open.load(SeqCst) {
            return Poll::Ready(());
        }
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Tasks woken (not spawned) on a current-thread runtime also run in the order they were
/// woken, behind what was queued before them, as on tokio's current-thread scheduler (which
/// has no LIFO slot).
#[test]
fn woken_tasks_run_in_wake_order() {
    let rt = current();
    let order = Order::default();
    rt.block_on(async {
        let gates: Vec<_> = (0..4)
            .map(|_| (Arc::new(AtomicBool::new(false)), Arc::default()))
            .collect();
        let waiters: Vec<_> = gates
            .iter()
            .enumerate()
            .map(|(i, (open, waker))| {
                let gate = Gate {
                    open: open.clone(),
                    waker: Arc::clone(waker),
                };
                let order = order.clone();
                spawn(async move {
                    gate.await;
                    order.push(i);
                })
            })
            .collect();
        // Let every waiter reach its gate.
        while gates.iter().any(|(_, w)| w.lock().unwrap().is_none()) {
            yield_now().await;
        }
        let waker_task = spawn({
            let order = order.clone();
            async move {
                // Wakes 2, 0, 3, 1, with a spawned task (10) queued between 0 and 3.
                let wake = |i: usize| {
                    gates[i].0.store(true, SeqCst);
                    gates[i].1.lock().unwrap().take().unwrap().wake();
                };
                wake(2);
                wake(0);
                let spawned = spawn(async move { order.push(10) });
                wake(3);
                wake(1);
                Some(spawned) // the task's handle, to await once it ran
            }
        });
        let spawned = waker_task.await.unwrap();
        spawned.unwrap().await.unwrap();
        for w in waiters {
            w.await.unwrap();
        }
    });
    assert_eq!(order.take(), vec![2, 0, 10, 3, 1]);
}

/// The contrast: a multi-thread runtime's worker runs the task spawned last first (its LIFO
/// slot, as tokio's), then the others in spawn order.
#[test]
fn the_multi_thread_runtime_keeps_its_lifo_slot() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let order = Order::default();
    let tasks = rt.block_on({
        let order = order.clone();
        rt.spawn(async move {
            (0..4)
                .map(|i| {
                    let order = order.clone();
                    spawn(async move { order.push(i) })
                })
                .collect::<Vec<_>>()
        })
    });
    rt.block_on(async {
        for t in tasks.unwrap() {
            t.await.unwrap();
        }
    });
    assert_eq!(order.take(), vec![3, 0, 1, 2]);
}
