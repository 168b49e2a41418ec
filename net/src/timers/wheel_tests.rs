//! The wheel against a model (a sorted list of (tick, id)): random inserts, removals,
//! re-filings and polls over ticks from one millisecond to years, with a seeded generator so
//! that a failure replays.

use super::*;
use std::collections::BTreeSet;

/// xorshift64*: enough randomness for a model test, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A distance in ticks that lands on every level: 1 ms to past the wheel's span.
    fn distance(&mut self) -> u64 {
        let level = self.below(8) as u32;
        1 + self.below(1u64 << (6 * level).min(40))
    }
}

/// Payload: (id, true tick).
type P = (u64, u64);

fn fire_at_slot(p: &P, slot_tick: u64) -> Verdict {
    if p.1 <= slot_tick {
        Verdict::Fire
    } else {
        Verdict::Later(p.1)
    }
}

#[test]
fn matches_a_sorted_model_over_random_operations() {
    for seed in 1..=20u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut w: Wheel<P> = Wheel::new();
        let mut model: BTreeSet<(u64, u64)> = BTreeSet::new();
        let mut keys: Vec<(u32, u64, u64)> = Vec::new(); // (key, id, tick)
        let mut now = 0u64;
        let mut next_id = 0u64;
        for _ in 0..3_000 {
            match rng.below(10) {
                0..=3 => {
                    let tick = now + rng.distance();
                    next_id += 1;
                    let key = w
                        .insert(tick, (next_id, tick))
                        .expect("a future tick files");
                    model.insert((tick, next_id));
                    keys.push((key, next_id, tick));
                }
                4 if !keys.is_empty() => {
                    let i = rng.below(keys.len() as u64) as usize;
                    let (key, id, tick) = keys.swap_remove(i);
                    assert_eq!(w.remove(key), (id, tick));
                    assert!(model.remove(&(tick, id)));
                }
                5 if !keys.is_empty() => {
                    let i = rng.below(keys.len() as u64) as usize;
                    let (key, id, old) = keys[i];
                    let tick = now + rng.distance();
                    assert!(w.refile(key, tick));
                    // The payload's true tick moves with it.
                    *w.entries[key as usize].payload.as_mut().unwrap() = (id, tick);
                    keys[i].2 = tick;
                    assert!(model.remove(&(old, id)));
                    model.insert((tick, id));
                }
                _ => {
                    now += rng.distance().min(1 << 24);
                    let mut fired = Vec::new();
                    w.poll(now, fire_at_slot, |p| fired.push(p));
                    let due: Vec<(u64, u64)> =
                        model.iter().take_while(|e| e.0 <= now).copied().collect();
                    for e in &due {
                        model.remove(e);
                    }
                    // Fired in tick order (the same tick in any order), exactly the due ones.
                    let mut by_tick: Vec<(u64, u64)> =
                        fired.iter().map(|&(id, t)| (t, id)).collect();
                    assert!(
                        by_tick.windows(2).all(|p| p[0].0 <= p[1].0),
                        "seed {seed}: out of order"
                    );
                    by_tick.sort();
                    assert_eq!(by_tick, due, "seed {seed}: at {now}");
                    keys.retain(|k| k.2 > now);
                    assert_eq!(w.elapsed(), now);
                }
            }
            assert_eq!(w.len(), model.len());
            if let (Some(exp), Some(first)) = (w.next_expiration(), model.first()) {
                assert!(
                    exp.deadline <= first.0,
                    "seed {seed}: next slot {exp:?} after the earliest {first:?}, elapsed {}",
                    w.elapsed()
                );
            }
        }
        // The rest fire by the end of time, in order.
        let mut fired = Vec::new();
        w.poll(u64::MAX / 2, fire_at_slot, |p| fired.push(p.1));
        assert_eq!(fired.len(), model.len());
        assert!(fired.windows(2).all(|p| p[0] <= p[1]));
    }
}

#[test]
fn next_expiration_never_comes_after_the_earliest_entry() {
    let mut w: Wheel<P> = Wheel::new();
    for (i, tick) in [1u64, 63, 64, 65, 4095, 4096, 300_000, 20_000_000, 1 << 35]
        .into_iter()
        .enumerate()
    {
        w.insert(tick, (i as u64, tick)).unwrap();
    }
    let mut now = 0;
    while let Some(exp) = w.next_expiration() {
        let mut earliest = u64::MAX;
        w.for_each_in(exp, |p| earliest = earliest.min(p.1));
        assert!(
            exp.deadline <= earliest,
            "slot at {} holds {earliest}",
            exp.deadline
        );
        assert!(exp.deadline > now);
        now = exp.deadline;
        w.poll(now, fire_at_slot, |p| assert_eq!(p.1, now));
    }
    assert_eq!(w.len(), 0);
}

#[test]
fn ticks_beyond_the_span_are_filed_at_its_end_and_refiled() {
    let mut w: Wheel<P> = Wheel::new();
    let far = 3 * SPAN + 17;
    w.insert(far, (1, far)).unwrap();
    let mut rounds = 0;
    let mut fired = None;
    while let Some(exp) = w.next_expiration() {
        assert!(exp.deadline <= far);
        w.poll(exp.deadline, fire_at_slot, |p| {
            fired = Some((p, exp.deadline))
        });
        rounds += 1;
        assert!(rounds < 100, "no progress");
    }
    assert_eq!(fired, Some(((1, far), far)));
}

#[test]
fn insert_at_or_before_elapsed_is_refused() {
    let mut w: Wheel<P> = Wheel::new();
    w.poll(10, fire_at_slot, |_| {});
    assert_eq!(w.insert(10, (1, 10)), Err((1, 10)));
    assert_eq!(w.insert(5, (2, 5)), Err((2, 5)));
    let k = w.insert(11, (3, 11)).unwrap();
    assert!(!w.refile(k, 10));
    assert_eq!(w.get(k), Some(&(3, 11)));
}

#[test]
fn fire_in_takes_only_the_picked_entries() {
    let mut w: Wheel<P> = Wheel::new();
    for id in 0..4 {
        w.insert(7, (id, 7)).unwrap();
    }
    let exp = w.next_expiration().unwrap();
    let mut fired = Vec::new();
    w.fire_in(exp, |p| p.0 % 2 == 0, |p| fired.push(p.0));
    assert_eq!(fired, [0, 2]);
    assert_eq!(w.len(), 2);
    let mut rest = Vec::new();
    w.poll(7, fire_at_slot, |p| rest.push(p.0));
    assert_eq!(rest, [1, 3]);
}

#[test]
fn memory_is_given_back_once_a_crowd_has_fired() {
    let mut w: Wheel<P> = Wheel::new();
    for id in 0..10_000 {
        w.insert(1 + id % 5000, (id, 1 + id % 5000)).unwrap();
    }
    w.poll(5000, fire_at_slot, |_| {});
    assert_eq!(w.len(), 0);
    assert_eq!(w.entries.capacity(), 0);
}
