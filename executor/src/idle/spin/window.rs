//! The spin window: how long an idle worker spins, learned from the gaps it meets, and the
//! pay-for-itself rule: spinning must catch enough work for the CPU time it burns, or the
//! window drops to `min` and may not grow for a while.
//!
//! ```text
//! let window = Window::new(min, max, initial);
//! spin for window.current() ns ...
//! window.ended(spun, d, n);   // idle period `n` ended with work found `d` after it began;
//!                             // `spun`: the window it spun, if it spun
//! ```
//!
//! # Grow and shrink
//!
//!
//! The window stays within `min..=max` and moves on two kinds of periods:
//!
//! * **Grow** when a gap lands just past the window: `window < d <= max`. The window jumps
//!   to cover it with a quarter to spare, but at most doubles per period (at least to
//!   [`GROW_FLOOR`], 16 µs, from zero), as the Linux guest haltpoll governor does; so steady
//!   300 µs gaps take a few periods to be covered, and one odd gap cannot make the window jump
//!   to `max`. While the pay-for-itself rule holds growth (`growth_held`), it does not grow.
//! * **Shrink** when a spin expired for a gap beyond `max` (`d > max`: spinning could not
//!   have caught it): by an eighth for each of the first [`KEEP_EXPIRING`] such periods in a
//!   row, by half for each one after that (spins that *keep* expiring), to `min` once below
//!   [`SHRINK_FLOOR`], 4 µs. Steady multi-millisecond gaps take the window from 250 µs to
//!   nothing in 14 periods (about 1 ms of spinning in all); with a bimodal mix (50 µs and
//!   5 ms) it shrinks on the long gaps until a short one misses, grows back just past it, and
//!   so hovers around the short mode.
//!
//! A gap covered by the window changes nothing: spinning stopped when the work came. A gap
//! past `max` in a period that did not spin changes nothing either, except that it ends a run
//! of expiring spins.
//!
//! # Pay for itself
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
//! catch, so they never fail, except in noise: when the host takes a CPU for a while and most
//! requests of a block come late, the block fails as memoryless gaps would. So a hold also
//! ends after [`BLOCK`] gaps in a row that a window could catch (`d <= max`, spinning or
//! not): steady gaps end it a few dozen periods after the noise, where memoryless gaps long
//! enough to fail blocks almost never give 16 short gaps in a row (with a 2 ms mean, a chance
//! of 0.39^16, 3·10⁻⁷, per period).
//!
//! The hold is counted in idle periods, spinning or not (a hold counted in spinning periods
//! would never end at a window of zero), on the policy's wrapping period counter; a hold
//! that has ended is cleared when next seen, so the wrap (after 2^31 periods) cannot revive it.
//!
//! Every field is a statistic or a hint, read and written `Relaxed`: two workers that learn
//! or count at once may lose one step or sample, or both close a block, which a statistic can
//! afford; a slightly stale window is as good as the current one.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use super::ablate::{off, Part};

/// The smallest window a grow step reaches from zero.
const GROW_FLOOR: u32 = 16_000;
/// Spins that expired for gaps past `max` this many times in a row halve the window.
const KEEP_EXPIRING: u32 = 4;
/// A shrinking window below this becomes `min`.
const SHRINK_FLOOR: u32 = 4_000;

/// The current spin window and its bounds; see the module documentation.
#[derive(Debug)]
pub(super) struct Window {
    min: u32,
    max: u32,
    /// The current window, ns.
    current: AtomicU32,
    /// Consecutive periods whose spin expired for a gap past `max`.
    expiring: AtomicU32,
    pub(super) pay: Pay,
}

impl Window {
    /// A window of `initial` ns within `min..=max` (the caller keeps `min <= initial <= max`).
    pub(super) fn new(min: u32, max: u32, initial: u32) -> Self {
        Self {
            min,
            max,
            current: AtomicU32::new(initial),
            expiring: AtomicU32::new(0),
            pay: Pay::new(max),
        }
    }

    /// Idle period `n` ended with work found `d` ns after it began; `spun`: the window it
    /// spun, if it spun (all of `d` counts as spinning when the spin caught the work, the
    /// window otherwise). The window learns from `d`, and the pay-for-itself rule from the
    /// spin, dropping the window to `min` when a block fails.
    pub(super) fn ended(&self, spun: Option<u32>, d: u32, n: u32) {
        if off(Part::Window) {
            return;
        }
        let pay = !off(Part::Pay);
        self.pay.gap(d);
        self.learn(spun.is_some(), d, pay && self.pay.holds_growth(n));
        if let (Some(w), true) = (spun, pay) {
            if self.pay.count(d.min(w), d <= w, n) {
                self.drop_to_min();
            }
        }
    }

    /// Blocks of spinning periods that did not pay for themselves so far (each dropped the
    /// window to `min`).
    pub(super) fn drops(&self) -> u64 {
        self.pay.failed()
    }

    /// The current window, ns.
    pub(super) fn current(&self) -> u32 {
        self.current.load(Relaxed)
    }

    /// A period ended with work found `d` ns after it began; `spun`: it spun (its spin expired
    /// if `d` is past the window). `growth_held`: the pay-for-itself rule forbids growing now.
    fn learn(&self, spun: bool, d: u32, growth_held: bool) {
        let w = self.current.load(Relaxed);
        let long = d > self.max && spun;
        let streak = if long {
            self.expiring.fetch_add(1, Relaxed)
        } else {
            self.expiring.store(0, Relaxed);
            0
        };
        let new = if d > w && d <= self.max {
            if growth_held {
                return;
            }
            grown(w, d)
        } else if long {
            self.shrunk(if streak < KEEP_EXPIRING {
                w - w / 8
            } else {
                w / 2
            })
        } else {
            return;
        };
        self.current.store(new.clamp(self.min, self.max), Relaxed);
    }

    /// Spinning did not pay for itself: back to the smallest window.
    pub(super) fn drop_to_min(&self) {
        self.current.store(self.min, Relaxed);
    }

    /// A shrink step's result: `min` once below the floor.
    fn shrunk(&self, w: u32) -> u32 {
        if w < SHRINK_FLOOR {
            self.min
        } else {
            w.max(self.min)
        }
    }
}

/// Spinning periods per block.
pub(super) const BLOCK: u32 = 16;
/// Idle periods a failed block holds growth for: the first time, and at most (after failed
/// blocks in a row).
pub(super) const HOLD_FIRST: u32 = 256;
pub(super) const HOLD_MAX: u32 = 8_192;

/// The pay-for-itself rule's block being counted and its hold; see "Pay for itself".
#[derive(Debug)]
pub(super) struct Pay {
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
    /// Periods in a row whose gap a window could catch (`d <= max`).
    short: AtomicU32,
    /// Blocks that failed so far (each dropped the window to `min`).
    failed: AtomicU64,
}

impl Pay {
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
            short: AtomicU32::new(0),
        }
    }

    /// Whether growth is held at idle period `n`. A hold that has ended is cleared here (and
    /// in [`Pay::count`]), so that after 2^31 more periods the wrapping counter
    /// cannot make its end look ahead again.
    pub(super) fn holds_growth(&self, n: u32) -> bool {
        if !self.holding.load(Relaxed) {
            return false;
        }
        if reached(n, self.hold_until.load(Relaxed)) || self.short.load(Relaxed) >= BLOCK {
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
            // Only gaps after the failure may end the hold.
            self.short.store(0, Relaxed);
            self.hold_for.store((hold * 2).min(HOLD_MAX), Relaxed);
            self.failed.fetch_add(1, Relaxed);
            true
        } else {
            self.hold_for.store(HOLD_FIRST, Relaxed);
            false
        }
    }

    /// A period ended with work found `d` ns after it began, spinning or not: counts the gaps
    /// in a row that a window could catch.
    pub(super) fn gap(&self, d: u32) {
        if d <= self.max {
            self.short.fetch_add(1, Relaxed);
        } else {
            self.short.store(0, Relaxed);
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

/// A grow step from `w` for a gap `d` just past it: cover `d` with a quarter to spare, at
/// most doubling (at least to the floor). The caller caps it at `max`.
fn grown(w: u32, d: u32) -> u32 {
    let cover = d.saturating_add(d / 4);
    cover.min(w.saturating_mul(2).max(GROW_FLOOR))
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u32 = 1_000;

    fn window(min: u32, max: u32, initial: u32) -> Window {
        Window::new(min, max, initial)
    }

    #[test]
    fn a_gap_just_past_covers_it_with_a_quarter_to_spare() {
        let w = window(0, 1_000 * US, 250 * US);
        w.learn(true, 300 * US, false);
        assert_eq!(w.current(), 375 * US);
        // A period that parked learns from its gap too.
        w.learn(false, 400 * US, false);
        assert_eq!(w.current(), 500 * US);
    }

    #[test]
    fn growth_at_most_doubles_from_at_least_the_floor() {
        let w = window(0, 1_000 * US, 0);
        w.learn(false, 900 * US, false);
        assert_eq!(w.current(), GROW_FLOOR, "from zero: the floor");
        let steps: Vec<u32> = (0..4)
            .map(|_| {
                w.learn(false, 900 * US, false);
                w.current() / US
            })
            .collect();
        assert_eq!(steps, [32, 64, 128, 256]);
        // And never past `max`.
        for _ in 0..4 {
            w.learn(false, 999 * US, false);
        }
        assert_eq!(w.current(), 1_000 * US);
    }

    #[test]
    fn gaps_covered_or_past_the_maximum_do_not_grow_it() {
        let w = window(0, 1_000 * US, 250 * US);
        w.learn(true, 100 * US, false);
        assert_eq!(w.current(), 250 * US, "covered: nothing to learn");
        w.learn(false, 5_000 * US, false);
        assert_eq!(w.current(), 250 * US, "past max, and no spin expired");
    }

    #[test]
    fn a_held_window_does_not_grow_but_still_shrinks() {
        let w = window(0, 1_000 * US, 100 * US);
        w.learn(true, 300 * US, true);
        assert_eq!(w.current(), 100 * US);
        w.learn(true, 5_000 * US, true);
        assert_eq!(w.current(), 100 * US - 100 * US / 8);
    }

    /// By an eighth four times, then by half, then to `min` below 4 µs: 250 µs to nothing in
    /// 10 expiring spins, about 1.1 ms of spinning in all.
    #[test]
    fn expiring_spins_shrink_by_an_eighth_then_by_half_to_the_floor() {
        let w = window(0, 1_000 * US, 250 * US);
        let mut seen = vec![w.current()];
        while w.current() > 0 {
            w.learn(true, 5_000 * US, false);
            seen.push(w.current());
        }
        let (mut x, mut want) = (250 * US, vec![250 * US]);
        for i in 0..10 {
            x = if i < KEEP_EXPIRING { x - x / 8 } else { x / 2 };
            want.push(if x < SHRINK_FLOOR { 0 } else { x });
        }
        assert_eq!(seen, want);
        let spun: u32 = seen.iter().sum();
        assert!((1_000 * US..1_200 * US).contains(&spun), "{spun}");
    }

    #[test]
    fn any_other_period_ends_the_expiring_streak() {
        let w = window(0, 1_000 * US, 256 * US);
        for _ in 0..KEEP_EXPIRING {
            w.learn(true, 5_000 * US, false);
        }
        // A covered gap in between: the next expiring spin is the first of a new streak.
        w.learn(true, US, false);
        let before = w.current();
        w.learn(true, 5_000 * US, false);
        assert_eq!(w.current(), before - before / 8);
    }

    #[test]
    fn the_window_stays_within_its_bounds() {
        let w = window(20 * US, 400 * US, 100 * US);
        for _ in 0..40 {
            w.learn(true, 5_000 * US, false);
        }
        assert_eq!(w.current(), 20 * US, "shrinks to min, not below");
        for _ in 0..40 {
            w.learn(true, 399 * US, false);
        }
        assert_eq!(w.current(), 400 * US);
        w.drop_to_min();
        assert_eq!(w.current(), 20 * US);
    }

    const MAX: u32 = 1_000 * US;

    /// Counts a block of `BLOCK` periods each spinning `spun` and catching `caught` of them,
    /// ending at period `n`; returns whether it failed.
    fn block(p: &Pay, spun: u32, caught: u32, n: u32) -> bool {
        let results: Vec<bool> = (0..BLOCK).map(|i| p.count(spun, i < caught, n)).collect();
        assert!(
            !results[..BLOCK as usize - 1].iter().any(|&f| f),
            "only a full block fails"
        );
        results[BLOCK as usize - 1]
    }

    #[test]
    fn spinning_that_catches_passes() {
        let p = Pay::new(MAX);
        // Steady 900 µs gaps, every one caught: 900 µs per catch.
        assert!(!block(&p, 900 * US, BLOCK, 100));
        assert!(!p.holds_growth(100));
    }

    /// The bar is `max · (caught + 1)`: exactly at it passes, one ns over fails.
    #[test]
    fn the_bar_is_max_per_catch_plus_one() {
        let p = Pay::new(MAX);
        let per = |caught: u32| MAX / BLOCK * (caught + 1);
        assert!(!block(&p, per(3), 3, 0));
        assert!(!block(&p, 0, 0, 0), "nothing spent, nothing caught");
        // A window on its way up: little spent, nothing caught yet.
        assert!(!block(&p, MAX / BLOCK, 0, 0));
        let p = Pay::new(MAX);
        for i in 0..BLOCK {
            let failed = p.count(per(0) + (i == 0) as u32, false, 0);
            assert_eq!(failed, i == BLOCK - 1, "one ns over the bar, period {i}");
        }
    }

    #[test]
    fn a_failed_block_holds_growth_then_doubles_the_hold() {
        let p = Pay::new(MAX);
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

    /// A hold ends early after 16 gaps in a row under `max`, counted from the failure; one
    /// long gap starts the count again.
    #[test]
    fn sixteen_short_gaps_in_a_row_end_a_hold() {
        let p = Pay::new(MAX);
        for _ in 0..40 {
            p.gap(MAX);
        }
        assert!(block(&p, MAX, 0, 1_000));
        for _ in 0..BLOCK - 1 {
            p.gap(500 * US);
        }
        p.gap(MAX + 1);
        for _ in 0..BLOCK - 1 {
            p.gap(500 * US);
        }
        assert!(p.holds_growth(1_001), "15 in a row since the long one");
        p.gap(500 * US);
        assert!(!p.holds_growth(1_002));
    }

    #[test]
    fn a_passing_block_resets_the_hold() {
        let p = Pay::new(MAX);
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
        let p = Pay::new(MAX);
        let n = u32::MAX - 10;
        assert!(block(&p, MAX, 0, n));
        assert!(p.holds_growth(n.wrapping_add(HOLD_FIRST - 1)));
        assert!(!p.holds_growth(n.wrapping_add(HOLD_FIRST)));
    }

    /// No hold in force is no hold, at any period: a policy that never failed a block does
    /// not start holding growth once its counter passes 2^31, and an ended hold stays ended.
    #[test]
    fn no_hold_is_seen_after_2_pow_31_periods() {
        let p = Pay::new(MAX);
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
        let p = Pay::new(MAX);
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
