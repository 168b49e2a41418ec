//! Timers: [`sleep`], [`sleep_until`], [`timeout`], [`timeout_at`], [`interval`] and
//! [`interval_at`], on the runtime's clock ([`Instant`]); with the `test-util` feature,
//! `pause`, `resume` and `advance` (tokio's test clock).
//!
//! ```
//! use spinpark_net::time::Duration; // std's, re-exported
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! spinpark_net::time::sleep(Duration::from_millis(1)).await;
//! let r = spinpark_net::time::timeout(Duration::from_millis(1), std::future::pending::<()>()).await;
//! assert!(r.is_err());
//! # });
//! ```
//!
//! How it works: a [`Sleep`] registers itself in its runtime's reactor's timer store
//! (`timers/`, a timing wheel per worker) on its first poll and removes itself when dropped,
//! so a cancelled `timeout` costs nothing later. Every reactor turn (a spinner's poll or the
//! parked worker's wait in `poll(2)`, whose timeout is the earliest deadline) reads the clock
//! once and fires the timers that are due; polling a `Sleep` reads no clock, it looks at its
//! timer's state. A timer fires only once the clock has reached its deadline, never before,
//! and at most about a millisecond after (the wheel's resolution, as tokio's). Pushing a
//! deadline back ([`Sleep::reset`], an idle timeout reset on every request) stores the new
//! deadline in the timer and takes no lock: the wheel files it again when its old slot
//! comes up.
//!
//! The clock is std's, read through [`Instant`], tokio's wrapper type. With the `test-util`
//! feature it is the runtime's own clock, which a test on a current-thread runtime may pause
//! (`pause`); the timers and `Instant::now()` then follow the paused time, and
//! the runtime jumps it to the next timer whenever it has nothing else to do (`pause.rs`, and
//! the reactor's `park_paused`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::reactor::Reactor;
use crate::timers::{NotFiled, Status, TimerRef};

mod instant;
mod interval;
mod missed_tick;
#[cfg(feature = "test-util")]
mod pause;
#[cfg(all(test, feature = "test-util"))]
mod tests;
mod tick;

pub use instant::Instant;
pub use interval::{interval, interval_at, Interval};
pub use missed_tick::MissedTickBehavior;
#[cfg(feature = "test-util")]
pub use pause::{advance, pause, resume};
/// std's `Duration`, here so that `spinpark::time::{Duration, Instant}` works as tokio's does.
pub use std::time::Duration;
pub use tick::Tick;

/// Waits until `duration` has elapsed.
///
/// # Panics
/// When first polled outside a spinpark runtime, or polled after its runtime shut down.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::time::{Duration, Instant};
/// let start = Instant::now();
/// spinpark::time::sleep(Duration::from_millis(10)).await;
/// assert!(start.elapsed() >= Duration::from_millis(10));
/// # });
/// ```
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(after(Instant::now(), duration))
}

/// Waits until `deadline`.
///
/// # Panics
/// When first polled outside a spinpark runtime, or polled after its runtime shut down.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::time::{Duration, Instant};
/// let deadline = Instant::now() + Duration::from_millis(5);
/// spinpark::time::sleep_until(deadline).await;
/// assert!(Instant::now() >= deadline);
/// # });
/// ```
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        state: State::Unregistered,
    }
}

/// A sleep of `duration` on `reactor`'s timers rather than the current runtime's: a socket's
/// own pause (accept's back-off) runs on the socket's reactor. Complete at once if that
/// reactor has shut down (the socket's next operation then reports it).
pub(crate) fn sleep_in(reactor: &Arc<Reactor>, duration: Duration) -> Sleep {
    let deadline = after(Instant::now(), duration);
    let state = if reactor.is_shut_down() {
        State::Done
    } else {
        State::Bound(reactor.clone())
    };
    Sleep { deadline, state }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365 * 30)
}

/// `t + d`, clamped to about 30 years from now where that overflows `Instant`.
fn after(t: Instant, d: Duration) -> Instant {
    t.checked_add(d).unwrap_or_else(far_future)
}

/// Why a timer panics once its runtime is gone.
const SHUT_DOWN: &str = "spinpark::time: the runtime this timer belongs to has shut down";

/// The future returned by [`sleep`] and [`sleep_until`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::{future::FusedFuture, select};
/// let mut sleep: spinpark::time::Sleep = spinpark::time::sleep(std::time::Duration::from_millis(1));
/// select! {
///     _ = sleep => {}
/// }
/// assert!(sleep.is_terminated());
/// # });
/// ```
#[must_use = "futures do nothing unless you `.await` them"]
pub struct Sleep {
    deadline: Instant,
    state: State,
}

enum State {
    Unregistered,
    /// Not registered yet, but on this reactor rather than the current runtime's.
    Bound(Arc<Reactor>),
    Registered(Arc<Reactor>, TimerRef),
    /// Completed: its timer fired. The timer is kept, to be re-armed by a reset without
    /// allocating (an interval's next tick).
    Fired(Arc<Reactor>, TimerRef),
    Done,
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline)
            .finish()
    }
}

impl Sleep {
    /// The instant this sleep completes at.
    ///
    /// ```
    /// let s = spinpark::time::sleep(std::time::Duration::from_secs(1));
    /// assert!(s.deadline() > spinpark::time::Instant::now());
    /// ```
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the deadline has passed.
    ///
    /// ```
    /// let s = spinpark::time::sleep(std::time::Duration::from_secs(60));
    /// assert!(!s.is_elapsed());
    /// ```
    pub fn is_elapsed(&self) -> bool {
        match &self.state {
            State::Done | State::Fired(..) => true,
            State::Registered(_, t) if t.status() == Status::Fired => true,
            _ => self.now() >= self.deadline,
        }
    }

    /// The clock this sleep follows: its reactor's once registered, else the current
    /// runtime's (std's outside one).
    fn now(&self) -> Instant {
        match &self.state {
            State::Registered(r, _) | State::Fired(r, _) => Instant::from_std(r.now()),
            _ => Instant::now(),
        }
    }

    /// Moves the deadline (and re-arms a completed sleep).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut s = spinpark::time::sleep(std::time::Duration::from_secs(60));
    /// s.reset(spinpark::time::Instant::now()); // due now instead
    /// s.await;
    /// # });
    /// ```
    pub fn reset(&mut self, deadline: Instant) {
        self.deadline = deadline;
        match &mut self.state {
            State::Registered(r, t) => {
                // Pushed back: an atomic store. Brought forward: the timer's shard's lock, and
                // a parked worker waiting for later is woken. Due already, or the runtime shut
                // down: the timer says so and the next poll acts on it.
                if let Ok(true) = r.timers.reset(t, deadline.into_std()) {
                    r.timer_added(deadline.into_std());
                }
            }
            State::Fired(..) => {
                let State::Fired(r, mut t) = std::mem::replace(&mut self.state, State::Done) else {
                    unreachable!()
                };
                // The same timer, filed again (or marked fired or shut down, for the next
                // poll to act on).
                if let Ok(true) = r.timers.reset(&mut t, deadline.into_std()) {
                    r.timer_added(deadline.into_std());
                }
                self.state = State::Registered(r, t);
            }
            State::Done => self.state = State::Unregistered,
            State::Unregistered | State::Bound(_) => {}
        }
    }

    fn unregister(&mut self) {
        if let State::Registered(r, t) = std::mem::replace(&mut self.state, State::Done) {
            r.timers.cancel(&t);
        }
    }

    /// Whether this sleep has completed (and not been reset since).
    fn completed(&self) -> bool {
        matches!(self.state, State::Done | State::Fired(..))
    }

    /// Arms the timer with `r` on the first poll: pending, or ready if already due.
    ///
    /// # Panics
    /// If `r`'s runtime has shut down (then the timer could never fire).
    fn arm(&mut self, r: Arc<Reactor>, waker: &Waker) -> Poll<()> {
        match r.timers.arm(self.deadline.into_std(), waker) {
            Ok(t) => {
                r.timer_added(self.deadline.into_std());
                self.state = State::Registered(r, t);
                Poll::Pending
            }
            Err(NotFiled::Due) => {
                self.state = State::Done;
                Poll::Ready(())
            }
            Err(NotFiled::Closed) => panic!("{SHUT_DOWN}"),
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        match &this.state {
            State::Done | State::Fired(..) => Poll::Ready(()),
            State::Registered(_, t) => {
                // No clock read: the reactor's turn reads it and fires the timer.
                t.register(cx.waker());
                match t.status() {
                    Status::Pending => Poll::Pending,
                    Status::Fired => {
                        if let State::Registered(r, t) =
                            std::mem::replace(&mut this.state, State::Done)
                        {
                            this.state = State::Fired(r, t);
                        }
                        Poll::Ready(())
                    }
                    // The runtime shut down before the timer fired: nothing ever will. Say so
                    // rather than wait forever (tokio panics likewise); in a task, the panic
                    // becomes the task's JoinError. Unless the deadline has passed anyway.
                    Status::ShutDown if this.now() >= this.deadline => {
                        this.state = State::Done;
                        Poll::Ready(())
                    }
                    Status::ShutDown => panic!("{SHUT_DOWN}"),
                }
            }
            State::Unregistered => {
                // Fails once the runtime has shut down (its message says so).
                let r = Reactor::current().unwrap_or_else(|e| panic!("spinpark::time: {e}"));
                this.arm(r, cx.waker())
            }
            State::Bound(r) => {
                let r = r.clone();
                this.arm(r, cx.waker())
            }
        }
    }
}

/// A `Sleep` that has completed is terminated until [`Sleep::reset`] re-arms it, so
/// `futures::select!` can take it without `.fuse()`.
impl futures_core::FusedFuture for Sleep {
    fn is_terminated(&self) -> bool {
        self.completed()
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// The error of a [`timeout`] whose deadline passed first.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let r = spinpark::time::timeout(std::time::Duration::from_millis(1), std::future::pending::<()>()).await;
/// let e: spinpark::time::Elapsed = r.unwrap_err();
/// assert_eq!(e.to_string(), "deadline has elapsed");
/// let io: std::io::Error = e.into(); // TimedOut, for `?` in io::Result code
/// assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
/// # });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(_: Elapsed) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, "deadline has elapsed")
    }
}

/// Runs `future`, giving up after `duration`: `Err(Elapsed)` if it had not finished by then
/// (the future is dropped).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use std::time::Duration;
/// let fast = spinpark::time::timeout(Duration::from_secs(5), async { 1 }).await;
/// assert_eq!(fast, Ok(1));
/// let slow = spinpark::time::timeout(Duration::from_millis(1), std::future::pending::<()>()).await;
/// assert!(slow.is_err());
/// # });
/// ```
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep(duration),
    }
}

/// Runs `future`, giving up at `deadline`: `Err(Elapsed)` if it had not finished by then.
///
/// ```
/// use spinpark_net::time::{Duration, Instant};
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// let deadline = Instant::now() + Duration::from_secs(5);
/// let r = spinpark_net::time::timeout_at(deadline, async { 1 }).await;
/// assert_eq!(r, Ok(1));
/// # });
/// ```
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep_until(deadline),
    }
}

pin_project_lite::pin_project! {
    /// The future returned by [`timeout`] and [`timeout_at`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::time::Duration;
    /// let t: spinpark::time::Timeout<_> = spinpark::time::timeout(Duration::from_secs(1), async { 2 });
    /// assert_eq!(t.await, Ok(2));
    /// # });
    /// ```
    #[must_use = "futures do nothing unless you `.await` them"]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        sleep: Sleep,
    }
}

impl<F> fmt::Debug for Timeout<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("deadline", &self.sleep.deadline())
            .finish_non_exhaustive()
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(v) = this.future.poll(cx) {
            // Also marks the timeout terminated (see its `FusedFuture`).
            this.sleep.unregister();
            return Poll::Ready(Ok(v));
        }
        match Pin::new(this.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Terminated once it has produced its result, so `futures::select!` takes it without
/// `.fuse()`.
impl<F: Future> futures_core::FusedFuture for Timeout<F> {
    fn is_terminated(&self) -> bool {
        self.sleep.completed()
    }
}
