//! `futures::select!` takes spinpark's futures as they are (they are `FusedFuture`s; a
//! `Sleep`, `!Unpin` as tokio's, once pinned), and `Interval` follows its
//! `MissedTickBehavior`.

use spinpark_net::time::{Duration, Instant};

use futures_util::future::FusedFuture;
use futures_util::{select, FutureExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::time::{interval, sleep, timeout, timeout_at, MissedTickBehavior};
use spinpark_net::{TcpListener, TcpStream};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

#[test]
fn select_takes_sleep_accept_tick_join_and_timeout_without_fuse() {
    rt().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = spawn(async move { TcpStream::connect(addr).await.map(drop) });
        // The accept wins against a sleep of a minute.
        let mut long = std::pin::pin!(sleep(Duration::from_secs(60)));
        select! {
            r = listener.accept() => { r.unwrap(); }
            _ = long => panic!("the minute-long sleep finished first"),
        }
        assert!(!long.is_terminated());

        // A JoinHandle, and a pending accept against an elapsed sleep.
        let mut client = client;
        let mut short = std::pin::pin!(sleep(Duration::from_millis(1)));
        let mut joined = false;
        let mut slept = false;
        for _ in 0..2 {
            select! {
                r = client => { r.unwrap().unwrap(); joined = true; }
                _ = short => slept = true,
            }
        }
        assert!(joined && slept, "each branch ran once");
        assert!(client.is_terminated() && short.is_terminated());

        // A tick, and a timeout whose inner future is ready.
        let mut every = interval(Duration::from_secs(60));
        let mut t = std::pin::pin!(timeout(Duration::from_secs(60), async { 5 }));
        select! {
            v = t => assert_eq!(v, Ok(5)),
            default => panic!("a ready timeout was not taken"),
        }
        assert!(t.is_terminated());
        let got_tick = select! {
            _ = every.tick() => true,
            r = listener.accept().fuse() => panic!("nobody connected, yet {r:?}"),
        };
        assert!(got_tick, "the first tick of an interval is immediate");
    });
}

#[test]
fn timeout_at_elapses_at_its_deadline() {
    rt().block_on(async {
        let deadline = Instant::now() + Duration::from_millis(20);
        let r = timeout_at(deadline, std::future::pending::<()>()).await;
        assert!(r.is_err());
        assert!(Instant::now() >= deadline);
    });
}

/// Keeps the task (and its worker) busy without yielding.
fn busy(d: Duration) {
    std::thread::sleep(d);
}

#[test]
fn interval_bursts_by_default_after_a_late_tick() {
    rt().block_on(async {
        let period = Duration::from_millis(10);
        let mut every = interval(period);
        assert_eq!(every.missed_tick_behavior(), MissedTickBehavior::Burst);
        let start = every.tick().await;
        busy(period * 5 + Duration::from_millis(5));
        // Burst: every missed tick is produced, each at its original instant.
        for k in 1..=5u32 {
            assert_eq!(every.tick().await, start + period * k);
        }
    });
}

#[test]
fn interval_delay_and_skip_move_the_schedule() {
    rt().block_on(async {
        let period = Duration::from_millis(10);
        let mut delayed = interval(period);
        delayed.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut skipping = interval(period);
        skipping.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let d0 = delayed.tick().await;
        let s0 = skipping.tick().await;
        busy(period * 5 + Duration::from_millis(7));
        let woke = Instant::now();
        // The late tick itself completes at once with its scheduled instant.
        assert_eq!(delayed.tick().await, d0 + period);
        assert_eq!(skipping.tick().await, s0 + period);
        // Delay: the next tick is a period after the late one completed.
        assert!(delayed.tick().await >= woke + period);
        // Skip: the next tick is on the original grid, and after the late one completed.
        let next = skipping.tick().await;
        assert!(next > woke);
        assert_eq!((next - s0).as_nanos() % period.as_nanos(), 0);
    });
}
