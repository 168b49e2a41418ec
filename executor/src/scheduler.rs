//! Where tasks go when they are spawned or woken, and who gets told.
//!
//! A task woken on one of this runtime's workers goes to that worker: into its LIFO slot (the
//! task the running task just woke is usually the one that should run next, while its data is
//! still in cache), or, if it woke itself while running (it yielded, or spent its
//! cooperative budget), to the back of its local queue. A task spawned on a
//! worker is treated the same way (tokio does likewise). Anything else (spawns and wakes from other
//! threads) goes to the global injector. Every push that another worker may need to pick up is
//! followed by [`Shared::notify_from`], which wakes a parked worker only if nobody is
//! spinning; the LIFO slot is the exception, because its owner runs it next anyway, unless
//! the task that is running then takes too long: other workers take a stuck worker's LIFO
//! task, and the watchdog wakes one for it (`lifo.rs`, `watchdog.rs`).

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

use async_task::Runnable;
use crossbeam_deque::Steal;

use crate::context;
use crate::driver::Driver;
use crate::idle::Woke;
use crate::lifo::LifoSlot;
use crate::metrics::bump;
use crate::shared::Shared;

/// Callbacks run on each worker thread as it starts and stops.
pub(crate) type ThreadHook = std::sync::Arc<dyn Fn() + Send + Sync>;

/// What other threads may look at of one worker, on its own cache lines.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct WorkerSlot {
    /// The worker's LIFO slot.
    pub(crate) lifo: LifoSlot,
    /// When the worker's current (or last) task poll started, on the coarse clock; 0 while
    /// it is idle. Written by the worker only.
    pub(crate) poll_started: AtomicU64,
}

impl WorkerSlot {
    /// Whether this worker has been in one poll for at least `after` ns at coarse time `now`.
    pub(crate) fn stuck(&self, now: u64, after: u64) -> bool {
        // Relaxed: a hint; a wrong answer moves a task to another worker, or leaves it to the
        // next look, and nothing else is read through it.
        let started = self.poll_started.load(Relaxed);
        started != 0 && now.saturating_sub(started) >= after
    }
}

impl Shared {
    /// Schedules a task that was woken. `woken_while_running`: the task's waker was woken
    /// during the task's own poll (`yield_now`, a spent cooperative budget, or any future
    /// that wakes itself and returns `Pending`); such a task goes behind the queued ones
    /// instead of into the LIFO slot.
    pub(crate) fn schedule(&self, runnable: Runnable, woken_while_running: bool) {
        if self.idle.is_shutdown() {
            // The runtime is gone and nobody will run the task: its future must be dropped,
            // but not here. A waker is often called with a lock held (h2 wakes its connection
            // task under its streams lock) and the future's destructor may take that very
            // lock. The injector is drained, and its tasks dropped, by the shutting-down
            // thread once no worker runs (`Runtime::stop`).
            self.injector.push(runnable);
            // SeqCst: pairs with the store and fence in `drain_after_shutdown`. Either that
            // drain sees this push, or this load sees `drained` and we drain ourselves, so no
            // task is stranded in the injector.
            std::sync::atomic::fence(SeqCst);
            if self.drained.load(SeqCst) {
                self.drop_injected();
            }
            return;
        }
        context::with_worker(|local| match local {
            Some(local) if local.belongs_to(self) => {
                if woken_while_running {
                    local.queue.push(runnable);
                    self.notify_from(Some(local.index));
                } else if let Some(prev) = self.slots[local.index].lifo.push(runnable) {
                    local.queue.push(prev);
                    self.notify_from(Some(local.index));
                }
            }
            _ => self.push_remote(runnable),
        })
    }

    /// Shutdown's last step for the injector: drops every task in it, and makes later wakes
    /// drop theirs (see `schedule`).
    pub(crate) fn drain_after_shutdown(&self) {
        self.drop_injected();
        self.drained.store(true, SeqCst);
        // SeqCst: see `schedule`.
        std::sync::atomic::fence(SeqCst);
        self.drop_injected();
    }

    /// Drops every task in the injector (dropping one may wake, and so queue, others).
    fn drop_injected(&self) {
        while let Some(r) = steal_retrying(|| self.injector.steal()) {
            drop(r);
        }
    }

    /// Schedules a newly spawned task: like a woken one (on a worker, into the LIFO slot,
    /// since a task that spawns another often awaits it next), elsewhere into the injector.
    pub(crate) fn schedule_new(&self, runnable: Runnable) {
        bump(&self.global.spawned);
        self.schedule(runnable, false);
    }

    fn push_remote(&self, runnable: Runnable) {
        bump(&self.global.remote_schedules);
        self.injector.push(runnable);
        self.notify_from(None);
    }

    /// Work was made visible: wake a parked worker unless somebody is looking for work.
    pub(crate) fn notify_from(&self, worker: Option<usize>) {
        let woke = self.idle.notify(|| self.unpark_driver());
        self.count_wake(woke, worker);
    }

    pub(crate) fn count_wake(&self, woke: Woke, worker: Option<usize>) {
        if woke != Woke::Nobody {
            match worker {
                Some(i) => bump(&self.counters[i].wakes),
                None => bump(&self.global.remote_wakes),
            }
        }
    }

    /// Whether a worker stuck in a long poll (at coarse time `now`) has work waiting behind
    /// it, in its LIFO slot or its queue: the watchdog then wakes somebody to take it.
    pub(crate) fn stuck_work(&self, now: u64) -> bool {
        self.slots
            .iter()
            .zip(&self.stealers)
            .any(|(slot, stealer)| {
                slot.stuck(now, self.stuck_after)
                    && (slot.lifo.is_occupied() || !stealer.is_empty())
            })
    }

    pub(crate) fn unpark_driver(&self) {
        if let Some(d) = self.driver.get() {
            d.unpark();
        }
    }

    /// The driver, installing the one `make` builds if there is none yet.
    pub(crate) fn driver_or_install(
        &self,
        make: impl FnOnce() -> std::io::Result<Box<dyn Driver>>,
    ) -> std::io::Result<&dyn Driver> {
        if let Some(d) = self.driver.get() {
            return Ok(&**d);
        }
        let made = make()?;
        // Losing a race to another thread's installation is fine: ours is dropped.
        let won = self.driver.set(made).is_ok();
        if won {
            // SeqCst fence, against the one in `Runtime::shutdown`: either shutdown sees this
            // driver (and shuts it down), or this sees the shutdown and shuts it down itself
            // (nobody would ever poll it); perhaps both, which is harmless.
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            if self.idle.is_shutdown() {
                if let Some(d) = self.driver.get() {
                    d.shutdown();
                }
            }
            // Workers that parked before the driver existed sleep on the futex; get one up so
            // that the last worker to park again blocks in the driver and timers fire.
            self.notify_from(None);
        }
        Ok(&**self.driver.get().expect("just installed"))
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
