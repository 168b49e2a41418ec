//! Timers: [`sleep`], [`sleep_until`], [`timeout`] and [`interval`].
//!
//! ```
//! use std::time::Duration;
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! spinpark_net::time::sleep(Duration::from_millis(1)).await;
//! let r = spinpark_net::time::timeout(Duration::from_millis(1), std::future::pending::<()>()).await;
//! assert!(r.is_err());
//! # });
//! ```
//!
//! How it works: a [`Sleep`] registers itself in its runtime's reactor's timer store
//! (`timers.rs`) on its first poll and removes itself when dropped, so a cancelled `timeout`
//! costs nothing later. Every reactor turn (a spinner's poll or the parked worker's wait in
//! `poll(2)`, whose timeout is the earliest deadline) fires the timers that are due. A timer
//! fires only once `Instant::now()` has reached its deadline, never before.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::reactor::Reactor;
use crate::timers::TimerKey;

/// Waits until `duration` has elapsed.
///
/// # Panics
/// When first polled outside a spinpark runtime, or polled after its runtime shut down.
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(after(Instant::now(), duration))
}

/// Waits until `deadline`.
///
/// # Panics
/// When first polled outside a spinpark runtime, or polled after its runtime shut down.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        state: State::Unregistered,
    }
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
#[must_use = "futures do nothing unless you `.await` them"]
pub struct Sleep {
    deadline: Instant,
    state: State,
}

enum State {
    Unregistered,
    Registered(Arc<Reactor>, TimerKey),
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
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the deadline has passed.
    pub fn is_elapsed(&self) -> bool {
        matches!(self.state, State::Done) || Instant::now() >= self.deadline
    }

    /// Moves the deadline (and re-arms a completed sleep).
    pub fn reset(&mut self, deadline: Instant) {
        self.unregister();
        self.deadline = deadline;
        self.state = State::Unregistered;
    }

    fn unregister(&mut self) {
        if let State::Registered(r, key) = std::mem::replace(&mut self.state, State::Done) {
            r.timers.remove(key);
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        if matches!(this.state, State::Done) {
            return Poll::Ready(());
        }
        if Instant::now() >= this.deadline {
            this.unregister();
            return Poll::Ready(());
        }
        match &this.state {
            State::Registered(r, _) if r.is_shut_down() => {
                // Nothing will ever fire this timer: say so rather than wait forever (tokio
                // panics likewise). In a task, the panic becomes the task's JoinError.
                panic!("{SHUT_DOWN}")
            }
            State::Registered(r, key) => {
                if !r.timers.update(*key, cx.waker()) {
                    // Gone from the store without our clock saying "due": the runtime shut
                    // down meanwhile (re-arming then panics), or, though timers fire only at
                    // or after their deadline, it fired; re-arm to be safe.
                    this.state = arm(r.clone(), this.deadline, cx.waker());
                }
            }
            State::Unregistered => {
                // Fails once the runtime has shut down (its message says so).
                let r = Reactor::current().unwrap_or_else(|e| panic!("spinpark::time: {e}"));
                this.state = arm(r, this.deadline, cx.waker());
            }
            State::Done => unreachable!(),
        }
        Poll::Pending
    }
}

/// Registers a timer for `deadline` with `r`, waking a parked reactor if it is due earlier.
///
/// # Panics
/// If `r`'s runtime has shut down (then the timer could never fire).
fn arm(r: Arc<Reactor>, deadline: Instant, waker: &Waker) -> State {
    let Some(key) = r.timers.insert(deadline, waker.clone()) else {
        panic!("{SHUT_DOWN}");
    };
    r.timer_added(deadline);
    State::Registered(r, key)
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// The error of a [`timeout`] whose deadline passed first.
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
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep(duration),
    }
}

pin_project_lite::pin_project! {
    /// The future returned by [`timeout`].
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
            return Poll::Ready(Ok(v));
        }
        match Pin::new(this.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Ticks every `period`, starting now (the first tick completes at once).
///
/// Missed ticks are skipped: if a tick is awaited late (the task was busy for longer than a
/// period), it completes at once and the next one is scheduled one period after *now*, not
/// in a burst to catch up. So ticks are never closer together than `period`, and a slow
/// consumer sees fewer ticks rather than a flood.
///
/// # Panics
/// If `period` is zero.
pub fn interval(period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "spinpark::time::interval: period must be non-zero"
    );
    Interval {
        period,
        sleep: sleep_until(Instant::now()),
    }
}

/// A stream of ticks; see [`interval`].
#[derive(Debug)]
pub struct Interval {
    period: Duration,
    sleep: Sleep,
}

impl Interval {
    /// Waits for the next tick and returns the instant it was scheduled for.
    pub async fn tick(&mut self) -> Instant {
        std::future::poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        match Pin::new(&mut self.sleep).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                let scheduled = self.sleep.deadline();
                let now = Instant::now();
                // Clamped like `sleep`: a huge period means "practically never".
                let next = if now >= after(scheduled, self.period) {
                    // Missed one or more ticks: skip them.
                    after(now, self.period)
                } else {
                    after(scheduled, self.period)
                };
                self.sleep.reset(next);
                Poll::Ready(scheduled)
            }
        }
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}

impl futures_core::Stream for Interval {
    type Item = Instant;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.poll_tick(cx).map(Some)
    }
}
