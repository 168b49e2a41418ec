//! The reactor's timer store: a hierarchical timing wheel per shard (one shard per worker, and
//! one for threads that are not workers), where arming, pushing back and cancelling a timer
//! is O(1), and firing the due ones costs a few bit operations per turn.
//!
//! ```text
//! Sleep::poll --arm-->      its worker's shard (lock: uncontended) --> wheel slot
//! Sleep::reset later -->    the node's atomic deadline only (no lock)
//! Sleep::reset earlier -->  its shard's lock, O(1) re-file
//! drop(Sleep) -->           its shard's lock, O(1) unlink (no lock if it fired)
//! every reactor turn -->    fire_due: each shard whose earliest slot is due
//! the parked worker -->     next_deadline: the earliest slot of any shard
//! ```
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use spinpark::time::{sleep, Duration, Instant};
//! let mut idle = Box::pin(sleep(Duration::from_secs(30)));
//! for _ in 0..3 {
//!     // Each request pushes the idle deadline back: an atomic store, nothing else.
//!     idle.as_mut().reset(Instant::now() + Duration::from_secs(30));
//! }
//! # });
//! ```
//!
//! How it works. A timer is a [`Node`] (its true deadline in nanoseconds since the reactor's
//! base, and its waker) shared by the `Sleep` that owns it and the wheel of the shard it was
//! armed in, which files it at its deadline's millisecond tick, rounded up: a timer fires
//! once the clock has reached its deadline, at most about a millisecond after it, never
//! before (tokio's resolution). The wheel only ever holds a lower bound of the deadline: a
//! `Sleep` pushed back (an idle timeout reset on every request) moves its node's atomic
//! deadline and nothing else, and when the old slot comes up the wheel files the node again
//! at its true deadline (`node.rs` says why that is race-free). Bringing a deadline forward,
//! or arming and cancelling, takes the lock of the shard the timer lives in: the worker that
//! armed it, so in the common case that lock is only ever taken by that worker and the
//! reactor turn that fires its timers, never by every worker. The critical sections are O(1)
//! (a slab slot and a list link; the node is allocated before the lock is taken).
//!
//! Each shard publishes the tick of its earliest slot in an atomic, so a reactor turn skips,
//! without a lock, the shards with nothing due (and reads no clock when no timer is pending).
//! The parked worker's timeout is the earliest of them, read under each shard's lock.
//!
//! With the paused clock (`test-util`) the clock may stop inside a millisecond, and tests
//! expect it to jump exactly to a deadline: there [`Timers::next_deadline_exact`] looks into
//! the earliest slot for the earliest true deadline, and [`Timers::fire_due`] fires, in the
//! slot of the millisecond the clock stopped in, the timers whose true deadline it reached.
//!
//! Wakers are woken after the locks are released, in deadline order, so no user code runs
//! under a lock.

mod node;
mod shard;
mod wheel;

use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

pub(crate) use node::Status;
use node::{Node, MAX_WHEN};
use shard::Shard;

const NANOS_PER_TICK: u64 = 1_000_000;

/// A timer armed in the store: what its owner keeps.
#[derive(Debug)]
pub(crate) struct TimerRef {
    node: Arc<Node>,
    shard: u32,
    key: u32,
}

impl TimerRef {
    /// Where the timer stands (an atomic load).
    pub(crate) fn status(&self) -> Status {
        self.node.status()
    }

    /// Registers the waker to wake when the timer fires.
    pub(crate) fn register(&self, waker: &Waker) {
        self.node.waker.register(waker);
    }
}

/// Why a timer could not be filed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotFiled {
    /// The deadline has passed already (by the store's last reading of the clock); for a
    /// reset, the timer is marked fired.
    Due,
    /// The store is closed (the runtime shut down); for a reset, the timer is marked so.
    Closed,
}

/// The pending timers of one reactor.
pub(crate) struct Timers {
    shards: Box<[Shard]>,
    base: Instant,
}

impl Timers {
    /// A store whose ticks count milliseconds from `base`, with a shard for each of
    /// `workers` workers and one for other threads.
    pub(crate) fn new(base: Instant, workers: usize) -> Self {
        Self {
            shards: (0..workers.max(1) + 1).map(|_| Shard::new()).collect(),
            base,
        }
    }

    /// The shard of the calling thread: its worker's, else the shared one.
    fn my_shard(&self) -> usize {
        match spinpark_executor::worker_index() {
            Some(i) => 1 + i % (self.shards.len() - 1),
            None => 0,
        }
    }

    fn nanos(&self, t: Instant) -> u64 {
        let d = t.saturating_duration_since(self.base);
        (d.as_nanos()).min(MAX_WHEN as u128) as u64
    }

    fn instant(&self, nanos: u64) -> Instant {
        // Deadlines are clamped (`time::after`) far below what overflows.
        self.base
            .checked_add(Duration::from_nanos(nanos))
            .unwrap_or(self.base + Duration::from_secs(86400 * 365 * 100))
    }

    /// Arms a timer for `deadline` in the calling thread's shard, with `waker`.
    pub(crate) fn arm(&self, deadline: Instant, waker: &Waker) -> Result<TimerRef, NotFiled> {
        let when = self.nanos(deadline);
        // Allocated before the shard's lock is taken.
        let node = Arc::new(Node::new(when));
        node.waker.register(waker);
        let shard = self.my_shard();
        let key = self.shards[shard].insert(&node, when)?;
        Ok(TimerRef {
            node,
            shard: shard as u32,
            key,
        })
    }

    /// Moves the deadline of an armed timer (and re-arms it if it fired): `Ok(true)` if it
    /// is pending at an earlier slot than before (a parked worker may have to wake),
    /// `Ok(false)` if it was pushed back, which takes no lock.
    pub(crate) fn reset(&self, t: &mut TimerRef, deadline: Instant) -> Result<bool, NotFiled> {
        let when = self.nanos(deadline);
        if t.node.extend(when) {
            return Ok(false);
        }
        t.key = self.shards[t.shard as usize].reset(&t.node, t.key, when)?;
        Ok(true)
    }

    /// Takes a timer out (its owner was dropped). No lock if it has fired already.
    pub(crate) fn cancel(&self, t: &TimerRef) {
        if t.node.status() == Status::Pending {
            self.shards[t.shard as usize].cancel(&t.node, t.key);
        }
    }

    /// The tick `now` is in (rounded down) and the nanoseconds.
    fn ticks(&self, now: Instant) -> (u64, u64) {
        let ns = self.nanos(now);
        (ns / NANOS_PER_TICK, ns)
    }

    /// Whether any timer is pending (a lock-free hint).
    pub(crate) fn any_pending(&self) -> bool {
        self.shards.iter().any(|s| s.next_hint() != u64::MAX)
    }

    /// Wakes every timer due at the instant `now()` returns (called only if some timer is
    /// pending); returns how many. When `now()` also says `exact` (the paused clock), fires
    /// as well, in the millisecond the clock stopped inside of, the timers whose deadline it
    /// reached.
    pub(crate) fn fire_due(&self, now: impl FnOnce() -> (Instant, bool)) -> usize {
        if !self.any_pending() {
            return 0;
        }
        let (now, exact) = now();
        let (tick, ns) = self.ticks(now);
        let mut fired: Vec<(u64, Arc<Node>)> = Vec::new();
        for s in self.shards.iter() {
            // A stale hint only delays a timer to the next turn; the parked worker reads
            // the shards under their locks (`next_deadline`).
            let next = s.next_hint();
            if next <= tick || (exact && next == tick + 1) {
                s.fire_due(tick, exact.then_some(ns), &mut fired);
            }
        }
        let n = fired.len();
        if n > 1 {
            // Deadline order across slots and shards (stable: ties keep filing order).
            fired.sort_by_key(|f| f.0);
        }
        for (_, node) in fired {
            node.waker.wake();
        }
        n
    }

    /// The instant the earliest pending slot comes up (no timer in it is due before).
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let tick = self.shards.iter().filter_map(|s| s.next_tick()).min()?;
        Some(self.instant(tick.saturating_mul(NANOS_PER_TICK)))
    }

    #[cfg(feature = "test-util")]
    /// For the paused clock: the instant to jump to, the earliest true deadline if it lies
    /// in the earliest slot's first millisecond, else that slot's start.
    pub(crate) fn next_deadline_exact(&self) -> Option<Instant> {
        let ns = self.shards.iter().filter_map(|s| s.next_exact()).min()?;
        Some(self.instant(ns))
    }

    /// Closes the store (runtime shutdown): forgets every pending timer and wakes its waker,
    /// so that whoever waits on it polls again and learns that it will never fire. A task of
    /// the shut-down runtime is dropped by that wake instead.
    pub(crate) fn clear(&self) {
        let mut all = Vec::new();
        for s in self.shards.iter() {
            s.close(&mut all);
        }
        for node in all {
            node.waker.wake();
        }
    }
}
