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
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::reactor::Reactor;
use crate::timers::{Node, NotFiled, Status, TimerRef};

pub mod error;
mod instant;
mod interval;
mod missed_tick;
#[cfg(feature = "test-util")]
mod pause;
#[cfg(test)]
mod race_tests;
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
    Sleep::new(deadline, State::Unregistered)
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
    Sleep::new(deadline, state)
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
/// As tokio's, it is `!Unpin` (its timer lives inside it, so arming one allocates nothing):
/// pin it to poll it by hand or hand it to `select!` ([`std::pin::pin!`], `Box::pin`).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::{future::FusedFuture, select};
/// let mut sleep = std::pin::pin!(spinpark::time::sleep(std::time::Duration::from_millis(1)));
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
    /// The timer, filed by address in the reactor's wheel while it is pending: the reason
    /// for `PhantomPinned`, and for the destructor's taking it out.
    node: Node,
    _pinned: PhantomPinned,
}

enum State {
    Unregistered,
    /// Not registered yet, but on this reactor rather than the current runtime's.
    Bound(Arc<Reactor>),
    Registered(Arc<Reactor>, TimerRef),
    /// Completed: its timer fired. The timer is kept, to be re-armed by a reset (an
    /// interval's next tick).
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
    fn new(deadline: Instant, state: State) -> Sleep {
        Sleep {
            deadline,
            state,
            node: Node::new(),
            _pinned: PhantomPinned,
        }
    }

    /// The instant this sleep completes at.
    ///
    /// ```
    /// let s = spinpark::time::sleep(std::time::Duration::from_secs(1));
    /// assert!(s.deadline() > spinpark::time::Instant::now());
    /// ```
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the deadline has passed, or the sleep can never complete because its runtime
    /// shut down (as tokio's: such a timer is done).
    ///
    /// ```
    /// let s = spinpark::time::sleep(std::time::Duration::from_secs(60));
    /// assert!(!s.is_elapsed());
    /// ```
    pub fn is_elapsed(&self) -> bool {
        match &self.state {
            State::Done | State::Fired(..) => true,
            // A timer whose runtime is gone can never fire: it is done, as tokio's is.
            State::Registered(r, _) | State::Bound(r) if r.is_shut_down() => true,
            State::Registered(..) if self.node.status() != Status::Pending => true,
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

    /// Moves the deadline (and re-arms a completed sleep), as tokio's `Sleep::reset`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut s = std::pin::pin!(spinpark::time::sleep(std::time::Duration::from_secs(60)));
    /// s.as_mut().reset(spinpark::time::Instant::now()); // due now instead
    /// s.await;
    /// # });
    /// ```
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        // SAFETY: nothing is moved out of the sleep; the node stays where it is.
        let this = unsafe { self.get_unchecked_mut() };
        this.deadline = deadline;
        match &mut this.state {
            State::Registered(r, t) | State::Fired(r, t) => {
                // Pushed back: an atomic store. Brought forward, or fired: the timer's shard's
                // lock, and a parked worker waiting for later is woken. Due already, or the
                // runtime shut down: the timer says so and the next poll acts on it.
                let when = r.timers.nanos(deadline.into_std());
                // SAFETY: the node is pinned (we were) and our destructor cancels it.
                if let Ok(true) = unsafe { r.timers.reset(&this.node, t, when) } {
                    r.timer_added(when);
                }
                if let State::Fired(..) = this.state {
                    let State::Fired(r, t) = std::mem::replace(&mut this.state, State::Done) else {
                        unreachable!()
                    };
                    this.state = State::Registered(r, t);
                }
            }
            State::Done => this.state = State::Unregistered,
            State::Unregistered | State::Bound(_) => {}
        }
    }

    /// Takes the timer out of the store, which is then done with the node, and marks the sleep
    /// done (a `Timeout` that completes uses this as its terminated mark).
    fn unregister(&mut self) {
        // Cancel through a reference, then overwrite: moving the state out whole (a 16-byte
        // copy of fields that `arm` stored one by one) stalls on store forwarding, which was
        // a tenth of an arm + cancel.
        match &self.state {
            State::Registered(r, t) | State::Fired(r, t) => r.timers.cancel(&self.node, t),
            State::Done => return,
            State::Unregistered | State::Bound(_) => {}
        }
        self.state = State::Done;
    }

    /// Whether this sleep has completed (and not been reset since).
    fn completed(&self) -> bool {
        matches!(self.state, State::Done | State::Fired(..))
    }

    /// Arms the timer with `r` on the first poll: pending, or ready if already due.
    ///
    /// # Panics
    /// If `r`'s runtime has shut down (then the timer could never fire).
    fn arm(self: Pin<&mut Self>, r: Arc<Reactor>, waker: &Waker) -> Poll<()> {
        // SAFETY: nothing is moved out of the sleep; the node stays where it is.
        let this = unsafe { self.get_unchecked_mut() };
        let when = r.timers.nanos(this.deadline.into_std());
        // SAFETY: the node is pinned, filed nowhere (this state is only ever entered with the
        // store done with it), and our destructor cancels it.
        match unsafe { r.timers.arm(&this.node, when, waker) } {
            Ok(t) => {
                r.timer_added(when);
                this.state = State::Registered(r, t);
                Poll::Pending
            }
            Err(NotFiled::Due) => {
                this.state = State::Done;
                Poll::Ready(())
            }
            Err(NotFiled::Closed) => panic!("{SHUT_DOWN}"),
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &self.state {
            State::Done | State::Fired(..) => Poll::Ready(()),
            State::Registered(..) => {
                // SAFETY: nothing is moved out of the sleep.
                let this = unsafe { self.get_unchecked_mut() };
                // No clock read: the reactor's turn reads it and fires the timer.
                this.node.register(cx.waker());
                match this.node.status() {
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
                        this.unregister();
                        Poll::Ready(())
                    }
                    Status::ShutDown => panic!("{SHUT_DOWN}"),
                }
            }
            State::Unregistered => {
                // Fails once the runtime has shut down (its message says so).
                let r = Reactor::current().unwrap_or_else(|e| panic!("spinpark::time: {e}"));
                self.arm(r, cx.waker())
            }
            State::Bound(r) => {
                let r = r.clone();
                self.arm(r, cx.waker())
            }
        }
    }
}

/// A `Sleep` that has completed is terminated until [`Sleep::reset`] re-arms it, so
/// `futures::select!` can take it (pinned) without `.fuse()`.
impl futures_core::FusedFuture for Sleep {
    fn is_terminated(&self) -> bool {
        self.completed()
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        // The store must be done with the node before its memory goes: `cancel` takes the
        // timer out, or returns once a firing under way has finished with it.
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
        #[pin]
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
        let mut this = self.project();
        if let Poll::Ready(v) = this.future.poll(cx) {
            // Also marks the timeout terminated (see its `FusedFuture`).
            // SAFETY: unregistering moves nothing out of the sleep.
            unsafe { this.sleep.as_mut().get_unchecked_mut() }.unregister();
            return Poll::Ready(Ok(v));
        }
        match this.sleep.poll(cx) {
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
