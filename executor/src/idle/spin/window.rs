//! The spin window: how long an idle worker spins, learned from the gaps it meets.
//!
//! ```text
//! let window = Window::new(min, max, initial);
//! spin for window.current() ns ...
//! window.learn(spun, d, growth_held);   // the period ended with work found `d` after it began
//! window.drop_to_min();                 // spinning did not pay for itself (`pay_for_itself.rs`)
//! ```
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
//! Both atomics are statistics, read and written `Relaxed`: two workers that learn at once
//! may lose one step, and a slightly stale window is as good as the current one.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// The smallest window a grow step reaches from zero; also the smallest window the regime
/// rule tells apart from another (`regime.rs`).
pub(super) const GROW_FLOOR: u32 = 16_000;
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
}

impl Window {
    /// A window of `initial` ns within `min..=max` (the caller keeps `min <= initial <= max`).
    pub(super) fn new(min: u32, max: u32, initial: u32) -> Self {
        Self {
            min,
            max,
            current: AtomicU32::new(initial),
            expiring: AtomicU32::new(0),
        }
    }

    /// The current window, ns.
    pub(super) fn current(&self) -> u32 {
        self.current.load(Relaxed)
    }

    /// A period ended with work found `d` ns after it began; `spun`: it spun (its spin expired
    /// if `d` is past the window). `growth_held`: the pay-for-itself rule forbids growing now.
    pub(super) fn learn(&self, spun: bool, d: u32, growth_held: bool) {
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

    /// Sets the window (tests that start from a given state).
    #[cfg(test)]
    pub(super) fn set(&self, w: u32) {
        self.current.store(w, Relaxed);
    }
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
}
