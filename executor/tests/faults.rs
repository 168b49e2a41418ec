//! Faults in user code and careless use of the API: panicking destructors, panicking
//! thread hooks, shutting down from the runtime's own threads, bounded shutdown.
//!
//! Every scenario runs under a watchdog: a hang becomes a test failure, never a stuck suite.
//! (An abort on the old code takes the whole binary down, which fails it as well.)

mod common;
use common::{panic_text, rt, PanicOnDrop};

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use spinpark_executor::{Builder, Runtime};

/// Generous: these scenarios take milliseconds when they work.
const WATCHDOG: Duration = Duration::from_secs(20);

/// [`common::within`] with this file's [`WATCHDOG`].
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    common::within(WATCHDOG, what, f)
}

/// A task that has been polled (so it is waiting) and whose future panics when dropped.
fn spawn_waiting_with_panicking_drop(
    rt: &Runtime,
    msg: &'static str,
) -> spinpark_executor::JoinHandle<()> {
    let (polled_tx, polled_rx) = mpsc::channel();
    let h = rt.spawn(async move {
        let _guard = PanicOnDrop(msg);
        let _ = polled_tx.send(());
        std::future::pending::<()>().await;
    });
    polled_rx.recv().unwrap();
    h
}

#[test]
fn d2_panicking_drop_of_a_task_dropped_with_the_runtime_reaches_its_join_handle() {
    within("runtime drop", || {
        let rt = rt(2);
        let h = spawn_waiting_with_panicking_drop(&rt, "boom at shutdown");
        drop(rt);
        let err = h
            .now_or_never()
            .expect("the task is gone, its handle is ready")
            .unwrap_err();
        assert_eq!(panic_text(err), "boom at shutdown");
    });
}

#[test]
fn d2_panicking_drop_of_an_aborted_task_reaches_its_join_handle() {
    within("abort", || {
        let rt = rt(2);
        let h = spawn_waiting_with_panicking_drop(&rt, "boom on abort");
        h.abort();
        let err = rt.block_on(h).unwrap_err();
        assert_eq!(panic_text(err), "boom on abort");
        // The workers are all still there.
        let n = rt.block_on(async {
            let hs: Vec<_> = (0..64)
                .map(|i| spinpark_executor::spawn(async move { i }))
                .collect();
            let mut n = 0;
            for h in hs {
                n += h.await.unwrap();
            }
            n
        });
        assert_eq!(n, (0..64).sum::<i32>());
    });
}

/// Completes at once (`Ready(out)`), then panics when dropped.
struct ReadyThenPanicOnDrop<T> {
    out: Option<T>,
    _guard: PanicOnDrop,
}

impl<T: Unpin> Future for ReadyThenPanicOnDrop<T> {
    type Output = T;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        Poll::Ready(self.out.take().unwrap())
    }
}

/// Panics in its poll, and again when dropped.
struct PanicInPollAndDrop {
    _guard: PanicOnDrop,
}

impl Future for PanicInPollAndDrop {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        panic!("boom in poll");
    }
}

#[test]
fn d2_panicking_drop_of_a_completed_future_is_the_tasks_panic() {
    within("completion", || {
        let rt = rt(2);
        let h = rt.spawn(ReadyThenPanicOnDrop {
            out: Some(7),
            _guard: PanicOnDrop("boom after ready"),
        });
        assert_eq!(panic_text(rt.block_on(h).unwrap_err()), "boom after ready");
        let h = rt.spawn(PanicInPollAndDrop {
            _guard: PanicOnDrop("boom in drop after poll"),
        });
        // The first panic is the one reported.
        assert_eq!(panic_text(rt.block_on(h).unwrap_err()), "boom in poll");
        assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1);
    });
}

#[test]
fn d2_panicking_drop_of_a_detached_output_is_contained() {
    within("detached output", || {
        let rt = rt(2);
        // Dropped by the runtime: the handle is gone when the task finishes.
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let h = rt.spawn_blocking(move || {
            let _ = go_rx.recv();
            // Sent before returning: the output is dropped right after.
            let _ = done_tx.send(());
            PanicOnDrop("boom in detached output")
        });
        drop(h);
        go_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        let h = rt.spawn(async { PanicOnDrop("boom in a dropped handle's output") });
        while !h.is_finished() {
            std::thread::yield_now();
        }
        // Dropped by the handle: a finished task's output goes with it, quietly.
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(h))).is_ok());
        // The runtime still works on every worker and shuts down cleanly.
        let n = rt.block_on(async {
            let hs: Vec<_> = (0..64)
                .map(|i| spinpark_executor::spawn(async move { i }))
                .collect();
            let mut n = 0;
            for h in hs {
                n += h.await.unwrap();
            }
            n
        });
        assert_eq!(n, (0..64).sum::<i32>());
        drop(rt);
    });
}

#[test]
fn d2_panicking_drop_of_many_tasks_at_shutdown_does_not_abort() {
    within("many at shutdown", || {
        let rt = rt(2);
        let hs: Vec<_> = (0..100)
            .map(|_| spawn_waiting_with_panicking_drop(&rt, "boom en masse"))
            .collect();
        // Queued, never polled: dropped from the queues.
        let queued: Vec<_> = (0..100)
            .map(|_| {
                let g = PanicOnDrop("boom queued");
                rt.spawn(async move {
                    let _g = g;
                    std::future::pending::<()>().await;
                })
            })
            .collect();
        drop(rt);
        for h in hs {
            assert_eq!(
                panic_text(h.now_or_never().unwrap().unwrap_err()),
                "boom en masse"
            );
        }
        for h in queued {
            // Either polled before the shutdown or dropped from a queue: a panic either way.
            assert_eq!(
                panic_text(h.now_or_never().unwrap().unwrap_err()),
                "boom queued"
            );
        }
    });
}

#[test]
fn d5_dropping_the_runtime_inside_spawn_blocking_returns() {
    within("drop in spawn_blocking", || {
        let rt = rt(2);
        let handle = rt.handle().clone();
        let (tx, rx) = mpsc::channel();
        let _h = handle.spawn_blocking(move || {
            drop(rt);
            tx.send(()).unwrap();
        });
        rx.recv().unwrap();
        assert!(handle.is_shutdown());
    });
    within("shutdown_timeout in spawn_blocking", || {
        let rt = rt(2);
        let handle = rt.handle().clone();
        let (tx, rx) = mpsc::channel();
        let _h = handle.spawn_blocking(move || {
            rt.shutdown_timeout(Duration::from_secs(60));
            tx.send(()).unwrap();
        });
        rx.recv().unwrap();
    });
}

#[test]
fn d5_dropping_the_runtime_inside_a_task_returns() {
    within("drop in a task", || {
        let rt = rt(2);
        let handle = rt.handle().clone();
        let (tx, rx) = mpsc::channel();
        let _h = handle.spawn(async move {
            drop(rt);
            tx.send(()).unwrap();
        });
        rx.recv().unwrap();
        assert!(handle.is_shutdown());
    });
}

#[test]
fn d7_shutdown_timeout_bounds_the_whole_wait() {
    // A blocking closure and a task that both block until released.
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
    let (started_tx, started_rx) = mpsc::channel();
    let rt = rt(2);
    let (r, s) = (release_rx.clone(), started_tx.clone());
    let _b = rt.spawn_blocking(move || {
        s.send(()).unwrap();
        let _ = r.lock().unwrap().recv_timeout(Duration::from_secs(60));
    });
    let (r, s) = (release_rx.clone(), started_tx);
    let _t = rt.spawn(async move {
        s.send(()).unwrap();
        // Blocks its worker (what a task must not do, and what shutdown must survive).
        let _ = r.lock().unwrap().recv_timeout(Duration::from_secs(60));
    });
    started_rx.recv().unwrap();
    started_rx.recv().unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        within("shutdown_timeout", move || {
            rt.shutdown_timeout(Duration::from_millis(50))
        })
    }));
    // Let the blocked closures go, whatever happened.
    drop(release_tx);
    if let Err(p) = outcome {
        std::panic::resume_unwind(p);
    }
}

#[test]
fn d8_a_panicking_on_thread_start_makes_build_fail_and_stops_the_started_workers() {
    within("build", || {
        let started = Arc::new(AtomicUsize::new(0));
        let stopped = Arc::new(AtomicUsize::new(0));
        let (s, t) = (started.clone(), stopped.clone());
        let attempts = Arc::new(AtomicUsize::new(0));
        let err = Builder::new()
            .worker_threads(3)
            .on_thread_start(move || {
                if attempts.fetch_add(1, SeqCst) == 1 {
                    panic!("hook refuses");
                }
                s.fetch_add(1, SeqCst);
            })
            .on_thread_stop(move || {
                t.fetch_add(1, SeqCst);
            })
            .build()
            .expect_err("a worker failed to start");
        let msg = err.to_string();
        assert!(
            msg.contains("on_thread_start") && msg.contains("hook refuses"),
            "{msg}"
        );
        // Every worker that did start was stopped (and joined) before build returned.
        assert_eq!(started.load(SeqCst), 2);
        assert_eq!(stopped.load(SeqCst), 2);
    });
}

#[test]
fn d8_a_thread_name_the_os_cannot_take_is_an_error() {
    within("build", || {
        let r = std::panic::catch_unwind(|| Builder::new().thread_name("bad\0name").build());
        let err = r.expect("build must not panic").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("thread_name"), "{err}");
    });
}

#[test]
fn thread_stop_hook_panicking_does_not_abort() {
    within("stop hook", || {
        let stopped = Arc::new(AtomicUsize::new(0));
        let t = stopped.clone();
        let rt = Builder::new()
            .worker_threads(2)
            .on_thread_stop(move || {
                t.fetch_add(1, SeqCst);
                panic!("stop hook refuses");
            })
            .build()
            .unwrap();
        assert_eq!(rt.block_on(rt.spawn(async { 3 })).unwrap(), 3);
        drop(rt);
        assert_eq!(stopped.load(SeqCst), 2);
    });
}

/// A pending future that hands its waker to a shared slot and whose destructor takes that
/// slot's lock: h2's connection task and its stream handles have this shape.
struct LockOnDrop(Arc<std::sync::Mutex<Option<std::task::Waker>>>);

impl Future for LockOnDrop {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.0.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for LockOnDrop {
    fn drop(&mut self) {
        drop(self.0.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

#[test]
fn a_task_woken_under_a_lock_its_destructor_takes_is_dropped_at_shutdown_without_deadlock() {
    within("dropping the runtime", || {
        let slot = Arc::new(std::sync::Mutex::new(None::<std::task::Waker>));
        let in_hook = slot.clone();
        // A worker stopping (the runtime is shut down by then) wakes the task while holding
        // the lock its destructor takes: dropping the task right inside that wake would take
        // the lock again on the same thread.
        let rt = Builder::new()
            .worker_threads(2)
            .on_thread_stop(move || {
                let mut waker = in_hook.lock().unwrap();
                if let Some(w) = waker.take() {
                    w.wake();
                }
            })
            .build()
            .unwrap();
        let (polled_tx, polled_rx) = mpsc::channel();
        let task = LockOnDrop(slot.clone());
        rt.spawn(async move {
            let mut task = Box::pin(task);
            futures_util::future::poll_fn(|cx| {
                let _ = task.as_mut().poll(cx);
                let _ = polled_tx.send(());
                Poll::<()>::Pending
            })
            .await
        });
        polled_rx.recv().unwrap();
        assert!(
            slot.lock().unwrap().is_some(),
            "the task's waker is in the slot"
        );
        drop(rt);
    });
}
