//! A hierarchical timing wheel: entries filed by millisecond tick, where filing, re-filing and
//! removing an entry is O(1), and finding what is due costs a few bit operations per level.
//!
//! ```text
//! level 0: 64 slots of 1 ms       (the next 64 ms)
//! level 1: 64 slots of 64 ms      (the next ~4 s)
//! level 2: 64 slots of ~4 s       (the next ~4.4 min)
//! level 3: 64 slots of ~4.4 min   (the next ~4.7 h)
//! level 4: 64 slots of ~4.7 h     (the next ~12.4 days)
//! level 5: 64 slots of ~12.4 days (the next ~2.2 years; later ticks are clamped to it)
//! ```
//!
//! An entry due at tick `t` goes to the lowest level whose slot width tells `t` apart from
//! `elapsed` (the tick up to which everything has been processed): the level of the highest
//! bit in which they differ, six bits per level. Each slot is a doubly-linked list threaded
//! through one `Vec` of entries by index, so an entry's key stays valid until it is removed
//! or fired, and unlinking it is O(1). Each level keeps a 64-bit mask of its non-empty slots.
//!
//! [`Wheel::poll`] takes the earliest non-empty slot (the lowest level that has one: a lower
//! level only holds ticks before the start of any higher level's next slot), and if its start
//! is due, empties it: each entry is asked for a [`Verdict`], and either fires or goes back in
//! at a lower level (a cascade) or at its later true deadline. That is how the timer store
//! re-files a timer whose deadline was pushed back without touching the wheel: the wheel only
//! ever holds a lower bound of the entry's deadline.
//!
//! ```ignore
//! let mut w = Wheel::new();
//! let key = w.insert(100, "a").unwrap();   // due at tick 100: level 1
//! w.poll(99, |_, _| Verdict::Fire, |_| unreachable!());
//! let mut fired = vec![];
//! w.poll(100, |_, _| Verdict::Fire, |p| fired.push(p));
//! assert_eq!(fired, ["a"]);
//! ```
//!
//! The wheel is single-threaded; the timer store keeps one per shard behind that shard's lock.

/// No entry (the end of a list).
pub(super) const NIL: u32 = u32::MAX;
const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
const LEVELS: usize = 6;
/// The ticks one rotation of the top level covers: 64^6 ms, about 2.2 years. An entry due
/// later is filed at the far end of that range and re-filed when it comes up.
pub(super) const SPAN: u64 = 1 << (BITS * LEVELS as u32);

/// What happens to an entry whose slot came up at the given tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Take it out and hand it to the caller.
    Fire,
    /// File it again at this tick (which is after the slot's).
    Later(u64),
}

/// A slot that holds entries and the tick at which it comes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Expiration {
    level: usize,
    slot: usize,
    /// The first tick of the slot: no entry in it is due earlier.
    pub(super) deadline: u64,
}

struct Entry<T> {
    /// `None` while the entry is on the free list.
    payload: Option<T>,
    prev: u32,
    next: u32,
    level: u8,
    slot: u8,
}

struct Level {
    /// Bit `i` is set when slot `i` is not empty.
    occupied: u64,
    heads: [u32; SLOTS],
    tails: [u32; SLOTS],
}

/// The wheel; `T` is what an entry carries (the timer store's node).
pub(super) struct Wheel<T> {
    elapsed: u64,
    levels: [Level; LEVELS],
    entries: Vec<Entry<T>>,
    /// The free entries, linked through `next`.
    free: u32,
    len: usize,
}

impl<T> Wheel<T> {
    pub(super) fn new() -> Self {
        Wheel {
            elapsed: 0,
            levels: std::array::from_fn(|_| Level {
                occupied: 0,
                heads: [NIL; SLOTS],
                tails: [NIL; SLOTS],
            }),
            entries: Vec::new(),
            free: NIL,
            len: 0,
        }
    }

    /// The tick up to which every slot has been processed: an entry due at or before it
    /// cannot be filed.
    pub(super) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// How many entries are filed.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The payload filed under `key`, if that entry is filed.
    pub(super) fn get(&self, key: u32) -> Option<&T> {
        self.entries.get(key as usize)?.payload.as_ref()
    }

    /// Files `payload` at `tick`; its key, or the payload back if `tick` is not after
    /// [`Wheel::elapsed`] (it is due already).
    pub(super) fn insert(&mut self, tick: u64, payload: T) -> Result<u32, T> {
        if tick <= self.elapsed {
            return Err(payload);
        }
        let key = if self.free != NIL {
            let key = self.free;
            let e = &mut self.entries[key as usize];
            self.free = e.next;
            e.payload = Some(payload);
            key
        } else {
            assert!(
                self.entries.len() < NIL as usize,
                "spinpark::time: more than 4 billion timers in one shard"
            );
            self.entries.push(Entry {
                payload: Some(payload),
                prev: NIL,
                next: NIL,
                level: 0,
                slot: 0,
            });
            (self.entries.len() - 1) as u32
        };
        self.len += 1;
        self.link(key, tick);
        Ok(key)
    }

    /// Takes the entry `key` out and returns its payload.
    ///
    /// # Panics
    /// If `key` is not filed.
    pub(super) fn remove(&mut self, key: u32) -> T {
        self.unlink(key);
        self.release(key)
    }

    /// Moves the filed entry `key` to `tick`; false (and nothing moves) if `tick` is not after
    /// [`Wheel::elapsed`].
    pub(super) fn refile(&mut self, key: u32, tick: u64) -> bool {
        if tick <= self.elapsed {
            return false;
        }
        self.unlink(key);
        self.link(key, tick);
        true
    }

    /// The earliest slot that holds entries.
    pub(super) fn next_expiration(&self) -> Option<Expiration> {
        (0..LEVELS).find_map(|level| self.level_expiration(level))
    }

    /// Processes every slot that comes up at or before `now`, in order: each entry in it gets
    /// `verdict(payload, slot tick)`, and the entries to fire are handed to `fire`. Then
    /// `elapsed` is `now` (or the last processed slot, if later).
    pub(super) fn poll(
        &mut self,
        now: u64,
        mut verdict: impl FnMut(&T, u64) -> Verdict,
        mut fire: impl FnMut(T),
    ) {
        while let Some(exp) = self.next_expiration() {
            if exp.deadline > now {
                break;
            }
            // Before re-filing, so that the entries go in relative to the slot's tick.
            self.elapsed = exp.deadline;
            let mut key = self.take_slot(exp.level, exp.slot);
            while key != NIL {
                let next = self.entries[key as usize].next;
                let v = verdict(self.payload(key), exp.deadline);
                match v {
                    Verdict::Later(tick) if tick > self.elapsed => self.link(key, tick),
                    // A verdict of "later" that is not later is a caller's bug; firing is the
                    // safe reading (the caller checks the deadline again).
                    Verdict::Later(_) | Verdict::Fire => fire(self.release(key)),
                }
                key = next;
            }
        }
        self.elapsed = self.elapsed.max(now);
    }

    /// Takes out of the slot `exp` the entries for which `pick` says so, handing them to
    /// `fire`; the others stay. For the paused clock, which may stop inside a millisecond.
    pub(super) fn fire_in(
        &mut self,
        exp: Expiration,
        mut pick: impl FnMut(&T) -> bool,
        mut fire: impl FnMut(T),
    ) {
        let mut key = self.levels[exp.level].heads[exp.slot];
        while key != NIL {
            let next = self.entries[key as usize].next;
            if pick(self.payload(key)) {
                fire(self.remove(key));
            }
            key = next;
        }
    }

    #[cfg(any(test, feature = "test-util"))]
    /// Calls `f` on every payload in the slot `exp`.
    pub(super) fn for_each_in(&self, exp: Expiration, mut f: impl FnMut(&T)) {
        let mut key = self.levels[exp.level].heads[exp.slot];
        while key != NIL {
            f(self.payload(key));
            key = self.entries[key as usize].next;
        }
    }

    /// Empties the wheel, handing every payload to `f`, and frees its memory.
    pub(super) fn drain(&mut self, mut f: impl FnMut(T)) {
        let elapsed = self.elapsed;
        for e in std::mem::take(&mut self.entries) {
            if let Some(p) = e.payload {
                f(p);
            }
        }
        *self = Wheel::new();
        self.elapsed = elapsed;
    }

    fn payload(&self, key: u32) -> &T {
        self.entries[key as usize]
            .payload
            .as_ref()
            .expect("a filed entry has a payload")
    }

    /// Puts the unlinked entry `key` on the free list and returns its payload.
    fn release(&mut self, key: u32) -> T {
        let e = &mut self.entries[key as usize];
        let p = e.payload.take().expect("released a free entry");
        e.next = self.free;
        e.prev = NIL;
        self.free = key;
        self.len -= 1;
        if self.len == 0 && self.entries.len() > 4096 {
            // Nothing filed after a crowd: give the memory back (a million timers that fired
            // should not keep their entries for good; a few are kept for reuse).
            self.entries = Vec::new();
            self.free = NIL;
        }
        p
    }

    /// Appends the entry `key` to the list of the slot for `tick` (clamped to the wheel's
    /// range).
    fn link(&mut self, key: u32, tick: u64) {
        let tick = tick.min(self.elapsed + SPAN - 1);
        let level = level_for(self.elapsed, tick);
        let slot = ((tick >> (BITS * level as u32)) as usize) & (SLOTS - 1);
        let lv = &mut self.levels[level];
        let tail = lv.tails[slot];
        {
            let e = &mut self.entries[key as usize];
            e.level = level as u8;
            e.slot = slot as u8;
            e.prev = tail;
            e.next = NIL;
        }
        if tail == NIL {
            lv.heads[slot] = key;
            lv.occupied |= 1 << slot;
        } else {
            self.entries[tail as usize].next = key;
        }
        lv.tails[slot] = key;
    }

    fn unlink(&mut self, key: u32) {
        let e = &self.entries[key as usize];
        assert!(e.payload.is_some(), "unlinked a free entry");
        let (prev, next, level, slot) = (e.prev, e.next, e.level as usize, e.slot as usize);
        let lv = &mut self.levels[level];
        if prev == NIL {
            lv.heads[slot] = next;
        } else {
            self.entries[prev as usize].next = next;
        }
        if next == NIL {
            lv.tails[slot] = prev;
        } else {
            self.entries[next as usize].prev = prev;
        }
        if lv.heads[slot] == NIL {
            lv.occupied &= !(1 << slot);
        }
    }

    /// Detaches the whole list of a slot; returns its first entry (the rest follow `next`).
    fn take_slot(&mut self, level: usize, slot: usize) -> u32 {
        let lv = &mut self.levels[level];
        let head = lv.heads[slot];
        lv.heads[slot] = NIL;
        lv.tails[slot] = NIL;
        lv.occupied &= !(1 << slot);
        head
    }

    /// The next non-empty slot of `level`, counting from `elapsed`'s position in it.
    fn level_expiration(&self, level: usize) -> Option<Expiration> {
        let occupied = self.levels[level].occupied;
        if occupied == 0 {
            return None;
        }
        let shift = BITS * level as u32;
        let slot_range = 1u64 << shift;
        let level_range = slot_range << BITS;
        let here = ((self.elapsed >> shift) as usize) & (SLOTS - 1);
        // Slots from `here` on, in ring order. The slot at `here` itself can only hold
        // entries a full rotation ahead (the top level's ring, where far ticks are clamped),
        // so it comes last, not first.
        let rotated = occupied.rotate_right(here as u32);
        let ahead = rotated & !1;
        let step = if ahead != 0 {
            ahead.trailing_zeros() as usize
        } else {
            0
        };
        let slot = (here + step) % SLOTS;
        let mut deadline = (self.elapsed & !(level_range - 1)) + slot as u64 * slot_range;
        if deadline <= self.elapsed {
            // Only at the top level, whose slots are a ring: an entry filed up to a full
            // rotation ahead sits in a slot "behind" (or at) the current one.
            deadline += level_range;
        }
        Some(Expiration {
            level,
            slot,
            deadline,
        })
    }
}

/// The level for an entry due at `tick` when the wheel is at `elapsed`: that of the highest
/// bit in which they differ.
fn level_for(elapsed: u64, tick: u64) -> usize {
    let masked = ((elapsed ^ tick) | (SLOTS as u64 - 1)).min(SPAN - 1);
    (63 - masked.leading_zeros() as usize) / BITS as usize
}

#[cfg(test)]
#[path = "wheel_tests.rs"]
mod tests;
