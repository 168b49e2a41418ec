//! A differential check of the whole policy: long synthetic runs, every decision and every
//! observable after every period folded into one hash per run, compared with the hashes the
//! policy gave before it was split into parts.
//!
//! The golden values in [`GOLDEN`] were not written by hand: they were printed by this very
//! test (`cargo test -p spinpark-executor --lib golden -- --nocapture`) run against the
//! single-file policy of commit `8680f89` (`idle/spin.rs` with its 34 fields), with this file
//! added to it unchanged, except two: on shared CPUs a tie within 8 µs now goes to parking
//! (`mode.rs`, `SHARED_TIE`), which changed the runs of cases 1 and 10, whose hashes were
//! printed again with that change and nothing else. A policy that reproduces them made the same decisions, kept the same
//! window, mode, probe schedule and budget, in every period of every run. A change meant to
//! alter the policy's behaviour must print and record new values, and say so.
//!
//! Each run drives one policy through phases of different worlds (steady, Poisson, bimodal,
//! colocated clients, arrivals faster than a wake-up, gaps past the maximum), with up to three
//! workers whose idle periods overlap, busy moments, refused spinner slots, and the shared-CPU
//! signal fed by hand; all of it drawn from a seeded generator, with synthetic time only.

use super::*;

const US: u64 = 1_000;

/// The hashes of [`run`] for each `(config, seed)` of [`CASES`], from the pre-split policy.
const GOLDEN: [u64; 12] = [
    0x92403a7c0eea0b0d,
    0xcf2600ec411bdd1f,
    0xb145a4feee148d31,
    0x6932146acee0b6d2,
    0x9b4522e32d49e89a,
    0xb66be59168d4a89b,
    0xf7b2dcb434595ea5,
    0x377379af5eb1e79b,
    0x863d4df977c7169c,
    0x11d34de534a09923,
    0x63ac27e511aedd2d,
    0xceeec8b12f90fbf4,
];

/// The policies traced: adaptive as the runtime builds it (0..1 ms from 250 µs), adaptive with
/// a floor and a lower cap, adaptive with `min == max`, and a fixed window under a tight
/// budget.
const CASES: [(u8, u64); 12] = [
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (1, 5),
    (1, 6),
    (2, 7),
    (3, 8),
    (3, 9),
    (0, 10),
    (1, 11),
    (0, 12),
];

fn config(c: u8) -> SpinPolicy {
    match c {
        0 => SpinPolicy::new(true, 0, 1_000_000, 250_000, 1.0, Share::disabled()),
        1 => SpinPolicy::new(true, 20_000, 400_000, 100_000, 0.5, Share::disabled()),
        2 => SpinPolicy::new(true, 60_000, 60_000, 60_000, 1.0, Share::disabled()),
        _ => SpinPolicy::new(false, 100_000, 100_000, 100_000, 0.25, Share::disabled()),
    }
}

/// FNV-1a over 64-bit words.
struct Fnv(u64);
impl Fnv {
    fn add(&mut self, x: u64) {
        for b in x.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// Xorshift, as in the simulation tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn exp(&mut self, mean: u64) -> u64 {
        (-(1.0 - self.unit()).ln() * mean as f64) as u64
    }
}

fn kind_code(k: Kind) -> u64 {
    let run = |r: Run| (r.pos as u64) << 8 | r.last as u64;
    match k {
        Kind::Spin => 1,
        Kind::SpinProbe(r) => 2 | run(r) << 4,
        Kind::ParkProbe(r) => 3 | run(r) << 4,
        Kind::ParkMode => 4,
        Kind::Budget => 5,
        Kind::Zero => 6,
        // The traces predate the contention hold, and never report a lost core.
        Kind::Contended => unreachable!("the golden runs never lose a core"),
    }
}

/// How many decisions of each kind (by `kind_code & 0xf`), and how many flips, a run saw.
#[derive(Debug, Default)]
struct Seen {
    kinds: [u64; 7],
    flips: u64,
}

/// One traced run: `steps` idle periods begun or ended. Returns the hash.
fn run(config_id: u8, seed: u64, steps: usize, seen: &mut Seen) -> u64 {
    let p = config(config_id);
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let mut now: Nanos = 1;
    // Periods in progress: the decision, when its work turns up, whether it got a spinner
    // slot, and the spin it charged.
    let mut pending: Vec<(Decision, Nanos, bool, u64)> = Vec::new();
    let workers = 1 + rng.below(3) as usize;
    // What a period that parked by choice says about its spinner slot: `false` as in
    // production, `true` as in the simulation tests, or either.
    let parked_says = rng.below(3);
    let (mut phase, mut phase_left, mut shared_phase) = (0u64, 0u64, false);
    let mut parked_in_a_row = 0u32;
    let mut was_parking = false;
    for _ in 0..steps {
        if phase_left == 0 {
            phase = rng.below(10);
            phase_left = 2_000 + rng.below(20_000);
            // Now and then a long phase: holds that double several times in a row.
            if rng.below(4) == 0 {
                phase_left += 80_000;
            }
            shared_phase = rng.below(4) == 0;
        }
        phase_left -= 1;
        if shared_phase && rng.below(64) == 0 {
            // Two busy samples in a row: the signal fires on the second (`share.rs`).
            p.share.observe(now, 300);
            p.share.observe(now, 300);
        }
        let free = (0..workers).find(|w| pending.iter().all(|q| q.0.worker as usize != *w));
        let begin = match free {
            Some(_) if pending.is_empty() => true,
            Some(_) => rng.below(4) == 0,
            None => false,
        };
        if let Some(w) = free.filter(|_| begin) {
            let busy = !pending.is_empty() || rng.below(10) == 0;
            let dec = p.begin(now, w, busy);
            h.add(kind_code(dec.kind));
            h.add(dec.window as u64);
            h.add(dec.began);
            h.add(dec.worker as u64);
            seen.kinds[(kind_code(dec.kind) & 0xf) as usize] += 1;
            let spins = dec.spins();
            parked_in_a_row = if spins { 0 } else { parked_in_a_row + 1 };
            let (gap, wake) = match phase {
                0 => (50 * US, 30 * US),
                1 => (rng.exp(200 * US), 30 * US),
                2 => (
                    if rng.below(2) == 0 {
                        50 * US
                    } else {
                        5_000 * US
                    },
                    30 * US,
                ),
                3 if spins => (40 * US, 30 * US),
                3 => (5 * US, 2 * US),
                4 => (5_000 * US + rng.exp(100 * US), 30 * US),
                5 => (rng.exp(2_000 * US), 30 * US),
                6 => (10 * US + rng.exp(2 * US), 30 * US),
                9 => (rng.exp(3_000 * US), 30 * US),
                7 if spins || parked_in_a_row < 3 => (56 * US, 30 * US),
                7 => (20 * US, 2 * US),
                _ => (300 * US + rng.exp(20 * US), 25 * US),
            };
            let w_ns = dec.window as u64;
            // A spinner slot is refused now and then.
            let spun = match (spins, parked_says) {
                (true, _) => rng.below(32) != 0,
                (false, 0) => false,
                (false, 1) => true,
                (false, _) => rng.below(2) == 0,
            };
            let (d, spin_ns) = if spins && spun && gap <= w_ns {
                (gap, gap)
            } else if spins && spun {
                (gap + wake, w_ns)
            } else {
                (gap + wake, 0)
            };
            pending.push((dec, now + d, spun, spin_ns));
            now += rng.below(3 * US);
        } else {
            // The period whose work turns up first ends.
            let i = (0..pending.len()).min_by_key(|&i| pending[i].1).unwrap();
            let (dec, at, spun, spin_ns) = pending.swap_remove(i);
            now = now.max(at);
            if dec.spins() && spun {
                p.spun(dec.began + spin_ns, spin_ns);
            }
            p.end(dec, spun, at - dec.began);
            let parking = p.parking();
            seen.flips += (parking != was_parking) as u64;
            was_parking = parking;
            for x in [
                p.window().as_nanos() as u64,
                parking as u64,
                p.probes(),
                p.probe_period() as u64,
                p.since_flip(now).as_nanos() as u64,
                p.recent_spin(now).as_nanos() as u64,
                p.cpus_shared(now) as u64,
            ] {
                h.add(x);
            }
            // The work itself.
            now += 5 * US + rng.below(10 * US);
        }
    }
    h.0
}

#[test]
fn the_policy_reproduces_the_traces_of_the_single_file_policy() {
    let mut seen = Seen::default();
    let got: Vec<u64> = CASES
        .iter()
        .map(|&(c, seed)| run(c, seed, 200_000, &mut seen))
        .collect();
    println!("traced: {seen:?}");
    println!("hashes: {got:#018x?}");
    // The trace covers every kind of decision, and flips both ways.
    assert!(seen.kinds[1..].iter().all(|&k| k > 0), "{seen:?}");
    assert!(seen.flips >= 2, "{seen:?}");
    assert_eq!(got, GOLDEN, "the policy no longer behaves as before");
}
