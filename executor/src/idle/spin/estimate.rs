//! The running estimate the spin policy keeps of its samples: a [`Median`], which follows the
//! typical value (the arms' `d` in `mode.rs`, the arrival interval in `probe.rs`).
//!
//! ```text
//! let m = Median::new();  m.nudge(d, 0);   // the typical `d` of spinning periods
//! ```
//!
//! It is one `AtomicU32` of nanoseconds, 0 meaning "no sample yet", updated by a load and a
//! store with no allocation: cheap enough for every idle period. It takes the frugal
//! streaming step: each sample moves the estimate towards itself by at most a 32nd of the
//! estimate (at least 1 ns). Half the samples above the estimate and half below hold it
//! still, so it settles on a median; one outlier moves it by a 32nd at most.
//!
//! Every estimate is a statistic: it is read and written `Relaxed`, and two workers that
//! update it at once may lose one sample, which a statistic can afford.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// A running median of nanosecond samples (frugal streaming; see the module documentation).
#[derive(Debug)]
pub(super) struct Median(AtomicU32);

impl Median {
    /// An estimate with no sample yet.
    pub(super) fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    /// The estimate, ns (0: no sample yet).
    pub(super) fn get(&self) -> u32 {
        self.0.load(Relaxed)
    }

    /// One sample `x`: moves the estimate towards it by at most a 32nd. An estimate without
    /// samples starts from `prior` (for a probe's arm, the other arm's estimate: "no
    /// difference" until shown otherwise), or, if that is 0, from `x`.
    pub(super) fn nudge(&self, x: u32, prior: u32) {
        let mut cur = self.0.load(Relaxed);
        if cur == 0 {
            cur = prior;
            if cur == 0 {
                self.0.store(x.max(1), Relaxed);
                return;
            }
        }
        let step = (cur / 32).max(1);
        let new = if x > cur {
            cur.saturating_add(step).min(x)
        } else {
            cur.saturating_sub(step).max(x).max(1)
        };
        self.0.store(new, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_median_starts_from_its_prior_or_its_first_sample() {
        let m = Median::new();
        assert_eq!(m.get(), 0);
        m.nudge(0, 0);
        assert_eq!(m.get(), 1, "never 0 once sampled");
        let m = Median::new();
        m.nudge(5_000, 0);
        assert_eq!(m.get(), 5_000);
        let m = Median::new();
        m.nudge(5_000, 3_200);
        assert_eq!(m.get(), 3_300, "a 32nd of the prior towards the sample");
    }

    #[test]
    fn a_median_moves_a_32nd_at_most_and_never_past_the_sample() {
        let m = Median::new();
        m.nudge(32_000, 0);
        m.nudge(1_000_000, 0);
        assert_eq!(m.get(), 33_000);
        m.nudge(33_100, 0);
        assert_eq!(m.get(), 33_100, "stops at the sample");
        m.nudge(0, 0);
        assert_eq!(m.get(), 33_100 - 33_100 / 32);
        // Small estimates still move, by 1 ns.
        let m = Median::new();
        m.nudge(10, 0);
        m.nudge(100, 0);
        assert_eq!(m.get(), 11);
    }

    /// With two modes in equal parts, a median sits anywhere between them; with a clear
    /// majority it settles on the majority's value.
    #[test]
    fn a_median_settles_on_the_majority() {
        let m = Median::new();
        for i in 0..2_000u32 {
            m.nudge(if i % 3 == 0 { 5_000_000 } else { 50_000 }, 0);
        }
        assert!(m.get().abs_diff(50_000) <= 50_000 / 16, "{}", m.get());
    }
}
