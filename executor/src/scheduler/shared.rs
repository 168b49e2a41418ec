//! [`Shared`]: the state all of one runtime's threads share (workers, blocking-pool threads,
//! `block_on` callers, the watchdog), behind the `Arc` that the public `Handle` wraps.
//!
//! ```text
//! Handle ──Arc──> Shared <──Arc── workers, blocking-pool threads, block_on callers,
//!                                 the thread-local context, the watchdog
//! ```
//!
//! How it works: the runtime's internals pass `Arc<Shared>` (or `&Shared`) to each other;
//! `Handle` is only the public face, whose methods delegate here.

use std::io;
use std::sync::atomic::fence;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use super::blocking::BlockingPool;
use super::driver_cell::{Driver, DriverCell};
use super::foreign_context::ForeignContext;
use super::identity::Identity;
use super::metrics::{Counters, Live, RuntimeMetrics};
use super::queues::{Queues, Slots};
use super::seat::Seat;
use super::worker_state::Places;
use crate::idle::{Idle, SpinPolicy, SysAlarm, SysFutex};
use crate::task::TaskList;

/// State shared by all of one runtime's threads, one part per concern, each a type of its
/// own that the other modules use through its methods.
pub(crate) struct Shared {
    /// Where runnable tasks wait: the injector and the stealer end of every worker's queue
    /// (`queues.rs`).
    pub(crate) queues: Queues,
    /// Per worker: its LIFO slot and poll stamp, and when a poll counts as long or stuck
    /// (`queues.rs`).
    pub(crate) slots: Slots,
    /// The idle protocol: who spins, who sleeps on the futex, who drives the reactor, and the
    /// watch (`idle/`).
    pub(crate) idle: Idle<SysFutex, SysAlarm>,
    /// How long idle workers spin (`idle/spin.rs`).
    pub(crate) policy: SpinPolicy,
    /// The I/O driver, once a reactor installed one.
    pub(crate) driver: DriverCell,
    /// The counters behind `Runtime::metrics` (`metrics.rs`).
    pub(crate) counters: Counters,
    /// The wakers of the tasks that wait on something outside the queues, for shutdown to
    /// drop them (`task/list.rs`).
    pub(crate) tasks: Arc<TaskList>,
    /// The threads behind `spawn_blocking` (`blocking.rs`).
    pub(crate) blocking: BlockingPool,
    /// What every thread of this runtime runs inside (the tokio-compat context), if anything.
    pub(crate) context: Option<Arc<dyn ForeignContext>>,
    /// Workers' places in transit between threads (`block_in_place`), and how many workers
    /// have ended for good (`worker_state.rs`).
    pub(crate) places: Places,
    /// A current-thread runtime's one worker place, which `block_on` callers take in turn
    /// (`seat.rs`, `current_thread.rs`); `None` on the multi-thread runtime.
    pub(crate) seat: Option<Seat>,
    /// The runtime's id and name, and the hooks its workers call around a park
    /// (`identity.rs`).
    pub(crate) identity: Identity,
    /// The clock the reactor's timers follow, which tests may pause (`time/paused.rs`).
    #[cfg(feature = "test-util")]
    pub(crate) clock: crate::time::Clock,
}

impl Shared {
    /// How many workers the runtime has (1 on a current-thread runtime).
    pub(crate) fn workers(&self) -> usize {
        self.queues.workers()
    }

    /// This runtime's identity among runtimes: the address of its shared state (what a
    /// worker's state records, to tell its own runtime's schedules from another's).
    pub(crate) fn addr(&self) -> usize {
        self as *const Shared as usize
    }

    /// A snapshot of the runtime's counters.
    pub(crate) fn metrics(self: &Arc<Self>) -> RuntimeMetrics {
        self.counters.snapshot(&self.policy).with_live(self.clone())
    }

    /// Makes a parked driver return, if there is a driver.
    pub(crate) fn unpark_driver(&self) {
        self.driver.unpark();
    }

    /// The driver, installing the one `make` builds if there is none yet.
    pub(crate) fn driver_or_install(
        &self,
        make: impl FnOnce() -> io::Result<Box<dyn Driver>>,
    ) -> io::Result<&dyn Driver> {
        if let Some(d) = self.driver.get() {
            return Ok(d);
        }
        let made = make()?;
        // Losing a race to another thread's installation is fine: ours is dropped.
        let won = self.driver.install(made);
        if won {
            // SeqCst fence, against the one in `shut_down_driver`: either that sees this
            // driver (and shuts it down), or this sees that the runtime's drivers are closed
            // and shuts it down itself (nobody would ever poll it); perhaps both, which is
            // harmless. A driver installed while the runtime shuts down, before its workers
            // stopped (a task polled just before its worker saw the shutdown), serves until
            // `shut_down_driver`, like one installed earlier.
            fence(SeqCst);
            if self.driver.is_closed() {
                if let Some(d) = self.driver.get() {
                    d.shutdown();
                }
            }
            // Workers that parked before the driver existed sleep on the futex; get one up so
            // that the last worker to park again blocks in the driver and timers fire.
            self.notify_from(None);
        }
        Ok(self.driver.get().expect("just installed"))
    }

    /// Shutdown, once the idle protocol is shut down: makes the driver drop the wakers it
    /// holds, if there is a driver.
    pub(crate) fn shut_down_driver(&self) {
        self.driver.close();
        // SeqCst fence: see `driver_or_install`, which shuts down a driver installed after
        // the `driver.get()` below.
        fence(SeqCst);
        if let Some(d) = self.driver.get() {
            d.shutdown();
        }
    }
}

impl Live for Shared {
    fn global_queue_depth(&self) -> usize {
        self.queues.injector_len()
    }

    fn worker_parks(&self, worker: usize) -> u64 {
        self.counters.parks(worker)
    }

    fn worker_park_unparks(&self, worker: usize) -> u64 {
        self.counters.park_unparks(worker)
    }

    fn worker_busy_nanos(&self, worker: usize) -> u64 {
        self.counters.busy_nanos(worker)
    }

    fn alive_tasks(&self) -> usize {
        self.tasks.alive()
    }
}
