//! [`Shared`]: the state all of one runtime's threads share (workers, blocking-pool threads,
//! `block_on` callers, the watchdog), behind the `Arc` that the public `Handle` wraps.
//!
//! ```text
//! Handle ──Arc──> Shared <──Arc── workers, blocking pool, block_on, the thread-local context
//! ```
//!
//! How it works: the runtime's internals pass `Arc<Shared>` (or `&Shared`) to each other;
//! `Handle` is only the public face, whose methods delegate here.

use std::io;
use std::sync::atomic::Ordering::{Acquire, Release, SeqCst};
use std::sync::atomic::{fence, AtomicBool};
use std::sync::{Arc, OnceLock};

use crate::alarm::SysAlarm;
use crate::blocking::BlockingPool;
use crate::current_thread::Seat;
use crate::driver::Driver;
use crate::futex::SysFutex;
use crate::idle::{Idle, SpinPolicy};
use crate::metrics::{Counters, RuntimeMetrics};
use crate::queues::{Queues, Slots};
use crate::tasks::TaskList;
use crate::thread_context::ThreadContext;

/// State shared by all of one runtime's threads, one part per concern. Each part keeps its
/// own fields private and is used through its methods.
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
    /// drop them (`tasks.rs`).
    pub(crate) tasks: Arc<TaskList>,
    /// The threads behind `spawn_blocking` (`blocking.rs`).
    pub(crate) blocking: BlockingPool,
    /// What every thread of this runtime runs inside (the tokio-compat context), if anything.
    pub(crate) context: Option<Arc<dyn ThreadContext>>,
    /// A current-thread runtime's one worker place, which `block_on` callers take in turn
    /// (`current_thread.rs`); `None` on the multi-thread runtime.
    pub(crate) seat: Option<Seat>,
    /// The clock the reactor's timers follow, which tests may pause (`test_clock.rs`).
    #[cfg(feature = "test-util")]
    pub(crate) clock: crate::test_clock::Clock,
}

impl Shared {
    /// How many workers the runtime has (1 on a current-thread runtime).
    pub(crate) fn workers(&self) -> usize {
        self.queues.workers()
    }

    /// A snapshot of the runtime's counters.
    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        self.counters.snapshot(&self.policy)
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
            // SeqCst fence, against the one in `shut_down_driver`: either shutdown sees this
            // driver (and shuts it down), or this sees the shutdown and shuts it down itself
            // (nobody would ever poll it); perhaps both, which is harmless.
            fence(SeqCst);
            if self.idle.is_shutdown() {
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
        // SeqCst fence: see `driver_or_install`, which shuts down a driver installed after
        // the `driver.get()` below.
        fence(SeqCst);
        if let Some(d) = self.driver.get() {
            d.shutdown();
        }
    }
}

/// A runtime's I/O driver, once a reactor has installed one, and the try-lock that keeps
/// spinners from polling it all at once.
pub(crate) struct DriverCell {
    driver: OnceLock<Box<dyn Driver>>,
    /// Held by the one spinner that polls the driver, so spinners do not pile into epoll.
    polling: AtomicBool,
}

impl DriverCell {
    /// No driver yet.
    pub(crate) fn new() -> DriverCell {
        DriverCell {
            driver: OnceLock::new(),
            polling: AtomicBool::new(false),
        }
    }

    /// The driver, if one is installed.
    pub(crate) fn get(&self) -> Option<&dyn Driver> {
        self.driver.get().map(|d| &**d)
    }

    /// Installs `driver` unless one is installed already; returns whether it was.
    fn install(&self, driver: Box<dyn Driver>) -> bool {
        self.driver.set(driver).is_ok()
    }

    /// Makes a parked driver return, if there is a driver.
    pub(crate) fn unpark(&self) {
        if let Some(d) = self.get() {
            d.unpark();
        }
    }

    /// Polls the driver without blocking, unless there is none or another thread is polling
    /// it; runs `polling` first when it does poll. Returns how many events it dispatched.
    pub(crate) fn try_poll(&self, polling: impl FnOnce()) -> usize {
        let Some(driver) = self.get() else {
            return 0;
        };
        // Acquire/Release: a try-lock around `poll`, so two spinners do not contend in the
        // kernel for the same events; the reactor's own state is synchronized internally.
        if self.polling.swap(true, Acquire) {
            return 0;
        }
        polling();
        let n = driver.poll();
        self.polling.store(false, Release);
        n
    }
}
