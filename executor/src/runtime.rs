//! [`Builder`] and [`Runtime`]: starting, using and stopping a runtime.
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
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::Duration;

use crossbeam_deque::{Injector, Worker};

use crate::blocking::BlockingPool;
use crate::futex::SysFutex;
use crate::handle::Handle;
use crate::idle::{Sleepers, SpinPolicy, MAX_WORKERS};
use crate::join::JoinHandle;
use crate::metrics::{GlobalCounters, RuntimeMetrics, WorkerCounters};
use crate::scheduler::{steal_retrying, Shared, ThreadHook};
use crate::tasks::TaskList;

/// The default spin window.
///
/// Measured on a 2-vCPU VM with the `rpc` benchmark's gap mode: a worker that parks wakes in
/// 20-60 us (a futex wake landing on a halted vCPU, then the scheduler), so a request that
/// finds every worker parked costs that much more than one that finds a spinner. Requests
/// spaced up to 200 us apart are common in RPC servers under light load; a 250 us window keeps
/// them on the fast path while bounding the CPU burned per idle period to 250 us of one core
/// (at most `max_spinners` cores spin at once, and the spinner yields its core regularly).
///
/// ```
/// let rt = spinpark::Builder::new().spin(spinpark::DEFAULT_SPIN * 2).build().unwrap();
/// # drop(rt);
/// ```
pub const DEFAULT_SPIN: Duration = Duration::from_micros(250);

/// Configures and builds a [`Runtime`].
///
/// ```
/// use std::time::Duration;
/// let rt = spinpark::Builder::new()
///     .worker_threads(4)
///     .spin(Duration::from_micros(100))
///     .thread_name("my-server")
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(async { 1 }), 1);
/// ```
pub struct Builder {
    workers: Option<usize>,
    spin: Duration,
    max_spinners: Option<usize>,
    thread_name: String,
    on_start: Option<ThreadHook>,
    on_stop: Option<ThreadHook>,
    max_blocking: usize,
    blocking_keep_alive: Duration,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("worker_threads", &self.workers)
            .field("spin", &self.spin)
            .field("max_spinners", &self.max_spinners)
            .field("thread_name", &self.thread_name)
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// A builder with the defaults: one worker per available CPU, a [`DEFAULT_SPIN`] window,
    /// at most `max(1, workers / 2)` spinners.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn new() -> Self {
        Self {
            workers: None,
            spin: DEFAULT_SPIN,
            max_spinners: None,
            thread_name: "spinpark-worker".into(),
            on_start: None,
            on_stop: None,
            max_blocking: 64,
            blocking_keep_alive: Duration::from_secs(10),
        }
    }

    /// The number of worker threads (default: available parallelism, at most 255).
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn worker_threads(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// How long an idle worker spins looking for work before it parks. `Duration::ZERO`
    /// turns spinning off: an idle worker scans the queues once, then parks.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().spin(std::time::Duration::from_micros(50)).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn spin(mut self, window: Duration) -> Self {
        self.spin = window;
        self
    }

    /// At most this many workers spin at once (default `max(1, workers / 2)`, so that a core
    /// is always left to other threads). Clamped to `1..=workers`.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(4).max_spinners(1).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn max_spinners(mut self, n: usize) -> Self {
        self.max_spinners = Some(n);
        self
    }

    /// The name of worker threads (and, with `-blocking`, of blocking-pool threads).
    ///
    /// ```
    /// let rt = spinpark::Builder::new().thread_name("rpc-worker").build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn thread_name(mut self, name: impl Into<String>) -> Self {
        self.thread_name = name.into();
        self
    }

    /// Runs `f` on each worker thread as it starts.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().on_thread_start(|| println!("worker up")).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn on_thread_start(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_start = Some(Arc::new(f));
        self
    }

    /// Runs `f` on each worker thread as it stops.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().on_thread_stop(|| println!("worker down")).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn on_thread_stop(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_stop = Some(Arc::new(f));
        self
    }

    /// The most threads `spawn_blocking` may use at once (default 64).
    ///
    /// ```
    /// let rt = spinpark::Builder::new().max_blocking_threads(8).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn max_blocking_threads(mut self, n: usize) -> Self {
        self.max_blocking = n;
        self
    }

    /// How long an idle blocking-pool thread waits for work before it exits (default 10 s).
    ///
    /// ```
    /// let rt = spinpark::Builder::new().thread_keep_alive(std::time::Duration::from_secs(1)).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn thread_keep_alive(mut self, d: Duration) -> Self {
        self.blocking_keep_alive = d;
        self
    }

    /// Starts the worker threads.
    ///
    /// # Errors
    /// `InvalidInput` for zero or more than 255 workers; the OS error if a thread cannot be
    /// started.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn build(self) -> io::Result<Runtime> {
        let workers = self.workers.unwrap_or_else(|| {
            thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .min(MAX_WORKERS)
        });
        if workers == 0 || workers > MAX_WORKERS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("spinpark: worker_threads must be 1..={MAX_WORKERS}, got {workers}"),
            ));
        }
        let max_spinners = self.max_spinners.unwrap_or((workers / 2).max(1));
        let queues: Vec<Worker<_>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let shared = Arc::new(Shared {
            injector: Injector::new(),
            stealers: queues.iter().map(Worker::stealer).collect(),
            sleepers: Sleepers::new(SysFutex, workers, max_spinners),
            policy: SpinPolicy { window: self.spin },
            driver: OnceLock::new(),
            driver_polling: AtomicBool::new(false),
            tasks: Arc::new(TaskList::new()),
            counters: (0..workers).map(|_| WorkerCounters::default()).collect(),
            global: GlobalCounters::default(),
            blocking: BlockingPool::new(
                self.max_blocking,
                self.blocking_keep_alive,
                format!("{}-blocking", self.thread_name),
            ),
        });
        let handle = Handle { shared };
        let mut rt = Runtime {
            handle: handle.clone(),
            threads: Vec::with_capacity(workers),
        };
        for (index, queue) in queues.into_iter().enumerate() {
            let handle = handle.clone();
            let (on_start, on_stop) = (self.on_start.clone(), self.on_stop.clone());
            let t = thread::Builder::new()
                .name(format!("{}-{index}", self.thread_name))
                .spawn(move || crate::worker::run(handle, index, queue, on_start, on_stop))
                .map_err(|e| {
                    io::Error::new(e.kind(), format!("spinpark: starting worker {index}: {e}"))
                })?;
            // On error, `rt` drops here and stops the workers already started.
            rt.threads.push(t);
        }
        Ok(rt)
    }
}

/// A running spinpark runtime: its worker threads and everything spawned on it.
///
/// Dropping it shuts it down: workers finish the task they are running, every task that has
/// not finished is dropped (its destructor runs; awaiting its [`JoinHandle`] elsewhere yields a
/// cancelled [`crate::JoinError`]), and the worker threads are joined. Running
/// `spawn_blocking` closures are waited for; use [`Runtime::shutdown_timeout`] to bound that.
///
/// ```
/// let rt = spinpark::Runtime::new().unwrap();
/// let task = rt.spawn(async { "hi" });
/// assert_eq!(rt.block_on(task).unwrap(), "hi");
/// rt.shutdown_timeout(std::time::Duration::from_secs(1));
/// ```
pub struct Runtime {
    handle: Handle,
    threads: Vec<thread::JoinHandle<()>>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("workers", &self.threads.len())
            .finish()
    }
}

impl Runtime {
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
    /// tasks run on the workers meanwhile.
    ///
    /// # Panics
    /// If called from inside a runtime (a worker, a blocking-pool thread, or another
    /// `block_on`): that would block a thread the runtime needs and could deadlock.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let n = rt.block_on(async { spinpark::spawn(async { 5 }).await.unwrap() });
    /// assert_eq!(n, 5);
    /// ```
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
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

    /// Shuts down like dropping the runtime, but waits at most `timeout` for running
    /// `spawn_blocking` closures; those still running are left to finish on their own.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.spawn(std::future::pending::<()>()); // never finishes; dropped at shutdown
    /// rt.shutdown_timeout(std::time::Duration::from_millis(100));
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        self.shutdown(Some(timeout));
    }

    fn shutdown(&mut self, blocking_timeout: Option<Duration>) {
        let shared = &self.handle.shared;
        shared.sleepers.shutdown(|| shared.unpark_driver());
        let me = thread::current().id();
        for t in self.threads.drain(..) {
            if t.thread().id() == me {
                // Dropped from inside one of its own tasks: that worker exits by itself.
                continue;
            }
            // A panic in a task's poll is caught, but one in a task's destructor or in a
            // thread hook (`on_thread_start`/`on_thread_stop`) unwinds its worker; the panic
            // was reported when it happened and there is nothing more to do for it here.
            let _ = t.join();
        }
        // Wakers held by the reactor (I/O, timers) keep their tasks alive; drop them so those
        // tasks are dropped too.
        if let Some(d) = shared.driver.get() {
            d.shutdown();
        }
        // Every task still alive waits on something outside the queues; waking it now drops
        // it (see `Shared::schedule`).
        shared.tasks.wake_all();
        while let Some(r) = steal_retrying(|| shared.injector.steal()) {
            drop(r);
        }
        shared.blocking.shutdown(blocking_timeout);
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown(None);
    }
}
