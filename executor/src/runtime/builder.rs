//! [`Builder`]: the options of a runtime, and how `build` starts one from them, in named
//! steps (plan, spin policy, thread context, shared state, workers, watchdog).
//!
//! ```
//! let rt = spinpark_executor::Builder::new().worker_threads(2).build().unwrap();
//! assert_eq!(rt.block_on(async { 1 + 1 }), 2);
//! ```
use std::fmt;
use std::io;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use async_task::Runnable;
use crossbeam_deque::Worker;

use super::handle::RuntimeFlavor;
use super::lifecycle::Runtime;
use super::tokio_knobs::Knobs;
use crate::idle::{Idle, SpinPolicy, SysAlarm, SysFutex, MAX_WORKERS, WATCH_PERIOD};
use crate::scheduler::{
    self, within, BlockingPool, Counters, DriverCell, ForeignContext, Identity, Places, Queues,
    Seat, Shared, Slots, Started, ThreadHook,
};
use crate::task::TaskList;
use crate::time::coarse;

/// The window the default (adaptive) spin policy starts from, and a sensible fixed window
/// for [`Builder::spin`].
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

/// The adaptive policy's default bounds: `0..=1 ms`. A millisecond covers gaps up to about
/// 800 us (a window of one core's worth of spinning per request at that rate); longer gaps
/// gain little from spinning, since the wake-up it saves costs tens of microseconds.
const ADAPTIVE_MIN: Duration = Duration::ZERO;
const ADAPTIVE_MAX: Duration = Duration::from_millis(1);

/// The default of [`Builder::long_poll_threshold`].
const LONG_POLL: Duration = Duration::from_millis(10);

/// How idle workers spin: see [`Builder::spin`] and [`Builder::spin_adaptive`].
#[derive(Debug, Clone, Copy)]
enum Spin {
    Fixed(Duration),
    Adaptive { min: Duration, max: Duration },
}

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
    flavor: RuntimeFlavor,
    workers: Option<usize>,
    /// `None`: the flavour's default (adaptive, or off on a current-thread runtime).
    spin: Option<Spin>,
    spin_budget: Option<f64>,
    max_spinners: Option<usize>,
    thread_name: String,
    on_start: Option<ThreadHook>,
    on_stop: Option<ThreadHook>,
    max_blocking: usize,
    blocking_keep_alive: Duration,
    long_poll: Duration,
    /// tokio's identity, hook and tuning settings (`tokio_knobs.rs`).
    pub(super) knobs: Knobs,
    /// The tokio-compat runtime's worker threads, when it is on.
    #[cfg(feature = "tokio-compat")]
    tokio_compat: Option<usize>,
    #[cfg(feature = "test-util")]
    start_paused: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Builder");
        d.field("flavor", &self.flavor)
            .field("worker_threads", &self.workers)
            .field("spin", &self.spin)
            .field("spin_budget", &self.spin_budget)
            .field("max_spinners", &self.max_spinners)
            .field("thread_name", &self.thread_name);
        #[cfg(feature = "tokio-compat")]
        d.field("tokio_compat", &self.tokio_compat);
        #[cfg(feature = "test-util")]
        d.field("start_paused", &self.start_paused);
        d.finish_non_exhaustive()
    }
}

impl Builder {
    /// A builder with the defaults: one worker per available CPU, the adaptive spin policy
    /// (`spin_adaptive(0, 1 ms)`, starting from [`DEFAULT_SPIN`]), at most
    /// `max(1, workers / 2)` spinners, a spin budget of one core.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn new() -> Self {
        Self {
            flavor: RuntimeFlavor::MultiThread,
            workers: None,
            spin: None,
            spin_budget: None,
            max_spinners: None,
            thread_name: "spinpark-worker".into(),
            on_start: None,
            on_stop: None,
            max_blocking: 64,
            blocking_keep_alive: Duration::from_secs(10),
            long_poll: LONG_POLL,
            knobs: Knobs::default(),
            #[cfg(feature = "tokio-compat")]
            tokio_compat: None,
            #[cfg(feature = "test-util")]
            start_paused: false,
        }
    }

    /// The same as [`Builder::new`]: worker threads (tokio's name for it).
    ///
    /// ```
    /// let rt = spinpark::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    /// assert_eq!(rt.handle().worker_threads(), 2);
    /// ```
    pub fn new_multi_thread() -> Self {
        Self::new()
    }

    /// A builder for a current-thread runtime: no worker thread; tasks run on the thread that
    /// calls `block_on`, while it is in there, between polls of its future. It has the same
    /// reactor and timers, and the same blocking pool, as the multi-thread runtime. The thread
    /// does not spin when idle unless [`Builder::spin`] or [`Builder::spin_adaptive`] asks
    /// for it; `worker_threads` and `max_spinners` do not apply. It suits a synchronous
    /// facade over an async client, a test, or a program that wants one thread.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// let caller = std::thread::current().id();
    /// let on = rt.block_on(async { spinpark::spawn(async { std::thread::current().id() }).await });
    /// assert_eq!(on.unwrap(), caller);
    /// ```
    ///
    /// Tasks spawned from other threads (with [`Runtime::spawn`] or a [`Handle`](crate::Handle)) wait for a
    /// thread in `block_on`, as in tokio. Several threads may call `block_on` at once: one runs
    /// the tasks, the others poll only their own futures until it leaves, then one of them
    /// takes over.
    pub fn new_current_thread() -> Self {
        Self {
            flavor: RuntimeFlavor::CurrentThread,
            ..Self::new()
        }
    }

    /// Accepted for tokio's sake, and does nothing: the reactor (I/O and timers) is created
    /// the first time a socket or a timer needs it.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().enable_all().build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn enable_all(self) -> Self {
        self
    }

    /// Accepted for tokio's sake, and does nothing; see [`Builder::enable_all`].
    ///
    /// ```
    /// let rt = spinpark::Builder::new().enable_io().build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn enable_io(self) -> Self {
        self
    }

    /// Accepted for tokio's sake, and does nothing; see [`Builder::enable_all`].
    ///
    /// ```
    /// let rt = spinpark::Builder::new().enable_time().build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn enable_time(self) -> Self {
        self
    }

    /// Starts the runtime with its clock paused (feature `test-util`), as if
    /// `spinpark::time::pause()` were the first thing `block_on` ran; see
    /// `spinpark::time::pause`. Only for a current-thread runtime: [`Builder::build`] fails
    /// with `InvalidInput` otherwise.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new_current_thread().start_paused(true).build().unwrap();
    /// assert!(spinpark_executor::driver::clock(rt.handle()).is_paused());
    /// ```
    #[cfg(feature = "test-util")]
    pub fn start_paused(mut self, paused: bool) -> Self {
        self.start_paused = paused;
        self
    }

    /// The number of worker threads (default: available parallelism, at most 255). Ignored
    /// by a current-thread runtime, as in tokio.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn worker_threads(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// A fixed spin window: how long an idle worker spins looking for work before it parks,
    /// always. `Duration::ZERO` turns spinning off: an idle worker parks at once (parking
    /// scans the queues once more). Replaces the default adaptive policy.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = spinpark::Builder::new().spin(Duration::ZERO).build().unwrap();
    /// assert_eq!(rt.metrics().spin_window(), Duration::ZERO);
    /// ```
    pub fn spin(mut self, window: Duration) -> Self {
        self.spin = Some(Spin::Fixed(window));
        self
    }

    /// The adaptive spin policy (the default, with `0..=1 ms`), with its window kept within
    /// `min..=max`. It learns the idle gaps its workers see: it grows the window towards gaps
    /// that keep landing just past it, shrinks it when spins keep expiring, and, by parking
    /// at once in one idle period of 16 (in runs of 8), checks that spinning makes work start
    /// sooner at all, parking at once while it does not (as with a client on the same
    /// machine). See [`RuntimeMetrics::spin_window`](crate::RuntimeMetrics::spin_window) for what it learned.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = spinpark_executor::Builder::new()
    ///     .spin_adaptive(Duration::from_micros(10), Duration::from_micros(500))
    ///     .build()
    ///     .unwrap();
    /// let w = rt.metrics().spin_window();
    /// assert!(w >= Duration::from_micros(10) && w <= Duration::from_micros(500));
    /// ```
    pub fn spin_adaptive(mut self, min: Duration, max: Duration) -> Self {
        self.spin = Some(Spin::Adaptive { min, max });
        self
    }

    /// The most CPU time spinning may use, in cores, averaged over about a second of wall
    /// time; past it, idle workers park at once. Default one core, and never more than
    /// `max_spinners` or the CPUs this process may use (`std::thread::available_parallelism`,
    /// which follows cgroup quotas: spinning past a container's quota gets the whole
    /// container throttled). Applies to fixed windows too. One core is what covering 300 us
    /// gaps between requests costs; lower it to trade latency for CPU.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new().spin_budget(0.25).build().unwrap();
    /// # drop(rt);
    /// ```
    ///
    /// [`Builder::build`] fails with `InvalidInput` for a negative or NaN budget.
    pub fn spin_budget(mut self, cores: f64) -> Self {
        self.spin_budget = Some(cores);
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

    /// A task poll that runs at least this long (default 10 ms) counts in
    /// [`WorkerMetrics::long_polls`](crate::WorkerMetrics::long_polls), which is how to find
    /// a task that blocks its worker (move the blocking part to [`crate::spawn_blocking`]).
    /// Measured on the kernel's coarse clock, so to within one tick (1-4 ms).
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = spinpark::Builder::new()
    ///     .worker_threads(2)
    ///     .long_poll_threshold(Duration::from_millis(20))
    ///     .build()
    ///     .unwrap();
    /// // A task that blocks its worker for 100 ms (don't: use spawn_blocking).
    /// rt.block_on(rt.spawn(async { std::thread::sleep(Duration::from_millis(100)) })).unwrap();
    /// // Counted once the worker is done with the poll, just after the task's output arrives.
    /// println!("{} long polls", rt.metrics().total().long_polls());
    /// ```
    pub fn long_poll_threshold(mut self, threshold: Duration) -> Self {
        self.long_poll = threshold;
        self
    }

    /// Starts a small background tokio runtime (I/O and time drivers, one worker thread)
    /// and makes its context current on every worker, blocking-pool thread and `block_on`
    /// caller, so that tokio-bound code (`tokio::spawn`, `tokio::time`, `tokio::net`, and
    /// clients built on them) works inside tasks. It shuts down with this runtime. Needs the
    /// `tokio-compat` feature.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new().tokio_compat().build().unwrap();
    /// rt.block_on(async {
    ///     let t = spinpark_executor::spawn(tokio::time::sleep(std::time::Duration::ZERO));
    ///     t.await.unwrap();
    /// });
    /// ```
    ///
    /// The trade-off: sockets and timers created through tokio are driven by the background
    /// runtime's thread, so each of their events costs a thread wake-up and none benefits
    /// from spinning; spinpark's own sockets are unaffected.
    #[cfg(feature = "tokio-compat")]
    pub fn tokio_compat(mut self) -> Self {
        self.tokio_compat = Some(self.tokio_compat.unwrap_or(1));
        self
    }

    /// Turns on [`Builder::tokio_compat`] with `n` tokio worker threads (at least 1).
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new().tokio_compat_threads(2).build().unwrap();
    /// assert_eq!(rt.block_on(async { tokio::spawn(async { 1 }).await.unwrap() }), 1);
    /// ```
    #[cfg(feature = "tokio-compat")]
    pub fn tokio_compat_threads(mut self, n: usize) -> Self {
        self.tokio_compat = Some(n.max(1));
        self
    }

    /// Starts the worker threads, and returns once each has run its `on_thread_start` hook.
    /// A current-thread runtime starts no thread (and runs no thread hook: its worker is the
    /// `block_on` caller).
    ///
    /// # Errors
    /// `InvalidInput` for zero or more than 255 workers, `max_blocking_threads(0)`, a thread
    /// name with a NUL byte, or
    /// `start_paused` on a multi-thread runtime; the OS error if a thread cannot be started;
    /// an error naming the hook if `on_thread_start` panicked on a worker. The workers already
    /// started are then shut down before this returns.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    /// assert_eq!(rt.block_on(async { 7 }), 7);
    /// ```
    pub fn build(self) -> io::Result<Runtime> {
        let plan = self.plan()?;
        let policy = self.spin_policy(&plan)?;
        let context = self.foreign_context()?;
        let (shared, queues) = self.shared_state(&plan, policy, context)?;
        let mut rt = Runtime::unstarted(shared, plan.workers);
        if plan.current {
            // No thread to start: the worker is whoever calls `block_on`.
            return Ok(rt);
        }
        // On error `rt` drops on return and stops the workers already started.
        self.start_workers(&mut rt, queues)?;
        self.start_watchdog(&mut rt, &plan)?;
        Ok(rt)
    }

    /// The flavour this builder builds.
    pub(crate) fn flavor(&self) -> RuntimeFlavor {
        self.flavor
    }

    /// Checks the settings and works out the flavour and the numbers of workers and spinners.
    fn plan(&self) -> io::Result<Plan> {
        let current = self.flavor == RuntimeFlavor::CurrentThread;
        // A current-thread runtime is one worker, driven by the `block_on` caller.
        let workers = match current {
            true => 1,
            false => self.workers.unwrap_or_else(|| {
                thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
                    .min(MAX_WORKERS)
            }),
        };
        #[cfg(feature = "test-util")]
        if self.start_paused && !current {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "spinpark: start_paused needs a current-thread runtime \
                 (Builder::new_current_thread()): time cannot be paused on the multi-thread one",
            ));
        }
        if workers == 0 || workers > MAX_WORKERS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("spinpark: worker_threads must be 1..={MAX_WORKERS}, got {workers}"),
            ));
        }
        self.knobs.check()?;
        if self.max_blocking == 0 {
            // tokio panics there; no blocking pool could run `spawn_blocking` at all.
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "spinpark: max_blocking_threads must be at least 1, got 0",
            ));
        }
        if self.thread_name.contains('\0') {
            // std would panic when naming the thread.
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "spinpark: thread_name must not contain a NUL byte, got {:?}",
                    self.thread_name
                ),
            ));
        }
        let max_spinners = self
            .max_spinners
            .unwrap_or((workers / 2).max(1))
            .clamp(1, workers);
        Ok(Plan {
            current,
            workers,
            max_spinners,
        })
    }

    /// The idle workers' spin policy: its window (fixed, or adaptive from the flavour's
    /// default) and its CPU budget, checked and bounded by the spinners and the CPUs.
    fn spin_policy(&self, plan: &Plan) -> io::Result<SpinPolicy> {
        let cpus = thread::available_parallelism().map_or(1, |n| n.get());
        let budget = match self.spin_budget {
            Some(b) if b.is_nan() || b < 0.0 => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("spinpark: spin_budget must be a number of cores >= 0, got {b}"),
                ))
            }
            Some(b) => b,
            None => 1.0,
        }
        .min(plan.max_spinners as f64)
        .min(cpus as f64);
        // A lone thread that spins only delays its own park: off unless asked for.
        let spin = self.spin.unwrap_or(match plan.current {
            true => Spin::Fixed(Duration::ZERO),
            false => Spin::Adaptive {
                min: ADAPTIVE_MIN,
                max: ADAPTIVE_MAX,
            },
        });
        Ok(match spin {
            Spin::Fixed(w) => SpinPolicy::fixed(w, budget),
            Spin::Adaptive { min, max } => SpinPolicy::adaptive(min, max, DEFAULT_SPIN, budget),
        })
    }

    /// Starts what every thread of the runtime runs inside: the tokio-compat runtime, when
    /// asked for (`tokio_compat.rs`); none otherwise.
    fn foreign_context(&self) -> io::Result<Option<Arc<dyn ForeignContext>>> {
        #[cfg(feature = "tokio-compat")]
        if let Some(n) = self.tokio_compat {
            let compat = super::tokio_compat::TokioCompat::start(n)?;
            return Ok(Some(Arc::new(compat)));
        }
        Ok(None)
    }

    /// The state the runtime's threads share, and the worker queues for worker threads to
    /// own: none on a current-thread runtime, whose one queue waits in its seat for a
    /// `block_on` caller.
    fn shared_state(
        &self,
        plan: &Plan,
        policy: SpinPolicy,
        context: Option<Arc<dyn ForeignContext>>,
    ) -> io::Result<(Arc<Shared>, Vec<Worker<Runnable>>)> {
        let workers = plan.workers;
        let mut queues: Vec<Worker<_>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let stealers = queues.iter().map(Worker::stealer).collect();
        let seat = match plan.current {
            true => queues.pop().map(Seat::new),
            false => None,
        };
        let nanos = |d: Duration| d.as_nanos().min(u64::MAX as u128) as u64;
        let shared = Arc::new(Shared {
            queues: Queues::new(stealers),
            slots: Slots::new(
                workers,
                // Two ticks of the coarse clock, so that a poll that has just started is never
                // taken for a stuck one, and at least the watch's period.
                nanos(WATCH_PERIOD.max(coarse::resolution() * 2)),
                nanos(self.long_poll).max(1),
                // Half a period: the watch's own threshold for pushing its alarm.
                nanos(WATCH_PERIOD / 2),
            ),
            idle: Idle::new(
                SysFutex,
                SysAlarm::new()?,
                WATCH_PERIOD,
                workers,
                plan.max_spinners,
            ),
            policy,
            driver: DriverCell::new(),
            counters: Counters::new(workers),
            tasks: Arc::new(TaskList::new()),
            blocking: BlockingPool::new(
                self.max_blocking,
                workers,
                self.blocking_keep_alive,
                format!("{}-blocking", self.thread_name),
            ),
            context,
            places: Places::new(workers),
            seat,
            identity: Identity::new(
                self.knobs.name.clone(),
                self.knobs.local,
                self.knobs.on_park.clone(),
                self.knobs.on_unpark.clone(),
            ),
            #[cfg(feature = "test-util")]
            clock: crate::time::Clock::new(plan.current, self.start_paused),
        });
        Ok((shared, queues))
    }

    /// Starts one worker thread per queue, and returns once each has run its
    /// `on_thread_start` hook.
    fn start_workers(&self, rt: &mut Runtime, queues: Vec<Worker<Runnable>>) -> io::Result<()> {
        let workers = queues.len();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        for (index, queue) in queues.into_iter().enumerate() {
            let shared = rt.handle.shared().clone();
            let (on_start, on_stop) = (self.on_start.clone(), self.on_stop.clone());
            let started = started_tx.clone();
            let t = thread::Builder::new()
                .name(format!("{}-{index}", self.thread_name))
                .spawn(move || {
                    let context = shared.context.clone();
                    within(context.as_ref(), || {
                        scheduler::run_worker(shared, index, queue, on_start, on_stop, started)
                    })
                })?; // the OS error as is (EAGAIN when out of threads), as std's
            rt.threads.push(t);
        }
        drop(started_tx);
        wait_started(&started_rx, workers)
    }

    /// Starts the watchdog thread (`watchdog.rs`); with one worker there is nobody to wake
    /// for another, and no watchdog.
    fn start_watchdog(&self, rt: &mut Runtime, plan: &Plan) -> io::Result<()> {
        if plan.workers > 1 {
            let name = format!("{}-watchdog", self.thread_name);
            let shared = rt.handle.shared().clone();
            rt.watchdog = Some(scheduler::start_watchdog(shared, name)?);
        }
        Ok(())
    }
}

/// What [`Builder::build`] settled on before starting anything.
struct Plan {
    /// A current-thread runtime (no worker thread).
    current: bool,
    workers: usize,
    max_spinners: usize,
}

/// Waits until each of `workers` started workers has reported on `started`: fails if one
/// could not start.
fn wait_started(started: &mpsc::Receiver<Started>, workers: usize) -> io::Result<()> {
    // A worker that cannot start would still count in the idle protocol, where nobody
    // would ever do its share (such as driving the reactor): fail instead. Each worker
    // reports once and drops its sender, so this ends even if one dies without a word.
    for _ in 0..workers {
        match started.recv() {
            Ok(Ok(())) => {}
            Ok(Err(msg)) => {
                return Err(io::Error::other(format!(
                    "spinpark: a worker could not start: its on_thread_start hook \
                     panicked: {msg}"
                )))
            }
            Err(_) => {
                return Err(io::Error::other(
                    "spinpark: a worker thread exited before it started",
                ))
            }
        }
    }
    Ok(())
}
