//! Where runnable tasks wait, as the other threads see it: the global injector, each worker's
//! queue (through its stealer), and each worker's slot (its LIFO task and its poll stamp),
//! with the thresholds that tell a worker stuck in one long poll.
//!
//! ```text
//! queues.push(task)                      // a spawn or wake from another thread
//! queues.steal_injector_into(&queue)     // a worker takes a batch of the injector's tasks
//! queues.steal_into(victim, &queue)      // an idle worker takes half of another's queue
//! queues.any_queued()                    // a task waits where any worker may take it
//! slots.end_poll(i, now, starting)       // worker i stamps its polls on the coarse clock
//! slots.take_stuck_lifo(i)               // the LIFO task of a worker stuck in a long poll
//! ```
//!
//! How it works: the queues are `crossbeam-deque`'s: each worker owns the `Worker` end of its
//! queue (`worker_state.rs`); the stealers and the injector live here, shared. A worker's slot is on
//! cache lines of its own (`WorkerSlot`); only its owner writes the poll stamp, and the others
//! read it as a hint (`lifo.rs` says why a LIFO task may be taken at all). After shutdown a
//! woken task goes to the injector, and the thread shutting down drains it
//! ([`Queues::push_after_shutdown`], [`Queues::drain_after_shutdown`]).

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64};

use async_task::Runnable;
use crossbeam_deque::{Injector, Steal, Stealer, Worker};

use super::lifo::LifoSlot;
use crate::time::coarse;

/// The owning end of a worker's queue (crossbeam's `Worker`, named here for what it is to
/// the scheduler, which has a `Worker` of its own).
pub(crate) type LocalQueue = Worker<Runnable>;

/// Drops the tasks in a worker's LIFO slot and queue: shutdown, on the worker's thread (or,
/// for a current-thread runtime nobody drives, on the thread shutting it down).
pub(crate) fn drop_queued(slot: &WorkerSlot, queue: &LocalQueue) {
    while let Some(r) = slot.lifo.take().or_else(|| queue.pop()) {
        drop(r);
    }
}

/// The injector and the stealer end of every worker's queue.
pub(crate) struct Queues {
    injector: Injector<Runnable>,
    stealers: Box<[Stealer<Runnable>]>,
    /// Set by shutdown once it has dropped the tasks left in the injector: from then on a
    /// task woken late (from another thread) is dropped by whoever wakes it.
    drained: AtomicBool,
}

impl Queues {
    /// The shared side of the workers' queues, `stealers[i]` being worker `i`'s.
    pub(crate) fn new(stealers: Vec<Stealer<Runnable>>) -> Queues {
        Queues {
            injector: Injector::new(),
            stealers: stealers.into_boxed_slice(),
            drained: AtomicBool::new(false),
        }
    }

    /// How many workers there are (one queue each).
    pub(crate) fn workers(&self) -> usize {
        self.stealers.len()
    }

    /// Puts a task in the injector, where any worker may take it.
    pub(crate) fn push(&self, runnable: Runnable) {
        self.injector.push(runnable);
    }

    /// Tasks waiting in the injector (a snapshot: other threads push and take meanwhile).
    pub(crate) fn injector_len(&self) -> usize {
        self.injector.len()
    }

    /// Whether the injector is empty (a hint: another thread may push meanwhile).
    pub(crate) fn injector_is_empty(&self) -> bool {
        self.injector.is_empty()
    }

    /// Whether worker `i`'s queue holds tasks (a hint).
    pub(crate) fn has_queued(&self, i: usize) -> bool {
        !self.stealers[i].is_empty()
    }

    /// Whether a task waits anywhere another worker may take it from: the injector or any
    /// worker's queue (LIFO slots aside). The re-check of a worker that stops looking for
    /// work (`idle/mod.rs`, "Every queue"); the caller has fenced. The injector is read
    /// first: a batch moves from it into a worker's queue, never back.
    pub(crate) fn any_queued(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// Moves a batch of the injector's tasks into `queue` and returns one of them to run.
    pub(crate) fn steal_injector_into(&self, queue: &LocalQueue) -> Option<Runnable> {
        steal_retrying(|| self.injector.steal_batch_and_pop(queue))
    }

    /// Moves about half of worker `victim`'s queue into `queue`, returning one task to run:
    /// crossbeam's answer as it is (`Retry` when another thread raced us).
    pub(crate) fn steal_into(&self, victim: usize, queue: &LocalQueue) -> Steal<Runnable> {
        self.stealers[victim].steal_batch_and_pop(queue)
    }

    /// After shutdown: queues a woken task for the shutting-down thread to drop, or drops the
    /// injector's tasks here if that thread has drained it already.
    pub(crate) fn push_after_shutdown(&self, runnable: Runnable) {
        self.injector.push(runnable);
        // SeqCst: pairs with the store and fence in `drain_after_shutdown`. Either that
        // drain sees this push, or this load sees `drained` and we drain ourselves, so no
        // task is stranded in the injector.
        std::sync::atomic::fence(SeqCst);
        if self.drained.load(SeqCst) {
            self.drop_injected();
        }
    }

    /// Shutdown's last step for the injector: drops every task in it, and makes later wakes
    /// drop theirs (see `push_after_shutdown`).
    pub(crate) fn drain_after_shutdown(&self) {
        self.drop_injected();
        self.drained.store(true, SeqCst);
        // SeqCst: see `push_after_shutdown`.
        std::sync::atomic::fence(SeqCst);
        self.drop_injected();
    }

    /// Drops every task in the injector (dropping one may wake, and so queue, others).
    fn drop_injected(&self) {
        while let Some(r) = steal_retrying(|| self.injector.steal()) {
            drop(r);
        }
    }
}

/// Runs `steal` until it gives a definite answer: crossbeam's `Steal::Retry` means another
/// thread raced us on the same queue and trying again may succeed.
pub(crate) fn steal_retrying<T>(mut steal: impl FnMut() -> Steal<T>) -> Option<T> {
    loop {
        match steal() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

/// Every worker's slot, and the thresholds that read their poll stamps.
pub(crate) struct Slots {
    slots: Box<[WorkerSlot]>,
    /// A worker whose current poll has run this long (coarse-clock ns) is stuck: idle workers
    /// may take its LIFO task, and the watchdog wakes one for it.
    stuck_after: u64,
    /// Polls at least this long (coarse-clock ns) count in `WorkerMetrics::long_polls`.
    long_poll: u64,
    /// A worker going from task to task polls the reactor once this long (coarse-clock ns)
    /// has passed since it last did (half a watch period).
    attend_every: u64,
}

impl Slots {
    /// `workers` empty slots; polls count as stuck after `stuck_after` and as long after
    /// `long_poll`, and busy workers poll the reactor every `attend_every` (coarse-clock ns).
    pub(crate) fn new(
        workers: usize,
        stuck_after: u64,
        long_poll: u64,
        attend_every: u64,
    ) -> Slots {
        Slots {
            slots: (0..workers).map(|_| WorkerSlot::default()).collect(),
            stuck_after,
            long_poll,
            attend_every,
        }
    }

    /// How long (coarse-clock ns) a worker going from task to task may leave the reactor
    /// unpolled.
    pub(crate) fn attend_every(&self) -> u64 {
        self.attend_every
    }

    /// Worker `i`'s slot.
    pub(crate) fn get(&self, i: usize) -> &WorkerSlot {
        &self.slots[i]
    }

    /// Worker `i`'s poll, if one is stamped, ended at coarse time `now`; stamps the one that
    /// starts now (`starting`), or marks the worker idle. Returns whether the poll that ended
    /// ran long (`Builder::long_poll_threshold`). Called by worker `i` only.
    pub(crate) fn end_poll(&self, i: usize, now: u64, starting: bool) -> bool {
        let slot = &self.slots[i];
        // Relaxed: only this thread writes the stamp; others read it as a hint.
        let started = slot.poll_started.load(Relaxed);
        let long = started != 0 && now.saturating_sub(started) >= self.long_poll;
        slot.poll_started
            .store(if starting { now } else { 0 }, Relaxed);
        long
    }

    /// Whether worker `i` has been in one poll for too long at coarse time `now`.
    pub(crate) fn stuck(&self, i: usize, now: u64) -> bool {
        self.slots[i].stuck(now, self.stuck_after)
    }

    /// Whether a worker other than `me` has been in one poll for too long at coarse time
    /// `now`.
    pub(crate) fn others_stuck(&self, me: usize, now: u64) -> bool {
        (0..self.slots.len()).any(|i| i != me && self.stuck(i, now))
    }

    /// The task in the LIFO slot of a worker other than `me` that has been in one poll for too
    /// long (see `lifo.rs`): it would otherwise wait for that poll to end while `me` idles.
    /// Looks at the other workers in turn, starting after `me`.
    pub(crate) fn take_stuck_lifo(&self, me: usize) -> Option<Runnable> {
        let n = self.slots.len();
        let mut now = None;
        for k in 1..n {
            let victim = &self.slots[(me + k) % n];
            if !victim.lifo.is_occupied() {
                continue;
            }
            let now = *now.get_or_insert_with(coarse::now);
            if victim.stuck(now, self.stuck_after) {
                if let Some(t) = victim.lifo.take() {
                    return Some(t);
                }
            }
        }
        None
    }
}

/// What other threads may look at of one worker, on its own cache lines.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct WorkerSlot {
    /// The worker's LIFO slot.
    pub(crate) lifo: LifoSlot,
    /// When the worker's current (or last) task poll started, on the coarse clock; 0 while
    /// it is idle. Written by the worker only.
    poll_started: AtomicU64,
}

impl WorkerSlot {
    /// Whether this worker has been in one poll for at least `after` ns at coarse time `now`.
    fn stuck(&self, now: u64, after: u64) -> bool {
        // Relaxed: a hint; a wrong answer moves a task to another worker, or leaves it to the
        // next look, and nothing else is read through it.
        let started = self.poll_started.load(Relaxed);
        started != 0 && now.saturating_sub(started) >= after
    }
}
