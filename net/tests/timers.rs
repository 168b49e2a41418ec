//! Timers: many timers all fire and none early; interval delays after missed ticks; timers from
//! outside the workers.

use spinpark_net::time::{Duration, Instant};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use futures_util::StreamExt;
use spinpark_executor::{spawn, Builder};
use spinpark_net::time::{interval, sleep, sleep_until, timeout, MissedTickBehavior};

#[test]
fn a_hundred_thousand_timers_all_fire_none_before_its_deadline() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    let fired = Arc::new(AtomicUsize::new(0));
    let early = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    rt.block_on(async {
        let tasks: Vec<_> = (0..100_000u64)
            .map(|i| {
                let (fired, early) = (fired.clone(), early.clone());
                spawn(async move {
                    // Deadlines spread over 0..200 ms.
                    let deadline = start + Duration::from_micros((i * 7919) % 200_000);
                    sleep_until(deadline).await;
                    if Instant::now() < deadline {
                        early.fetch_add(1, SeqCst);
                    }
                    fired.fetch_add(1, SeqCst);
                })
            })
            .collect();
        let all = async {
            for t in tasks {
                t.await.unwrap();
            }
        };
        timeout(Duration::from_secs(120), all)
            .await
            .expect("timers did not all fire within 120 s");
    });
    assert_eq!(fired.load(SeqCst), 100_000);
    assert_eq!(early.load(SeqCst), 0, "timers fired before their deadline");
}

#[test]
fn sleep_from_block_on_while_every_worker_is_parked() {
    let rt = Builder::new()
        .worker_threads(2)
        .spin(Duration::ZERO)
        .build()
        .unwrap();
    // Let the workers park on the futex before any reactor exists.
    std::thread::sleep(Duration::from_millis(20));
    rt.block_on(async {
        for _ in 0..20 {
            let t = Instant::now();
            sleep(Duration::from_millis(2)).await;
            assert!(t.elapsed() >= Duration::from_millis(2));
        }
    });
}

#[test]
fn timeout_returns_the_value_when_in_time() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let v = rt.block_on(timeout(Duration::from_secs(30), async { 5 }));
    assert_eq!(v.unwrap(), 5);
    let e = rt.block_on(timeout(
        Duration::from_millis(1),
        sleep(Duration::from_secs(30)),
    ));
    assert!(e.is_err());
}

#[test]
fn interval_ticks_are_spaced_and_skip_missed_ones() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let period = Duration::from_millis(5);
        let mut iv = interval(period);
        iv.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let first = iv.tick().await;
        let second = iv.tick().await;
        assert!(second - first >= period);
        // Miss several ticks, then tick: one immediate tick, then the next a period later.
        std::thread::sleep(period * 4);
        let late = iv.tick().await;
        let after = iv.tick().await;
        assert!(after - late >= period, "missed ticks were not skipped");
        let mut n = 0;
        let mut s = interval(Duration::from_millis(1)).take(3);
        while s.next().await.is_some() {
            n += 1;
        }
        assert_eq!(n, 3);
    });
}

#[test]
fn dropped_timers_are_removed() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    rt.block_on(async {
        for _ in 0..1000 {
            // A timeout that completes in time drops its timer.
            timeout(Duration::from_secs(3600), async {}).await.unwrap();
        }
        // A long sleep that is aborted does not keep its task alive.
        let h = spawn(sleep(Duration::from_secs(3600)));
        sleep(Duration::from_millis(1)).await;
        h.abort();
        assert!(h.await.unwrap_err().is_cancelled());
    });
    assert_eq!(rt.handle().live_tasks(), 0);
}

#[test]
#[should_panic(expected = "has shut down")]
fn a_sleep_that_outlives_its_runtime_panics_instead_of_hanging() {
    use std::future::Future;
    let a = Builder::new().worker_threads(1).build().unwrap();
    let mut s = Box::pin(sleep(Duration::from_secs(3600)));
    // Register the timer with runtime `a`'s reactor.
    a.block_on(std::future::poll_fn(|cx| {
        assert!(s.as_mut().poll(cx).is_pending());
        std::task::Poll::Ready(())
    }));
    drop(a);
    let b = Builder::new().worker_threads(1).build().unwrap();
    b.block_on(s);
}

#[test]
fn a_sleep_whose_runtime_is_gone_is_elapsed() {
    // A registered timer of a runtime that shut down can never fire: it is done, as tokio's.
    for workers in [None, Some(1)] {
        let rt = match workers {
            None => Builder::new_current_thread().build().unwrap(),
            Some(n) => Builder::new().worker_threads(n).build().unwrap(),
        };
        let mut s = Box::pin(sleep(Duration::from_secs(3600)));
        rt.block_on(async {
            // Registers the timer.
            assert!(futures_util::poll!(s.as_mut()).is_pending());
        });
        assert!(!s.is_elapsed(), "pending while its runtime runs");
        drop(rt);
        assert!(s.is_elapsed(), "{workers:?} workers: the runtime is gone");
    }
}
