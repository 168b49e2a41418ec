//! [`Handle`]: a cheap, clonable reference to a runtime's shared state, to spawn onto it and
//! read its metrics from anywhere (and [`RuntimeFlavor`], which it reports).
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! let handle = rt.handle().clone();
//! let from_thread = std::thread::spawn(move || handle.block_on(handle.spawn(async { 7 })));
//! assert_eq!(from_thread.join().unwrap().unwrap(), 7);
//! ```
//!
//! How it works: a `Handle` is the public face of an `Arc` of the runtime's [`Shared`] state
//! (`scheduler/shared.rs`). The runtime's own threads (workers, blocking-pool threads, `block_on`
//! callers) and the thread-local context (`scheduler/current.rs`) hold that `Arc` directly; every method
//! here delegates to it.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use super::enter::{self, EnterGuard};
use crate::scheduler::{self, current, RuntimeMetrics, Shared};
use crate::task::JoinHandle;

/// A handle to a runtime: spawn onto it, enter it, read its metrics. Clones are cheap.
///
/// ```
/// let rt = spinpark_executor::Runtime::new().unwrap();
/// let handle = rt.handle();
/// assert_eq!(rt.block_on(handle.spawn(async { 1 + 1 })).unwrap(), 2);
/// assert!(handle.worker_threads() >= 1);
/// ```
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("flavor", &self.runtime_flavor())
            .field("workers", &self.shared.workers())
            .finish()
    }
}

impl Handle {
    /// The public face of `shared`'s runtime.
    pub(crate) fn new(shared: Arc<Shared>) -> Handle {
        Handle { shared }
    }

    /// The runtime's shared state, for the crate's public entry points that take a `Handle`
    /// (`driver`, `Runtime`).
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The handle of the runtime the current thread is in.
    ///
    /// # Panics
    /// Outside a runtime; see [`Handle::try_current`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let handle = spinpark::Handle::current();
    /// assert!(handle.worker_threads() >= 1);
    /// # });
    /// ```
    #[track_caller]
    pub fn current() -> Handle {
        Self::try_current().expect(
            "there is no spinpark runtime here: call this from a task, from inside \
             Runtime::block_on, or from #[spinpark::main]",
        )
    }

    /// The handle of the runtime the current thread is in, or an error outside one.
    ///
    /// ```
    /// assert!(spinpark::Handle::try_current().is_err()); // not in a runtime
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.block_on(async { assert!(spinpark::Handle::try_current().is_ok()) });
    /// ```
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        current::current()
            .map(Handle::new)
            .ok_or(TryCurrentError(()))
    }

    /// Makes this runtime current on this thread until the guard is dropped, so `spawn` and
    /// `Handle::current` work on a thread the runtime does not own; see [`EnterGuard`].
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let _guard = rt.handle().enter();
    /// let task = spinpark::spawn(async { 1 }); // works: the runtime is current
    /// assert_eq!(rt.block_on(task).unwrap(), 1);
    /// ```
    pub fn enter(&self) -> EnterGuard<'_> {
        enter::enter(&self.shared)
    }

    /// Spawns a task on this runtime; see [`crate::spawn`].
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let handle = rt.handle().clone();
    /// let task = std::thread::spawn(move || handle.spawn(async { 2 })).join().unwrap();
    /// assert_eq!(rt.block_on(task).unwrap(), 2);
    /// ```
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        scheduler::spawn(&self.shared, future)
    }

    /// Runs a blocking closure on the blocking pool; see [`crate::spawn_blocking`].
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let task = rt.handle().spawn_blocking(|| std::fs::metadata("/").is_ok());
    /// assert!(rt.block_on(task).unwrap());
    /// ```
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        scheduler::spawn_blocking(&self.shared, f)
    }

    /// Runs `future` to completion on the current thread; see [`crate::Runtime::block_on`].
    /// On a current-thread runtime this thread does not run the runtime's tasks, I/O or timers
    /// (as in tokio): they progress only while some thread is in [`crate::Runtime::block_on`],
    /// which this call then waits beside.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let handle = rt.handle().clone();
    /// let v = std::thread::spawn(move || handle.block_on(async { 3 })).join().unwrap();
    /// assert_eq!(v, 3);
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        super::block_on::block_on(&self.shared, false, future)
    }

    /// This runtime's id, unique among the process's runtimes.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// assert_eq!(rt.handle().id(), rt.handle().clone().id());
    /// ```
    pub fn id(&self) -> super::Id {
        super::Id(self.shared.identity.id)
    }

    /// Whether this is a `LocalRuntime`'s handle.
    pub(crate) fn is_local(&self) -> bool {
        self.shared.identity.local
    }

    /// The runtime's name, if [`crate::Builder::name`] gave it one.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().name("edge").build().unwrap();
    /// assert_eq!(rt.handle().name(), Some("edge"));
    /// assert_eq!(spinpark::Runtime::new().unwrap().handle().name(), None);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.shared.identity.name.as_deref()
    }

    /// A snapshot of this runtime's counters.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.block_on(async { spinpark::spawn(async {}).await.unwrap() });
    /// assert!(rt.handle().metrics().tasks_spawned() >= 1);
    /// ```
    pub fn metrics(&self) -> RuntimeMetrics {
        self.shared.metrics()
    }

    /// The number of worker threads; 1 on a current-thread runtime (its worker is the thread
    /// in `block_on`).
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    /// assert_eq!(rt.handle().worker_threads(), 2);
    /// ```
    pub fn worker_threads(&self) -> usize {
        self.shared.workers()
    }

    /// Which scheduler the runtime has.
    ///
    /// ```
    /// use spinpark::runtime::RuntimeFlavor;
    /// let rt = spinpark::Runtime::new().unwrap();
    /// assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
    /// ```
    pub fn runtime_flavor(&self) -> RuntimeFlavor {
        match self.shared.seat {
            Some(_) => RuntimeFlavor::CurrentThread,
            None => RuntimeFlavor::MultiThread,
        }
    }

    /// The number of tasks that are waiting: polled at least once, returned `Pending`, and not
    /// finished (or dropped) since. Tasks queued but never polled are not counted.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// assert_eq!(rt.handle().live_tasks(), 0);
    /// ```
    pub fn live_tasks(&self) -> usize {
        self.shared.tasks.len()
    }

    /// The number of `spawn_blocking` threads alive now.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.block_on(rt.spawn_blocking(|| ())).unwrap();
    /// assert!(rt.handle().blocking_threads() >= 1); // idle pool threads linger a while
    /// ```
    pub fn blocking_threads(&self) -> usize {
        self.shared.blocking.threads()
    }

    /// Whether the runtime is shutting down (or shut down).
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// assert!(!rt.handle().is_shutdown());
    /// ```
    pub fn is_shutdown(&self) -> bool {
        self.shared.idle.is_shutdown()
    }

    /// The idle state now: (workers parked on the futex, workers spinning, whether a worker
    /// is parked in the driver). For this workspace's tests only: not part of the API.
    #[doc(hidden)]
    pub fn idle_state(&self) -> (u32, u32, bool) {
        self.shared.idle.snapshot()
    }
}

/// Which scheduler a runtime has: see [`Builder::new_current_thread`] and
/// [`Handle::runtime_flavor`](crate::Handle::runtime_flavor).
///
/// ```
/// use spinpark_executor::{Builder, RuntimeFlavor};
/// let rt = Builder::new_current_thread().build().unwrap();
/// assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
/// ```
///
/// [`Builder::new_current_thread`]: crate::Builder::new_current_thread
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeFlavor {
    /// No worker thread: tasks run on the thread inside `block_on`.
    CurrentThread,
    /// Worker threads that spin, then park, and steal from each other (the default).
    MultiThread,
}

/// Returned by [`Handle::try_current`] outside a runtime.
///
/// ```
/// assert!(spinpark_executor::Handle::try_current().is_err());
/// ```
#[derive(Debug)]
pub struct TryCurrentError(());

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("there is no spinpark runtime on this thread")
    }
}

impl std::error::Error for TryCurrentError {}

/// See `Runtime`'s `UnwindSafe`: the same holds through a handle.
impl std::panic::UnwindSafe for Handle {}
impl std::panic::RefUnwindSafe for Handle {}
