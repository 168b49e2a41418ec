//! Stress tests with real threads: a million wake-ups from outside the runtime, each to a
//! task that parks between wakes, all accounted for. A watchdog fails the test with a message
//! instead of letting a lost wake-up hang CI.

use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use spinpark_executor::{Builder, Runtime};

/// A counter a producer bumps and a task drains; the task parks while it is zero.
#[derive(Default)]
struct Mailbox {
    pending: AtomicU64,
    consumed: AtomicU64,
    waker: Mutex<Option<Waker>>,
}

impl Mailbox {
    fn post(&self) -> bool {
        self.pending.fetch_add(1, SeqCst);
        let w = self.waker.lock().unwrap().take();
        match w {
            Some(w) => {
                w.wake();
                true
            }
            None => false,
        }
    }

    async fn recv(&self) -> u64 {
        poll_fn(|cx| {
            let n = self.pending.swap(0, SeqCst);
            if n > 0 {
                return Poll::Ready(n);
            }
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            // Re-check after storing the waker: a post in between would otherwise be missed.
            let n = self.pending.swap(0, SeqCst);
            if n > 0 {
                Poll::Ready(n)
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

/// Runs `f`, failing with `what` if it takes longer than `limit`.
fn with_watchdog(what: &'static str, limit: Duration, f: impl FnOnce()) {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let dog = std::thread::spawn(move || {
        let start = Instant::now();
        while !d.load(SeqCst) {
            if start.elapsed() > limit {
                eprintln!("watchdog: {what} made no progress in {limit:?}: a lost wake-up?");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    f();
    done.store(true, SeqCst);
    dog.join().unwrap();
}

/// Producer threads post to mailboxes one message at a time and wait for each to be taken, so
/// the receiving task parks between messages and every post has to wake it. Runs until at
/// least a million posts found a parked task (a real `Waker::wake`), then checks that every
/// post was received exactly once.
fn million_wakes(rt: Runtime) {
    wakes_from_outside(rt, 1_000_000)
}

/// [`million_wakes`] with `wakes` real wake-ups.
fn wakes_from_outside(rt: Runtime, wakes: u64) {
    const PRODUCERS: usize = 4;
    let boxes: Vec<Arc<Mailbox>> = (0..PRODUCERS)
        .map(|_| Arc::new(Mailbox::default()))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = boxes
        .iter()
        .map(|b| {
            let (b, stop) = (b.clone(), stop.clone());
            rt.spawn(async move {
                let mut total = 0;
                loop {
                    total += b.recv().await;
                    b.consumed.store(total, SeqCst);
                    if stop.load(SeqCst) && b.pending.load(SeqCst) == 0 {
                        return total;
                    }
                }
            })
        })
        .collect();
    let real_wakes = Arc::new(AtomicU64::new(0));
    let producers: Vec<_> = boxes
        .iter()
        .map(|b| {
            let (b, real_wakes) = (b.clone(), real_wakes.clone());
            std::thread::spawn(move || {
                let mut posted = 0u64;
                while real_wakes.load(SeqCst) < wakes {
                    if b.post() {
                        real_wakes.fetch_add(1, SeqCst);
                    }
                    posted += 1;
                    // Wait until the task took it: it parks again before the next post.
                    while b.consumed.load(SeqCst) < posted {
                        std::hint::spin_loop();
                    }
                }
                posted
            })
        })
        .collect();
    let posted: Vec<u64> = producers.into_iter().map(|p| p.join().unwrap()).collect();
    // Let every task finish: one last message after the stop flag.
    stop.store(true, SeqCst);
    for b in &boxes {
        b.post();
    }
    for ((t, b), p) in tasks.into_iter().zip(&boxes).zip(&posted) {
        let got = rt.block_on(t).unwrap();
        assert_eq!(got, p + 1, "every post was received exactly once");
        assert_eq!(b.consumed.load(SeqCst), p + 1);
    }
    assert!(real_wakes.load(SeqCst) >= wakes);
}

#[test]
fn a_million_wakes_from_outside_with_spinning() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    with_watchdog(
        "a million wakes (spinning)",
        Duration::from_secs(300),
        || million_wakes(rt),
    );
}

#[test]
fn a_million_wakes_from_outside_without_spinning() {
    // No spinning: every wake of a parked runtime goes through the futex.
    let rt = Builder::new()
        .worker_threads(2)
        .spin(Duration::ZERO)
        .build()
        .unwrap();
    with_watchdog(
        "a million wakes (futex only)",
        Duration::from_secs(300),
        || million_wakes(rt),
    );
}

/// The adaptive policy (the default) with a CPU budget so small that workers keep switching
/// between spinning and parking by choice, on top of its probes: the idle code's every path
/// (spin, expire, park at once, be woken, chain-wake) under real threads.
#[test]
fn wakes_from_outside_with_a_tiny_spin_budget() {
    let rt = Builder::new()
        .worker_threads(2)
        .spin_budget(0.01)
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    // First, wakes spaced ~300 µs apart: every idle period spins for most of that, which
    // spends the budget (0.01 core plus the policy's slack of 1/32 of a second per second)
    // within a few hundred wakes, so parks by choice happen whatever the probes do. (The
    // burst below may leave too few idle periods, and probes too rarely park, to get there.)
    with_watchdog("spaced wakes", Duration::from_secs(300), || {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let task = handle.spawn(async move {
            let mut n = 0u32;
            while rx.recv().await.is_some() {
                n += 1;
            }
            n
        });
        for _ in 0..400 {
            std::thread::sleep(Duration::from_micros(300));
            tx.send(()).unwrap();
        }
        drop(tx);
        assert_eq!(rt.block_on(task).unwrap(), 400);
    });
    with_watchdog(
        "wakes with a tiny spin budget",
        Duration::from_secs(300),
        || wakes_from_outside(rt, 200_000),
    );
    let m = handle.metrics();
    assert!(m.total().parked_by_choice() > 0, "{m:?}");
    assert!(m.total().spins_found_work() > 0, "{m:?}");
}

#[test]
fn spawn_storm_from_outside_and_inside_accounts_for_every_task() {
    let rt = Builder::new().worker_threads(3).build().unwrap();
    let count = Arc::new(AtomicU64::new(0));
    with_watchdog("spawn storm", Duration::from_secs(300), || {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let h = rt.handle().clone();
                let count = count.clone();
                std::thread::spawn(move || {
                    for i in 0..2_000u32 {
                        let c = count.clone();
                        h.spawn(async move {
                            let c2 = c.clone();
                            spinpark_executor::spawn(async move {
                                c2.fetch_add(1, SeqCst);
                            });
                            c.fetch_add(1, SeqCst);
                        });
                        if i % 97 == 0 {
                            std::thread::sleep(Duration::from_micros(300));
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        while count.load(SeqCst) < 16_000 {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    assert_eq!(count.load(SeqCst), 16_000);
}
