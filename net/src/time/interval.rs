//! [`Interval`]: ticks at a fixed period, from now ([`interval`]) or from a given instant
//! ([`interval_at`]), with tokio's missed-tick behaviours and resets.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use spinpark::time::{interval_at, Duration, Instant};
//! let start = Instant::now() + Duration::from_millis(5);
//! let mut every = interval_at(start, Duration::from_millis(2));
//! assert_eq!(every.tick().await, start);
//! assert!(Instant::now() >= start);
//! let before = Instant::now();
//! every.reset(); // the next tick is a period from now
//! assert!(every.tick().await >= before + Duration::from_millis(2));
//! # });
//! ```
//!
//! How it works: an interval is a [`Sleep`] for its next tick. A completed tick computes the
//! next one ([`MissedTickBehavior`]) and resets the sleep to it; the resets here move the same
//! sleep, so the interval keeps its period and behaviour.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{
    after as clamped_add, sleep_until, Duration, Instant, MissedTickBehavior, Sleep, Tick,
};

/// Ticks every `period`, starting now (the first tick completes at once).
///
/// A tick awaited late (the task was busy for longer than a period) completes at once; what
/// happens to the ticks missed meanwhile is the interval's [`MissedTickBehavior`]. The default
/// is tokio's, [`MissedTickBehavior::Burst`]: the missed ticks complete at once, one per call,
/// until the schedule has caught up.
///
/// ```
/// use std::time::Duration;
/// use spinpark_net::time::{interval, MissedTickBehavior};
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// let mut every = interval(Duration::from_millis(1));
/// every.set_missed_tick_behavior(MissedTickBehavior::Delay);
/// let first = every.tick().await;
/// let second = every.tick().await;
/// assert!(second >= first + Duration::from_millis(1));
/// # });
/// ```
///
/// # Panics
/// If `period` is zero.
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "spinpark::time::interval: period must be non-zero"
    );
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start` (tokio's `interval_at`).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::time::{interval_at, Duration, Instant};
/// let start = Instant::now() + Duration::from_millis(20);
/// let mut every = interval_at(start, Duration::from_millis(10));
/// assert_eq!(every.tick().await, start); // waits until `start`
/// assert!(Instant::now() >= start);
/// assert_eq!(every.tick().await, start + Duration::from_millis(10));
/// # });
/// ```
///
/// # Panics
/// If `period` is zero.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "spinpark::time::interval_at: period must be non-zero"
    );
    Interval {
        period,
        sleep: Box::pin(sleep_until(start)),
        missed: MissedTickBehavior::default(),
        due_now: start <= Instant::now(),
    }
}

/// A stream of ticks; see [`interval`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use std::time::Duration;
/// let mut every = spinpark::time::interval(Duration::from_millis(1));
/// for _ in 0..3 {
///     every.tick().await;
/// }
/// # });
/// ```
#[derive(Debug)]
pub struct Interval {
    period: Duration,
    /// Boxed, as tokio's: a `Sleep` is pinned, and an `Interval` stays movable.
    sleep: Pin<Box<Sleep>>,
    missed: MissedTickBehavior,
    /// The next tick's time had come when it was set (a start in the past, a reset to now):
    /// the next poll ticks at once, as tokio's does, instead of at the reactor's next turn.
    due_now: bool,
}

impl Interval {
    /// Waits for the next tick and returns the instant it was scheduled for. The future is a
    /// `FusedFuture`, so `futures::select!` takes it as it is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut every = spinpark::time::interval(std::time::Duration::from_millis(1));
    /// let first = every.tick().await; // at once
    /// let second = every.tick().await;
    /// assert!(second > first);
    /// # });
    /// ```
    pub fn tick(&mut self) -> Tick<'_> {
        Tick::new(self)
    }

    /// Polls for the next tick.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut every = spinpark::time::interval(std::time::Duration::from_millis(1));
    /// std::future::poll_fn(|cx| every.poll_tick(cx)).await;
    /// # });
    /// ```
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        let due = std::mem::take(&mut self.due_now);
        match if due {
            Poll::Ready(())
        } else {
            self.sleep.as_mut().poll(cx)
        } {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                let scheduled = self.sleep.deadline();
                let now = self.sleep.now();
                // Clamped like `sleep`: a huge period means "practically never".
                let next = self.missed.next_tick(scheduled, now, self.period);
                self.sleep.as_mut().reset(next);
                Poll::Ready(scheduled)
            }
        }
    }

    /// Restarts the schedule: the next tick is one period from now (tokio's `reset`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::time::{interval, Duration, Instant};
    /// let mut every = interval(Duration::from_millis(10));
    /// every.tick().await;
    /// let before = Instant::now();
    /// every.reset();
    /// assert!(every.tick().await >= before + Duration::from_millis(10));
    /// # });
    /// ```
    pub fn reset(&mut self) {
        self.reset_at(clamped_add(Instant::now(), self.period));
    }

    /// Restarts the schedule from now: the next tick completes at once (tokio's
    /// `reset_immediately`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::time::{interval, Duration, Instant};
    /// let mut every = interval(Duration::from_secs(60));
    /// every.tick().await;
    /// let before = Instant::now();
    /// every.reset_immediately();
    /// let tick = every.tick().await; // no minute-long wait
    /// assert!(tick >= before && tick <= Instant::now());
    /// # });
    /// ```
    pub fn reset_immediately(&mut self) {
        self.reset_at(Instant::now());
    }

    /// Restarts the schedule: the next tick is `after` from now, the ones after it a period
    /// apart (tokio's `reset_after`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::time::{interval, Duration, Instant};
    /// let mut every = interval(Duration::from_secs(60));
    /// every.tick().await;
    /// let before = Instant::now();
    /// every.reset_after(Duration::from_millis(5)); // not a minute
    /// let tick = every.tick().await;
    /// assert!(tick >= before + Duration::from_millis(5) && tick <= Instant::now());
    /// # });
    /// ```
    pub fn reset_after(&mut self, after: Duration) {
        self.reset_at(clamped_add(Instant::now(), after));
    }

    /// Restarts the schedule: the next tick is at `deadline`, the ones after it a period
    /// apart (tokio's `reset_at`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::time::{interval, Duration, Instant};
    /// let mut every = interval(Duration::from_secs(60));
    /// every.tick().await;
    /// let at = Instant::now() + Duration::from_millis(5);
    /// every.reset_at(at);
    /// assert_eq!(every.tick().await, at);
    /// # });
    /// ```
    pub fn reset_at(&mut self, deadline: Instant) {
        self.sleep.as_mut().reset(deadline);
        self.due_now = deadline <= Instant::now();
    }

    /// The period.
    ///
    /// ```
    /// let every = spinpark::time::interval(std::time::Duration::from_millis(20));
    /// assert_eq!(every.period(), std::time::Duration::from_millis(20));
    /// ```
    pub fn period(&self) -> Duration {
        self.period
    }

    /// What a late tick does to the ticks it missed; see [`MissedTickBehavior`].
    ///
    /// ```
    /// use spinpark::time::MissedTickBehavior;
    /// let every = spinpark::time::interval(std::time::Duration::from_millis(20));
    /// assert_eq!(every.missed_tick_behavior(), MissedTickBehavior::Burst);
    /// ```
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed
    }

    /// Sets what a late tick does to the ticks it missed (default: burst, as tokio).
    ///
    /// ```
    /// use spinpark::time::MissedTickBehavior;
    /// let mut every = spinpark::time::interval(std::time::Duration::from_millis(20));
    /// every.set_missed_tick_behavior(MissedTickBehavior::Skip);
    /// ```
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed = behavior;
    }
}

impl futures_core::Stream for Interval {
    type Item = Instant;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.poll_tick(cx).map(Some)
    }
}
