//! The test that decides a flip of the spin policy's mode: Wald's sequential probability ratio
//! test (SPRT) over the outcomes of probes.
//!
//! ```text
//! let (llr, verdict) = sprt::step(llr, probe_was_cheaper, toward_parking);
//! match verdict { Verdict::Flip => .., Verdict::Confirm => .., Verdict::Continue => .. }
//! ```
//!
//! Each recorded probe gives one bit: whether its idle period came out cheaper, by a margin,
//! than the latest period in the current mode (see `mode.rs`). The test weighs two hypotheses
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
//! Under H0 a test takes `|b| / |E[step]| = 4.61 / 0.51 ≈ 9` bits on average, and the policy
//! runs one test after another; with at most one recorded probe per 8 idle periods, and one per
//! 1024 once the mode has been confirmed a few times (`probe.rs`), a million periods hold a
//! few hundred tests, so a fair coin flips the mode into parking with probability of the
//! order of 10⁻². A stationary remote client is far from a fair coin: with `p = 0.4` (Poisson
//! gaps with a mean of 200 µs, where a park probe still beats the period before it now and
//! then: `P(g₁ + 30 µs < g₂) = e^(−30/200)/2 = 0.43` for two exponential gaps) the
//! chance that a test ever reaches `a` is `e^(−r·a)` with `r ≈ 1.46` the root of
//! `0.4·e^(0.588 r) + 0.6·e^(−1.609 r) = 1`: about 10⁻⁶ per test. One fluke moves `Λ` by a
//! sixteenth of the way to a flip.
//!
//! The bits must be close to independent for those rates to hold. Two recorded probes are
//! never adjacent idle periods (a probe run is one warm-up period and one recorded one, three
//! warm-ups for a park probe with shared CPUs, and runs are at least 4 periods apart), each is
//! compared with a different period, and the margin keeps a probe that only ties with the
//! current mode from counting as a 1. Comparing with the period just before the run, rather
//! than with a long-run estimate, also keeps a slow drift of the load from lining bits up;
//! and the regime rule (`regime.rs`) restarts the test (`Λ = 0`) when the workload moves.

/// What one step of the test concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not enough evidence either way yet.
    Continue,
    /// The probed choice is better: flip the mode.
    Flip,
    /// The current mode holds: restart the test and probe less often.
    Confirm,
}

/// `ln(p1/p0)` and `ln((1−p1)/(1−p0))` with `p0 = 1/2`, `p1 = 9/10`, in thousandths.
pub(super) const STEP_FOR: i32 = 588;
pub(super) const STEP_AGAINST: i32 = -1_609;
/// `a = ln((1−β)/α)` with `β = 10⁻²` and `α = 10⁻⁴` (into parking) or `10⁻³` (back to
/// spinning), in thousandths.
pub(super) const FLIP_TO_PARKING: i32 = 9_200;
pub(super) const FLIP_TO_SPINNING: i32 = 6_898;
/// `b = ln(β/(1−α))`, in thousandths.
pub(super) const CONFIRM: i32 = -4_605;

/// The flip threshold for a test of parking (`toward_parking`) or of spinning.
pub(super) fn flip_at(toward_parking: bool) -> i32 {
    if toward_parking {
        FLIP_TO_PARKING
    } else {
        FLIP_TO_SPINNING
    }
}

/// One recorded probe: `cheaper` is its bit, `toward_parking` whether the probed choice is
/// parking (the current mode spins). Returns the new `Λ` (thousandths; 0 after a verdict) and
/// the verdict.
pub(super) fn step(llr: i32, cheaper: bool, toward_parking: bool) -> (i32, Verdict) {
    if super::ablate::off(super::ablate::Part::Sprt) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn run(bits: impl IntoIterator<Item = bool>, toward_parking: bool) -> (usize, Verdict) {
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
        assert_eq!(run(std::iter::repeat(true), true), (16, Verdict::Flip));
        assert_eq!(run(std::iter::repeat(true), false), (12, Verdict::Flip));
        assert_eq!(run(std::iter::repeat(false), true), (3, Verdict::Confirm));
        // One 0 among the 1s costs itself and three more 1s.
        let bits = (0..).map(|i| i != 5);
        assert_eq!(run(bits, true), (20, Verdict::Flip));
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
            let (n, v) = run(std::iter::repeat_with(|| coin(0.5)), true);
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
            flips += (run(std::iter::repeat_with(|| coin(0.4)), true).1 == Verdict::Flip) as u32;
        }
        assert!(flips <= 2, "{flips} flips with p = 0.4");
    }
}
