//! The CPU budget: how much spinning the runtime's workers may do together, per second.
//!
//! ```text
//! let budget = Budget::new(1.0);                 // one core
//! if budget.exceeded(now) { park at once } else { spin }
//! budget.charge(now, spun_ns);                   // when a spin window ends
//! ```
//!
//! Every spin window is charged, by its wall time, to a sliding window of about a second
//! ([`SPAN`], two buckets of 2^30 ns): the estimate of what was spent in the last `SPAN` is the
//! current bucket plus the previous one scaled by the part of it still inside the span. The
//! budget (`Builder::spin_budget`, in cores; by default one core, but never more than
//! `max_spinners` nor the CPUs the process may use) is that many `SPAN`s of spinning per
//! `SPAN`. When the estimate exceeds it, workers park at once.
//!
//! The check is made when a window starts, so a window may overrun the budget by at most its
//! own length; and a window is charged when it ends, to the bucket it ends in, so one spinner
//! that never stops may read as slightly more than one core. The estimate is therefore allowed
//! [`SLACK`], a 32nd of a core (3 %), over the budget.
//!
//! The buckets are statistics, read and written `Relaxed`: a charge that races with the
//! retirement of a bucket may land in either one, and the budget is an estimate anyway.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::Nanos;

/// The span of the sliding window, and of each bucket: 2^30 ns, about a second.
const SHIFT: u32 = 30;
pub(super) const SPAN: u64 = 1 << SHIFT;
/// How far over the budget the estimate may go, ns per `SPAN`: a 32nd of a core.
const SLACK: u64 = SPAN >> 5;

/// Spin time spent recently, against what is allowed; see the module documentation.
#[derive(Debug)]
pub(super) struct Budget {
    /// Spinning allowed per `SPAN`, ns.
    allowed: u64,
    /// The current bucket's number (time / `SPAN`), what was charged to it, and what was
    /// charged to the one before it (0 if that one saw no charge).
    bucket: AtomicU64,
    spent: AtomicU64,
    spent_before: AtomicU64,
    /// Periods parked because the budget was spent.
    denied: AtomicU64,
}

impl Budget {
    /// A budget of `cores` (negative counts as zero).
    pub(super) fn new(cores: f64) -> Self {
        Self {
            allowed: (cores.max(0.0) * SPAN as f64) as u64,
            bucket: AtomicU64::new(0),
            spent: AtomicU64::new(0),
            spent_before: AtomicU64::new(0),
            denied: AtomicU64::new(0),
        }
    }

    /// A spin window that ended at `now` took `spun` ns.
    pub(super) fn charge(&self, now: Nanos, spun: Nanos) {
        self.roll(now);
        self.spent.fetch_add(spun, Relaxed);
    }

    /// Whether the spinning of the last `SPAN` before `now` is over the budget (with the
    /// slack): no window may start.
    pub(super) fn exceeded(&self, now: Nanos) -> bool {
        let over = self.recent(now) > self.allowed + SLACK;
        if over {
            self.denied.fetch_add(1, Relaxed);
        }
        over
    }

    /// Periods [`Budget::exceeded`] parked so far.
    pub(super) fn denied(&self) -> u64 {
        self.denied.load(Relaxed)
    }

    /// Spin time, ns, in the last `SPAN` before `now`, estimated.
    pub(super) fn recent(&self, now: Nanos) -> u64 {
        self.roll(now);
        let into = now & (SPAN - 1);
        let before = self.spent_before.load(Relaxed) as u128 * (SPAN - into) as u128;
        self.spent.load(Relaxed) + (before >> SHIFT) as u64
    }

    /// Starts the current bucket at `now`, retiring the one before.
    fn roll(&self, now: Nanos) {
        let b = now >> SHIFT;
        let cur = self.bucket.load(Relaxed);
        if b > cur
            && self
                .bucket
                .compare_exchange(cur, b, Relaxed, Relaxed)
                .is_ok()
        {
            // The winner of the CAS retires the bucket. A charge racing with it may land in
            // either bucket: the budget is an estimate.
            let spent = self.spent.swap(0, Relaxed);
            let before = if b == cur + 1 { spent } else { 0 };
            self.spent_before.store(before, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_within_a_bucket() {
        let b = Budget::new(1.0);
        b.charge(100, 1_000);
        b.charge(200, 2_000);
        assert_eq!(b.recent(300), 3_000);
    }

    /// The previous bucket counts for the part of it still inside the last `SPAN`.
    #[test]
    fn the_previous_bucket_fades_out_over_the_next() {
        let b = Budget::new(1.0);
        b.charge(SPAN - 1, 1 << 20);
        assert_eq!(b.recent(SPAN), 1 << 20, "just rolled: all of it");
        assert_eq!(
            b.recent(SPAN + SPAN / 4),
            3 << 18,
            "a quarter in: three quarters"
        );
        b.charge(SPAN + SPAN / 2, 100);
        assert_eq!(b.recent(SPAN + SPAN / 2), (1 << 19) + 100);
        assert_eq!(b.recent(2 * SPAN), 100, "the older bucket is gone");
    }

    #[test]
    fn a_bucket_skipped_over_leaves_nothing_behind() {
        let b = Budget::new(1.0);
        b.charge(10, 1 << 20);
        assert_eq!(b.recent(2 * SPAN + 1), 0);
        b.charge(3 * SPAN, 5);
        assert_eq!(b.recent(3 * SPAN), 5);
    }

    #[test]
    fn the_budget_is_exceeded_past_a_32nd_of_a_core_of_slack() {
        let b = Budget::new(0.25);
        b.charge(0, SPAN / 4 + SPAN / 32);
        assert!(!b.exceeded(1), "at the slack");
        b.charge(1, 1);
        assert!(b.exceeded(2));
        // A budget of no cores still allows the slack.
        let b = Budget::new(-1.0);
        assert!(!b.exceeded(0));
        b.charge(0, SPAN / 32 + 1);
        assert!(b.exceeded(0));
    }
}
