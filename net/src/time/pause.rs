//! Paused time for tests (feature `test-util`): [`pause`], [`resume`] and [`advance`], with
//! tokio's names and meaning.

use std::time::Duration;

use spinpark_executor::driver;
use spinpark_executor::Handle;

use crate::reactor::Reactor;

fn current(what: &str) -> Handle {
    Handle::try_current().unwrap_or_else(|_| {
        panic!(
            "spinpark::time::{what} called outside a spinpark runtime: call it from a task, \
             from Runtime::block_on, or from #[spinpark::test]"
        )
    })
}

/// Pauses the current runtime's clock (feature `test-util`): from now on
/// [`Instant::now`](super::Instant::now) stays where it is, except that [`advance`] moves it,
/// and so does the runtime itself when it has nothing to run and a timer is pending
/// (**auto-advance**: the clock jumps to the earliest timer). A test that sleeps for an hour,
/// or waits for a 30-second timeout, then finishes at once, with timers firing in deadline
/// order. std's `Instant` is not affected.
///
/// ```
/// use std::time::Duration;
/// use spinpark::time::{self, Instant};
///
/// #[spinpark::test] // current-thread, as #[tokio::test]
/// async fn an_hour_in_no_time() {
///     time::pause();
///     let start = Instant::now();
///     time::sleep(Duration::from_secs(3600)).await; // auto-advance: returns at once
///     assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// }
/// # fn main() {}
/// ```
///
/// `#[spinpark::test(start_paused = true)]` starts the test with the clock paused.
///
/// Only a current-thread runtime can be paused: `#[spinpark::test]` (current-thread unless
/// `worker_threads` or `flavor = "multi_thread"` is given), or
/// `Builder::new_current_thread()`. There the thread in `block_on` runs every task, so when it
/// has nothing to run, has re-checked every queue and its own future's waker, and a
/// non-blocking look at the sockets found nothing, nothing the runtime knows of can still
/// register an earlier timer: jumping is safe. A `spawn_blocking` closure that is queued or
/// running, or another thread polling its own future in `block_on`, holds the jump off until
/// it is done. On the multi-thread runtime the idle protocol knows when every worker is
/// parked, but the `block_on` caller and the blocking pool work outside it, and a driver may
/// park beside a worker stuck in a long poll; so, as in tokio, pausing panics there.
///
/// # Panics
/// Outside a spinpark runtime, on a multi-thread runtime (the message names the fix), or if
/// the clock is already paused.
#[track_caller]
pub fn pause() {
    let handle = current("pause");
    if let Err(msg) = driver::clock(&handle).pause() {
        panic!("{msg}");
    }
}

/// Starts the paused clock again (feature `test-util`), from its paused reading: it runs on
/// with real time from there.
///
/// ```
/// # spinpark::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::time::Duration;
/// spinpark::time::pause();
/// spinpark::time::advance(Duration::from_secs(10)).await;
/// spinpark::time::resume();
/// spinpark::time::sleep(Duration::from_millis(1)).await; // real time again
/// # });
/// ```
///
/// # Panics
/// Outside a spinpark runtime, or if the clock is not paused.
#[track_caller]
pub fn resume() {
    let handle = current("resume");
    if let Err(msg) = driver::clock(&handle).resume() {
        panic!("{msg}");
    }
    // A driver parked while the clock was paused waits with no timeout (real time did not
    // move the clock): called from outside the scheduler (a blocking closure, a second
    // `block_on` thread) while auto-advance was held off, nothing else would wake it, and
    // its timers would never fire. Wake it to wait for real time instead.
    if let Some(d) = driver::get(&handle) {
        d.unpark();
    }
}

/// Moves the paused clock forward by `duration` at once (feature `test-util`), fires the
/// timers that are now due, and yields once, so that the tasks they woke get to run before
/// this returns (those that need more than one poll may still be running, as in tokio: to wait
/// for a timer itself, `sleep` and let auto-advance move the clock).
///
/// ```
/// # spinpark::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use spinpark::time::{self, Instant};
/// time::pause();
/// let start = Instant::now();
/// let timer = spinpark::spawn(time::sleep(Duration::from_secs(5)));
/// time::advance(Duration::from_secs(5)).await;
/// assert_eq!(Instant::now() - start, Duration::from_secs(5));
/// assert!(timer.is_finished());
/// # });
/// ```
///
/// # Panics
/// When first polled outside a spinpark runtime, or if the clock is not paused.
pub async fn advance(duration: Duration) {
    let handle = current("advance");
    if let Err(msg) = driver::clock(&handle).advance(duration) {
        panic!("{msg}");
    }
    if let Some(reactor) = Reactor::installed(&handle) {
        reactor.timers.fire_due(|| reactor.timer_now());
    }
    spinpark_executor::yield_now().await;
}
