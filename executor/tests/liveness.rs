//! Work queued behind a worker that is stuck in a long poll is taken by the other workers,
//! and long polls are counted.
//!
//! A task woken or spawned on a worker goes to that worker's LIFO slot, to run next on the
//! same core. If the task that woke it then holds the worker (a CPU loop, a blocking call),
//! the woken task used to wait for all of it while the other workers slept: nobody could take
//! a task from another worker's LIFO slot. Each test holds a worker *until the queued task
//! has run* (giving up after 60 s), so it asserts progress, never a duration.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering::Acquire, Ordering::Release};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use spinpark_executor::{spawn, Builder, Runtime};

const GIVE_UP: Duration = Duration::from_secs(60);

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// Holds the calling thread (a CPU loop) until `flag` is set; false if it gave up instead.
fn hold_until(flag: &AtomicBool) -> bool {
    let give_up = Instant::now() + GIVE_UP;
    while !flag.load(Acquire) {
        if Instant::now() > give_up {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// A one-shot signal: a future that completes once `fire` has been called.
#[derive(Default)]
struct Signal {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    fn fire(&self) {
        self.fired.store(true, Release);
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }
    fn wait(self: &Arc<Self>) -> impl Future<Output = ()> {
        let s = self.clone();
        std::future::poll_fn(move |cx: &mut Context<'_>| {
            *s.waker.lock().unwrap() = Some(cx.waker().clone());
            if s.fired.load(Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

/// A task spawned from a worker goes to that worker's LIFO slot; the spawning task then
/// holds the worker until the spawned one has run.
#[test]
fn a_task_spawned_before_a_long_poll_runs_elsewhere() {
    rt().block_on(async {
        let ran = Arc::new(AtomicBool::new(false));
        let r2 = ran.clone();
        let holder = spawn(async move {
            let r3 = r2.clone();
            let _child = spawn(async move { r3.store(true, Release) });
            hold_until(&r2)
        });
        assert!(
            holder.await.unwrap(),
            "the spawned task waited in the LIFO slot for the long poll to give up"
        );
    });
}

/// A task woken from a worker goes to its LIFO slot too: the same, with a wake.
#[test]
fn a_task_woken_before_a_long_poll_runs_elsewhere() {
    rt().block_on(async {
        let signal = Arc::new(Signal::default());
        let ran = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (signal, ran) = (signal.clone(), ran.clone());
            spawn(async move {
                signal.wait().await;
                ran.store(true, Release);
            })
        };
        // Let the waiter register its waker (its first poll) before the holder fires.
        while signal.waker.lock().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let holder = spawn(async move {
            signal.fire();
            hold_until(&ran)
        });
        assert!(
            holder.await.unwrap(),
            "the woken task waited in the LIFO slot for the long poll to give up"
        );
        waiter.await.unwrap();
    });
}

/// Several tasks spawned before the long poll: one in the LIFO slot, the others pushed to
/// the worker's queue (stealable, and announced to the parked worker).
#[test]
fn tasks_queued_before_a_long_poll_all_run_elsewhere() {
    rt().block_on(async {
        let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let all = Arc::new(AtomicBool::new(false));
        let (d2, a2) = (done.clone(), all.clone());
        let holder = spawn(async move {
            for _ in 0..5 {
                let (d3, a3) = (d2.clone(), a2.clone());
                spawn(async move {
                    if d3.fetch_add(1, std::sync::atomic::Ordering::AcqRel) + 1 == 5 {
                        a3.store(true, Release);
                    }
                });
            }
            hold_until(&a2)
        });
        assert!(
            holder.await.unwrap(),
            "queued tasks waited for the long poll"
        );
    });
}

/// A poll past the threshold is counted on the worker that ran it.
#[test]
fn a_long_poll_is_counted() {
    let rt = Builder::new()
        .worker_threads(2)
        .long_poll_threshold(Duration::from_millis(20))
        .build()
        .unwrap();
    rt.block_on(async {
        spawn(async { std::thread::sleep(Duration::from_millis(100)) })
            .await
            .unwrap();
    });
    // Counted when the worker is done with the poll, which may be just after the output
    // reached us.
    let give_up = Instant::now() + GIVE_UP;
    while rt.metrics().total().long_polls() == 0 && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(1));
    }
    let m = rt.metrics();
    assert_eq!(m.total().long_polls(), 1, "{m:?}");
    assert_eq!(
        m.workers().iter().filter(|w| w.long_polls() == 1).count(),
        1,
        "counted on the one worker that ran it: {m:?}"
    );
}

/// Shutting down stops the watchdog thread even while a worker is spinning (and so keeps
/// re-arming the watchdog's timer) at that moment. A re-arm that landed after shutdown used
/// to cancel the wake-up meant for the watchdog, and dropping the runtime hung joining it.
#[test]
fn shutdown_stops_the_watchdog_while_workers_spin() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..300 {
            let rt = Builder::new()
                .worker_threads(2)
                .spin(Duration::from_millis(2))
                .build()
                .unwrap();
            rt.block_on(async { spawn(async {}).await.unwrap() });
            drop(rt);
        }
        let _ = tx.send(());
    });
    rx.recv_timeout(GIVE_UP)
        .expect("dropping a runtime hung (its watchdog thread did not stop)");
}
