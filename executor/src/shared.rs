//! [`Shared`]: the state all of one runtime's threads share (workers, blocking-pool threads,
//! `block_on` callers, the watchdog), behind the `Arc` that the public `Handle` wraps.
//!
//! ```text
//! Handle ──Arc──> Shared <──Arc── workers, blocking pool, block_on, the thread-local context
//! ```
//!
//! How it works: the runtime's internals pass `Arc<Shared>` (or `&Shared`) to each other;
//! `Handle` is only the public face, whose methods delegate here.

use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use async_task::Runnable;
use crossbeam_deque::{Injector, Stealer};

use crate::alarm::SysAlarm;
use crate::blocking::BlockingPool;
use crate::driver::Driver;
use crate::futex::SysFutex;
use crate::idle::{Idle, SpinPolicy};
use crate::metrics::{GlobalCounters, WorkerCounters};
use crate::scheduler::WorkerSlot;

/// State shared by all of one runtime's threads.
pub(crate) struct Shared {
    pub(crate) injector: Injector<Runnable>,
    pub(crate) stealers: Vec<Stealer<Runnable>>,
    /// Per worker: its LIFO slot and poll stamp.
    pub(crate) slots: Box<[WorkerSlot]>,
    /// A worker whose current poll has run this long (coarse-clock ns) is stuck: idle workers
    /// may take its LIFO task, and the watchdog wakes one for it.
    pub(crate) stuck_after: u64,
    /// Polls at least this long (coarse-clock ns) count in `WorkerMetrics::long_polls`.
    pub(crate) long_poll: u64,
    pub(crate) idle: Idle<SysFutex, SysAlarm>,
    pub(crate) policy: SpinPolicy,
    pub(crate) driver: OnceLock<Box<dyn Driver>>,
    /// Held by the one spinner that polls the driver, so spinners do not pile into epoll.
    pub(crate) driver_polling: AtomicBool,
    /// Set by shutdown once it has dropped the tasks left in the injector: from then on a
    /// task woken late (from another thread) is dropped by whoever wakes it.
    pub(crate) drained: AtomicBool,
    pub(crate) tasks: std::sync::Arc<crate::tasks::TaskList>,
    pub(crate) counters: Vec<WorkerCounters>,
    pub(crate) global: GlobalCounters,
    pub(crate) blocking: BlockingPool,
    /// What every thread of this runtime runs inside (the tokio-compat context), if anything.
    pub(crate) context: Option<std::sync::Arc<dyn crate::thread_context::ThreadContext>>,
    /// A current-thread runtime's one worker place, which `block_on` callers take in turn
    /// (`current_thread.rs`); `None` on the multi-thread runtime.
    pub(crate) seat: Option<crate::current_thread::Seat>,
    /// The clock the reactor's timers follow, which tests may pause (`test_clock.rs`).
    #[cfg(feature = "test-util")]
    pub(crate) clock: crate::test_clock::Clock,
}
