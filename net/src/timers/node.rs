//! A timer's node: its true deadline and its waker. It lives inside its owner (a pinned
//! `Sleep`), and the wheel of the shard it is armed in files a pointer to it; the owner and
//! whoever fires it both touch it, the owner without a lock.
//!
//! ```ignore
//! let node = Node::new();
//! node.set(5_000_000);                      // due 5 ms after the reactor's base
//! assert!(node.extend(9_000_000));          // pushed back: no lock, the wheel re-files later
//! assert!(!node.extend(1_000_000));         // brought forward: needs the shard's lock
//! ```
//!
//! How it works: `when` holds the deadline in nanoseconds since the reactor's base while the
//! timer is pending, and markers after. The wheel files a node at a tick that is never after
//! its true deadline. Only the owner moves the deadline, and without the lock only later
//! ([`Node::extend`]); the wheel, under the lock, either claims a due node with a
//! compare-and-swap from the value it read, or re-files it at that value's tick. Should the
//! owner have pushed the deadline back meanwhile, the swap fails and the wheel looks again,
//! or the node sits at a tick earlier than its deadline and is re-filed when that comes up:
//! never late, never early.
//!
//! The node's memory belongs to its owner, so the owner must know when the store is done
//! with it. Firing (and closing, at shutdown) is therefore three steps, all under the shard's
//! lock: mark the node [`FIRING`] (or [`CLOSING`]), take its waker out, mark it [`FIRED`]
//! (or [`SHUT_DOWN`]). The last mark is the store's last touch: an owner that reads it may
//! free the node without the lock. An owner that reads any other value takes the shard's
//! lock before it lets the node go, which waits for a firing under way. The first mark comes
//! before the waker is taken so that an owner registering a new waker meanwhile reads the
//! mark afterwards and does not wait for a wake-up that was already handed out.

use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Waker;

use futures_util::task::AtomicWaker;

/// `when` once the timer has fired, or was taken out of the wheel: the store is done with it.
pub(crate) const FIRED: u64 = u64::MAX;
/// `when` once the store closed (runtime shutdown) with the timer pending; done with it.
pub(crate) const SHUT_DOWN: u64 = u64::MAX - 1;
/// `when` while the timer fires: claimed, its waker not yet handed over.
pub(crate) const FIRING: u64 = u64::MAX - 2;
/// `when` while the store closes over the pending timer.
pub(crate) const CLOSING: u64 = u64::MAX - 3;
/// The latest deadline a node can hold (nanoseconds since the base: centuries).
pub(crate) const MAX_WHEN: u64 = u64::MAX - 4;

/// Where a timer stands, as its owner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Pending,
    Fired,
    ShutDown,
}

/// A timer's deadline and waker.
#[derive(Debug)]
pub(crate) struct Node {
    when: AtomicU64,
    waker: AtomicWaker,
}

impl Node {
    /// A node that is not filed anywhere (and counts as fired).
    pub(crate) const fn new() -> Node {
        Node {
            when: AtomicU64::new(FIRED),
            waker: AtomicWaker::new(),
        }
    }

    pub(crate) fn status(&self) -> Status {
        // Acquire: pairs with the Release stores of the markers, so a caller that sees
        // "fired" also sees whatever the firing thread did before.
        match self.when.load(Ordering::Acquire) {
            FIRING | FIRED => Status::Fired,
            CLOSING | SHUT_DOWN => Status::ShutDown,
            _ => Status::Pending,
        }
    }

    /// Whether the store is done with the node: it is filed nowhere and nobody will touch it
    /// again, so its owner may let it go without the shard's lock.
    pub(crate) fn settled(&self) -> bool {
        // Acquire: pairs with the Release store of the final marker, the store's last touch,
        // so the owner's reuse or freeing of the memory comes after it.
        matches!(self.when.load(Ordering::Acquire), FIRED | SHUT_DOWN)
    }

    /// Registers the waker to wake when the timer fires.
    pub(crate) fn register(&self, waker: &Waker) {
        self.waker.register(waker);
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

    /// Sets the deadline or a marker (under the shard's lock, or while the node is filed
    /// nowhere and the store is done with it).
    pub(crate) fn set(&self, when: u64) {
        // Release: a reader that sees a marker sees what preceded it.
        self.when.store(when, Ordering::Release);
    }

    /// For the wheel, under the lock: claims the node for firing ([`FIRING`]) if its
    /// deadline (as read now) is at or before `due_by` nanoseconds, returning that deadline;
    /// else returns the later deadline to re-file it at as `Err`. A claimed node is then
    /// [`Node::finish`]ed.
    pub(crate) fn claim_if_due(&self, due_by: u64) -> Result<u64, u64> {
        let mut cur = self.when.load(Ordering::Acquire);
        loop {
            if cur > due_by {
                return Err(cur);
            }
            // AcqRel: Acquire orders the claim after the owner's last `extend`; Release
            // publishes the mark before the waker is taken (see the module docs).
            match self
                .when
                .compare_exchange(cur, FIRING, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(cur),
                Err(now) => cur = now,
            }
        }
    }

    /// For the store, under the lock, on a node taken out of the wheel and claimed (or, with
    /// `shut_down`, on any node taken out at shutdown): hands its waker over and marks it
    /// [`FIRED`] or [`SHUT_DOWN`]. The node is not touched again.
    pub(crate) fn finish(&self, shut_down: bool) -> Option<Waker> {
        if shut_down {
            self.set(CLOSING);
        }
        let waker = self.waker.take();
        self.set(if shut_down { SHUT_DOWN } else { FIRED });
        waker
    }
}
