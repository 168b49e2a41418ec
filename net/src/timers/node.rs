//! A timer's shared half: its true deadline and its waker, which its owner (a `Sleep`) and
//! whoever fires it both touch, without a lock.
//!
//! ```ignore
//! let node = Node::new(5_000_000);          // due 5 ms after the reactor's base
//! assert!(node.extend(9_000_000));          // pushed back: no lock, the wheel re-files later
//! assert!(!node.extend(1_000_000));         // brought forward: needs the shard's lock
//! ```
//!
//! How it works: `when` holds the deadline in nanoseconds since the reactor's base while the
//! timer is pending, and one of two markers after: [`FIRED`] (fired, or taken out) or
//! [`SHUT_DOWN`] (the store closed under it). The wheel files a node at a tick that is never
//! after its true deadline. Only the owner moves the deadline, and without the lock only
//! later ([`Node::extend`]); the wheel, under the lock, either marks a due node fired with a
//! compare-and-swap from the value it read, or re-files it at that value's tick. Should the
//! owner have pushed the deadline back meanwhile, the swap fails and the wheel looks again,
//! or the node sits at a tick earlier than its deadline and is re-filed when that comes up:
//! never late, never early.

use std::sync::atomic::{AtomicU64, Ordering};

// futures-util re-exports this as `futures_util::task::AtomicWaker`; futures-core (already a
// dependency) is where it lives.
use futures_core::task::__internal::AtomicWaker;

/// `when` once the timer has fired or was taken out of the wheel.
pub(crate) const FIRED: u64 = u64::MAX;
/// `when` once the store closed (runtime shutdown) with the timer pending.
pub(crate) const SHUT_DOWN: u64 = u64::MAX - 1;
/// The latest deadline a node can hold (nanoseconds since the base: centuries).
pub(crate) const MAX_WHEN: u64 = u64::MAX - 2;

/// Where a timer stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Pending,
    Fired,
    ShutDown,
}

/// A timer's deadline and waker, shared by its owner and the wheel.
#[derive(Debug)]
pub(crate) struct Node {
    when: AtomicU64,
    pub(crate) waker: AtomicWaker,
}

impl Node {
    pub(crate) fn new(when: u64) -> Node {
        Node {
            when: AtomicU64::new(when.min(MAX_WHEN)),
            waker: AtomicWaker::new(),
        }
    }

    pub(crate) fn status(&self) -> Status {
        // Acquire: pairs with the AcqRel swap that fires it, so a caller that sees "fired"
        // also sees whatever the firing thread did before.
        match self.when.load(Ordering::Acquire) {
            FIRED => Status::Fired,
            SHUT_DOWN => Status::ShutDown,
            _ => Status::Pending,
        }
    }

    #[cfg(feature = "test-util")]
    /// The true deadline, or a marker.
    pub(crate) fn when(&self) -> u64 {
        self.when.load(Ordering::Acquire)
    }

    /// Moves a pending deadline to `when` if that is not earlier: true if done. False if the
    /// timer is not pending or `when` is earlier (then the caller takes the shard's lock).
    pub(crate) fn extend(&self, when: u64) -> bool {
        let when = when.min(MAX_WHEN);
        let mut cur = self.when.load(Ordering::Relaxed);
        loop {
            if cur > MAX_WHEN || when < cur {
                return false;
            }
            if cur == when {
                return true;
            }
            // Relaxed: the deadline publishes nothing else; the wheel only compares it.
            match self
                .when
                .compare_exchange_weak(cur, when, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Sets the deadline or a marker (under the shard's lock, or before the node is shared).
    pub(crate) fn set(&self, when: u64) {
        // Release: a reader that sees a marker sees what preceded it.
        self.when.store(when, Ordering::Release);
    }

    /// For the wheel, under the lock: marks the node fired if its deadline (as read now) is
    /// at or before `due_by` nanoseconds, returning that deadline; else returns the later
    /// deadline to re-file it at as `Err`.
    pub(crate) fn fire_if_due(&self, due_by: u64) -> Result<u64, u64> {
        let mut cur = self.when.load(Ordering::Acquire);
        loop {
            if cur > due_by {
                return Err(cur);
            }
            // AcqRel: Release publishes the firing to the owner's `status`; Acquire orders
            // it after the owner's last `extend`.
            match self
                .when
                .compare_exchange(cur, FIRED, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(cur),
                Err(now) => cur = now,
            }
        }
    }
}
