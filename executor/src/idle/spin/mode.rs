//! The mode, spinning or parking, and the evidence that keeps it or flips it.
//!
//! ```text
//! if mode.parking() { park at once } else { spin }
//! mode.in_mode(parked, d);                      // a period that followed the mode ended
//! if let Some(cheaper) = mode.probe(parked, d, shared) { // a recorded probe ended
//!     match mode.weigh(cheaper, parked, now) { Outcome::Flipped => .., .. }
//! }
//! ```
//!
//! The mode says what an idle period does when it is not a probe: spin its window, or park at
//! once. Each choice is an *arm* with two numbers: the `d` of its latest period in the mode,
//! and a running median of its `d` (`estimate.rs`).
//!
//! A recorded probe (a period that did the opposite of the mode) gives one bit: whether its
//! `d`, plus a sixteenth, came in below the `d` of the mode's latest period (just before the
//! probe run, so a slow drift of the load moves both alike). If the probed choice made no
//! difference, the two would be draws from one distribution and the bit a fair coin, whatever
//! that distribution's shape; the margin tilts it towards 0. (A running median would not do
//! as the comparison: with gaps of 50 µs and 5 ms in equal parts, any value between the two
//! is a median of `d`, the estimate wanders between them, and a park probe on a short gap
//! beats it half the time although parking never helps.) With a remote client and Poisson
//! gaps of mean 200 µs, a park probe beats the period before it 4 times in 10; with steady
//! gaps, never. A probe counts only once the mode has a latest period to compare it with.
//!
//! When other processes use our CPUs (`share.rs`), a tie goes to parking: a park probe
//! counts as cheaper when its `d` is within [`SHARED_TIE`] of the spin's (plus the sixteenth),
//! and a spin probe only when it beats parking by that much more. There the spinner's CPU
//! time is somebody else's (a client on the same machine, a neighbour), so spinning that does
//! not answer measurably sooner should not be bought; and a wake-up that costs less than
//! that is close to the floor anyway. The tie is well below what a wake-up costs where
//! spinning pays (20-60 µs on a VM whose idle vCPU halts), so it does not park a remote
//! client; it decided the colocated rows on a host where the kernel's hand-off of a parked
//! worker to the waking CPU matches a spinner on the other CPU (spinning cost 6x tokio's CPU
//! there for the same p50).
//!
//! The bits feed Wald's sequential probability ratio test (`sprt.rs`), whose log-likelihood
//! ratio this part keeps: 16 bits in a row in favour of parking flip the mode into parking,
//! 12 the other way back, and three against (or more, when bits in favour are mixed in)
//! *confirm* the mode. The test's verdict comes back as an [`Outcome`]; a test more than
//! halfway to a flip is [`Outcome::Turning`], so the policy gathers the evidence quickly.
//!
//! The medians are not used by the test: their difference is what parking costs, for the
//! quiet-moment rule ([`Mode::penalty`]). A probe's own arm, with no median yet, starts from
//! the other arm's ("no difference" until shown otherwise).
//!
//! Every field is a statistic or a hint, read and written `Relaxed`: two workers that weigh a
//! probe at once may lose a step of the test, and a worker that reads the mode just before a
//! flip spins (or parks) one period more.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use super::estimate::Median;
use super::sprt::{self, Verdict};
use super::Nanos;

/// What parking is assumed to add to `d` before a park probe has measured it (a wake-up on
/// a VM whose idle vCPU halts).
const WAKE_PRIOR: u32 = 30_000;
/// The most parking is taken to add to `d`: the medians it is measured from can be stale
/// (the park median only moves on park probes while spinning), and a wake-up takes tens of
/// microseconds, not hundreds.
const WAKE_CAP: u32 = 50_000;
/// On shared CPUs, how much later than spinning parking may answer and still count as
/// cheaper: 2^13 ns, about 8 µs.
pub(super) const SHARED_TIE: u32 = 1 << 13;
/// With the clients on our CPUs, a spinning period costs `d / COLOCATED_CHARGE` on top of its
/// `d`: a quarter of the time it spun, which the client could not use.
pub(super) const COLOCATED_CHARGE: u32 = 4;

/// What one recorded probe did to the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The mode flipped to the probed choice; the test restarts.
    Flipped,
    /// The mode was confirmed; the test restarts.
    Confirmed,
    /// No verdict, but the test is more than halfway to a flip.
    Turning,
    /// No verdict.
    Undecided,
}

/// The mode, the test, and both arms; see the module documentation.
#[derive(Debug)]
pub(super) struct Mode {
    /// Parking is the mode (else spinning).
    parking: AtomicBool,
    /// The sequential test's log-likelihood ratio, thousandths (`sprt.rs`).
    llr: AtomicI32,
    /// When the mode last flipped (0: never).
    flipped_at: AtomicU64,
    /// Flips so far: to spinning, to parking (for `Runtime::metrics()`: which way the test
    /// went, and how often).
    flips: [AtomicU64; 2],
    spin: Arm,
    park: Arm,
}

/// One choice's record.
#[derive(Debug)]
struct Arm {
    /// Running median of `d`, ns (0: no sample).
    median: Median,
    /// `d` of the latest period in the mode, ns (0: none yet).
    latest: AtomicU32,
}

impl Arm {
    fn new() -> Self {
        Self {
            median: Median::new(),
            latest: AtomicU32::new(0),
        }
    }
}

impl Mode {
    /// Spinning, no evidence yet.
    pub(super) fn new() -> Self {
        Self {
            parking: AtomicBool::new(false),
            llr: AtomicI32::new(0),
            flipped_at: AtomicU64::new(0),
            flips: [AtomicU64::new(0), AtomicU64::new(0)],
            spin: Arm::new(),
            park: Arm::new(),
        }
    }

    /// Whether parking is the mode.
    pub(super) fn parking(&self) -> bool {
        self.parking.load(Relaxed)
    }

    /// How long the mode has held at `now`: since the last flip, or since the start.
    pub(super) fn since_flip(&self, now: Nanos) -> Duration {
        Duration::from_nanos(now.saturating_sub(self.flipped_at.load(Relaxed)))
    }

    /// A period that followed the mode (it `parked`, or spun) found work `d` ns after it
    /// began.
    pub(super) fn in_mode(&self, parked: bool, d: u32) {
        let arm = self.arm(parked);
        arm.median.nudge(d, 0);
        arm.latest.store(d.max(1), Relaxed);
    }

    /// A recorded probe (it `parked`, or spun, against the mode) found work `d` ns after it
    /// began, with the CPUs `shared` or not, and the clients `colocated` on them or not.
    /// Returns its bit, whether it was cheaper than the mode's latest period (a tie within
    /// [`SHARED_TIE`] going to parking on shared CPUs; with colocated clients a spinning
    /// period also costs a quarter of its `d`), or `None` if the mode has no period yet to
    /// compare it with.
    pub(super) fn probe(
        &self,
        parked: bool,
        d: u32,
        shared: bool,
        colocated: bool,
    ) -> Option<bool> {
        let (own, other) = (self.arm(parked), self.arm(!parked));
        let before = other.latest.load(Relaxed);
        if before == 0 {
            return None;
        }
        own.median.nudge(d, other.median.get());
        // With the clients on our CPUs, what a spinning period costs: its `d`, plus a quarter
        // of it (about the time it spun, which the client could not use), plus the tie.
        let spin_cost = |d: u32| {
            d.saturating_add(d / COLOCATED_CHARGE)
                .saturating_add(SHARED_TIE)
        };
        Some(match (colocated, shared, parked) {
            // The charge is the margin a park probe must win by: no sixteenth on top.
            (true, _, true) => d < spin_cost(before),
            (true, _, false) => cheaper(spin_cost(d), before),
            (false, false, _) => cheaper(d, before),
            (false, true, true) => cheaper(d, before.saturating_add(SHARED_TIE)),
            (false, true, false) => cheaper(d.saturating_add(SHARED_TIE), before),
        })
    }

    /// One step of the sequential test on a probe's bit (`cheaper`), where the probed choice
    /// is parking (`toward_parking`) or spinning; flips the mode at `now` if the test says so.
    pub(super) fn weigh(&self, cheaper: bool, toward_parking: bool, now: Nanos) -> Outcome {
        let (llr, verdict) = sprt::step(self.llr.load(Relaxed), cheaper, toward_parking);
        self.llr.store(llr, Relaxed);
        match verdict {
            Verdict::Flip => {
                self.parking.store(toward_parking, Relaxed);
                self.flipped_at.store(now, Relaxed);
                self.flips[toward_parking as usize].fetch_add(1, Relaxed);
                Outcome::Flipped
            }
            Verdict::Confirm => Outcome::Confirmed,
            Verdict::Continue if llr > sprt::flip_at(toward_parking) / 2 => Outcome::Turning,
            Verdict::Continue => Outcome::Undecided,
        }
    }

    /// Flips so far, to spinning and to parking.
    pub(super) fn flips(&self) -> (u64, u64) {
        (self.flips[0].load(Relaxed), self.flips[1].load(Relaxed))
    }

    /// The regime changed: the evidence so far no longer applies.
    pub(super) fn restart_test(&self) {
        self.llr.store(0, Relaxed);
    }

    /// What parking adds to `d`, ns: the difference of the arms' medians, capped, or a prior
    /// until both are known.
    pub(super) fn penalty(&self) -> u32 {
        let (s, p) = (self.spin.median.get(), self.park.median.get());
        if s != 0 && p != 0 {
            p.saturating_sub(s).min(WAKE_CAP)
        } else {
            WAKE_PRIOR
        }
    }

    fn arm(&self, parked: bool) -> &Arm {
        if parked {
            &self.park
        } else {
            &self.spin
        }
    }
}

/// Whether a probe that cost `x` beats the mode's latest period, which cost `y`, by a
/// sixteenth.
fn cheaper(x: u32, y: u32) -> bool {
    (x as u64 + x as u64 / 16) < y as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u32 = 1_000;

    #[test]
    fn a_probe_must_beat_the_latest_period_by_a_sixteenth() {
        assert!(cheaper(160 * US, 171 * US));
        assert!(!cheaper(160 * US, 170 * US));
        assert!(!cheaper(50 * US, 50 * US), "a tie is not cheaper");
        assert!(cheaper(0, 1));
    }

    #[test]
    fn a_probe_needs_a_period_in_the_mode_to_compare_with() {
        let m = Mode::new();
        assert_eq!(m.probe(true, 5 * US, false, false), None);
        assert_eq!(m.penalty(), WAKE_PRIOR, "nothing measured");
        m.in_mode(false, 40 * US);
        assert_eq!(m.probe(true, 5 * US, false, false), Some(true));
        assert_eq!(m.probe(true, 80 * US, false, false), Some(false));
    }

    #[test]
    fn on_shared_cpus_a_tie_goes_to_parking() {
        let m = Mode::new();
        m.in_mode(false, 100 * US);
        // Parking that answers as soon as spinning, or a little later, counts as cheaper on
        // shared CPUs only.
        assert_eq!(m.probe(true, 100 * US, false, false), Some(false));
        assert_eq!(m.probe(true, 100 * US, true, false), Some(true));
        assert_eq!(m.probe(true, 101 * US, true, false), Some(true));
        // A wake-up's worth later it does not.
        assert_eq!(m.probe(true, 130 * US, true, false), Some(false));
        // In parking mode, a spin probe must beat parking by the tie as well.
        let m = Mode::new();
        m.in_mode(true, 100 * US);
        assert_eq!(m.probe(false, 90 * US, false, false), Some(true));
        assert_eq!(m.probe(false, 90 * US, true, false), Some(false));
        assert_eq!(m.probe(false, 70 * US, true, false), Some(true));
    }

    /// With the clients on our CPUs, a spinning period costs a quarter of its `d` more, and
    /// the tie; a park probe needs no sixteenth on top. (The figures are the ones measured
    /// on the 2-vCPU AMD guest: 136 µs spinning, 158 µs parked.)
    #[test]
    fn with_colocated_clients_spinning_is_charged_a_quarter() {
        let m = Mode::new();
        m.in_mode(false, 136 * US);
        assert_eq!(m.probe(true, 158 * US, true, false), Some(false));
        assert_eq!(m.probe(true, 158 * US, true, true), Some(true));
        // 136 + 34 + 8.2 = 178.2 µs: parking up to there counts as cheaper.
        assert_eq!(m.probe(true, 178 * US, true, true), Some(true));
        assert_eq!(m.probe(true, 179 * US, true, true), Some(false));
        // A wake-up costlier than the charge still loses: spinning that answers much sooner
        // keeps its place (20 µs gaps, 60 µs parked against 40 µs spinning).
        let m = Mode::new();
        m.in_mode(false, 40 * US);
        assert_eq!(m.probe(true, 60 * US, true, true), Some(false));
        // In parking mode, a spin probe must beat parking after the charge, by a sixteenth.
        let m = Mode::new();
        m.in_mode(true, 158 * US);
        assert_eq!(m.probe(false, 136 * US, true, true), Some(false));
        assert_eq!(m.probe(false, 100 * US, true, true), Some(true));
    }

    /// A probe is compared with the latest period in the mode, not with its median.
    #[test]
    fn probes_are_compared_with_the_latest_period() {
        let m = Mode::new();
        for _ in 0..100 {
            m.in_mode(false, 5_000 * US);
        }
        m.in_mode(false, 50 * US);
        assert_eq!(m.probe(true, 80 * US, false, false), Some(false));
        // A zero `d` still counts as a period (1 ns).
        m.in_mode(false, 0);
        assert_eq!(m.probe(true, 0, false, false), Some(true));
    }

    /// A probe's arm starts from the other arm's median; the difference is what parking
    /// costs, capped at 50 µs.
    #[test]
    fn the_penalty_of_parking_comes_from_the_medians() {
        let m = Mode::new();
        m.in_mode(false, 64 * US);
        m.probe(true, 200 * US, false, false);
        assert_eq!(
            m.penalty(),
            2 * US,
            "a 32nd of the prior towards the sample"
        );
        for _ in 0..200 {
            m.probe(true, 80 * US, false, false);
        }
        assert_eq!(m.penalty(), 16 * US);
        for _ in 0..200 {
            m.probe(true, 1_000 * US, false, false);
        }
        assert_eq!(m.penalty(), WAKE_CAP);
        // Parking cheaper than spinning: no penalty.
        for _ in 0..400 {
            m.probe(true, 10 * US, false, false);
        }
        assert_eq!(m.penalty(), 0);
    }

    #[test]
    fn sixteen_cheaper_park_probes_flip_into_parking() {
        let m = Mode::new();
        let outcomes: Vec<Outcome> = (0..16).map(|_| m.weigh(true, true, 777)).collect();
        assert_eq!(outcomes[15], Outcome::Flipped);
        assert!(m.parking());
        assert_eq!(m.since_flip(1_000), Duration::from_nanos(223));
        // More than halfway (4 600 thousandths) from the 8th bit in favour on.
        let turning = outcomes.iter().position(|&o| o == Outcome::Turning);
        assert_eq!(turning, Some(7), "{outcomes:?}");
        assert!(outcomes[..7].iter().all(|&o| o == Outcome::Undecided));
        // And twelve back to spinning.
        let back = (1..=16).find(|_| m.weigh(true, false, 2_000) == Outcome::Flipped);
        assert_eq!(back, Some(12));
        assert!(!m.parking());
    }

    #[test]
    fn three_bits_against_confirm_the_mode() {
        let m = Mode::new();
        assert_eq!(m.weigh(false, true, 0), Outcome::Undecided);
        assert_eq!(m.weigh(false, true, 0), Outcome::Undecided);
        assert_eq!(m.weigh(false, true, 0), Outcome::Confirmed);
        assert!(!m.parking());
        assert_eq!(m.since_flip(5), Duration::from_nanos(5), "never flipped");
    }

    #[test]
    fn a_restarted_test_forgets_its_evidence() {
        let m = Mode::new();
        for _ in 0..15 {
            m.weigh(true, true, 0);
        }
        m.restart_test();
        let flip = (1..=16).find(|_| m.weigh(true, true, 0) == Outcome::Flipped);
        assert_eq!(flip, Some(16));
    }
}
