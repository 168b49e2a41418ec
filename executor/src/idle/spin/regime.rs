//! The regime detector: whether the workload moved away from the one the sequential test
//! started in, so that the evidence gathered so far no longer applies.
//!
//! ```text
//! regime.ended(now);                   // every idle period that taught something ends
//! regime.followed_mode(d);             // a period in the current mode found work after `d`
//! if regime.moved(window, shared) { restart the test, probe at the fastest rate }
//! regime.restart(window, shared);      // the test restarted anyway (a flip, a confirmation)
//! ```
//!
//! The regime is four things: a slow average ([`Level`]) of `d` over the periods that follow
//! the mode; a slow average of the *arrival interval*, the time between two idle periods
//! ending, runtime-wide; the window; and whether the CPUs count as shared (`share.rs`). The
//! detector remembers them as they were when the test last started (the *reference*), and
//! the regime has *moved* when either average doubles or halves against it, the window moves
//! eightfold (counting anything under 16 µs as 16 µs: a window of zero is not infinitely far
//! from one of 1 µs), or the CPUs start or stop counting as shared. Averages, not medians: a
//! median of a bimodal mix wanders between its modes and would read as a regime change
//! again and again (`estimate.rs`).
//!
//! The detector also keeps a running median of the arrival interval: the policy's
//! quiet-moment rule compares it with what parking costs (`spin.rs`, "When to probe").
//!
//! Every field is a statistic, read and written `Relaxed`: two workers that end a period at
//! once may lose a sample, or both restart the test, which is harmless.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use super::estimate::{Level, Median};
use super::window::GROW_FLOOR;
use super::Nanos;

/// The current regime and the reference; see the module documentation.
#[derive(Debug)]
pub(super) struct Regime {
    /// When the last idle period ended (0: none yet).
    last_end: AtomicU64,
    /// The arrival interval's running median, for the quiet-moment rule.
    interval: Median,
    /// Slow averages: `d` of the periods that follow the mode, and the arrival interval.
    level: Level,
    level_interval: Level,
    /// The reference: the averages (0: no reference yet), the window, and whether the CPUs
    /// counted as shared, when the test last started.
    ref_level: AtomicU32,
    ref_interval: AtomicU32,
    ref_window: AtomicU32,
    ref_shared: AtomicBool,
    /// Moves so far (each restarted the test).
    moves: AtomicU64,
}

impl Regime {
    /// A detector with no samples, whose reference window is `window`.
    pub(super) fn new(window: u32) -> Self {
        Self {
            last_end: AtomicU64::new(0),
            interval: Median::new(),
            level: Level::new(),
            level_interval: Level::new(),
            ref_level: AtomicU32::new(0),
            ref_interval: AtomicU32::new(0),
            ref_window: AtomicU32::new(window),
            ref_shared: AtomicBool::new(false),
            moves: AtomicU64::new(0),
        }
    }

    /// An idle period ended at `now`: one sample of the arrival interval (if time moved
    /// forward since the previous end).
    pub(super) fn ended(&self, now: Nanos) {
        let last = self.last_end.swap(now, Relaxed);
        if last != 0 && now > last {
            let between = (now - last).min(u32::MAX as u64) as u32;
            self.interval.nudge(between, 0);
            self.level_interval.add(between);
        }
    }

    /// A period that followed the mode found work `d` ns after it began.
    pub(super) fn followed_mode(&self, d: u32) {
        self.level.add(d);
    }

    /// The arrival interval's running median, ns (0: no sample yet).
    pub(super) fn interval(&self) -> u32 {
        self.interval.get()
    }

    /// The test (re)starts now, with this `window` and the CPUs `shared` or not: remember the
    /// regime.
    pub(super) fn restart(&self, window: u32, shared: bool) {
        self.ref_level.store(self.level.get(), Relaxed);
        self.ref_interval.store(self.level_interval.get(), Relaxed);
        self.ref_window.store(window, Relaxed);
        self.ref_shared.store(shared, Relaxed);
    }

    /// Whether the regime moved away from the reference, now that the window is `window` and
    /// the CPUs are `shared` or not; if it did, the moved regime becomes the reference. The
    /// first average of `d` only sets the reference.
    pub(super) fn moved(&self, window: u32, shared: bool) -> bool {
        let (d, rd) = (self.level.get() as u64, self.ref_level.load(Relaxed) as u64);
        if rd == 0 {
            if d != 0 {
                self.restart(window, shared);
            }
            return false;
        }
        let (i, ri) = (
            self.level_interval.get() as u64,
            self.ref_interval.load(Relaxed) as u64,
        );
        let floor = GROW_FLOOR as u64;
        let (w, rw) = (
            (window as u64).max(floor),
            (self.ref_window.load(Relaxed) as u64).max(floor),
        );
        let moved = d > 2 * rd
            || 2 * d < rd
            || (ri != 0 && (i > 2 * ri || 2 * i < ri))
            || w > 8 * rw
            || 8 * w < rw
            || shared != self.ref_shared.load(Relaxed);
        if moved {
            self.restart(window, shared);
            self.moves.fetch_add(1, Relaxed);
        }
        moved
    }

    /// How often the regime moved so far.
    pub(super) fn moves(&self) -> u64 {
        self.moves.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u32 = 1_000;

    /// A detector whose reference is `d` (and no arrival interval), with window `w`.
    fn settled(d: u32, w: u32) -> Regime {
        let r = Regime::new(w);
        r.followed_mode(d);
        assert!(
            !r.moved(w, false),
            "the first average only sets the reference"
        );
        r
    }

    #[test]
    fn nothing_moves_before_there_is_a_reference() {
        let r = Regime::new(100 * US);
        assert!(!r.moved(0, true), "no average of d yet: no reference");
        assert_eq!(r.ref_level.load(Relaxed), 0);
        r.followed_mode(50 * US);
        assert!(!r.moved(0, true));
        assert!(
            !r.moved(0, true),
            "the first call took this as the reference"
        );
    }

    #[test]
    fn the_average_of_d_doubling_or_halving_moves_it() {
        let r = settled(100 * US, 100 * US);
        // A 64th of the way to 400 µs per period: past 200 µs after some 26 periods.
        let mut n = 0;
        while !r.moved(100 * US, false) {
            r.followed_mode(400 * US);
            n += 1;
        }
        assert!((20..35).contains(&n), "doubled after {n} periods");
        // The moved regime is the reference now: from there, halving moves it again (from
        // about 200 µs to under 100 µs on 50 µs samples: some 70 periods).
        let before = r.ref_level.load(Relaxed);
        assert!(before > 200 * US);
        let mut n = 0;
        while !r.moved(100 * US, false) {
            r.followed_mode(50 * US);
            n += 1;
        }
        assert!((55..90).contains(&n), "halved after {n} periods");
        assert!(2 * r.level.get() < before);
    }

    /// One outlier (a preemption) does not move it: samples count for four times the level
    /// at most, a 64th of the way.
    #[test]
    fn one_outlier_does_not_move_it() {
        let r = settled(100 * US, 100 * US);
        r.followed_mode(u32::MAX);
        assert!(!r.moved(100 * US, false));
    }

    #[test]
    fn the_arrival_interval_doubling_moves_it() {
        let r = Regime::new(100 * US);
        let mut now = 1;
        for _ in 0..100 {
            now += 100 * US as u64;
            r.ended(now);
        }
        assert_eq!(r.interval(), 100 * US, "the median");
        r.followed_mode(50 * US);
        assert!(!r.moved(100 * US, false));
        assert_eq!(r.ref_interval.load(Relaxed), 100 * US);
        let mut n = 0;
        while !r.moved(100 * US, false) {
            now += 300 * US as u64;
            r.ended(now);
            n += 1;
        }
        assert!((30..80).contains(&n), "{n}");
    }

    #[test]
    fn time_running_backwards_is_no_sample() {
        let r = Regime::new(0);
        r.ended(1_000_000);
        r.ended(900_000);
        r.ended(900_000);
        assert_eq!(r.interval(), 0);
        r.ended(1_000_000);
        assert_eq!(r.interval(), 100_000);
    }

    #[test]
    fn an_eightfold_window_moves_it_counting_from_16us() {
        let r = settled(100 * US, 100 * US);
        assert!(!r.moved(800 * US, false));
        assert!(r.moved(801 * US, false));
        let r = settled(100 * US, 200 * US);
        assert!(!r.moved(25 * US, false));
        assert!(r.moved(24 * US, false));
        // Under the floor, every window is 16 µs: zero is not far from 1 µs.
        let r = settled(100 * US, 0);
        assert!(!r.moved(US, false));
        assert!(!r.moved(GROW_FLOOR * 8, false));
        assert!(r.moved(GROW_FLOOR * 8 + 1, false));
    }

    #[test]
    fn the_cpus_becoming_shared_or_not_moves_it() {
        let r = settled(100 * US, 100 * US);
        assert!(r.moved(100 * US, true));
        assert!(!r.moved(100 * US, true));
        assert!(r.moved(100 * US, false));
    }

    #[test]
    fn a_restart_takes_the_current_regime_as_the_reference() {
        let r = settled(100 * US, 100 * US);
        for _ in 0..200 {
            r.followed_mode(400 * US);
        }
        r.restart(100 * US, false);
        assert!(!r.moved(100 * US, false));
    }
}
