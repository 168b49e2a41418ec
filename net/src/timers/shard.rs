//! One shard of the timer store: a wheel behind a lock, and the tick of its earliest slot in
//! an atomic that reactor turns read without the lock.
//!
//! ```ignore
//! let shard = Shard::new();
//! let node = Arc::new(Node::new(3_000_000));      // due 3 ms after the base
//! let key = shard.insert(&node, 3_000_000)?;      // filed at tick 3
//! assert_eq!(shard.next_hint(), 3);
//! let mut fired = Vec::new();
//! shard.fire_due(3, None, &mut fired);            // the reactor's turn at 3 ms
//! assert_eq!(fired.len(), 1);
//! ```
//!
//! How it works: every operation that changes the wheel recomputes its earliest slot (a few
//! bit operations per level) and stores it in `next` if it changed, so the hint is written
//! only when the earliest deadline moves, not on every arm or cancel. The lock is held for
//! O(1) work except while firing, which takes out what is due (and re-files what was pushed
//! back), waking nothing: the caller wakes after every lock is released.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::node::{Node, FIRED, SHUT_DOWN};
use super::wheel::{Verdict, Wheel};
use super::{NotFiled, NANOS_PER_TICK};

/// One shard, on its own cache lines.
#[repr(align(128))]
pub(super) struct Shard {
    inner: Mutex<Inner>,
    /// The tick of the wheel's earliest slot; `u64::MAX` if it is empty.
    next: AtomicU64,
}

struct Inner {
    wheel: Wheel<Arc<Node>>,
    /// Set by [`Shard::close`] (runtime shutdown): nothing will ever fire again, so no timer
    /// may be filed.
    closed: bool,
}

/// The tick a deadline in nanoseconds is filed at: rounded up, so that a slot coming up
/// means its timers' deadlines have passed.
fn tick_of(when: u64) -> u64 {
    when.div_ceil(NANOS_PER_TICK)
}

impl Shard {
    pub(super) fn new() -> Shard {
        Shard {
            inner: Mutex::new(Inner {
                wheel: Wheel::new(),
                closed: false,
            }),
            next: AtomicU64::new(u64::MAX),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // No user code runs under this lock (wakers are woken after it is released).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the wheel's earliest slot, if it moved.
    fn publish(&self, inner: &Inner) {
        let next = inner
            .wheel
            .next_expiration()
            .map_or(u64::MAX, |e| e.deadline);
        // Relaxed load, Release store: the hint orders nothing (readers that must not miss a
        // timer take the lock); Release only keeps it from running ahead of the filing.
        if self.next.load(Ordering::Relaxed) != next {
            self.next.store(next, Ordering::Release);
        }
    }

    /// The earliest slot's tick, without the lock (may be stale).
    pub(super) fn next_hint(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }

    /// The earliest slot's tick, under the lock.
    pub(super) fn next_tick(&self) -> Option<u64> {
        self.lock().wheel.next_expiration().map(|e| e.deadline)
    }

    #[cfg(feature = "test-util")]
    /// For the paused clock: the earliest of the earliest slot's start (in nanoseconds) and
    /// the true deadlines in it.
    pub(super) fn next_exact(&self) -> Option<u64> {
        let inner = self.lock();
        let exp = inner.wheel.next_expiration()?;
        let mut earliest = exp.deadline.saturating_mul(NANOS_PER_TICK);
        inner
            .wheel
            .for_each_in(exp, |n| earliest = earliest.min(n.when()));
        Some(earliest)
    }

    /// Files `node`, due at `when` nanoseconds; its key.
    pub(super) fn insert(&self, node: &Arc<Node>, when: u64) -> Result<u32, NotFiled> {
        let mut inner = self.lock();
        if inner.closed {
            return Err(NotFiled::Closed);
        }
        let key = inner
            .wheel
            .insert(tick_of(when), node.clone())
            .map_err(|_| NotFiled::Due)?;
        self.publish(&inner);
        Ok(key)
    }

    /// Moves `node` (filed under `key` unless it fired) to `when`: its new key, or why not
    /// (and then the node is marked fired or shut down).
    pub(super) fn reset(&self, node: &Arc<Node>, key: u32, when: u64) -> Result<u32, NotFiled> {
        let mut inner = self.lock();
        if inner.closed {
            node.set(SHUT_DOWN);
            return Err(NotFiled::Closed);
        }
        let filed = inner.wheel.get(key).is_some_and(|n| Arc::ptr_eq(n, node));
        let tick = tick_of(when);
        let result = if tick <= inner.wheel.elapsed() {
            if filed {
                drop(inner.wheel.remove(key));
            }
            node.set(FIRED);
            Err(NotFiled::Due)
        } else if filed {
            // Under the lock the wheel cannot fire it meanwhile.
            node.set(when);
            inner.wheel.refile(key, tick);
            Ok(key)
        } else {
            node.set(when);
            let key = inner.wheel.insert(tick, node.clone());
            Ok(key.unwrap_or_else(|_| unreachable!("checked against elapsed above")))
        };
        self.publish(&inner);
        result
    }

    /// Takes `node` out if it is still filed under `key`.
    pub(super) fn cancel(&self, node: &Arc<Node>, key: u32) {
        let removed = {
            let mut inner = self.lock();
            if !inner.wheel.get(key).is_some_and(|n| Arc::ptr_eq(n, node)) {
                return;
            }
            let n = inner.wheel.remove(key);
            // A cancelled node must not be pushed back without the lock (it is not filed).
            n.set(FIRED);
            self.publish(&inner);
            n
        };
        // Dropped after the lock: the last reference may be this one.
        drop(removed);
    }

    /// Takes out every timer due at `tick` into `out` with its deadline, marking it fired;
    /// re-files those pushed back. With `exact_ns` (the paused clock), also takes those of
    /// the slot for the next tick whose deadline is at or before it.
    pub(super) fn fire_due(
        &self,
        tick: u64,
        exact_ns: Option<u64>,
        out: &mut Vec<(u64, Arc<Node>)>,
    ) {
        let mut inner = self.lock();
        // The deadlines of the fired nodes, in the order `poll` and `fire_in` hand them over
        // (each right after its verdict).
        let mut whens = Vec::new();
        let start = out.len();
        inner.wheel.poll(
            tick,
            |n, slot| match n.fire_if_due(slot.saturating_mul(NANOS_PER_TICK)) {
                Ok(when) => {
                    whens.push(when);
                    Verdict::Fire
                }
                Err(later) => Verdict::Later(tick_of(later)),
            },
            |n| out.push((0, n)),
        );
        if let Some(ns) = exact_ns {
            if let Some(exp) = inner.wheel.next_expiration() {
                if exp.deadline == tick + 1 {
                    inner.wheel.fire_in(
                        exp,
                        |n| match n.fire_if_due(ns) {
                            Ok(when) => {
                                whens.push(when);
                                true
                            }
                            Err(_) => false,
                        },
                        |n| out.push((0, n)),
                    );
                }
            }
        }
        for (slot, when) in out[start..].iter_mut().zip(whens) {
            slot.0 = when;
        }
        self.publish(&inner);
    }

    /// Closes the shard: every pending node is marked shut down and handed to `out`.
    pub(super) fn close(&self, out: &mut Vec<Arc<Node>>) {
        let mut inner = self.lock();
        inner.closed = true;
        inner.wheel.drain(|n| {
            n.set(SHUT_DOWN);
            out.push(n);
        });
        self.publish(&inner);
    }
}
