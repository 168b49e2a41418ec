//! A worker's LIFO slot: the task its running task just woke, run next on the same worker
//! while its data is still in cache, and taken by another worker only when the owner is
//! stuck in a long poll.
//!
//! ```text
//! slot.push(task)       // the owner: returns the task it displaced, if any
//! slot.take()           // the owner, between tasks
//! slot.take()           // another worker, once the owner's poll has run too long
//! ```
//!
//! The slot is one `AtomicPtr` holding a [`Runnable`] turned into its raw pointer: a swap
//! moves the task in or out, so whoever swaps a pointer out owns that task, and no task can
//! be run twice or lost. The owner's operations are a swap on a cache line only it writes
//! (plus a plain load when the slot is empty), so the slot costs what a `Cell` would, but
//! for the locked instruction.
//!
//! Why stealable at all: a task in the slot is normally run next by its owner within
//! microseconds, so stealing it would only move it away from its cache. But if the task that
//! woke it then runs for seconds (a CPU loop, a blocking call), the woken task would wait
//! for all of it while other workers sit idle. So other workers look at the slot only when
//! the owner's current poll has run past a threshold (`stuck_after` in `queues.rs`), and
//! the watchdog wakes one for it (`watchdog.rs`). tokio's slot cannot be stolen, and has
//! this stall.

use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering::AcqRel, Ordering::Relaxed};

use async_task::Runnable;

/// One worker's LIFO slot. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct LifoSlot(AtomicPtr<()>);

impl LifoSlot {
    /// Puts `task` in the slot; returns the task that was there.
    pub(crate) fn push(&self, task: Runnable) -> Option<Runnable> {
        let raw = task.into_raw().as_ptr();
        // AcqRel: Release hands the task (and what its waker wrote) to whoever swaps it out.
        // Only the owner pushes, so the displaced task is one this thread pushed; Acquire
        // costs nothing more here and keeps the rule simple: every swap out acquires.
        Self::own(self.0.swap(raw, AcqRel))
    }

    /// Takes the task in the slot, if any.
    pub(crate) fn take(&self) -> Option<Runnable> {
        // Relaxed: only a hint that saves the locked swap when the slot is empty; a task
        // pushed concurrently is seen by the next look.
        if self.0.load(Relaxed).is_null() {
            return None;
        }
        // AcqRel: Acquire pairs with `push`'s Release (we run the task it handed over).
        Self::own(self.0.swap(ptr::null_mut(), AcqRel))
    }

    /// Whether a task is in the slot (a hint, for the watchdog).
    pub(crate) fn is_occupied(&self) -> bool {
        // Relaxed: a hint; acting on it goes through `take`.
        !self.0.load(Relaxed).is_null()
    }

    fn own(raw: *mut ()) -> Option<Runnable> {
        // SAFETY: every non-null pointer in the slot came from `Runnable::into_raw` in
        // `push`, and the swap that returned it removed it from the slot, so this is the one
        // place that turns it back into the `Runnable` it was (ownership moved with the swap).
        NonNull::new(raw).map(|p| unsafe { Runnable::from_raw(p) })
    }
}

impl Drop for LifoSlot {
    fn drop(&mut self) {
        // A task left behind (a worker that never exited) is dropped, not leaked.
        drop(self.take());
    }
}
