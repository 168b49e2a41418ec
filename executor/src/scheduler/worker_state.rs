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
use std::task::Waker;
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
    /// When the last task poll ended (coarse clock, one vDSO read of a word the kernel
    /// updates every tick): the worker's time between tasks, so that a long poll that
    /// follows a short one counts in full towards the injector's turn
    /// (`Worker::injector_due`). The poll's start would miss it: the injector would then wait
    /// the interval plus a whole further poll (a 5 ms slice).
    pub(super) poll_ended: Cell<u64>,
    /// The `poll_ended` reading at which this worker last looked at the injector.
    pub(super) injector_looked: Cell<u64>,
    /// When this worker last polled the reactor (coarse clock), to poll it again between
    /// tasks once half a watch period has passed (`Worker::reactor_unattended`).
    pub(super) last_driver_poll: Cell<u64>,
    /// When this worker's busy period began (the spin policy's clock, fine-grained): when the
    /// loop started, when it last found work, or when the busy time was last added to its
    /// counter (`Worker::end_busy`).
    pub(super) busy_since: Cell<u64>,
    /// The idle period that ended last, whose accounting waits until the work it found has
    /// run (`Worker::settle`).
    pub(super) unsettled: Cell<Option<Ended>>,
    /// Wakers of tasks that yielded (`yield_now`, a spent budget), woken after this worker's
    /// next reactor turn (`WorkerState::wake_deferred`); in a `Cell`, taken out to be changed.
    deferred: Cell<Vec<Waker>>,
    /// Set while [`WorkerState::wake_deferred`] wakes them: they go behind the queued tasks
    /// (`schedule.rs`), so what the reactor turn woke runs first.
    waking_deferred: Cell<bool>,
}

impl WorkerState {
    /// The state of worker `index` of the runtime whose shared state is at address
    /// `runtime`, which owns `queue`.
    pub(crate) fn new(runtime: usize, index: usize, queue: LocalQueue) -> Box<WorkerState> {
        let now = coarse::now();
        Box::new(WorkerState {
            runtime,
            index,
            queue,
            lifo_streak: Cell::new(0),
            tick: Cell::new(0),
            poll_ended: Cell::new(now),
            injector_looked: Cell::new(now),
            last_driver_poll: Cell::new(now),
            // Set by whichever loop takes the place (`Worker::start_busy`).
            busy_since: Cell::new(0),
            unsettled: Cell::new(None),
            deferred: Cell::new(Vec::new()),
            waking_deferred: Cell::new(false),
        })
    }

    /// The worker's queue back, for the next thread that takes the worker's place (a
    /// current-thread runtime's `block_on` callers take turns). Tasks that yielded are woken
    /// first: this thread no longer drives the runtime, so they go to whoever does.
    pub(crate) fn into_queue(self) -> LocalQueue {
        for waker in self.deferred.take() {
            waker.wake();
        }
        self.queue
    }

    /// The deferred list, for a task's run to add to (`task::begin_deferring`).
    pub(super) fn take_deferred(&self) -> Vec<Waker> {
        self.deferred.take()
    }

    /// The deferred list back after a task's run.
    pub(super) fn put_deferred(&self, deferred: Vec<Waker>) {
        self.deferred.set(deferred);
    }

    /// Whether the tasks being woken yielded earlier (see `waking_deferred`).
    pub(super) fn waking_deferred(&self) -> bool {
        self.waking_deferred.get()
    }

    /// Whether a task waits to be woken after the next reactor turn.
    pub(super) fn has_deferred(&self) -> bool {
        let deferred = self.deferred.take();
        let any = !deferred.is_empty();
        self.deferred.set(deferred);
        any
    }

    /// Wakes the tasks that yielded (the caller has just given the reactor its turn).
    pub(super) fn wake_deferred(&self) {
        let mut deferred = self.deferred.take();
        self.waking_deferred.set(true);
        for waker in deferred.drain(..) {
            waker.wake();
        }
        self.waking_deferred.set(false);
        // Waking schedules, it polls nothing, so nothing was deferred meanwhile; keep the
        // vector's room for the next yields.
        deferred.append(&mut self.deferred.take());
        self.deferred.set(deferred);
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
