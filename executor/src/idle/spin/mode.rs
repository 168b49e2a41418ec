//! The mode, spinning or parking, and the evidence that keeps it or flips it.
//!
//! ```text
//! if mode.parking() { park at once } else { spin }
//! mode.in_mode(parked, d);                      // a period that followed the mode ended
//! if let Some(cheaper) = mode.probe(parked, d, colocated) { // a recorded probe ended
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
//! its shape; the margin tilts it towards 0. (A running median would not do: with gaps of
//! 50 µs and 5 ms in equal parts it wanders between the two, and a park probe on a short gap
//! beats it half the time although parking never helps.) A probe counts only once the mode
//! has a latest period to compare it with.
//!
//! When the clients run on our CPUs (`spin.rs`, "Clients on our own CPUs"), a spinning
//! period costs its `d` plus a quarter of it and a tie, [`SHARED_TIE`]: the spinner's CPU time
//! is the client's, so spinning that does not answer measurably sooner should not be bought.
//! The tie is well below what a wake-up costs where spinning pays (20-60 µs on a VM whose idle
//! vCPU halts).
//!
//! The evidence *turns* ([`Outcome::Turning`], and the policy gathers it quickly) when a test
//! of parking is more than halfway to a flip, or at the first bit in favour of spinning while
//! parking is the mode: a spin probe costs only some CPU, where a park probe costs a remote
//! client a wake-up. So a server parked for a workload that has changed (gaps now shorter
//! than a wake-up) finds spinning again after one run at the current probe rate and a dozen at
//! the fastest, with nothing else watching the workload.
//!
//! The medians are not used by the test: their difference is what parking costs, for the
//! quiet-moment rule ([`Mode::penalty`]). A probe's own arm, with no median yet, starts from
//! the other arm's ("no difference" until shown otherwise).
//!
//! # The test
//!
//! The bits feed Wald's sequential probability ratio test (SPRT), which weighs two hypotheses
//! about the chance `p` of a 1:
//!
//! * **H0**, the probed choice is no better: `p = p0 = 1/2`. If both choices gave the same
//!   distribution, the probe and the period it is compared with would be two draws from it,
//!   and either is the smaller half of the time, whatever the distribution; the margin makes
//!   it less, and a probed choice that is worse (parking, with a remote client: a wake-up
//!   longer) makes it far less.
//! * **H1**, the probed choice is clearly better: `p = p1 = 9/10`. That is the effect worth
//!   acting on: a client sharing the CPUs gives bits that are nearly all 1.
//!
//! After `n` bits of which `k` are 1, the log-likelihood ratio is
//! `Λ = k·ln(p1/p0) + (n−k)·ln((1−p1)/(1−p0))`: each 1 adds `ln(1.8) = +0.588`, each 0 adds
//! `ln(0.2) = −1.609`. Wald's test stops as soon as `Λ ≥ a = ln((1−β)/α)` (accept H1: flip the
//! mode) or `Λ ≤ b = ln(β/(1−α))` (accept H0: the mode is confirmed, and the policy probes
//! less often). Wald's bounds give error rates of about `α` (a flip when H0 holds) and `β` (a
//! confirmation when H1 holds). Here, in thousandths:
//!
//! * **into parking**, `α = 10⁻⁴`, `β = 10⁻²`: `a = ln(0.99/10⁻⁴) = 9.20`, 16 ones in a row
//!   (`16 × 0.588 = 9.40`). Parking wrongly costs a remote client a wake-up on every request,
//!   so this is the way a noisy workload must not take by accident.
//! * **back to spinning**, `α = 10⁻³`: `a = ln(0.99/10⁻³) = 6.90`, 12 ones in a row. The bar
//!   is lower: once spinning clearly pays again it should return soon.
//! * **confirm**, `β = 10⁻²`: `b = ln(10⁻²/0.9999) = −4.61`, three zeros in a row
//!   (`3 × −1.609 = −4.83`), or more bits when ones are mixed in.
//!
//! Under H0 a test takes `|b| / |E[step]| = 4.61 / 0.51 ≈ 9` bits on average; a million
//! periods hold a few hundred tests (`probe.rs`: one recorded probe per 8 to 1024 periods), so
//! a fair coin flips the mode into parking with probability of the order of 10⁻². A remote
//! client with Poisson gaps of mean 200 µs, where a park probe still beats the period before
//! it now and then (`P(g₁ + 30 µs < g₂) = e^(−30/200)/2 = 0.43`), gives `p ≈ 0.4`: the
//! chance that a test ever reaches `a` is `e^(−r·a)` with `r ≈ 1.46` the root of
//! `0.4·e^(0.588 r) + 0.6·e^(−1.609 r) = 1`, about 10⁻⁶ per test.
//!
//! The bits must be close to independent for those rates to hold. Two recorded probes are
//! never adjacent idle periods (a probe run is one warm-up period and one recorded one, three
//! warm-ups for a park probe with colocated clients, and runs are at least 4 periods apart), each is
//! compared with a different period, and the margin keeps a probe that only ties with the
//! current mode from counting as a 1. Comparing with the period just before the run, rather
//! than with a long-run estimate, also keeps a slow drift of the load from lining bits up.
//! The test restarts (`Λ = 0`) when the clients start or stop running on our CPUs.
//!
//! Every field is a statistic or a hint, read and written `Relaxed`: two workers that weigh a
//! probe at once may lose a step of the test, and a worker that reads the mode just before a
//! flip spins (or parks) one period more.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use super::ablate::{off, Part};
use super::estimate::Median;
use super::Nanos;

/// What parking is assumed to add to `d` before a park probe has measured it (a wake-up on
/// a VM whose idle vCPU halts).
const WAKE_PRIOR: u32 = 30_000;
/// The most parking is taken to add to `d`: the medians it is measured from can be stale
/// (the park median only moves on park probes while spinning), and a wake-up takes tens of
/// microseconds, not hundreds.
const WAKE_CAP: u32 = 50_000;
/// With the clients on our CPUs, how much later than spinning parking may answer and still
/// count as cheaper, on top of the charge: 2^13 ns, about 8 µs.
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
    /// No verdict, but the evidence turns against the mode (see the module documentation).
    Turning,
    /// No verdict.
    Undecided,
}

/// What one step of the test concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Not enough evidence either way yet.
    Continue,
    /// The probed choice is better: flip the mode.
    Flip,
    /// The current mode holds: restart the test and probe less often.
    Confirm,
}

/// `ln(p1/p0)` and `ln((1−p1)/(1−p0))` with `p0 = 1/2`, `p1 = 9/10`, in thousandths.
const STEP_FOR: i32 = 588;
const STEP_AGAINST: i32 = -1_609;
/// `a = ln((1−β)/α)` with `β = 10⁻²` and `α = 10⁻⁴` (into parking) or `10⁻³` (back to
/// spinning), in thousandths.
const FLIP_TO_PARKING: i32 = 9_200;
const FLIP_TO_SPINNING: i32 = 6_898;
/// `b = ln(β/(1−α))`, in thousandths.
const CONFIRM: i32 = -4_605;

/// The flip threshold for a test of parking (`toward_parking`) or of spinning.
fn flip_at(toward_parking: bool) -> i32 {
    if toward_parking {
        FLIP_TO_PARKING
    } else {
        FLIP_TO_SPINNING
    }
}

/// One recorded probe: `cheaper` is its bit, `toward_parking` whether the probed choice is
/// parking (the current mode spins). Returns the new `Λ` (thousandths; 0 after a verdict) and
/// the verdict.
fn step(llr: i32, cheaper: bool, toward_parking: bool) -> (i32, Verdict) {
    if off(Part::Sprt) {
        return (
            0,
            if cheaper {
                Verdict::Flip
            } else {
                Verdict::Confirm
            },
        );
    }
    let llr = llr.saturating_add(if cheaper { STEP_FOR } else { STEP_AGAINST });
    if llr >= flip_at(toward_parking) {
        (0, Verdict::Flip)
    } else if llr <= CONFIRM {
        (0, Verdict::Confirm)
    } else {
        (llr, Verdict::Continue)
    }
}

/// The mode, the test, and both arms; see the module documentation.
#[derive(Debug)]
pub(super) struct Mode {
    /// Parking is the mode (else spinning).
    parking: AtomicBool,
    /// The sequential test's log-likelihood ratio `Λ`, thousandths.
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
    /// began, with the clients `colocated` on our CPUs or not. Returns its bit, whether it
    /// was cheaper than the mode's latest period (with colocated clients a spinning period
    /// also costs a quarter of its `d` and the tie, [`SHARED_TIE`]), or `None` if the mode
    /// has no period yet to compare it with.
    pub(super) fn probe(&self, parked: bool, d: u32, colocated: bool) -> Option<bool> {
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
        Some(match (colocated, parked) {
            // The charge is the margin a park probe must win by: no sixteenth on top.
            (true, true) => d < spin_cost(before),
            (true, false) => cheaper(spin_cost(d), before),
            (false, _) => cheaper(d, before),
        })
    }

    /// One step of the sequential test on a probe's bit (`cheaper`), where the probed choice
    /// is parking (`toward_parking`) or spinning; flips the mode at `now` if the test says so.
    pub(super) fn weigh(&self, cheaper: bool, toward_parking: bool, now: Nanos) -> Outcome {
        let (llr, verdict) = step(self.llr.load(Relaxed), cheaper, toward_parking);
        self.llr.store(llr, Relaxed);
        match verdict {
            Verdict::Flip => {
                self.parking.store(toward_parking, Relaxed);
                self.flipped_at.store(now, Relaxed);
                self.flips[toward_parking as usize].fetch_add(1, Relaxed);
                Outcome::Flipped
            }
            Verdict::Confirm => Outcome::Confirmed,
            Verdict::Continue if llr > flip_at(toward_parking) / 2 => Outcome::Turning,
            Verdict::Continue if cheaper && !toward_parking => Outcome::Turning,
            Verdict::Continue => Outcome::Undecided,
        }
    }

    /// Flips so far, to spinning and to parking.
    pub(super) fn flips(&self) -> (u64, u64) {
        (self.flips[0].load(Relaxed), self.flips[1].load(Relaxed))
    }

    /// What a spinning period costs changed (the clients moved): the evidence so far no
    /// longer applies.
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
        assert_eq!(m.probe(true, 5 * US, false), None);
        assert_eq!(m.penalty(), WAKE_PRIOR, "nothing measured");
        m.in_mode(false, 40 * US);
        assert_eq!(m.probe(true, 5 * US, false), Some(true));
        assert_eq!(m.probe(true, 80 * US, false), Some(false));
    }

    /// With the clients on our CPUs, a spinning period costs a quarter of its `d` more, and
    /// the tie; a park probe needs no sixteenth on top. (The figures are the ones measured
    /// on the 2-vCPU AMD guest: 136 µs spinning, 158 µs parked.)
    #[test]
    fn with_colocated_clients_spinning_is_charged_a_quarter() {
        let m = Mode::new();
        m.in_mode(false, 136 * US);
        assert_eq!(m.probe(true, 158 * US, false), Some(false));
        assert_eq!(m.probe(true, 158 * US, true), Some(true));
        // 136 + 34 + 8.2 = 178.2 µs: parking up to there counts as cheaper.
        assert_eq!(m.probe(true, 178 * US, true), Some(true));
        assert_eq!(m.probe(true, 179 * US, true), Some(false));
        // A wake-up costlier than the charge still loses: spinning that answers much sooner
        // keeps its place (20 µs gaps, 60 µs parked against 40 µs spinning).
        let m = Mode::new();
        m.in_mode(false, 40 * US);
        assert_eq!(m.probe(true, 60 * US, true), Some(false));
        // In parking mode, a spin probe must beat parking after the charge, by a sixteenth.
        let m = Mode::new();
        m.in_mode(true, 158 * US);
        assert_eq!(m.probe(false, 136 * US, true), Some(false));
        assert_eq!(m.probe(false, 100 * US, true), Some(true));
    }

    /// A probe is compared with the latest period in the mode, not with its median.
    #[test]
    fn probes_are_compared_with_the_latest_period() {
        let m = Mode::new();
        for _ in 0..100 {
            m.in_mode(false, 5_000 * US);
        }
        m.in_mode(false, 50 * US);
        assert_eq!(m.probe(true, 80 * US, false), Some(false));
        // A zero `d` still counts as a period (1 ns).
        m.in_mode(false, 0);
        assert_eq!(m.probe(true, 0, false), Some(true));
    }

    /// A probe's arm starts from the other arm's median; the difference is what parking
    /// costs, capped at 50 µs.
    #[test]
    fn the_penalty_of_parking_comes_from_the_medians() {
        let m = Mode::new();
        m.in_mode(false, 64 * US);
        m.probe(true, 200 * US, false);
        assert_eq!(
            m.penalty(),
            2 * US,
            "a 32nd of the prior towards the sample"
        );
        for _ in 0..200 {
            m.probe(true, 80 * US, false);
        }
        assert_eq!(m.penalty(), 16 * US);
        for _ in 0..200 {
            m.probe(true, 1_000 * US, false);
        }
        assert_eq!(m.penalty(), WAKE_CAP);
        // Parking cheaper than spinning: no penalty.
        for _ in 0..400 {
            m.probe(true, 10 * US, false);
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
        // And twelve back to spinning, the evidence turning from the first.
        let back: Vec<Outcome> = (0..12).map(|_| m.weigh(true, false, 2_000)).collect();
        assert_eq!(back[11], Outcome::Flipped);
        assert!(
            back[..11].iter().all(|&o| o == Outcome::Turning),
            "{back:?}"
        );
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

    fn milli(x: f64) -> i32 {
        (x * 1000.0).round() as i32
    }

    #[test]
    fn thresholds_are_the_derived_ones() {
        let (p0, p1) = (0.5f64, 0.9f64);
        assert_eq!(STEP_FOR, milli((p1 / p0).ln()));
        assert_eq!(STEP_AGAINST, milli(((1.0 - p1) / (1.0 - p0)).ln()));
        let beta = 1e-2f64;
        assert_eq!(FLIP_TO_PARKING, milli(((1.0 - beta) / 1e-4).ln()));
        assert_eq!(FLIP_TO_SPINNING, milli(((1.0 - beta) / 1e-3).ln()));
        assert_eq!(CONFIRM, milli((beta / (1.0 - 1e-4)).ln()));
    }

    /// Bits until a verdict, starting from 0.
    fn verdict_after(
        bits: impl IntoIterator<Item = bool>,
        toward_parking: bool,
    ) -> (usize, Verdict) {
        let mut llr = 0;
        for (i, b) in bits.into_iter().enumerate() {
            let (l, v) = step(llr, b, toward_parking);
            if v != Verdict::Continue {
                return (i + 1, v);
            }
            llr = l;
        }
        (usize::MAX, Verdict::Continue)
    }

    #[test]
    fn unanimous_evidence_decides_in_a_few_bits() {
        assert_eq!(
            verdict_after(std::iter::repeat(true), true),
            (16, Verdict::Flip)
        );
        assert_eq!(
            verdict_after(std::iter::repeat(true), false),
            (12, Verdict::Flip)
        );
        assert_eq!(
            verdict_after(std::iter::repeat(false), true),
            (3, Verdict::Confirm)
        );
        // One 0 among the 1s costs itself and three more 1s.
        let bits = (0..).map(|i| i != 5);
        assert_eq!(verdict_after(bits, true), (20, Verdict::Flip));
    }

    /// A fair coin (the probed choice no better) flips the mode into parking in about one test
    /// in 10⁴, and one that favours the current mode (p = 0.4) practically never.
    #[test]
    fn fair_and_unfavourable_coins_rarely_flip() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut coin = move |p: f64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 / (1u64 << 53) as f64) < p
        };
        let tests = 200_000;
        let mut flips = 0;
        let mut bits = 0;
        for _ in 0..tests {
            let (n, v) = verdict_after(std::iter::repeat_with(|| coin(0.5)), true);
            bits += n;
            flips += (v == Verdict::Flip) as u32;
        }
        // Wald: at most about α/(1−β) ≈ 1.0e-4 of the tests, i.e. about 20 of 200 000.
        assert!(flips <= 40, "{flips} flips in {tests} tests");
        // And a test takes about 9 bits under H0.
        let mean = bits as f64 / tests as f64;
        assert!((6.0..12.0).contains(&mean), "{mean} bits per test");
        let mut flips = 0;
        for _ in 0..tests {
            flips += (verdict_after(std::iter::repeat_with(|| coin(0.4)), true).1 == Verdict::Flip)
                as u32;
        }
        assert!(flips <= 2, "{flips} flips with p = 0.4");
    }
}
