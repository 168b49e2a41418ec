//! One shard of the timer store: a wheel behind a lock, and the tick of its earliest slot in
//! an atomic that reactor turns read without the lock.
//!
//! ```ignore
//! let shard = Shard::new();
//! let node = Box::pin(Node::new());                       // inside its owner, pinned
//! let key = unsafe { shard.insert(&node, 3_000_000) }?;   // due 3 ms after the base: tick 3
//! assert_eq!(shard.next_hint(), 3);
//! let mut fired = Vec::new();
//! shard.fire_due(3, None, &mut fired);                    // the reactor's turn at 3 ms
//! assert_eq!(fired.len(), 1);
//! ```
//!
//! How it works: `next` is a lower bound of the wheel's earliest slot. Filing a timer
//! recomputes the earliest slot (a few bit operations per level) and lowers `next` if it is
//! earlier; taking one out leaves it; firing publishes it exactly. So the hint is written
//! only when the earliest deadline moves earlier or a reactor turn reaches it, not on every
//! arm or cancel. The lock is held for
//! O(1) work except while firing, which takes out what is due (and re-files what was pushed
//! back) and hands over the wakers, waking nothing: the caller wakes after every lock is
//! released.
//!
//! The wheel files pointers to nodes that live in their owners (`node.rs`). The one rule
//! that keeps them valid: a node is filed only while its owner is alive and pinned, and an
//! owner lets its node go only after taking it out under this lock, or after reading the
//! final mark the store puts on a node it took out (the store's last touch). So under the
//! lock every filed pointer points to a live node.

use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::Waker;

use super::node::{Node, FIRED};
use super::wheel::{Verdict, Wheel};
use super::{NotFiled, NANOS_PER_TICK};

/// A filed node: a pointer into its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NodePtr(NonNull<Node>);

// SAFETY: a `NodePtr` is only dereferenced under the lock of the shard whose wheel files it,
// where the rule in the module docs keeps the node alive; `Node` itself is `Sync` (atomics
// only), so touching it from whichever thread holds the lock is fine.
unsafe impl Send for NodePtr {}

impl NodePtr {
    fn of(node: &Node) -> NodePtr {
        NodePtr(NonNull::from(node))
    }

    /// The node.
    ///
    /// # Safety
    /// The caller holds the lock of the shard whose wheel files this pointer, and the pointer
    /// is filed there, or was taken out under that same hold and not yet finished.
    unsafe fn node<'a>(self) -> &'a Node {
        // SAFETY: by the caller's promise the node is alive (module docs) for as long as the
        // lock is held, which outlasts every use the callers make of the reference.
        unsafe { self.0.as_ref() }
    }
}

/// One shard, on its own cache lines.
#[repr(align(128))]
pub(super) struct Shard {
    inner: Mutex<Inner>,
    /// The tick of the wheel's earliest slot; `u64::MAX` if it is empty.
    next: Hint,
}

/// The shard's hint, on a line of its own: every reactor turn of every worker reads it, so on
/// the lock's line each of those reads would take the line from the worker arming and
/// cancelling there, and each of its lock operations take it back. Apart, the readers share a
/// line that is written only when the earliest slot moves earlier or a slot fires.
#[repr(align(128))]
struct Hint(AtomicU64);

impl std::ops::Deref for Hint {
    type Target = AtomicU64;
    fn deref(&self) -> &AtomicU64 {
        &self.0
    }
}

struct Inner {
    wheel: Wheel<NodePtr>,
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
            next: Hint(AtomicU64::new(u64::MAX)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // No user code runs under this lock (wakers are woken after it is released).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the wheel's earliest slot, exactly (after firing, or closing).
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

    /// Lowers the published slot to the wheel's earliest, if that is earlier (after filing).
    /// Taking a timer out leaves the hint as it is: a hint that is early only costs the
    /// reactor turn that reaches it a look under the lock, which publishes it exactly, while
    /// writing it on every arm and cancel would move its line away from every spinning
    /// worker that reads it on each turn.
    fn lower(&self, inner: &Inner) {
        let next = inner
            .wheel
            .next_expiration()
            .map_or(u64::MAX, |e| e.deadline);
        // Orderings as in `publish`.
        if next < self.next.load(Ordering::Relaxed) {
            self.next.store(next, Ordering::Release);
        }
    }

    /// A lower bound of the earliest slot's tick, without the lock (`u64::MAX` only if the
    /// wheel is empty; may be stale).
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
        inner.wheel.for_each_in(exp, |n| {
            // SAFETY: `n` is filed in this wheel and we hold its lock.
            earliest = earliest.min(unsafe { n.node() }.when());
        });
        Some(earliest)
    }

    /// Files `node`, due at `when` nanoseconds; its key.
    ///
    /// # Safety
    /// `node` is filed nowhere, and stays where it is and alive until [`Shard::cancel`] has
    /// returned for it or [`Node::settled`] said so (the module docs' rule).
    pub(super) unsafe fn insert(&self, node: &Node, when: u64) -> Result<u32, NotFiled> {
        let mut inner = self.lock();
        if inner.closed {
            return Err(NotFiled::Closed);
        }
        let tick = tick_of(when);
        if tick <= inner.wheel.elapsed() {
            return Err(NotFiled::Due);
        }
        // Under the lock, before filing: nobody else touches an unfiled node's deadline.
        node.set(when);
        let key = inner
            .wheel
            .insert(tick, NodePtr::of(node))
            .unwrap_or_else(|_| unreachable!("checked against elapsed above"));
        self.lower(&inner);
        Ok(key)
    }

    /// Moves `node` (filed under `key` unless it fired) to `when`: its new key, or why not
    /// (and then the node is marked fired or shut down).
    ///
    /// # Safety
    /// As for [`Shard::insert`]; `node` may be filed here already.
    pub(super) unsafe fn reset(&self, node: &Node, key: u32, when: u64) -> Result<u32, NotFiled> {
        let mut inner = self.lock();
        let ptr = NodePtr::of(node);
        let filed = inner.wheel.get(key) == Some(&ptr);
        if inner.closed {
            // A closed wheel files nothing, so `filed` is false and nobody touches the node.
            node.set(super::node::SHUT_DOWN);
            return Err(NotFiled::Closed);
        }
        let tick = tick_of(when);
        let result = if tick <= inner.wheel.elapsed() {
            if filed {
                inner.wheel.remove(key);
            }
            node.set(FIRED);
            Err(NotFiled::Due)
        } else if filed {
            // Under the lock the wheel cannot fire it meanwhile.
            node.set(when);
            inner.wheel.refile(key, tick);
            Ok(key)
        } else {
            // Fired (the firing finished: we hold the lock it ran under), or never filed.
            node.set(when);
            let key = inner.wheel.insert(tick, ptr);
            Ok(key.unwrap_or_else(|_| unreachable!("checked against elapsed above")))
        };
        self.lower(&inner);
        result
    }

    /// Takes `node` out if it is still filed under `key`. Once this returns, the store is
    /// done with the node.
    pub(super) fn cancel(&self, node: &Node, key: u32) {
        let mut inner = self.lock();
        if inner.wheel.get(key) != Some(&NodePtr::of(node)) {
            // Not filed: it fired or was closed, and that finished under the lock we hold.
            return;
        }
        inner.wheel.remove(key);
        // A cancelled node must not be pushed back without the lock (it is not filed).
        node.set(FIRED);
        // The hint stays (see `lower`).
    }

    /// Takes out every timer due at `tick` into `out` with its deadline and waker, marking it
    /// fired; re-files those pushed back. With `exact_ns` (the paused clock), also takes those
    /// of the slot for the next tick whose deadline is at or before it.
    pub(super) fn fire_due(&self, tick: u64, exact_ns: Option<u64>, out: &mut Vec<(u64, Waker)>) {
        let mut inner = self.lock();
        // The deadline of the node just claimed, for the hand-over right after its verdict.
        let claimed = Cell::new(0);
        let mut hand_over = |n: NodePtr| {
            // SAFETY: taken out of this wheel under the lock we hold, claimed, not finished.
            if let Some(w) = unsafe { n.node() }.finish(false) {
                out.push((claimed.get(), w));
            }
        };
        inner.wheel.poll(
            tick,
            |n, slot| {
                // SAFETY: `n` is filed in this wheel and we hold its lock.
                match unsafe { n.node() }.claim_if_due(slot.saturating_mul(NANOS_PER_TICK)) {
                    Ok(when) => {
                        claimed.set(when);
                        Verdict::Fire
                    }
                    Err(later) => Verdict::Later(tick_of(later)),
                }
            },
            &mut hand_over,
        );
        if let Some(ns) = exact_ns {
            if let Some(exp) = inner.wheel.next_expiration() {
                if exp.deadline == tick + 1 {
                    inner.wheel.fire_in(
                        exp,
                        // SAFETY: `n` is filed in this wheel and we hold its lock.
                        |n| match unsafe { n.node() }.claim_if_due(ns) {
                            Ok(when) => {
                                claimed.set(when);
                                true
                            }
                            Err(_) => false,
                        },
                        &mut hand_over,
                    );
                }
            }
        }
        self.publish(&inner);
    }

    /// Closes the shard: every pending node is marked shut down and its waker handed to
    /// `out`.
    pub(super) fn close(&self, out: &mut Vec<Waker>) {
        let mut inner = self.lock();
        inner.closed = true;
        inner.wheel.drain(|n| {
            // SAFETY: taken out of this wheel under the lock we hold, not finished.
            if let Some(w) = unsafe { n.node() }.finish(true) {
                out.push(w);
            }
        });
        self.publish(&inner);
    }
}
