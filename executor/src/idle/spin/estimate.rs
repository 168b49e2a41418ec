//! The two running estimates the spin policy keeps of its samples: a [`Median`], which follows
//! the typical value, and a [`Level`], a slow average that tells a new regime from noise.
//!
//! ```text
//! let m = Median::new();  m.nudge(d, 0);   // the typical `d` of spinning periods
//! let l = Level::new();   l.add(d);        // a slow average of the same, for the regime rule
//! ```
//!
//! Both are one `AtomicU32` of nanoseconds, 0 meaning "no sample yet", updated by a load and
//! a store with no allocation: cheap enough for every idle period.
//!
//! * A [`Median`] takes the frugal streaming step: each sample moves the estimate towards
//!   itself by at most a 32nd of the estimate (at least 1 ns). Half the samples above the
//!   estimate and half below hold it still, so it settles on a median; one outlier moves it
//!   by a 32nd at most.
//! * A [`Level`] moves a 64th of the way to each sample, with the sample capped at four times
//!   the level: one preemption must not read as a new regime, while a real change doubles it
//!   within a few dozen periods. Unlike a median, it does not wander when the samples have two
//!   modes far apart (with gaps of 50 µs and 5 ms in equal parts, every value between the two
//!   is a median of them).
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

/// A slow average of nanosecond samples, for the regime rule (see the module documentation).
#[derive(Debug)]
pub(super) struct Level(AtomicU32);

impl Level {
    /// An average with no sample yet.
    pub(super) fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    /// The average, ns (0: no sample yet).
    pub(super) fn get(&self) -> u32 {
        self.0.load(Relaxed)
    }

    /// One sample `x`: moves the average a 64th of the way to it, `x` capped at four times the
    /// average. The first sample is taken as it is.
    pub(super) fn add(&self, x: u32) {
        let cur = self.0.load(Relaxed) as i64;
        let new = if cur == 0 {
            x as i64
        } else {
            let x = (x as i64).min(4 * cur);
            cur + (x - cur) / 64
        };
        self.0.store(new.clamp(1, u32::MAX as i64) as u32, Relaxed);
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

    #[test]
    fn a_level_moves_a_64th_with_samples_capped_at_four_times() {
        let l = Level::new();
        l.add(64_000);
        assert_eq!(l.get(), 64_000);
        l.add(128_000);
        assert_eq!(l.get(), 65_000);
        // One preemption (a huge sample) counts as four times the level.
        let l = Level::new();
        l.add(64_000);
        l.add(u32::MAX);
        assert_eq!(l.get(), 64_000 + 3 * 64_000 / 64);
        l.add(0);
        assert_eq!(l.get(), 67_000 - 67_000 / 64);
    }

    /// A real change of regime (the samples double) doubles the level within a few dozen
    /// samples; a bimodal mix keeps it still, between the modes.
    #[test]
    fn a_level_follows_a_new_regime_and_holds_on_a_mix() {
        let l = Level::new();
        l.add(100_000);
        let n = (1..).find(|_| {
            l.add(300_000);
            l.get() >= 200_000
        });
        assert!(n.unwrap() <= 80, "{n:?}");
        let l = Level::new();
        l.add(2_500_000);
        for i in 0..5_000u32 {
            l.add(if i % 2 == 0 { 50_000 } else { 5_000_000 });
        }
        let (lo, hi) = (1_500_000, 3_500_000);
        assert!((lo..hi).contains(&l.get()), "{}", l.get());
    }
}
