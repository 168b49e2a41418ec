//! [`WorkerState`]: what a worker keeps to itself (its queue's owning end, its counters of
//! tasks run), and [`Places`]: where a worker's state waits while it moves from one thread to
//! another (`block_in_place`), and how many workers have ended for good.
//!
//! ```text
//! let core = Box::new(WorkerState::new(runtime, index, queue));   // a worker's place
//! worker::run_place(&shared, core, None);          // the loop, on whichever thread holds it
//! places.hand(core) / places.take(index)           // block_in_place hands it on, or back
//! places.retire(); places.wait_retired(n, ..)      // the last loop of each place, and shutdown
//! ```
//!
//! A worker's state is a `Box` so that it can change threads: only its own thread touches it
//! (its mutable parts are `Cell`s), and it moves between threads only through a `Places`
//! mutex, which orders the two threads' accesses. What other threads may look at of a worker
//! is its `WorkerSlot` (`queues.rs`).

use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use super::queues::LocalQueue;
use crate::idle::Ended;
use crate::time::coarse;

/// A worker's own state, reachable from the thread that holds it through
/// `current::with_worker`.
pub(crate) struct WorkerState {
    /// The address of the runtime's shared state, to tell its workers from another
    /// runtime's (`belongs_to`).
    runtime: usize,
    pub(crate) index: usize,
    pub(crate) queue: LocalQueue,
    /// How many times in a row the LIFO slot was preferred over the queue.
    pub(super) lifo_streak: Cell<u32>,
    /// Tasks run so far (wrapping): every `GLOBAL_INTERVAL`th looks at the injector first.
    pub(super) tick: Cell<u32>,
    /// When this worker last polled the reactor (coarse clock), to poll it again between
    /// tasks once half a watch period has passed (`Worker::reactor_unattended`).
    pub(super) last_driver_poll: Cell<u64>,
    /// The idle period that ended last, whose accounting waits until the work it found has
    /// run (`Worker::settle`).
    pub(super) unsettled: Cell<Option<Ended>>,
}

impl WorkerState {
    /// The state of worker `index` of the runtime whose shared state is at address
    /// `runtime`, which owns `queue`.
    pub(crate) fn new(runtime: usize, index: usize, queue: LocalQueue) -> Box<WorkerState> {
        Box::new(WorkerState {
            runtime,
            index,
            queue,
            lifo_streak: Cell::new(0),
            tick: Cell::new(0),
            last_driver_poll: Cell::new(coarse::now()),
            unsettled: Cell::new(None),
        })
    }

    /// The worker's queue back, for the next thread that takes the worker's place (a
    /// current-thread runtime's `block_on` callers take turns).
    pub(crate) fn into_queue(self) -> LocalQueue {
        self.queue
    }

    /// Whether this is a worker of the runtime whose shared state is at address `runtime`.
    pub(crate) fn belongs_to(&self, runtime: usize) -> bool {
        self.runtime == runtime
    }
}

/// The workers' places in transit, and the count of places whose last loop has ended.
pub(crate) struct Places {
    /// Per worker: its state while `block_in_place` has handed it on and no thread holds it.
    handed: Box<[Mutex<Option<Box<WorkerState>>>]>,
    /// How many workers' loops have ended for good (not handed on): shutdown waits for all.
    retired: Mutex<usize>,
    retired_cond: Condvar,
}

impl Places {
    /// Places for `workers` workers, none in transit, none retired.
    pub(crate) fn new(workers: usize) -> Places {
        Places {
            handed: (0..workers).map(|_| Mutex::new(None)).collect(),
            retired: Mutex::new(0),
            retired_cond: Condvar::new(),
        }
    }

    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        // No user code runs under these locks.
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Leaves worker `core.index`'s state for another thread to take.
    pub(crate) fn hand(&self, core: Box<WorkerState>) {
        let slot = &self.handed[core.index];
        *Self::lock(slot) = Some(core);
    }

    /// Takes worker `index`'s state, if it is in transit (nobody took it first).
    pub(crate) fn take(&self, index: usize) -> Option<Box<WorkerState>> {
        Self::lock(&self.handed[index]).take()
    }

    /// A worker's loop has ended for good (shutdown).
    pub(crate) fn retire(&self) {
        *Self::lock(&self.retired) += 1;
        self.retired_cond.notify_all();
    }

    /// Waits until `n` workers have retired or `deadline` passes; returns whether they did.
    pub(crate) fn wait_retired(&self, n: usize, deadline: Option<Instant>) -> bool {
        let mut retired = Self::lock(&self.retired);
        while *retired < n {
            retired = match deadline {
                None => self
                    .retired_cond
                    .wait(retired)
                    .unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return false;
                    }
                    self.retired_cond
                        .wait_timeout(retired, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
        true
    }
}
