//! Whether another thread takes a large share of the CPU a spinner runs on: then nobody spins
//! for a while.
//!
//! ```text
//! let c = Contention::new();
//! c.spun(spun_ns);                                  // every spin window, when charged
//! // a spin iteration took over PREEMPTED: a suspicion, confirmed by the thread's own count
//! // of involuntary context switches (one getrusage, only then)
//! if c.lost(now, iteration_ns, preempted()) { end the window: parking holds }
//! if c.holds(now) { park at once, and drive the reactor if nobody does }
//! ```
//!
//! # Why
//!
//! A spinner that loses its core (its `sched_yield` ran somebody, or it was preempted) is
//! still counted as the worker looking for work, so producers wake nobody and no worker waits
//! in the reactor for its events. Until the scheduler gives it the core back (beside a
//! CPU-bound neighbour, the neighbour's whole slice: 4 ms at `HZ=250`) a request that arrives
//! waits: a p99 of 1.7-3.9 ms beside a busy neighbour, against 17-60 µs parked. A parked
//! worker is woken by the event, and a woken thread that slept most of the time preempts a CPU
//! hog at once. But a CPU nobody else wants also takes the core away now and then (an
//! interrupt, a kernel thread, the process's own logger), and a light neighbour (5 % of a CPU)
//! delays the requests it delays whether the worker spins or parks: neither must hold parking.
//!
//! # How
//!
//! A spin iteration that took longer than `PREEMPTED` (50 µs) is a *suspicion*, confirmed only
//! if the thread's count of involuntary context switches (`getrusage(RUSAGE_THREAD)`: a
//! preemption or a `sched_yield` that ran somebody, not an interrupt or stolen time) moved
//! since it last looked ([`preempted`]: one syscall, only on a suspicion). A confirmed loss
//! adds the iteration's length to the *lost* time; every spin window adds its length to the
//! *spun* time. When the spun time passes [`WINDOW`] (about 33 ms of spinning) both halve, so
//! their ratio is the share of the CPU other threads took from the spinners lately. A new
//! policy starts with [`PRIOR`] of spun time and nothing lost.
//!
//! A confirmed loss that brings that share to [`SHARE`] (a quarter) or more *holds* parking:
//! for [`MIN_HOLD`] after the first such loss, and for twice the previous hold after each one
//! within one hold of the previous hold's end, up to [`MAX_HOLD`]. Only those count as lost
//! cores (`spin_lost_cores`). While the hold lasts every idle period parks at once
//! (`Kind::Contended`, fixed windows included), and a worker that parks while nobody spins
//! drives the reactor, as tokio's first parker does. When the hold ends the next spin window
//! looks again: beside a neighbour still busy its first yield loses a slice and the next hold
//! is twice as long (one late request per [`MAX_HOLD`] once grown); a neighbour that left gives
//! the spinning back within one hold. Beside a CPU-bound neighbour the second or third loss
//! holds; a 5 % neighbour reads as about 5 %, rare interruptions as a fraction of a percent.
//!
//! The state is relaxed atomics, statistics like the rest of the policy: two workers that
//! lose their cores at once may double the hold once more than one would (which only parks a
//! little longer), and a halving that races with an addition may lose that addition.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::Nanos;

/// The first hold: 2^22 ns, about 4 ms (one scheduler tick at `HZ=250`).
pub(super) const MIN_HOLD: Nanos = 1 << 22;
/// The longest hold: 2^30 ns, about a second.
pub(super) const MAX_HOLD: Nanos = 1 << 30;
/// The spun time over which the lost share is measured: past it, lost and spun time halve.
/// 2^25 ns, about 33 ms of spinning.
pub(super) const WINDOW: Nanos = 1 << 25;
/// The spun time a new policy starts with, none of it lost: half a [`WINDOW`], so that a
/// fresh server's first short loss is weighed against something.
pub(super) const PRIOR: Nanos = WINDOW / 2;
/// The share of the spinners' time that others must take for a loss to hold parking: one
/// in `SHARE` (a quarter).
pub(super) const SHARE: Nanos = 4;

/// The contention signal; see the module documentation.
#[derive(Debug)]
pub(super) struct Contention {
    /// Parking holds until then (policy time; 0: never held).
    until: AtomicU64,
    /// The length of the last hold, ns (0: none yet).
    hold: AtomicU64,
    /// Decaying sums: time others took from spinners (confirmed losses), and time spun
    /// (lost time included), ns.
    lost: AtomicU64,
    spun: AtomicU64,
    /// Losses that held parking, for metrics.
    losses: AtomicU64,
}

impl Contention {
    pub(super) fn new() -> Self {
        Self {
            until: AtomicU64::new(0),
            hold: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            spun: AtomicU64::new(PRIOR),
            losses: AtomicU64::new(0),
        }
    }

    /// A spin window took `ns` (wall time, any lost time included).
    pub(super) fn spun(&self, ns: Nanos) {
        let spun = self.spun.load(Relaxed).saturating_add(ns);
        if spun > WINDOW {
            self.spun.store(spun / 2, Relaxed);
            self.lost.store(self.lost.load(Relaxed) / 2, Relaxed);
        } else {
            self.spun.store(spun, Relaxed);
        }
    }

    /// A spin iteration ending at `now` took `ns`, longer than it should have; `confirmed`:
    /// the thread was switched out meanwhile ([`preempted`]). Returns whether parking holds
    /// now: a confirmed loss that brings the lost share to a quarter starts or doubles a
    /// hold; anything else changes nothing.
    pub(super) fn lost(&self, now: Nanos, ns: Nanos, confirmed: bool) -> bool {
        if !confirmed {
            return self.holds(now);
        }
        let lost = self.lost.load(Relaxed).saturating_add(ns);
        self.lost.store(lost, Relaxed);
        // The window this iteration belongs to is charged to `spun` when it ends: count the
        // iteration now.
        let spun = self.spun.load(Relaxed).saturating_add(ns);
        if lost.saturating_mul(SHARE) < spun {
            return self.holds(now);
        }
        self.losses.fetch_add(1, Relaxed);
        let (until, hold) = (self.until.load(Relaxed), self.hold.load(Relaxed));
        let next = if hold != 0 && now < until.saturating_add(hold) {
            (hold * 2).min(MAX_HOLD)
        } else {
            MIN_HOLD
        };
        self.hold.store(next, Relaxed);
        self.until.store(now.saturating_add(next), Relaxed);
        true
    }

    /// Whether parking holds at `now`.
    pub(super) fn holds(&self, now: Nanos) -> bool {
        now < self.until.load(Relaxed)
    }

    /// Losses that held parking so far.
    pub(super) fn losses(&self) -> u64 {
        self.losses.load(Relaxed)
    }

    /// The lost share now, in thousandths (0 before any spinning).
    #[cfg(test)]
    pub(super) fn share_milli(&self) -> u64 {
        let spun = self.spun.load(Relaxed);
        (self.lost.load(Relaxed) * 1_000)
            .checked_div(spun)
            .unwrap_or(0)
    }
}

thread_local! {
    /// The calling thread's involuntary context switches when it last looked (`u64::MAX`:
    /// not yet).
    static SWITCHES: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Makes sure the calling thread has a count to compare with (a syscall on its first spin
/// window, a thread-local read after that).
pub(super) fn arm() {
    SWITCHES.with(|s| {
        if s.get() == u64::MAX {
            s.set(involuntary_switches().unwrap_or(u64::MAX));
        }
    });
}

/// Whether the calling thread was switched out involuntarily (preempted, or a `sched_yield`
/// that ran somebody) since it last looked, or since [`arm`]. Without `getrusage`'s count
/// (or before [`arm`]), every suspicion counts as confirmed, as before the check existed.
pub(super) fn preempted() -> bool {
    let Some(now) = involuntary_switches() else {
        return true;
    };
    SWITCHES.with(|s| {
        let before = s.replace(now);
        before == u64::MAX || now > before
    })
}

/// The calling thread's involuntary context switches so far.
fn involuntary_switches() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: rusage is plain old data (all-zero is valid), and getrusage fills the
        // valid struct on our stack.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            if libc::getrusage(libc::RUSAGE_THREAD, &mut ru) != 0 {
                return None;
            }
            ru
        };
        Some(ru.ru_nivcsw as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1_000;

    #[test]
    fn a_first_large_loss_holds_for_the_shortest_hold() {
        let c = Contention::new();
        let t = 10 * MAX_HOLD;
        assert!(!c.holds(0) && !c.holds(t), "nothing holds before a loss");
        assert!(
            !c.lost(t - 1, 100 * US, true),
            "a short first loss is weighed"
        );
        assert!(c.lost(t, PRIOR, true), "half the time lost");
        assert!(c.holds(t));
        assert!(c.holds(t + MIN_HOLD - 1));
        assert!(!c.holds(t + MIN_HOLD));
        assert_eq!(c.losses(), 1);
    }

    #[test]
    fn an_unconfirmed_suspicion_changes_nothing() {
        let c = Contention::new();
        assert!(!c.lost(10 * MAX_HOLD, 4 * PRIOR, false));
        assert!(!c.holds(10 * MAX_HOLD));
        assert_eq!((c.losses(), c.share_milli()), (0, 0));
    }

    #[test]
    fn losses_that_follow_each_hold_double_it_up_to_the_longest() {
        let c = Contention::new();
        let mut t = 10 * MAX_HOLD;
        let mut expected = MIN_HOLD;
        for _ in 0..20 {
            // The spin window right after the hold spins 40 µs, then loses a slice.
            c.spun(40 * US);
            assert!(c.lost(t, PRIOR, true));
            c.spun(PRIOR);
            assert!(c.holds(t + expected - 1));
            assert!(!c.holds(t + expected));
            t += expected + 1_000;
            expected = (expected * 2).min(MAX_HOLD);
        }
        assert_eq!(expected, MAX_HOLD);
        assert!(c.share_milli() > 900, "{}", c.share_milli());
    }

    #[test]
    fn a_loss_long_after_the_last_hold_starts_over() {
        let c = Contention::new();
        let t = 10 * MAX_HOLD;
        assert!(c.lost(t, PRIOR, true));
        assert!(c.lost(t + MIN_HOLD + 1, 4_000 * US, true));
        assert!(c.holds(t + 2 * MIN_HOLD));
        // Quiet for longer than a hold after this one ended: the neighbour left.
        let later = t + MIN_HOLD + 1 + 2 * MIN_HOLD + 2 * MIN_HOLD + 1;
        c.lost(later, 4_000 * US, true);
        assert!(c.holds(later + MIN_HOLD - 1));
        assert!(!c.holds(later + MIN_HOLD));
    }

    /// A neighbour that takes 5 % (50 µs of every millisecond) never holds parking; one that
    /// takes half the CPU (a 4 ms slice after every 4 ms of spinning) holds it at once.
    #[test]
    fn a_light_neighbour_does_not_hold_and_a_heavy_one_does() {
        let c = Contention::new();
        let mut t = 0;
        for _ in 0..10_000 {
            c.spun(950 * US);
            t += 1_000 * US;
            assert!(!c.lost(t, 50 * US, true));
            c.spun(50 * US);
        }
        assert_eq!(c.losses(), 0);
        let share = c.share_milli();
        assert!((40..=60).contains(&share), "{share}");
        // The neighbour turns heavy.
        let mut held = None;
        for k in 0..10 {
            c.spun(4_000 * US);
            t += 8_000 * US;
            if c.lost(t, 4_000 * US, true) {
                held = Some(k);
                break;
            }
            c.spun(4_000 * US);
        }
        assert!(matches!(held, Some(0..=3)), "{held:?}");
        assert!(c.holds(t));
    }

    /// A count that did not move since the thread last looked is no preemption; the look
    /// takes the count as the next baseline.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_count_that_did_not_move_is_no_preemption() {
        arm();
        SWITCHES.with(|s| s.set(u64::MAX - 1));
        assert!(!preempted());
        let now = involuntary_switches().expect("getrusage");
        SWITCHES.with(|s| assert!(s.get() <= now && s.get() != u64::MAX - 1));
        SWITCHES.with(|s| s.set(0));
        // From a baseline of 0, it is a preemption exactly when the count it read is past 0.
        let p = preempted();
        assert_eq!(p, SWITCHES.with(Cell::get) > 0);
    }
}
