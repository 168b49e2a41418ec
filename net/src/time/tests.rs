//! The timers on the paused clock, where every deadline is reached exactly: none is lost,
//! they fire in deadline order, resets move them both ways, cancelled ones are freed, the
//! wheel's levels cascade (milliseconds to years), and `Interval`'s resets follow tokio.

use std::sync::{Arc, Mutex};

use spinpark_executor::{Builder, Runtime};

use super::*;
use crate::reactor::Reactor;

fn paused() -> Runtime {
    Builder::new_current_thread()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A deterministic spread of deadlines over every level of the wheel.
fn spread(n: u64) -> Vec<Duration> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let level = (x % 6) as u32;
            Duration::from_micros(x % (64u64.pow(level + 1) * 1000) + 1)
        })
        .collect()
}

#[test]
fn no_timer_is_lost_and_each_fires_at_its_deadline_in_order() {
    paused().block_on(async {
        let start = Instant::now();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for d in spread(500) {
            let log = log.clone();
            tasks.push(spinpark_executor::spawn(async move {
                sleep_until(start + d).await;
                log.lock().unwrap().push((d, Instant::now() - start));
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let log = log.lock().unwrap();
        assert_eq!(log.len(), 500);
        for (want, got) in log.iter() {
            assert_eq!(want, got, "a timer fired at the wrong time");
        }
        assert!(log.windows(2).all(|w| w[0].0 <= w[1].0), "out of order");
    });
}

#[test]
fn same_millisecond_timers_fire_in_one_turn() {
    paused().block_on(async {
        let start = Instant::now();
        let at = start + Duration::from_millis(70);
        let a = spinpark_executor::spawn(sleep_until(at));
        let b = spinpark_executor::spawn(sleep_until(at));
        sleep_until(at).await;
        // Both were due at the same instant: the turn that woke us woke them.
        spinpark_executor::yield_now().await;
        assert!(a.is_finished() && b.is_finished());
        assert_eq!(Instant::now(), at);
    });
}

#[test]
fn reset_moves_a_timer_later_and_earlier() {
    paused().block_on(async {
        let start = Instant::now();
        let mut s = Box::pin(sleep(Duration::from_secs(10)));
        assert!(futures_util::poll!(s.as_mut()).is_pending()); // armed
        s.as_mut().reset(start + Duration::from_secs(20)); // later: no lock, re-filed lazily
        s.as_mut().await;
        assert_eq!(Instant::now() - start, Duration::from_secs(20));

        let start = Instant::now();
        let mut s = Box::pin(sleep(Duration::from_secs(3600)));
        assert!(futures_util::poll!(s.as_mut()).is_pending());
        s.as_mut().reset(start + Duration::from_secs(5)); // earlier: re-filed now
        s.as_mut().await;
        assert_eq!(Instant::now() - start, Duration::from_secs(5));

        // Pushed back many times, then due: fires once, at the last deadline.
        let start = Instant::now();
        let mut s = Box::pin(sleep(Duration::from_millis(1)));
        assert!(futures_util::poll!(s.as_mut()).is_pending());
        for k in 1..=100u64 {
            s.as_mut().reset(start + Duration::from_millis(70 * k));
        }
        s.as_mut().await;
        assert_eq!(Instant::now() - start, Duration::from_millis(7000));

        // A completed sleep reset to the past completes at once.
        s.as_mut().reset(start);
        s.as_mut().await;
        assert_eq!(Instant::now() - start, Duration::from_millis(7000));
    });
}

#[test]
fn cancelled_timers_are_taken_out_of_the_store() {
    paused().block_on(async {
        let r = Reactor::current().unwrap();
        let mut all: Vec<Pin<Box<Sleep>>> = (1..=10_000u64)
            .map(|k| Box::pin(sleep(Duration::from_millis(k * 7))))
            .collect();
        for s in all.iter_mut() {
            assert!(futures_util::poll!(s.as_mut()).is_pending());
        }
        assert!(r.timers.any_pending());
        assert!(r.timers.next_deadline().is_some());
        drop(all);
        assert!(
            r.timers.next_deadline().is_none(),
            "dropped sleeps left timers behind"
        );
        // The lock-free hint may still say "pending" (it is a lower bound); the turn that
        // reaches the hinted slot finds nothing and clears it.
        advance(Duration::from_millis(8)).await;
        assert!(!r.timers.any_pending(), "a turn past the hint left it set");
    });
}

#[test]
fn deadlines_on_every_level_cascade_down_and_fire_exactly() {
    let ds = [
        Duration::from_millis(1),
        Duration::from_millis(63),
        Duration::from_millis(65),
        Duration::from_millis(4097),
        Duration::from_secs(300),
        Duration::from_secs(3 * 3600 + 1),
        Duration::from_secs(400 * 86400),
        Duration::from_secs(5 * 365 * 86400), // past the wheel's span
    ];
    paused().block_on(async {
        for d in ds {
            let start = Instant::now();
            sleep(d).await;
            assert_eq!(Instant::now() - start, d);
        }
    });
}

#[test]
fn duration_max_never_fires_before_a_finite_deadline() {
    paused().block_on(async {
        let start = Instant::now();
        let r = timeout(Duration::from_secs(20 * 365 * 86400), sleep(Duration::MAX)).await;
        assert!(r.is_err(), "sleep(Duration::MAX) fired");
        assert_eq!(
            Instant::now() - start,
            Duration::from_secs(20 * 365 * 86400)
        );
    });
}

#[test]
fn shutdown_wakes_pending_timers() {
    let rt = paused();
    let woken = rt.spawn(sleep(Duration::from_secs(1)));
    rt.block_on(spinpark_executor::yield_now()); // the task runs and arms its timer
    drop(rt);
    // The task was dropped with its runtime: its handle says so rather than hanging.
    let rt2 = Runtime::new().unwrap();
    assert!(rt2.block_on(woken).is_err());
}

#[test]
fn interval_at_and_resets_follow_tokio() {
    paused().block_on(async {
        let p = Duration::from_secs(1);
        let start = Instant::now() + Duration::from_millis(500);
        let mut every = interval_at(start, p);
        assert_eq!(every.tick().await, start);
        assert_eq!(Instant::now(), start);
        assert_eq!(every.tick().await, start + p);

        crate::time::advance(Duration::from_millis(300)).await;
        let now = Instant::now();
        every.reset();
        assert_eq!(every.tick().await, now + p);

        let now = Instant::now();
        every.reset_immediately();
        assert_eq!(every.tick().await, now);
        assert_eq!(every.tick().await, now + p);

        let now = Instant::now();
        every.reset_after(Duration::from_millis(250));
        assert_eq!(every.tick().await, now + Duration::from_millis(250));
        assert_eq!(every.tick().await, now + Duration::from_millis(1250));

        let at = Instant::now() + Duration::from_secs(7);
        every.reset_at(at);
        assert_eq!(every.tick().await, at);
        assert_eq!(every.tick().await, at + p);
    });
}

/// A tick whose time has come when it is set (the first tick of `interval`, a reset to now)
/// is ready on the very next poll, without waiting for a reactor turn, as tokio's is.
#[test]
fn a_tick_due_when_set_is_ready_on_the_next_poll() {
    paused().block_on(async {
        let poll_once = |every: &mut Interval| {
            let waker = std::task::Waker::noop();
            every.poll_tick(&mut std::task::Context::from_waker(waker))
        };
        let start = Instant::now();
        let mut every = interval(Duration::from_millis(300));
        assert_eq!(poll_once(&mut every), std::task::Poll::Ready(start));
        assert!(poll_once(&mut every).is_pending());
        crate::time::advance(Duration::from_millis(100)).await;
        every.reset_immediately();
        let now = Instant::now();
        assert_eq!(poll_once(&mut every), std::task::Poll::Ready(now));
        assert!(poll_once(&mut every).is_pending());
        every.reset_at(now - Duration::from_millis(5)); // in the past
        assert_eq!(
            poll_once(&mut every),
            std::task::Poll::Ready(now - Duration::from_millis(5))
        );
    });
}

#[test]
#[should_panic(expected = "period must be non-zero")]
fn interval_at_rejects_a_zero_period() {
    let _ = interval_at(Instant::now(), Duration::ZERO);
}
