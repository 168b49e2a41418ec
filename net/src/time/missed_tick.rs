//! [`MissedTickBehavior`]: what an [`Interval`](super::Interval) does after a late tick.

use std::time::Duration;

use super::{after, Instant};

/// What an [`Interval`](super::Interval) does with the ticks it missed because a tick was
/// awaited late. The three behaviours and the default are tokio's.
///
/// A tick counts as late when it completes more than [`MissedTickBehavior::SLACK`] after its
/// scheduled instant; a tick that is merely a little late (timer granularity, a busy worker)
/// keeps the schedule under every behaviour.
///
/// ```
/// use std::time::Duration;
/// use spinpark_net::time::{interval, MissedTickBehavior};
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// let mut every = interval(Duration::from_millis(10));
/// assert_eq!(every.missed_tick_behavior(), MissedTickBehavior::Burst);
/// every.set_missed_tick_behavior(MissedTickBehavior::Skip);
/// every.tick().await;
/// # });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Catch up: the missed ticks complete at once, one per call, until the schedule is met
    /// again; the schedule itself does not move. The default, as in tokio.
    #[default]
    Burst,
    /// Restart the schedule from the late tick: the next tick is one period after it
    /// completed, so ticks are never closer together than the period.
    Delay,
    /// Drop the missed ticks: the next tick is the next instant on the original schedule that
    /// is still in the future.
    Skip,
}

impl MissedTickBehavior {
    /// How late a tick may complete and still count as on time (tokio's threshold).
    ///
    /// ```
    /// assert_eq!(spinpark::time::MissedTickBehavior::SLACK, std::time::Duration::from_millis(5));
    /// ```
    pub const SLACK: Duration = Duration::from_millis(5);

    /// The instant of the tick after the one `scheduled` for, which completed at `now`.
    pub(crate) fn next_tick(self, scheduled: Instant, now: Instant, period: Duration) -> Instant {
        // Clamped additions (`super::after`), like `sleep`: a huge period means "practically
        // never", not an overflow panic.
        let on_schedule = after(scheduled, period);
        if now <= scheduled + Self::SLACK {
            return on_schedule;
        }
        match self {
            MissedTickBehavior::Burst => on_schedule,
            MissedTickBehavior::Delay => after(now, period),
            MissedTickBehavior::Skip => {
                let late = (now - scheduled).as_nanos();
                let into_period = (late % period.as_nanos()) as u64;
                after(now, period - Duration::from_nanos(into_period))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MissedTickBehavior::{self, *};
    use crate::time::Instant;
    use std::time::Duration;

    const P: Duration = Duration::from_millis(100);

    fn next(b: MissedTickBehavior, late_ms: u64) -> Duration {
        let t0 = Instant::now();
        b.next_tick(t0, t0 + Duration::from_millis(late_ms), P) - t0
    }

    #[test]
    fn on_time_ticks_keep_the_schedule() {
        for b in [Burst, Delay, Skip] {
            assert_eq!(next(b, 0), P);
            assert_eq!(next(b, 5), P);
        }
    }

    #[test]
    fn late_ticks_follow_the_behaviour() {
        // Scheduled at 0, completed at 250 ms with a 100 ms period.
        assert_eq!(next(Burst, 250), Duration::from_millis(100));
        assert_eq!(next(Delay, 250), Duration::from_millis(350));
        assert_eq!(next(Skip, 250), Duration::from_millis(300));
        // Exactly on a later tick's instant: Skip moves to the one after it.
        assert_eq!(next(Skip, 200), Duration::from_millis(300));
    }
}
