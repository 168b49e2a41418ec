//! Timers raced by real threads: a `Sleep` owns its timer's node, which the wheel files by
//! address, so a sleep dropped (or reset) on one worker while a reactor turn on the other
//! fires it must leave the store consistent and never lose a wake-up. These run on a
//! 2-worker runtime with real time; the races are not forced, only made frequent (each kind
//! a few hundred times per run).

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use spinpark_executor::{spawn, Builder};

use super::*;
use crate::reactor::Reactor;

/// Waits, spinning, until `deadline` has passed by the clock: the sleep's timer is then due
/// and the other worker's next reactor turn may be firing it right now.
fn spin_until(deadline: Instant) {
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

#[test]
fn sleeps_dropped_reset_and_moved_while_another_worker_fires_them() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let reactor = Reactor::current().unwrap();
        let completed = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        let mut expected = 0;
        const TASKS: usize = 8;
        const ROUNDS: u64 = 120;
        for t in 0..TASKS {
            let completed = completed.clone();
            expected += (0..ROUNDS).filter(|i| (i + t as u64) % 5 != 1).count();
            tasks.push(spawn(async move {
                let mut elsewhere = Vec::new();
                for i in 0..ROUNDS {
                    let d = Duration::from_micros(300 + (i % 7) * 150);
                    let mut s: Pin<Box<Sleep>> = Box::pin(sleep(d));
                    let _ = futures_util::poll!(s.as_mut()); // armed in this worker's shard
                    match (i + t as u64) % 5 {
                        // Awaited: must complete.
                        0 => s.as_mut().await,
                        // Dropped once due: races the firing turn (the store may be
                        // marking it fired, or handing its waker over, meanwhile).
                        1 => {
                            spin_until(s.deadline());
                            drop(s);
                            continue;
                        }
                        // Pushed back once due (no lock if the turn has not claimed it;
                        // re-filed under the lock if it has), then awaited.
                        2 => {
                            spin_until(s.deadline());
                            s.as_mut()
                                .reset(Instant::now() + Duration::from_micros(200));
                            s.as_mut().await;
                        }
                        // Brought forward, then awaited.
                        3 => {
                            s.as_mut().reset(Instant::now());
                            s.as_mut().await;
                        }
                        // Awaited by another task, maybe on the other worker: its waker
                        // changes while the timer is filed in this worker's shard.
                        _ => {
                            let c = completed.clone();
                            elsewhere.push(spawn(async move {
                                s.as_mut().await;
                                c.fetch_add(1, Ordering::Relaxed);
                            }));
                            continue;
                        }
                    }
                    completed.fetch_add(1, Ordering::Relaxed);
                }
                for h in elsewhere {
                    h.await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(completed.load(Ordering::Relaxed), expected);
        assert!(
            reactor.timers.next_deadline().is_none(),
            "fired, dropped and moved sleeps left timers behind"
        );
    });
}

#[test]
fn pending_sleeps_dropped_on_another_thread_are_taken_out() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let reactor = Reactor::current().unwrap();
        // Armed on workers (their shards), then dropped by the block_on thread and by a
        // plain thread while pending: each drop takes the owning shard's lock.
        let armed = spawn(async {
            let mut all = Vec::new();
            for k in 0..2_000u64 {
                let mut s = Box::pin(sleep(Duration::from_secs(60 + k)));
                assert!(futures_util::poll!(s.as_mut()).is_pending());
                all.push(s);
            }
            all
        })
        .await
        .unwrap();
        assert!(reactor.timers.next_deadline().is_some());
        let mut half = armed;
        let other = half.split_off(1_000);
        std::thread::spawn(move || drop(other)).join().unwrap();
        drop(half);
        assert!(reactor.timers.next_deadline().is_none());
    });
}
