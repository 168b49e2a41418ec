//! Whether another thread wants the CPU a spinner runs on: then nobody spins for a while.
//!
//! ```text
//! let c = Contention::new();
//! if window.lost_core() { c.lost_core(now); }   // a spin iteration took over PREEMPTED
//! if c.holds(now) { park at once, and drive the reactor if nobody does }
//! ```
//!
//! A spinner that loses its core (its `sched_yield` ran somebody, or it was preempted: one
//! iteration of its loop took longer than `PREEMPTED`) is still counted as the worker looking
//! for work, so producers wake nobody and no worker waits in the reactor for its events. Until
//! the scheduler gives it the core back, which beside a CPU-bound neighbour is the neighbour's
//! whole slice (a 4 ms tick on a kernel with `HZ=250`), a request that arrives waits: that was
//! a server's p99 of 3.9 ms beside a busy neighbour, against tokio's 60 µs. A parked worker
//! does not have the problem: the event wakes it, and a woken thread that slept most of the
//! time preempts a CPU hog at once. So on a contended CPU spinning buys nothing (the
//! neighbour gets the core half the time anyway) and costs the tail, and the neighbour's
//! work.
//!
//! So the loss of a core *holds* parking: for [`MIN_HOLD`] after the first loss, and for twice
//! the previous hold after each loss that comes within one hold of the previous hold's end (the
//! neighbour is still there), up to [`MAX_HOLD`]. While it holds, every idle period parks at
//! once (`spin.rs`, `Kind::Contended`: no spin probes either), and a worker that parks while
//! nobody spins drives the reactor if nobody does, as tokio's first parker does, so that no
//! event waits for an awake worker that is off its CPU. When the hold ends the next spin window
//! looks again: beside a neighbour that is still busy its first yield loses the core (one
//! request waits a slice), and the next hold is twice as long; so a steady neighbour costs one
//! late request per [`MAX_HOLD`] once the hold has grown, and a neighbour that left gives the
//! spinning back within one hold. A single loss (a kernel thread, an interrupt storm) costs a
//! few milliseconds of parking.
//!
//! The signal is the spinner's own clock, read every iteration anyway: no syscall. It was
//! chosen over the run-queue delay of `/proc/thread-self/schedstat` and the involuntary
//! context switches of `getrusage`, which say the same after the fact at a syscall each.
//! A colocated client rarely trips it (`share.rs`: the scheduler keeps such a client on the
//! other CPU while a server spins).
//!
//! The state is two relaxed atomics, statistics like the rest of the policy: two workers that
//! lose their cores at once may double the hold once more than one would, which only parks a
//! little longer.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::Nanos;

/// The first hold: 2^22 ns, about 4 ms (one scheduler tick at `HZ=250`).
pub(super) const MIN_HOLD: Nanos = 1 << 22;
/// The longest hold: 2^30 ns, about a second.
pub(super) const MAX_HOLD: Nanos = 1 << 30;

/// The contention signal; see the module documentation.
#[derive(Debug)]
pub(super) struct Contention {
    /// Parking holds until then (policy time; 0: never held).
    until: AtomicU64,
    /// The length of the last hold, ns (0: none yet).
    hold: AtomicU64,
    /// Cores lost, for metrics.
    losses: AtomicU64,
}

impl Contention {
    pub(super) fn new() -> Self {
        Self {
            until: AtomicU64::new(0),
            hold: AtomicU64::new(0),
            losses: AtomicU64::new(0),
        }
    }

    /// A spinner lost its core at `now`: parking holds from now on, for a hold twice the last
    /// one if this loss came within a hold of the last one's end, else for [`MIN_HOLD`].
    pub(super) fn lost_core(&self, now: Nanos) {
        self.losses.fetch_add(1, Relaxed);
        let (until, hold) = (self.until.load(Relaxed), self.hold.load(Relaxed));
        let next = if hold != 0 && now < until.saturating_add(hold) {
            (hold * 2).min(MAX_HOLD)
        } else {
            MIN_HOLD
        };
        self.hold.store(next, Relaxed);
        self.until.store(now.saturating_add(next), Relaxed);
    }

    /// Whether parking holds at `now`.
    pub(super) fn holds(&self, now: Nanos) -> bool {
        now < self.until.load(Relaxed)
    }

    /// Cores lost so far.
    pub(super) fn losses(&self) -> u64 {
        self.losses.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_holds_before_a_loss() {
        let c = Contention::new();
        assert!(!c.holds(0));
        assert!(!c.holds(1 << 40));
        assert_eq!(c.losses(), 0);
    }

    #[test]
    fn a_single_loss_holds_for_the_shortest_hold() {
        let c = Contention::new();
        let t = 10 * MAX_HOLD;
        c.lost_core(t);
        assert!(c.holds(t));
        assert!(c.holds(t + MIN_HOLD - 1));
        assert!(!c.holds(t + MIN_HOLD));
        assert_eq!(c.losses(), 1);
    }

    #[test]
    fn losses_that_follow_each_hold_double_it_up_to_the_longest() {
        let c = Contention::new();
        let mut t = 10 * MAX_HOLD;
        let mut expected = MIN_HOLD;
        for _ in 0..20 {
            c.lost_core(t);
            assert!(c.holds(t + expected - 1));
            assert!(!c.holds(t + expected));
            // The next spin window, right after the hold, loses the core again.
            t += expected + 1_000;
            expected = (expected * 2).min(MAX_HOLD);
        }
        assert_eq!(expected, MAX_HOLD);
    }

    #[test]
    fn a_loss_long_after_the_last_hold_starts_over() {
        let c = Contention::new();
        let t = 10 * MAX_HOLD;
        c.lost_core(t);
        c.lost_core(t + MIN_HOLD + 1);
        assert!(c.holds(t + 2 * MIN_HOLD));
        // Quiet for longer than a hold after this one ended: the neighbour left.
        let later = t + MIN_HOLD + 1 + 2 * MIN_HOLD + 2 * MIN_HOLD + 1;
        c.lost_core(later);
        assert!(c.holds(later + MIN_HOLD - 1));
        assert!(!c.holds(later + MIN_HOLD));
    }
}
