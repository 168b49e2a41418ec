//! [`WorkerState`]: what a worker keeps to itself (its queue's owning end, its counters of
//! tasks run), reachable from its thread through `current::with_worker` while it runs.
//!
//! ```text
//! let state = WorkerState::new(&shared, index, queue);
//! let _published = current::set_worker(&state);   // for the scheduler's wakes and spawns
//! Worker::new(&shared, &state, None).run_loop();
//! ```
//!
//! Only its own thread touches it (its mutable parts are `Cell`s); what other threads may
//! look at of a worker is its `WorkerSlot` (`queues.rs`).

use std::cell::Cell;
use std::sync::Arc;

use super::queues::LocalQueue;
use super::shared::Shared;
use crate::time::coarse;

/// A worker's own state, reachable from its thread through `current::with_worker`.
pub(crate) struct WorkerState {
    shared: *const Shared,
    pub(crate) index: usize,
    pub(crate) queue: LocalQueue,
    /// How many times in a row the LIFO slot was preferred over the queue.
    pub(super) lifo_streak: Cell<u32>,
    /// Tasks run so far (wrapping): every `GLOBAL_INTERVAL`th looks at the injector first.
    pub(super) tick: Cell<u32>,
    /// When this worker last polled the reactor (coarse clock), to poll it again between
    /// tasks once half a watch period has passed (`Worker::reactor_unattended`).
    pub(super) last_driver_poll: Cell<u64>,
}

impl WorkerState {
    /// The state of worker `index` of `shared`'s runtime, which owns `queue`.
    pub(crate) fn new(shared: &Arc<Shared>, index: usize, queue: LocalQueue) -> WorkerState {
        WorkerState {
            shared: Arc::as_ptr(shared),
            index,
            queue,
            lifo_streak: Cell::new(0),
            tick: Cell::new(0),
            last_driver_poll: Cell::new(coarse::now()),
        }
    }

    /// The worker's queue back, for the next thread that takes the worker's place (a
    /// current-thread runtime's `block_on` callers take turns).
    pub(crate) fn into_queue(self) -> LocalQueue {
        self.queue
    }

    /// Whether this is a worker of `shared`'s runtime.
    pub(crate) fn belongs_to(&self, shared: &Shared) -> bool {
        std::ptr::eq(self.shared, shared)
    }
}
