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
//! base, and its waker) that lives inside the pinned `Sleep` that owns it, so arming one
//! allocates nothing; the wheel of the shard it was armed in files a pointer to it at its
//! deadline's millisecond tick, rounded up: a timer fires once the clock has reached its
//! deadline, at most about a millisecond after it, never before (tokio's resolution). The
//! wheel only ever holds a lower bound of the deadline: a `Sleep` pushed back (an idle
//! timeout reset on every request) moves its node's atomic deadline and nothing else, and
//! when the old slot comes up the wheel files the node again at its true deadline (`node.rs`
//! says why that is race-free). Bringing a deadline forward, or arming and cancelling, takes
//! the lock of the shard the timer lives in: the worker that armed it, so in the common case
//! that lock is only ever taken by that worker and the reactor turn that fires its timers,
//! never by every worker. The critical sections are O(1) (a slab slot and a list link).
//! Because the node's memory is its owner's, the owner lets it go only once the store is
//! done with it: a `Sleep` dropped while its timer is pending takes its shard's lock to take
//! it out, and one whose timer fired reads the mark the store left on it as its last touch
//! (`node.rs`, `shard.rs`).
//!
//! Each shard publishes a lower bound of its earliest slot's tick in an atomic, so a reactor
//! turn skips, without a lock, the shards with nothing due (and reads no clock when no timer
//! is pending); arming and cancelling a timer normally leave it unwritten (`shard.rs`).
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

use std::task::Waker;
use std::time::{Duration, Instant};

use node::MAX_WHEN;
pub(crate) use node::{Node, Status};
use shard::Shard;

const NANOS_PER_TICK: u64 = 1_000_000;

/// Where an armed timer is filed: what its owner keeps next to its [`Node`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimerRef {
    shard: u32,
    key: u32,
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
        let workers = self.shards.len() - 1;
        match spinpark_executor::worker_index() {
            // No division on the common path (a worker's index is below the count).
            Some(i) if i < workers => 1 + i,
            Some(i) => 1 + i % workers,
            None => 0,
        }
    }

    /// `t` as the store and the reactor count it: nanoseconds since the base.
    pub(crate) fn nanos(&self, t: Instant) -> u64 {
        let d = t.saturating_duration_since(self.base);
        (d.as_nanos()).min(MAX_WHEN as u128) as u64
    }

    fn instant(&self, nanos: u64) -> Instant {
        // Deadlines are clamped (`time::after`) far below what overflows.
        self.base
            .checked_add(Duration::from_nanos(nanos))
            .unwrap_or(self.base + Duration::from_secs(86400 * 365 * 100))
    }

    /// Arms the timer `node` for `when` ([`Timers::nanos`]) in the calling thread's shard,
    /// with `waker`.
    ///
    /// # Safety
    /// `node` is filed nowhere (never armed, or [`Timers::cancel`]led, or settled), and it
    /// stays where it is and alive until [`Timers::cancel`] has returned for it or
    /// [`Node::settled`] said so. Its owner is pinned and cancels in its destructor.
    pub(crate) unsafe fn arm(
        &self,
        node: &Node,
        when: u64,
        waker: &Waker,
    ) -> Result<TimerRef, NotFiled> {
        node.register(waker);
        let shard = self.my_shard();
        // SAFETY: the caller's promise is the shard's.
        let key = unsafe { self.shards[shard].insert(node, when) }?;
        Ok(TimerRef {
            shard: shard as u32,
            key,
        })
    }

    /// Moves the deadline of the timer `node`, armed as `t`, to `when` ([`Timers::nanos`])
    /// (and re-arms it if it fired):
    /// `Ok(true)` if it is pending at an earlier slot than before (a parked worker may have to
    /// wake), `Ok(false)` if it was pushed back, which takes no lock.
    ///
    /// # Safety
    /// As for [`Timers::arm`], except that `node` was armed as `t` (and may still be filed).
    pub(crate) unsafe fn reset(
        &self,
        node: &Node,
        t: &mut TimerRef,
        when: u64,
    ) -> Result<bool, NotFiled> {
        if node.extend(when) {
            return Ok(false);
        }
        // SAFETY: the caller's promise is the shard's.
        t.key = unsafe { self.shards[t.shard as usize].reset(node, t.key, when) }?;
        Ok(true)
    }

    /// Takes the timer `node`, armed as `t`, out (its owner is going). No lock if the store is
    /// done with it already; once this returns, the store never touches `node` again.
    pub(crate) fn cancel(&self, node: &Node, t: &TimerRef) {
        if !node.settled() {
            self.shards[t.shard as usize].cancel(node, t.key);
        }
    }

    /// The tick `now` is in (rounded down) and the nanoseconds.
    fn ticks(&self, now: Instant) -> (u64, u64) {
        let ns = self.nanos(now);
        (ns / NANOS_PER_TICK, ns)
    }

    /// Whether any timer may be pending (a lock-free hint: false means none is, true may be
    /// stale after cancels, until a reactor turn reaches the shard's hinted slot).
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
        let mut fired: Vec<(u64, Waker)> = Vec::new();
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
        for (_, waker) in fired {
            waker.wake();
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
        for waker in all {
            waker.wake();
        }
    }
}
