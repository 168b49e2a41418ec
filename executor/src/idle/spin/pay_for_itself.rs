//! The pay-for-itself rule: spinning must catch enough work for the CPU time it burns, or the
//! window drops to `min` and may not grow for a while.
//!
//! ```text
//! let pay = PayForItself::new(max);
//! if window.grows() && !pay.holds_growth(n) { grow }     // at idle period `n`
//! if pay.count(spun_ns, caught, n) { window.drop_to_min() }   // after each spinning period
//! ```
//!
//! Every [`BLOCK`] (16) spinning periods, the spin time they took is compared with what they
//! caught. More than `max` of spinning per piece of work caught means the gaps are memoryless
//! and long: with exponential gaps of mean `μ`, any window spins `μ` per catch (Poisson
//! arrivals with a 2 ms mean spent 373 µs of CPU per request, against tokio's 50, before this
//! rule). The block then fails: the window drops to `min` and may not grow for
//! [`HOLD_FIRST`] (256) idle periods, twice as long after each failed block in a row (up to
//! [`HOLD_MAX`], 8192); a block that passes resets the hold to [`HOLD_FIRST`].
//!
//! The bar is `max` per catch *plus one* `max`: a small window on its way up to gaps it has not
//! caught yet spent little and does not fail. Steady gaps below `max` spin at most `max` per
//! catch, so they never fail.
//!
//! The hold is counted in idle periods, spinning or not (a hold counted in spinning periods
//! would never end at a window of zero), on the policy's wrapping period counter; a hold
//! that has ended is cleared when next seen, so the wrap (after 2^31 periods) cannot revive it.
//!
//! Every field is a statistic or a hint, read and written `Relaxed`: two workers that count
//! at once may lose a sample, or both close a block, which a statistic can afford.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Spinning periods per block.
pub(super) const BLOCK: u32 = 16;
/// Idle periods a failed block holds growth for: the first time, and at most (after failed
/// blocks in a row).
pub(super) const HOLD_FIRST: u32 = 256;
pub(super) const HOLD_MAX: u32 = 8_192;

/// The block being counted and the hold; see the module documentation.
#[derive(Debug)]
pub(super) struct PayForItself {
    /// The bar: the most spinning, ns, one catch may cost (the window's `max`).
    max: u32,
    /// The current block: spin time and catches of the spinning periods counted so far, and
    /// how many they are.
    spent: AtomicU64,
    caught: AtomicU32,
    counted: AtomicU32,
    /// The period number from which the window may grow again, and how long the next failed
    /// block holds growth for.
    hold_until: AtomicU32,
    hold_for: AtomicU32,
    /// Whether `hold_until` is a hold in force (not one that has ended, nor none yet).
    holding: AtomicBool,
    /// Blocks that failed so far (each dropped the window to `min`).
    failed: AtomicU64,
}

impl PayForItself {
    /// The rule for windows of at most `max` ns.
    pub(super) fn new(max: u32) -> Self {
        Self {
            max,
            spent: AtomicU64::new(0),
            caught: AtomicU32::new(0),
            counted: AtomicU32::new(0),
            hold_until: AtomicU32::new(0),
            hold_for: AtomicU32::new(HOLD_FIRST),
            failed: AtomicU64::new(0),
            holding: AtomicBool::new(false),
        }
    }

    /// Whether growth is held at idle period `n`. A hold that has ended is cleared here (and
    /// in [`PayForItself::count`]), so that after 2^31 more periods the wrapping counter
    /// cannot make its end look ahead again.
    pub(super) fn holds_growth(&self, n: u32) -> bool {
        if !self.holding.load(Relaxed) {
            return false;
        }
        if reached(n, self.hold_until.load(Relaxed)) {
            self.holding.store(false, Relaxed);
            return false;
        }
        true
    }

    /// Counts a spinning period at idle period `n` that spun `spun` ns and `caught` its work
    /// or not. Returns whether it completed a block that failed: the window must drop to
    /// `min` (growth is held from now on).
    pub(super) fn count(&self, spun: u32, caught: bool, n: u32) -> bool {
        self.holds_growth(n); // clears an ended hold
        self.spent.fetch_add(spun as u64, Relaxed);
        self.caught.fetch_add(caught as u32, Relaxed);
        if self.counted.fetch_add(1, Relaxed) + 1 < BLOCK {
            return false;
        }
        self.counted.store(0, Relaxed);
        let spent = self.spent.swap(0, Relaxed);
        let caught = self.caught.swap(0, Relaxed) as u64;
        // Plus one: a small window that caught nothing yet spent little (it is on its way up
        // to the gaps it will catch) is not a failure.
        if spent > self.max as u64 * (caught + 1) {
            let hold = self.hold_for.load(Relaxed);
            self.hold_until.store(n.wrapping_add(hold), Relaxed);
            self.holding.store(true, Relaxed);
            self.hold_for.store((hold * 2).min(HOLD_MAX), Relaxed);
            self.failed.fetch_add(1, Relaxed);
            true
        } else {
            self.hold_for.store(HOLD_FIRST, Relaxed);
            false
        }
    }

    /// Blocks that failed so far: how often the window dropped to `min`.
    pub(super) fn failed(&self) -> u64 {
        self.failed.load(Relaxed)
    }

    /// Forgets how many periods the current block has counted, but not what they spent or
    /// caught (tests that keep a block from ever closing).
    #[cfg(test)]
    pub(super) fn forget_count(&self) {
        self.counted.store(0, Relaxed);
    }

    /// Holds growth until period `n` (tests that start from a hold).
    #[cfg(test)]
    pub(super) fn hold_until(&self, n: u32) {
        self.hold_until.store(n, Relaxed);
        self.holding.store(true, Relaxed);
    }
}

/// Whether `a` is at or past `b` on the wrapping period counter.
fn reached(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) < 1 << 31
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u32 = 1_000;
    const MAX: u32 = 1_000 * US;

    /// Counts a block of `BLOCK` periods each spinning `spun` and catching `caught` of them,
    /// ending at period `n`; returns whether it failed.
    fn block(p: &PayForItself, spun: u32, caught: u32, n: u32) -> bool {
        let results: Vec<bool> = (0..BLOCK).map(|i| p.count(spun, i < caught, n)).collect();
        assert!(
            !results[..BLOCK as usize - 1].iter().any(|&f| f),
            "only a full block fails"
        );
        results[BLOCK as usize - 1]
    }

    #[test]
    fn spinning_that_catches_passes() {
        let p = PayForItself::new(MAX);
        // Steady 900 µs gaps, every one caught: 900 µs per catch.
        assert!(!block(&p, 900 * US, BLOCK, 100));
        assert!(!p.holds_growth(100));
    }

    /// The bar is `max · (caught + 1)`: exactly at it passes, one ns over fails.
    #[test]
    fn the_bar_is_max_per_catch_plus_one() {
        let p = PayForItself::new(MAX);
        let per = |caught: u32| MAX / BLOCK * (caught + 1);
        assert!(!block(&p, per(3), 3, 0));
        assert!(!block(&p, 0, 0, 0), "nothing spent, nothing caught");
        // A window on its way up: little spent, nothing caught yet.
        assert!(!block(&p, MAX / BLOCK, 0, 0));
        let p = PayForItself::new(MAX);
        for i in 0..BLOCK {
            let failed = p.count(per(0) + (i == 0) as u32, false, 0);
            assert_eq!(failed, i == BLOCK - 1, "one ns over the bar, period {i}");
        }
    }

    #[test]
    fn a_failed_block_holds_growth_then_doubles_the_hold() {
        let p = PayForItself::new(MAX);
        assert!(block(&p, MAX, 1, 1_000));
        assert!(p.holds_growth(1_000));
        assert!(p.holds_growth(1_000 + HOLD_FIRST - 1));
        assert!(!p.holds_growth(1_000 + HOLD_FIRST));
        // Failed blocks in a row: 256, 512, ... up to 8192.
        let mut holds = Vec::new();
        for n in [10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000] {
            assert!(block(&p, MAX, 0, n));
            let hold = (n..).find(|&m| !p.holds_growth(m)).unwrap() - n;
            holds.push(hold);
        }
        assert_eq!(
            holds,
            [512, 1_024, 2_048, 4_096, HOLD_MAX, HOLD_MAX, HOLD_MAX]
        );
    }

    #[test]
    fn a_passing_block_resets_the_hold() {
        let p = PayForItself::new(MAX);
        for n in [0, 10_000, 20_000] {
            assert!(block(&p, MAX, 0, n));
        }
        assert!(!block(&p, 10 * US, BLOCK, 30_000));
        assert!(block(&p, MAX, 0, 40_000));
        // (Periods are asked in order: an ended hold is cleared once seen.)
        assert!(p.holds_growth(40_000 + HOLD_FIRST - 1));
        assert!(!p.holds_growth(40_000 + HOLD_FIRST));
    }

    /// The hold is on the wrapping period counter: it ends as well across the wrap.
    #[test]
    fn holds_count_across_the_wrap_of_the_period_counter() {
        let p = PayForItself::new(MAX);
        let n = u32::MAX - 10;
        assert!(block(&p, MAX, 0, n));
        assert!(p.holds_growth(n.wrapping_add(HOLD_FIRST - 1)));
        assert!(!p.holds_growth(n.wrapping_add(HOLD_FIRST)));
    }

    /// No hold in force is no hold, at any period: a policy that never failed a block does
    /// not start holding growth once its counter passes 2^31, and an ended hold stays ended.
    #[test]
    fn no_hold_is_seen_after_2_pow_31_periods() {
        let p = PayForItself::new(MAX);
        for n in [0, 1 << 31, (1 << 31) + 1, u32::MAX] {
            assert!(
                !p.holds_growth(n),
                "period {n} held growth without a failed block"
            );
        }
        assert!(block(&p, MAX, 0, 100));
        assert!(p.holds_growth(101));
        assert!(!p.holds_growth(100 + HOLD_FIRST)); // ended, and cleared
        let later = 100u32.wrapping_add(HOLD_FIRST).wrapping_add(1 << 31);
        assert!(
            !p.holds_growth(later),
            "an ended hold came back after the wrap"
        );
    }

    #[test]
    fn a_block_is_16_spinning_periods() {
        let p = PayForItself::new(MAX);
        for i in 1..=3 * BLOCK {
            assert_eq!(p.count(MAX, false, 0), i % BLOCK == 0, "period {i}");
        }
        // Forgetting the count keeps the spend: the block that closes next holds both.
        for _ in 0..BLOCK - 1 {
            p.count(MAX, false, 0);
        }
        p.forget_count();
        for i in 1..BLOCK {
            assert!(!p.count(0, false, 0), "period {i} after forgetting");
        }
        assert!(
            p.count(0, false, 0),
            "15 ms spent before forgetting, nothing caught"
        );
        p.hold_until(77);
        assert!(p.holds_growth(76) && !p.holds_growth(77));
    }
}
