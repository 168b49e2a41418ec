//! When the adaptive spin policy probes, and who: a rate that follows the evidence, runs at
//! spread positions, and one prober at a time; the counts of idle periods and probes, and
//! the arrival interval (for the quiet-moment rule).
//!
//! ```text
//! let n = schedule.begin_period();                 // an idle period begins: its number
//! if let Some(pos) = schedule.continue_run(worker) { /* probe, period `pos` of the run */ }
//! else if schedule.due(n) && quiet && schedule.claim(n, worker, len) { /* probe, period 0 */ }
//! ... at the end of a probe period: schedule.probe_ran(); if it was the run's last,
//! schedule.release(worker); the test confirmed the mode: schedule.slower();
//! the evidence turned, the mode flipped or the clients moved: schedule.faster(n)
//! schedule.ended(now); schedule.interval()        // the median time between periods' ends
//! ```
//!
//! A probe *run* is [`RUN`] consecutive idle periods of one worker, all but the last a warm-up
//! that is not recorded: it pays for the transition from the other mode. While the clients run
//! on our CPUs, park-probe runs are [`RUN_SHARED`] periods, of which only the last is recorded:
//! with a client on the same machine, what parking gains comes from the scheduler's
//! wake-affine placement, which the first parked periods after spinning have not reached yet.
//! One recorded bit per run keeps the bits close to independent (`mode.rs`).
//!
//! Runs are due about every [`Schedule::every`] idle periods of the runtime, at a position
//! that a hash of the period number spreads over `every/2 .. 3·every/2`, so a periodic
//! workload cannot alias with it. `every` starts at [`FASTEST`] (a run about every 8 idle
//! periods), doubles each time the sequential test confirms the current mode, up to
//! [`SLOWEST`] (one run per 1024 periods, so a settled server parks on purpose about twice
//! per thousand requests; a fixed one-in-16 rate cost 0.06 context switches per request), and
//! snaps back to [`FASTEST`] when the evidence turns against the mode (`mode.rs`), after a
//! flip, and when the clients start or stop running on our CPUs.
//!
//! The schedule also keeps a running median of the arrival interval, the time between the
//! ends of two idle periods, runtime-wide: the quiet-moment rule compares it with what
//! parking costs (`spin.rs`, "When to probe").
//!
//! A due run starts only when the policy says the moment is quiet (for a park probe: no other
//! worker awake, nothing queued, requests not arriving faster than a wake-up), otherwise it
//! stays due and is tried again at the next idle period. The worker that starts it *claims*
//! the run (one atomic word: owner, periods left, and the period it was claimed at), so only
//! one worker probes at a time; its next idle period continues the run, and the run's last
//! period releases it. A claim older than [`STALE`] periods (its owner went to sleep and was
//! never woken, or shut down) may be taken over.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use super::ablate::{off, Part, FIXED_EVERY};
use super::estimate::Median;
use super::Nanos;

/// Idle periods in a probe run, of which all but the last are a warm-up: usually, and for a
/// park probe while the clients run on our CPUs (a client on the same
/// machine may need a few parked periods in a row before the scheduler places the two side by
/// side).
pub(super) const RUN: u32 = 2;
pub(super) const RUN_SHARED: u32 = 4;
/// Idle periods per probe run: fastest (after a flip, or the clients moved) and slowest (the
/// mode confirmed again and again: one recorded probe per 1024 periods).
pub(super) const FASTEST: u32 = 8;
pub(super) const SLOWEST: u32 = 1024;
/// A claim this many periods old may be taken over.
pub(super) const STALE: u32 = 256;

/// The probe schedule, the run slot and the counters; every field is a hint or a statistic,
/// read and written `Relaxed` (nothing else is ordered by it; the slot's compare-and-swap
/// decides who owns a run, and a lost update only delays a probe).
#[derive(Debug)]
pub(super) struct Schedule {
    /// Idle periods per run now.
    every: AtomicU32,
    /// The period number from which the next run is due.
    next: AtomicU32,
    /// The run in progress: owner + 1 (bits 0-15; 0: none), periods left after the current
    /// one (bits 16-23), its length (bits 24-31), and the period it was claimed at (bits
    /// 32-63).
    slot: AtomicU64,
    /// Idle periods begun (wrapping: the period number), and probe periods run.
    periods: AtomicU32,
    probes: AtomicU64,
    /// When the last idle period ended (0: none yet), and the arrival interval's median.
    last_end: AtomicU64,
    interval: Median,
}

const OWNER: u64 = 0xffff;
const LEFT_SHIFT: u32 = 16;
const LEN_SHIFT: u32 = 24;

impl Schedule {
    pub(super) fn new() -> Self {
        let first = if off(Part::Schedule) {
            FIXED_EVERY
        } else {
            FASTEST
        };
        Self {
            every: AtomicU32::new(first),
            next: AtomicU32::new(spacing(0, first)),
            slot: AtomicU64::new(0),
            periods: AtomicU32::new(0),
            probes: AtomicU64::new(0),
            last_end: AtomicU64::new(0),
            interval: Median::new(),
        }
    }

    /// An idle period begins: returns its number (counting from 0, wrapping).
    pub(super) fn begin_period(&self) -> u32 {
        self.periods.fetch_add(1, Relaxed)
    }

    /// Idle periods begun so far (wrapping): the number the next one will have.
    pub(super) fn periods_begun(&self) -> u32 {
        self.periods.load(Relaxed)
    }

    /// An idle period ended at `now`: one sample of the arrival interval (if time moved
    /// forward since the previous end).
    pub(super) fn ended(&self, now: Nanos) {
        let last = self.last_end.swap(now, Relaxed);
        if last != 0 && now > last {
            self.interval
                .nudge((now - last).min(u32::MAX as u64) as u32, 0);
        }
    }

    /// The arrival interval's running median, ns (0: no sample yet).
    pub(super) fn interval(&self) -> u32 {
        self.interval.get()
    }

    /// A probe period ended.
    pub(super) fn probe_ran(&self) {
        self.probes.fetch_add(1, Relaxed);
    }

    /// Probe periods run so far.
    pub(super) fn probes_run(&self) -> u64 {
        self.probes.load(Relaxed)
    }

    /// Idle periods per probe run now.
    pub(super) fn every(&self) -> u32 {
        self.every.load(Relaxed)
    }

    /// Whether a run is due at period `n`.
    pub(super) fn due(&self, n: u32) -> bool {
        // Wrapping: `n` at or past `next`, within half the counter's range.
        n.wrapping_sub(self.next.load(Relaxed)) < 1 << 31
    }

    /// `worker` starts a run of `len` periods (2 ..= 255) at period `n`, unless another
    /// worker's run is in progress.
    pub(super) fn claim(&self, n: u32, worker: usize, len: u32) -> bool {
        let cur = self.slot.load(Relaxed);
        let (owner, claimed) = (cur & OWNER, (cur >> 32) as u32);
        if owner != 0 && n.wrapping_sub(claimed) < STALE {
            return false;
        }
        let len = len.clamp(2, 255) as u64;
        let mine = (worker as u64 + 1) & OWNER
            | (len - 1) << LEFT_SHIFT
            | len << LEN_SHIFT
            | (n as u64) << 32;
        if self
            .slot
            .compare_exchange(cur, mine, Relaxed, Relaxed)
            .is_err()
        {
            return false;
        }
        self.next
            .store(n.wrapping_add(spacing(n, self.every())), Relaxed);
        true
    }

    /// If `worker` owns a run with periods left, takes the next one and returns its position
    /// in the run (from 1) and whether it is the run's last.
    pub(super) fn continue_run(&self, worker: usize) -> Option<(u32, bool)> {
        let cur = self.slot.load(Relaxed);
        if cur & OWNER != (worker as u64 + 1) & OWNER {
            return None;
        }
        let left = ((cur >> LEFT_SHIFT) & 0xff) as u32;
        if left == 0 {
            return None;
        }
        // Only the owner changes an owned slot (a takeover needs it stale), so a store will do.
        let next = cur & !(0xff << LEFT_SHIFT) | ((left - 1) as u64) << LEFT_SHIFT;
        self.slot.store(next, Relaxed);
        let len = ((cur >> LEN_SHIFT) & 0xff) as u32;
        Some((len - left, left == 1))
    }

    /// `worker`'s run is over (its last period ended, or the moment stopped being quiet).
    pub(super) fn release(&self, worker: usize) {
        let cur = self.slot.load(Relaxed);
        if cur & OWNER == (worker as u64 + 1) & OWNER {
            let _ = self.slot.compare_exchange(cur, 0, Relaxed, Relaxed);
        }
    }

    /// Whether `worker` holds a run.
    #[cfg(test)]
    pub(super) fn owns(&self, worker: usize) -> bool {
        self.slot.load(Relaxed) & OWNER == (worker as u64 + 1) & OWNER
    }

    /// The current mode was confirmed: probe half as often (down to [`SLOWEST`]).
    pub(super) fn slower(&self) {
        if off(Part::Schedule) {
            return;
        }
        let e = self.every();
        self.every.store((e * 2).min(SLOWEST), Relaxed);
    }

    /// Evidence against the current mode, a flip, or the clients moved at period `n`: probe at
    /// the fastest rate, starting soon.
    pub(super) fn faster(&self, n: u32) {
        if off(Part::Schedule) {
            return;
        }
        if self.every.swap(FASTEST, Relaxed) != FASTEST || !self.due(n) {
            let soon = n.wrapping_add(spacing(n, FASTEST));
            // Only ever bring the next run closer.
            if soon.wrapping_sub(self.next.load(Relaxed)) >= 1 << 31 {
                self.next.store(soon, Relaxed);
            }
        }
    }
}

/// Periods from a run claimed at `n` to the next one: `every/2 .. 3·every/2` (mean `every`),
/// by a multiplicative hash (Knuth's) of `n`, so runs do not sit at fixed positions.
fn spacing(n: u32, every: u32) -> u32 {
    let h = n.wrapping_add(1).wrapping_mul(0x9e37_79b9) >> 16;
    every / 2 + h % every.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_worker_probes_at_a_time() {
        let s = Schedule::new();
        let n = 100;
        assert!(s.due(n));
        assert!(s.claim(n, 0, RUN));
        assert!(
            !s.claim(n + 1, 1, RUN),
            "another worker's run is in progress"
        );
        assert_eq!(s.continue_run(1), None, "not the owner");
        assert_eq!(s.continue_run(0), Some((1, true)));
        assert_eq!(s.continue_run(0), None, "the run is {RUN} periods");
        s.release(1);
        assert!(s.owns(0), "only the owner releases");
        s.release(0);
        assert!(!s.owns(0));
        // The next run is due a spacing later, and anyone may claim it.
        let next = (n + 1..n + 4 * FASTEST).find(|&m| s.due(m)).unwrap();
        assert!(
            next >= n + FASTEST / 2 && next < n + 3 * FASTEST / 2,
            "{next}"
        );
        assert!(s.claim(next, 1, RUN_SHARED));
        let rest: Vec<_> = std::iter::from_fn(|| s.continue_run(1)).collect();
        assert_eq!(rest, [(1, false), (2, false), (3, true)]);
    }

    #[test]
    fn a_stale_claim_is_taken_over() {
        let s = Schedule::new();
        assert!(s.claim(10, 3, RUN));
        assert!(!s.claim(10 + STALE - 1, 1, RUN));
        assert!(s.claim(10 + STALE, 1, RUN));
        assert!(s.owns(1) && !s.owns(3));
        assert_eq!(s.continue_run(3), None);
    }

    #[test]
    fn the_rate_doubles_down_to_the_slowest_and_snaps_back() {
        let s = Schedule::new();
        assert_eq!(s.every(), FASTEST);
        for _ in 0..20 {
            s.slower();
        }
        assert_eq!(s.every(), SLOWEST);
        assert!(s.claim(1_000, 0, RUN));
        s.release(0);
        // Not due for a while at the slowest rate...
        assert!(!s.due(1_000 + SLOWEST / 2 - 1));
        // ...until evidence against the mode brings the next run close.
        s.faster(1_001);
        assert_eq!(s.every(), FASTEST);
        assert!(s.due(1_001 + 3 * FASTEST / 2));
    }

    #[test]
    fn periods_and_probes_are_counted() {
        let s = Schedule::new();
        assert_eq!((s.begin_period(), s.begin_period()), (0, 1));
        assert_eq!(s.periods_begun(), 2);
        s.periods.store(u32::MAX, Relaxed);
        assert_eq!(s.begin_period(), u32::MAX);
        assert_eq!(s.periods_begun(), 0, "the period number wraps");
        s.probe_ran();
        s.probe_ran();
        assert_eq!(s.probes_run(), 2);
    }

    /// The quiet-moment rule's arrival interval: the median time between two periods' ends,
    /// runtime-wide; an end stamped before the last one (another worker's, settled late)
    /// restarts the count but is no sample.
    #[test]
    fn the_arrival_interval_is_the_median_time_between_ends() {
        let s = Schedule::new();
        s.ended(1_000);
        assert_eq!(s.interval(), 0, "one end is no interval");
        for k in 1..=100 {
            s.ended(1_000 + k * 40_000);
        }
        assert_eq!(s.interval(), 40_000);
        s.ended(500);
        assert_eq!(s.interval(), 40_000, "time went back: no sample");
        // One long gap moves it by a 32nd at most.
        s.ended(10_000_000);
        assert_eq!(s.interval(), 40_000 + 40_000 / 32);
    }

    #[test]
    fn runs_start_at_spread_positions() {
        let every = 64;
        let gaps: std::collections::HashSet<u32> = (0..1_000).map(|n| spacing(n, every)).collect();
        assert!(gaps.iter().all(|g| (every / 2..3 * every / 2).contains(g)));
        assert!(
            gaps.len() >= every as usize / 2,
            "{} distinct spacings",
            gaps.len()
        );
        let mean = (0..10_000).map(|n| spacing(n, every) as u64).sum::<u64>() / 10_000;
        assert!(mean.abs_diff(every as u64) <= 2, "{mean}");
    }
}
