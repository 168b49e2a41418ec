//! Paused time (feature `test-util`): sleeps, timeouts and intervals on a paused clock
//! complete without real waiting, `advance` moves the clock, auto-advance jumps it to the next
//! timer when the runtime has nothing to run, and pausing is refused where it cannot work.
//!
//! Real time is only bounded generously: an hour of paused time must take well under a minute.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark::time::{self, advance, interval, sleep, sleep_until, timeout, Instant};

const HOUR: Duration = Duration::from_secs(3600);
/// The most real time a paused test may take (it takes milliseconds).
const REAL_BOUND: Duration = Duration::from_secs(60);

#[spinpark::test(start_paused = true)]
async fn an_hour_long_sleep_completes_at_once() {
    let real = std::time::Instant::now();
    let start = Instant::now();
    sleep(HOUR).await;
    // Auto-advance jumps exactly to the deadline.
    assert_eq!(start.elapsed(), HOUR);
    assert!(real.elapsed() < REAL_BOUND, "{:?}", real.elapsed());
}

#[spinpark::test]
async fn pause_then_sleep_and_timeout() {
    time::pause();
    let real = std::time::Instant::now();
    let start = Instant::now();
    // A timeout that fires: the inner future never completes.
    let r = timeout(Duration::from_secs(30), std::future::pending::<()>()).await;
    assert!(r.is_err(), "the timeout did not fire");
    assert_eq!(start.elapsed(), Duration::from_secs(30));
    // A timeout that does not: the inner sleep is due first.
    let r = timeout(Duration::from_secs(30), sleep(Duration::from_secs(10))).await;
    assert_eq!(r, Ok(()));
    assert_eq!(start.elapsed(), Duration::from_secs(40));
    // sleep_until on the paused clock.
    sleep_until(start + HOUR).await;
    assert_eq!(Instant::now(), start + HOUR);
    assert!(real.elapsed() < REAL_BOUND);
}

#[spinpark::test(start_paused = true)]
async fn instant_now_follows_the_paused_clock() {
    let a = Instant::now();
    std::thread::sleep(Duration::from_millis(20)); // real time passes; paused time does not
    assert_eq!(Instant::now(), a);
    advance(Duration::from_secs(1)).await;
    assert_eq!(Instant::now() - a, Duration::from_secs(1));
    // std's clock is not paused.
    assert!(std::time::Instant::now() >= a.into_std());
}

#[spinpark::test(start_paused = true)]
async fn advance_fires_the_timers_it_passes() {
    let start = Instant::now();
    let timer = spinpark::spawn(async move {
        sleep(Duration::from_secs(5)).await;
        Instant::now()
    });
    spinpark::yield_now().await; // the task registers its timer
    advance(Duration::from_secs(4)).await;
    assert!(!timer.is_finished(), "fired a second early");
    advance(Duration::from_secs(1)).await;
    assert!(
        timer.is_finished(),
        "advance passed the deadline but the task did not run"
    );
    // The task saw the clock at its deadline.
    assert_eq!(timer.await.unwrap(), start + Duration::from_secs(5));
}

#[spinpark::test(start_paused = true)]
async fn auto_advance_fires_timers_in_deadline_order() {
    let start = Instant::now();
    let order = Arc::new(Mutex::new(Vec::new()));
    let tasks: Vec<_> = [3u64, 1, 2]
        .into_iter()
        .map(|s| {
            let order = order.clone();
            spinpark::spawn(async move {
                sleep(Duration::from_secs(s)).await;
                order.lock().unwrap().push((s, Instant::now() - start));
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    let expected: Vec<_> = (1..=3).map(|s| (s, Duration::from_secs(s))).collect();
    assert_eq!(order, expected);
}

#[spinpark::test(start_paused = true)]
async fn an_interval_ticks_under_advance_and_auto_advance() {
    let start = Instant::now();
    let period = Duration::from_secs(10);
    let mut every = interval(period);
    assert_eq!(every.tick().await, start); // the first tick is at once
                                           // By hand: each advance makes the next tick due.
    for k in 1..=3u32 {
        advance(period).await;
        assert_eq!(every.tick().await, start + period * k);
    }
    // Left to auto-advance: a minute of ticks at once.
    for k in 4..=9u32 {
        assert_eq!(every.tick().await, start + period * k);
    }
    assert_eq!(Instant::now() - start, period * 9);
}

#[spinpark::test(start_paused = true)]
async fn resume_lets_real_time_run_again() {
    let start = Instant::now();
    advance(HOUR).await;
    time::resume();
    // Real time again: a real millisecond passes, on top of the hour.
    sleep(Duration::from_millis(1)).await;
    assert!(Instant::now() - start >= HOUR + Duration::from_millis(1));
    time::pause();
    assert!(Instant::now() - start >= HOUR);
}

#[spinpark::test(start_paused = true)]
async fn a_blocking_closure_holds_off_auto_advance() {
    // While the closure is queued or running the scheduler has nothing to run, but the clock
    // must not jump: the closure is about to produce work. Without that rule the one-second
    // sleep wins at once.
    let blocking = spinpark::spawn_blocking(|| {
        std::thread::sleep(Duration::from_millis(30));
        7
    });
    let first = tokio::select! {
        v = blocking => v.unwrap(),
        _ = sleep(Duration::from_secs(1)) => 0,
    };
    assert_eq!(first, 7);
}

#[spinpark::test(start_paused = true)]
async fn tcp_works_while_time_is_paused() {
    // With no timer pending the runtime waits for I/O as usual.
    let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = spinpark::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0; 4];
        s.read_exact(&mut buf).await.unwrap();
        s.write_all(&buf).await.unwrap();
    });
    let mut c = spinpark::net::TcpStream::connect(addr).await.unwrap();
    c.write_all(b"ping").await.unwrap();
    let mut buf = [0; 4];
    c.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"ping");
    server.await.unwrap();
}

#[test]
fn a_second_block_on_caller_is_not_left_behind_by_auto_advance() {
    // A drives the runtime and sleeps 10 s; B, a second block_on caller, sleeps 1 s twice.
    // When B's first sleep fires, A's thread (the driver) has nothing to run: were the woken
    // B not counted until it has polled again, the clock could jump to A's 10 s before B
    // registers its second sleep, which would then end at 11 s. The window is short (the
    // driver first takes the unpark that B's wake sends), hence the rounds.
    for _ in 0..ROUNDS {
        second_caller_round();
    }
}

const ROUNDS: usize = 100;

fn second_caller_round() {
    let rt = Arc::new(
        spinpark::Builder::new_current_thread()
            .start_paused(true)
            .build()
            .unwrap(),
    );
    let (seated_tx, seated_rx) = std::sync::mpsc::channel();
    let (b_ready_tx, b_ready_rx) = tokio::sync::oneshot::channel();
    let start = rt.block_on(async { Instant::now() });
    let other = rt.clone();
    let b = std::thread::spawn(move || {
        seated_rx.recv().unwrap();
        other.block_on(async move {
            let mut at = Vec::new();
            let mut first = std::pin::pin!(sleep(Duration::from_secs(1)));
            // Registers the first timer, then lets A go on.
            std::future::poll_fn(|cx| {
                let _ = first.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
            b_ready_tx.send(()).unwrap();
            first.await;
            at.push(Instant::now() - start);
            sleep(Duration::from_secs(1)).await;
            at.push(Instant::now() - start);
            at
        })
    });
    let a_done = rt.block_on(async move {
        // A holds the seat from here on; B waits for it and polls its own future.
        seated_tx.send(()).unwrap();
        b_ready_rx.await.unwrap();
        sleep(Duration::from_secs(10)).await;
        Instant::now() - start
    });
    let b_at = b.join().unwrap();
    assert_eq!(b_at, [Duration::from_secs(1), Duration::from_secs(2)]);
    assert_eq!(a_done, Duration::from_secs(10));
}

#[test]
fn paused_time_is_per_runtime() {
    let a = spinpark::Builder::new_current_thread()
        .start_paused(true)
        .build()
        .unwrap();
    let b = spinpark::Builder::new_current_thread().build().unwrap();
    let t_a = a.block_on(async {
        let t = Instant::now();
        advance(HOUR).await;
        Instant::now() - t
    });
    assert_eq!(t_a, HOUR);
    // The other runtime's clock, and std's outside any runtime, run as usual.
    let moved = b.block_on(async {
        let t = Instant::now();
        sleep(Duration::from_millis(2)).await;
        Instant::now() - t
    });
    assert!(moved >= Duration::from_millis(2) && moved < HOUR);
    let outside = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    assert!(outside.elapsed() >= Duration::from_millis(2));
}

#[spinpark::test(flavor = "multi_thread")]
#[should_panic(expected = "time can only be paused on a current-thread runtime")]
async fn pause_panics_on_a_multi_thread_runtime() {
    time::pause();
}

#[test]
#[should_panic(expected = "outside a spinpark runtime")]
fn pause_panics_outside_a_runtime() {
    time::pause();
}

#[spinpark::test]
#[should_panic(expected = "time is not paused")]
async fn advance_panics_unless_paused() {
    advance(Duration::from_secs(1)).await;
}

#[spinpark::test(start_paused = true)]
#[should_panic(expected = "already paused")]
async fn pausing_twice_panics() {
    time::pause();
}

/// `resume` from a thread outside the scheduler, while a blocking closure holds auto-advance
/// off: the driver, blocked with no timeout because the clock was paused, must learn that the
/// clock runs again, or the runtime's timers never fire.
#[test]
fn resume_from_a_blocking_closure_wakes_the_paused_driver() {
    let rt = spinpark::Builder::new_current_thread()
        .start_paused(true)
        .build()
        .unwrap();
    let done = within_watchdog(move || {
        rt.block_on(async {
            // Holds auto-advance off while it runs, then resumes the clock from the pool.
            let _blocking = spinpark::spawn_blocking(|| {
                std::thread::sleep(Duration::from_millis(50));
                time::resume();
            });
            sleep(Duration::from_millis(50)).await;
            true
        })
    });
    assert!(done);
}

/// The same, with `resume` called from a second `block_on` thread.
#[test]
fn resume_from_a_second_block_on_thread_wakes_the_paused_driver() {
    let rt = Arc::new(
        spinpark::Builder::new_current_thread()
            .start_paused(true)
            .build()
            .unwrap(),
    );
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let other = rt.clone();
    let b = std::thread::spawn(move || {
        // Let A take the seat and its driver block (paused, held off) first.
        std::thread::sleep(Duration::from_millis(50));
        other.block_on(async { time::resume() });
        release_tx.send(()).unwrap();
    });
    let done = within_watchdog(move || {
        rt.block_on(async {
            // Holds auto-advance off until B has resumed the clock.
            let _hold = spinpark::spawn_blocking(move || release_rx.recv());
            sleep(Duration::from_millis(50)).await;
            true
        })
    });
    assert!(done);
    b.join().unwrap();
}

/// Runs `f` on its own thread; fails the test if it hangs.
fn within_watchdog<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(REAL_BOUND)
        .expect("hung: the driver never woke up after resume")
}
