//! Where tasks go when they are spawned or woken, and who gets told.
//!
//! A task woken on one of a multi-thread runtime's workers goes to that worker: into its LIFO
//! slot (the task the running task just woke is usually the one that should run next, while
//! its data is still in cache), or, if it woke itself while running, or yielded (`yield_now`
//! or a spent cooperative budget, woken after the worker's next reactor turn: `worker.rs`), to
//! the back of its local queue. A task spawned on a worker is treated the same way (tokio does
//! likewise). On a current-thread runtime every task spawned or woken on its thread goes to
//! the back of the queue, so tasks run in the order they were spawned or woken, as on tokio's
//! current-thread scheduler, which has no LIFO slot (tests and programs written for it rely
//! on spawn order; with one thread there is no steal for the slot to save). Anything else
//! (spawns and wakes from other threads) goes to the global injector. Every push that another
//! worker may need to pick up is followed by [`Shared::notify_from`], which wakes a parked
//! worker only if nobody is looking for work; so is every move of tasks into a busy worker's
//! queue (a batch it took, `worker.rs`), and a worker that stops looking looks at every queue
//! once more. So no task waits in a queue behind a worker blocked in a long poll while
//! another worker sleeps (`idle/mod.rs`, "Every queue"). The LIFO slot is the exception,
//! because its owner runs it next anyway, unless the task that is running then takes too
//! long: other workers take a stuck worker's LIFO task, and the watchdog wakes one for it
//! (`lifo.rs`, `watchdog.rs`).

use async_task::Runnable;

use super::current;
use super::metrics::bump;
use super::shared::Shared;
use crate::idle::Woke;

impl Shared {
    /// Schedules a task that was woken. `woken_while_running`: the task's waker was woken
    /// during the task's own poll (`yield_now`, a spent cooperative budget, or any future
    /// that wakes itself and returns `Pending`); such a task goes behind the queued ones
    /// instead of into the LIFO slot. On a current-thread runtime, everything goes to the
    /// back of the queue (see the module docs).
    pub(crate) fn schedule(&self, runnable: Runnable, woken_while_running: bool) {
        if self.idle.is_shutdown() {
            // The runtime is gone and nobody will run the task: its future must be dropped,
            // but not here. A waker is often called with a lock held (h2 wakes its connection
            // task under its streams lock) and the future's destructor may take that very
            // lock. The injector is drained, and its tasks dropped, by the shutting-down
            // thread once no worker runs (`Runtime::stop`).
            self.queues.push_after_shutdown(runnable);
            return;
        }
        current::with_worker(|local| match local {
            Some(local) if local.belongs_to(self.addr()) => {
                if woken_while_running || local.waking_deferred() || self.seat.is_some() {
                    local.queue.push(runnable);
                    self.notify_from(Some(local.index));
                } else if let Some(prev) = self.slots.get(local.index).lifo.push(runnable) {
                    local.queue.push(prev);
                    self.notify_from(Some(local.index));
                }
            }
            _ => self.push_remote(runnable),
        })
    }

    /// Schedules a newly spawned task: like a woken one (on a multi-thread runtime's worker,
    /// into the LIFO slot, since a task that spawns another often awaits it next; on a
    /// current-thread runtime, behind the tasks already queued), elsewhere into the injector.
    pub(crate) fn schedule_new(&self, runnable: Runnable) {
        bump(&self.counters.global().spawned);
        self.schedule(runnable, false);
    }

    fn push_remote(&self, runnable: Runnable) {
        bump(&self.counters.global().remote_schedules);
        self.queues.push(runnable);
        self.notify_from(None);
    }

    /// Work was made visible: wake a parked worker unless somebody is looking for work.
    pub(crate) fn notify_from(&self, worker: Option<usize>) {
        let woke = self.idle.notify(|| self.unpark_driver());
        self.count_wake(woke, worker);
    }

    /// Counts a wake-up that `worker` (or, `None`, a thread that is not a worker) issued.
    pub(crate) fn count_wake(&self, woke: Woke, worker: Option<usize>) {
        if woke != Woke::Nobody {
            match worker {
                Some(i) => bump(&self.counters.worker(i).wakes),
                None => bump(&self.counters.global().remote_wakes),
            }
        }
    }

    /// Whether a worker stuck in a long poll (at coarse time `now`) has work waiting behind
    /// it, in its LIFO slot or its queue: the watchdog then wakes somebody to take it.
    pub(crate) fn stuck_work(&self, now: u64) -> bool {
        (0..self.queues.workers()).any(|i| {
            self.slots.stuck(i, now)
                && (self.slots.get(i).lifo.is_occupied() || self.queues.has_queued(i))
        })
    }
}
