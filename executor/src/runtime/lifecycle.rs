//! [`Runtime`]: using and stopping a runtime, of either flavour ([`RuntimeFlavor`]): worker
//! threads (the default), or the thread in `block_on` alone ([`Builder::new_current_thread`],
//! `scheduler/current_thread.rs`). `builder.rs` starts one.
//!
//! ```
//! use std::time::Duration;
//!
//! let rt = spinpark_executor::Builder::new()
//!     .worker_threads(2)
//!     .spin(Duration::from_micros(100))
//!     .build()
//!     .unwrap();
//! let sum = rt.block_on(async {
//!     let tasks: Vec<_> = (0..10u64).map(|i| spinpark_executor::spawn(async move { i * i })).collect();
//!     let mut sum = 0;
//!     for t in tasks {
//!         sum += t.await.unwrap();
//!     }
//!     sum
//! });
//! assert_eq!(sum, 285);
//! ```

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::builder::Builder;
use super::handle::Handle;
use crate::scheduler::{current, within, RuntimeMetrics, Shared};
use crate::task::JoinHandle;

/// A running spinpark runtime: its worker threads and everything spawned on it.
///
/// Dropping it shuts it down: workers finish the task they are running, every task that has
/// not finished is dropped (its destructor runs; awaiting its [`JoinHandle`] elsewhere yields a
/// cancelled [`crate::JoinError`], or a panic one if that destructor panicked), and the worker
/// threads are joined. Running
/// `spawn_blocking` closures are waited for; use [`Runtime::shutdown_timeout`] to bound that.
///
/// It may be dropped anywhere, including inside one of its own tasks or `spawn_blocking`
/// closures: the calling thread is then not waited for (it exits once it returns to the
/// runtime).
///
/// ```
/// let rt = spinpark::Runtime::new().unwrap();
/// let task = rt.spawn(async { "hi" });
/// assert_eq!(rt.block_on(task).unwrap(), "hi");
/// rt.shutdown_timeout(std::time::Duration::from_secs(1));
/// ```
pub struct Runtime {
    pub(crate) handle: Handle,
    /// The worker threads (`Builder::start_workers` fills it).
    pub(crate) threads: Vec<thread::JoinHandle<()>>,
    /// The watchdog thread (`watchdog.rs`), with two workers or more.
    pub(crate) watchdog: Option<thread::JoinHandle<()>>,
    /// Whether `shutdown` ran (then dropping does nothing more).
    shut_down: bool,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("flavor", &self.handle.runtime_flavor())
            .field("workers", &self.threads.len())
            .finish()
    }
}

impl Runtime {
    /// A runtime around `shared` with no thread started yet (room for `workers`): dropping it
    /// shuts down what has been started.
    pub(crate) fn unstarted(shared: Arc<Shared>, workers: usize) -> Runtime {
        Runtime {
            handle: Handle::new(shared),
            threads: Vec::with_capacity(workers),
            watchdog: None,
            shut_down: false,
        }
    }

    /// A runtime with [`Builder::new`]'s defaults.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// # drop(rt);
    /// ```
    pub fn new() -> io::Result<Runtime> {
        Builder::new().build()
    }

    /// Runs `future` to completion on the current thread, with this runtime as the current
    /// one (so `spawn` and I/O inside it use this runtime), and returns its output. Spawned
    /// tasks run on the workers meanwhile; on a current-thread runtime, on this thread,
    /// between polls of `future` (see [`Builder::new_current_thread`]).
    ///
    /// # Panics
    /// If called on one of a runtime's workers or inside another `block_on`: that would
    /// block a thread the runtime needs and could deadlock. (A `spawn_blocking` closure may
    /// call it: the pool's threads are not needed by the workers.)
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let n = rt.block_on(async { spinpark::spawn(async { 5 }).await.unwrap() });
    /// assert_eq!(n, 5);
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        super::block_on::block_on(self.handle.shared(), true, future)
    }

    /// Spawns a task on this runtime; see [`crate::spawn`].
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let task = rt.spawn(async { 5 });
    /// assert_eq!(rt.block_on(task).unwrap(), 5);
    /// ```
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Runs a blocking closure on the blocking pool; see [`crate::spawn_blocking`].
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let task = rt.spawn_blocking(|| 6);
    /// assert_eq!(rt.block_on(task).unwrap(), 6);
    /// ```
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(f)
    }

    /// Makes this runtime current on this thread until the guard drops; see
    /// [`Handle::enter`].
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let task = {
    ///     let _guard = rt.enter();
    ///     spinpark::spawn(async { 8 })
    /// };
    /// assert_eq!(rt.block_on(task).unwrap(), 8);
    /// ```
    pub fn enter(&self) -> crate::EnterGuard<'_> {
        self.handle().enter()
    }

    /// A cheap, clonable handle to this runtime.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let handle = rt.handle().clone(); // cheap; usable from any thread
    /// assert!(!handle.is_shutdown());
    /// ```
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// A snapshot of this runtime's counters.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.block_on(async {});
    /// println!("{:?}", rt.metrics().total());
    /// ```
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Shuts down like dropping the runtime, but waits at most `timeout` in all: for workers
    /// busy in a task that does not return, and for running `spawn_blocking` closures. Those
    /// still running then are left to finish on their own. A timeout too large to add to
    /// `Instant::now()` (such as `Duration::MAX`) waits without a deadline, as dropping does.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.spawn(std::future::pending::<()>()); // never finishes; dropped at shutdown
    /// rt.shutdown_timeout(std::time::Duration::from_millis(100));
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        // A timeout too large for `Instant` (`Duration::MAX`) means no deadline.
        self.shutdown(Instant::now().checked_add(timeout));
    }

    /// Shuts down without waiting: tasks are dropped, workers stopped, and blocking closures
    /// still running are left to finish on their own (`shutdown_timeout` with no time to wait).
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.spawn_blocking(|| std::thread::sleep(std::time::Duration::from_millis(50)));
    /// rt.shutdown_background(); // returns without waiting for the closure
    /// ```
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// Shuts down inside the thread context (the tasks dropped here are dropped in it, as on
    /// a worker), then releases the context (the tokio-compat runtime stops). Runs once:
    /// `Drop` after `shutdown_timeout` does nothing more.
    fn shutdown(&mut self, deadline: Option<Instant>) {
        if std::mem::replace(&mut self.shut_down, true) {
            return;
        }
        let context = self.handle.shared().context.clone();
        within(context.as_ref(), || self.stop(deadline));
        if let Some(context) = context {
            context.shutdown();
        }
    }

    fn stop(&mut self, deadline: Option<Instant>) {
        let owned = self.handle.shared().clone();
        // The tasks dropped on this thread (those queued in a current-thread runtime's seat,
        // those waiting on wakers or timers, queued blocking closures) are dropped with the
        // runtime current, as on a worker: their destructors may use `Handle::current()` or
        // spawn cleanup work (which the shut-down runtime then cancels), as on tokio.
        let _enter = current::enter(owned.clone(), true);
        // And with its live-task list published, as on a worker, so that a task that never
        // ran, dropped here, is counted out of the runtime's alive tasks.
        let _tasks = crate::task::list::publish(owned.tasks.clone());
        let shared = &*owned;
        shared.idle.shutdown(|| shared.unpark_driver());
        // A current-thread runtime: drop the tasks queued for its worker, unless a thread in
        // `block_on` (through a `Handle`) holds them; that one drops them when it sees the
        // shutdown, as a worker thread does.
        if let Some(seat) = &shared.seat {
            seat.close(shared.slots.get(0));
        }
        // Shutdown closed the watch's alarm: the watchdog returns from its wait and exits.
        if let Some(w) = self.watchdog.take() {
            let _ = w.join();
        }
        // Dropped from inside one of its own tasks: that worker's loop ends once the task
        // returns, so it is not waited for. Each worker's place retires once, on whichever
        // thread holds it at the end (`block_in_place` may have moved it to a pool thread).
        let own = current::with_worker(|w| w.is_some_and(|w| w.belongs_to(shared.addr())));
        let all_retired = shared
            .places
            .wait_retired(self.threads.len() - own as usize, deadline);
        // Wakers held by the reactor (I/O, timers) keep their tasks alive; drop them so those
        // tasks are dropped too (after a fence: see `Shared::shut_down_driver`).
        shared.shut_down_driver();
        // Every task still alive waits on something outside the queues; waking it now drops
        // it (see `Shared::schedule`).
        shared.tasks.wake_all();
        shared.queues.drain_after_shutdown();
        // The worker threads are joined once the tasks are dropped: a thread that handed its
        // place on (block_in_place) may still be in its task, waiting for one of them.
        let me = thread::current().id();
        for t in self.threads.drain(..) {
            // A thread that handed its place on may still be in the task that did (it retired
            // nothing): with no deadline it is joined, as a busy worker is; with one, it is
            // given until the deadline to finish (a retired worker is in its stop hook).
            if t.thread().id() != me && all_retired && deadline.is_some() {
                while !t.is_finished() && deadline.is_some_and(|d| Instant::now() < d) {
                    thread::sleep(Duration::from_micros(100));
                }
            }
            if t.thread().id() != me && ((all_retired && deadline.is_none()) || t.is_finished()) {
                // Task panics (poll or destructor) and thread-hook panics are caught, so a
                // worker does not unwind; were one to, its panic was reported when it
                // happened and there is nothing more to do for it here.
                let _ = t.join();
            }
            // Otherwise (past the deadline) the thread is detached; it exits on its own.
        }
        shared.blocking.shutdown(deadline, shared);
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown(None);
    }
}

/// A panic caught around a runtime's use leaves it usable: a panic in a task becomes its
/// `JoinError`, and one out of `block_on` gives the worker seat and the budget back (as in
/// tokio, which makes the same promise).
impl std::panic::UnwindSafe for Runtime {}
impl std::panic::RefUnwindSafe for Runtime {}
