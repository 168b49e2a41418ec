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

fn million_wakes(rt: Runtime) {
    const PRODUCERS: usize = 4;
    const TASKS_PER_PRODUCER: usize = 2;
    const WAKES: u64 = 1_000_000;
    let per_producer = WAKES / PRODUCERS as u64;
    let boxes: Vec<Arc<Mailbox>> = (0..PRODUCERS * TASKS_PER_PRODUCER)
        .map(|_| Arc::new(Mailbox::default()))
        .collect();
    let per_task = per_producer / TASKS_PER_PRODUCER as u64;
    let tasks: Vec<_> = boxes
        .iter()
        .map(|b| {
            let b = b.clone();
            rt.spawn(async move {
                let mut total = 0;
                while total < per_task {
                    total += b.recv().await;
                    b.consumed.store(total, SeqCst);
                }
                total
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let mine: Vec<_> = boxes[p * TASKS_PER_PRODUCER..(p + 1) * TASKS_PER_PRODUCER].to_vec();
            std::thread::spawn(move || {
                let mut woke = 0u64;
                for i in 0..per_producer {
                    let b = &mine[(i % TASKS_PER_PRODUCER as u64) as usize];
                    if b.post() {
                        woke += 1;
                    }
                    // Every so often wait for the task to catch up, so it parks between wakes
                    // instead of draining a long backlog in one go.
                    if i % 32 == 31 {
                        let target = i / TASKS_PER_PRODUCER as u64;
                        while b.consumed.load(SeqCst) < target {
                            std::thread::yield_now();
                        }
                    }
                }
                woke
            })
        })
        .collect();
    let mut real_wakes = 0;
    for p in producers {
        real_wakes += p.join().unwrap();
    }
    let total: u64 = tasks.into_iter().map(|t| rt.block_on(t).unwrap()).sum();
    assert_eq!(
        total, WAKES,
        "every posted wake-up was received exactly once"
    );
    assert!(real_wakes > 0, "tasks never parked between wakes");
    let consumed: u64 = boxes.iter().map(|b| b.consumed.load(SeqCst)).sum();
    assert_eq!(consumed, WAKES);
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
