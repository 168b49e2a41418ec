//! Counters that explain where a runtime's time and wake-ups went.
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! rt.block_on(async { spinpark_executor::spawn(async {}).await.unwrap() });
//! let m = rt.metrics();
//! assert_eq!(m.tasks_spawned(), 1);
//! assert_eq!(m.workers().len(), rt.handle().worker_threads());
//! assert!(m.total().polls() >= 1);
//! ```
//!
//! Every counter is a relaxed atomic increment on a cache line owned by one worker (or on a
//! runtime-wide line for events that have no worker), so keeping them costs next to nothing.
//! A snapshot is read with [`crate::Runtime::metrics`] or [`crate::Handle::metrics`]. The
//! per-worker counters are listed once, in the `worker_counters!` invocation below, which
//! generates the atomic counters, their snapshot type, its accessors and the sum.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use crate::idle::{Decided, SpinPolicy};

/// Defines, from one list of names, [`WorkerCounters`] (the atomics a worker bumps),
/// [`WorkerMetrics`] (their snapshot, with one accessor per counter), the snapshot and the sum.
macro_rules! worker_counters {
    ($( $(#[doc = $doc:literal])* $name:ident, )*) => {
        /// One worker's counters, padded to its own cache lines so workers do not share them.
        #[derive(Debug, Default)]
        #[repr(align(128))]
        pub(crate) struct WorkerCounters {
            $( pub(crate) $name: AtomicU64, )*
        }

        /// A point-in-time copy of one worker's counters. Each counter only grows.
        ///
        /// ```
        /// let rt = spinpark_executor::Runtime::new().unwrap();
        /// rt.block_on(async { spinpark_executor::spawn(async {}).await.unwrap() });
        /// let total = rt.metrics().total();
        /// assert!(total.polls() >= 1);
        /// ```
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct WorkerMetrics {
            $( $name: u64, )*
        }

        impl WorkerMetrics {
            $(
                $(#[doc = $doc])*
                pub fn $name(&self) -> u64 {
                    self.$name
                }
            )*

            fn plus(self, other: &WorkerMetrics) -> WorkerMetrics {
                WorkerMetrics { $( $name: self.$name + other.$name, )* }
            }
        }

        impl WorkerCounters {
            pub(crate) fn snapshot(&self) -> WorkerMetrics {
                WorkerMetrics { $( $name: self.$name.load(Relaxed), )* }
            }
        }
    };
}

worker_counters! {
    /// Tasks polled by this worker.
    polls,
    /// Times this worker took tasks from another worker's queue.
    steals,
    /// Spin windows that ended because work turned up (no context switch needed).
    spins_found_work,
    /// Spin windows that ran out, after which the worker parked.
    spins_expired,
    /// Idle periods in which the spin policy chose to park at once: a probe of whether
    /// spinning pays, a period while it does not, a spent CPU budget, or a zero window.
    parked_by_choice,
    /// Time spent spinning, in nanoseconds (wall time of the spin windows, which is CPU time
    /// unless the spinner was preempted).
    spin_nanos,
    /// Times this worker blocked: on the futex, or in the reactor as the last awake worker
    /// (its last park, which shutdown ends, included).
    parks,
    /// Times this worker went to park plus times it came back (tokio's park/unpark count):
    /// odd while it is parked. Counts every attempt, including one that found work on its
    /// last look and did not block, so it grows faster than twice [`Self::parks`].
    park_unparks,
    /// Time this worker spent busy, in nanoseconds: from finding work (a task, or a
    /// current-thread runtime's `block_on` future) until it next went idle, so running tasks
    /// and what it does between them (reactor turns, steals), not spinning or parking.
    /// Measured from clock readings the worker takes anyway (when it goes idle, when it finds
    /// work, at its periodic reactor polls); added when a period ends (and at those polls
    /// during a long one).
    busy_nanos,
    /// Wake-ups this worker issued: `FUTEX_WAKE` syscalls, or requests to unpark the
    /// reactor (which the reactor may coalesce into fewer syscalls).
    wakes,
    /// Non-blocking polls of the reactor made by this worker.
    driver_polls,
    /// Task polls on this worker that ran at least `Builder::long_poll_threshold` (10 ms by
    /// default, measured on the kernel's coarse clock, so to within one tick, 1-4 ms). A task
    /// that blocks (a CPU loop, a blocking call) holds its worker that long: move such work
    /// to `spawn_blocking`. Other workers keep serving meanwhile (the watchdog makes sure
    /// somebody attends the reactor), but the task itself and anything it wakes wait.
    long_polls,
}

/// Runtime-wide counters.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct GlobalCounters {
    pub(crate) spawned: AtomicU64,
    pub(crate) remote_schedules: AtomicU64,
    /// Wake-ups issued by threads that are not workers.
    pub(crate) remote_wakes: AtomicU64,
    /// Workers the watchdog woke (see `watchdog.rs`).
    pub(crate) watchdog_wakes: AtomicU64,
}

impl GlobalCounters {
    /// A snapshot of these counters, of the workers' `workers`, and of the spin `policy`.
    pub(crate) fn snapshot(
        &self,
        workers: &[WorkerCounters],
        policy: &SpinPolicy,
    ) -> RuntimeMetrics {
        let now = policy.now();
        RuntimeMetrics {
            live: LiveRef(None),
            tasks_spawned: self.spawned.load(Relaxed),
            remote_schedules: self.remote_schedules.load(Relaxed),
            remote_wakes: self.remote_wakes.load(Relaxed),
            watchdog_wakes: self.watchdog_wakes.load(Relaxed),
            workers: workers.iter().map(WorkerCounters::snapshot).collect(),
            spin_window: policy.window(),
            spin_recent: policy.recent_spin(now),
            spin_parking: policy.parking(),
            spin_probes: policy.probes(),
            spin_probe_period: policy.probe_period(),
            spin_since_flip: policy.since_flip(now),
            spin_cpus_shared: policy.cpus_shared(),
            spin_lost_cores: policy.lost_cores(),
            spin_contended: policy.contended(now),
            spin_decided: policy.decided(),
        }
    }
}

pub(crate) fn bump(c: &AtomicU64) {
    add(c, 1);
}

pub(crate) fn add(c: &AtomicU64, n: u64) {
    // Relaxed: a statistic; nothing is ordered by it.
    c.fetch_add(n, Relaxed);
}

/// A point-in-time copy of a runtime's counters. Each counter only grows.
///
/// ```
/// let rt = spinpark_executor::Runtime::new().unwrap();
/// let m = rt.metrics();
/// assert_eq!(m.tasks_spawned(), 0);
/// assert_eq!(m.total().polls(), 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeMetrics {
    /// The runtime, for the figures tokio reads live.
    live: LiveRef,
    tasks_spawned: u64,
    remote_schedules: u64,
    remote_wakes: u64,
    watchdog_wakes: u64,
    workers: Vec<WorkerMetrics>,
    spin_window: Duration,
    spin_recent: Duration,
    spin_parking: bool,
    spin_probes: u64,
    spin_probe_period: u32,
    spin_since_flip: Duration,
    spin_cpus_shared: bool,
    spin_lost_cores: u64,
    spin_contended: bool,
    spin_decided: Decided,
}

impl RuntimeMetrics {
    /// The number of workers (1 on a current-thread runtime), as tokio's `num_workers`.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    /// assert_eq!(rt.metrics().num_workers(), 2);
    /// ```
    pub fn num_workers(&self) -> usize {
        self.workers.len()
    }

    /// Tasks waiting in the runtime's shared queue (the injector), read when called (not
    /// from the snapshot), as tokio's `global_queue_depth`.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// rt.spawn(async {}); // from outside: it waits in the shared queue
    /// assert_eq!(rt.metrics().global_queue_depth(), 1);
    /// ```
    pub fn global_queue_depth(&self) -> usize {
        match &self.live.0 {
            Some(live) => live.global_queue_depth(),
            None => 0, // metrics not taken from a runtime (`Default`)
        }
    }

    /// How many times worker `worker` blocked, read when called (tokio's
    /// `worker_park_count`); see [`WorkerMetrics::parks`].
    ///
    /// # Panics
    /// If `worker` is not below [`RuntimeMetrics::num_workers`].
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    /// let _ = rt.metrics().worker_park_count(0);
    /// ```
    pub fn worker_park_count(&self, worker: usize) -> u64 {
        match &self.live.0 {
            Some(live) => live.worker_parks(worker),
            None => self.workers[worker].parks,
        }
    }

    /// The number of tasks alive in the runtime now: spawned (with `spawn`, not
    /// `spawn_blocking`) and not finished yet, whether they wait or are queued, as tokio's
    /// `num_alive_tasks`. A task leaves the count when its future is dropped (it completed,
    /// panicked or was aborted), before its `JoinHandle` hears of it. Read when called.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// let metrics = rt.metrics();
    /// assert_eq!(metrics.num_alive_tasks(), 0);
    /// let task = rt.spawn(async {});
    /// assert_eq!(metrics.num_alive_tasks(), 1);
    /// rt.block_on(task).unwrap();
    /// assert_eq!(metrics.num_alive_tasks(), 0);
    /// ```
    pub fn num_alive_tasks(&self) -> usize {
        match &self.live.0 {
            Some(live) => live.alive_tasks(),
            None => 0,
        }
    }

    /// How many times worker `worker` went to park plus how many times it came back, read
    /// when called, as tokio's `worker_park_unpark_count`: odd while the worker is parked,
    /// even while it works. See [`WorkerMetrics::park_unparks`].
    ///
    /// # Panics
    /// If `worker` is not below [`RuntimeMetrics::num_workers`].
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// rt.block_on(async {
    ///     // This thread drives the runtime: its worker is not parked now.
    ///     assert_eq!(spinpark::Handle::current().metrics().worker_park_unpark_count(0) % 2, 0);
    /// });
    /// ```
    pub fn worker_park_unpark_count(&self, worker: usize) -> u64 {
        match &self.live.0 {
            Some(live) => live.worker_park_unparks(worker),
            None => self.workers[worker].park_unparks,
        }
    }

    /// The time worker `worker` spent busy (running tasks and what it does between them,
    /// not spinning or parked), read when called, as tokio's `worker_total_busy_duration`.
    /// See [`WorkerMetrics::busy_nanos`].
    ///
    /// # Panics
    /// If `worker` is not below [`RuntimeMetrics::num_workers`].
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// rt.block_on(async { std::thread::sleep(std::time::Duration::from_millis(20)) });
    /// assert!(rt.metrics().worker_total_busy_duration(0) >= std::time::Duration::from_millis(10));
    /// ```
    pub fn worker_total_busy_duration(&self, worker: usize) -> Duration {
        Duration::from_nanos(match &self.live.0 {
            Some(live) => live.worker_busy_nanos(worker),
            None => self.workers[worker].busy_nanos,
        })
    }

    /// These metrics, with `global_queue_depth` and `worker_park_count` read from `live`
    /// when called (as tokio's are) rather than from the snapshot.
    pub(crate) fn with_live(mut self, live: Arc<dyn Live>) -> Self {
        self.live = LiveRef(Some(live));
        self
    }

    /// Tasks spawned (including `spawn_blocking`).
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.block_on(async { spinpark::spawn(async {}).await.unwrap() });
    /// assert!(rt.metrics().tasks_spawned() >= 1);
    /// ```
    pub fn tasks_spawned(&self) -> u64 {
        self.tasks_spawned
    }

    /// Tasks scheduled from outside the runtime's workers (through the global queue).
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// rt.block_on(rt.spawn(async {})).unwrap(); // spawned from outside the workers
    /// assert!(rt.metrics().remote_schedules() >= 1);
    /// ```
    pub fn remote_schedules(&self) -> u64 {
        self.remote_schedules
    }

    /// Wake-ups issued by threads that are not workers (spawns and wakes from outside).
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let m = rt.metrics();
    /// println!("{} wake-ups from outside the workers", m.remote_wakes());
    /// ```
    pub fn remote_wakes(&self) -> u64 {
        self.remote_wakes
    }

    /// Parked workers the watchdog woke because every awake worker was stuck in a long poll:
    /// to drive the reactor in their place (events and timers would otherwise wait for the
    /// poll to end), or to take work queued behind the stuck worker. Zero in a runtime whose
    /// tasks never block; see `WorkerMetrics::long_polls` to find the ones that do.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    /// rt.block_on(async {});
    /// assert_eq!(rt.metrics().watchdog_wakes(), 0);
    /// ```
    pub fn watchdog_wakes(&self) -> u64 {
        self.watchdog_wakes
    }

    /// Per worker, in worker index order.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    /// assert_eq!(rt.metrics().workers().len(), 2);
    /// ```
    pub fn workers(&self) -> &[WorkerMetrics] {
        &self.workers
    }

    /// The sum of all workers' counters.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let total = rt.metrics().total();
    /// println!("{total:?}");
    /// ```
    pub fn total(&self) -> WorkerMetrics {
        self.workers
            .iter()
            .fold(WorkerMetrics::default(), |a, w| a.plus(w))
    }

    /// The spin window now: the fixed one set with `Builder::spin`, or the one the adaptive
    /// policy has learned (see `Builder::spin_adaptive`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = spinpark_executor::Builder::new().spin(Duration::from_micros(80)).build().unwrap();
    /// assert_eq!(rt.metrics().spin_window(), Duration::from_micros(80));
    /// ```
    pub fn spin_window(&self) -> Duration {
        self.spin_window
    }

    /// Time spent spinning by all workers over about the last second: divided by a second,
    /// the cores spinning used, which `Builder::spin_budget` bounds. (The total since the
    /// start is `total().spin_nanos()`.)
    pub fn spin_time_recent(&self) -> Duration {
        self.spin_recent
    }

    /// Whether the adaptive policy now parks idle workers at once because its probes found
    /// that spinning makes work start later, not sooner (as with a client that shares the
    /// machine); it still probes spinning now and then. Always `false` for a fixed window.
    pub fn spin_parking(&self) -> bool {
        self.spin_parking
    }

    /// How often the adaptive policy's sequential test flipped its mode to parking so far.
    /// With [`Self::spin_flips_to_spin`], [`Self::spin_window_drops`],
    /// [`Self::spin_budget_parks`] and [`Self::spin_lost_cores`], it says which part of the policy decided each change of behaviour: read them before
    /// and after a window of a long run. 0 for a fixed window.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let m = rt.metrics();
    /// // Every flip alternates the mode, which starts spinning.
    /// assert_eq!(m.spin_parking(), m.spin_flips_to_park() > m.spin_flips_to_spin());
    /// ```
    pub fn spin_flips_to_park(&self) -> u64 {
        self.spin_decided.flips_to_park
    }

    /// How often the adaptive policy's sequential test flipped its mode back to spinning so
    /// far (see [`Self::spin_flips_to_park`]).
    ///
    /// ```
    /// let m = spinpark::Runtime::new().unwrap().metrics();
    /// assert!(m.spin_flips_to_spin() <= m.spin_flips_to_park());
    /// ```
    pub fn spin_flips_to_spin(&self) -> u64 {
        self.spin_decided.flips_to_spin
    }

    /// How often a block of the adaptive policy's spinning periods did not pay for itself
    /// (caught too little work for the CPU it took), which dropped the spin window to its
    /// minimum and held its growth for a while. 0 for a fixed window.
    ///
    /// ```
    /// let m = spinpark::Runtime::new().unwrap().metrics();
    /// assert_eq!(m.spin_window_drops(), 0);
    /// ```
    pub fn spin_window_drops(&self) -> u64 {
        self.spin_decided.window_drops
    }

    /// Idle periods that parked at once because spinning had spent the CPU budget
    /// (`Builder::spin_budget`) over the last second.
    ///
    /// ```
    /// let m = spinpark::Runtime::new().unwrap().metrics();
    /// assert_eq!(m.spin_budget_parks(), 0);
    /// ```
    pub fn spin_budget_parks(&self) -> u64 {
        self.spin_decided.budget_parks
    }

    /// Idle periods in which the adaptive policy probed: did the opposite of its mode (parked
    /// at once while spinning pays, or spun while parking does) to check that the mode still
    /// holds. Always 0 for a fixed window.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let m = rt.metrics();
    /// assert!(m.spin_probes() <= m.total().parked_by_choice() + m.total().spins_found_work()
    ///     + m.total().spins_expired());
    /// ```
    pub fn spin_probes(&self) -> u64 {
        self.spin_probes
    }

    /// How often the adaptive policy probes now: one run of probes (2 idle periods) per this
    /// many idle periods. It starts at 8, doubles each time its probes confirm the mode, up to
    /// 1024, and drops back to 8 when the evidence turns or the load changes. 0 for a fixed
    /// window.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = spinpark::Builder::new().spin(Duration::from_micros(50)).build().unwrap();
    /// assert_eq!(rt.metrics().spin_probe_period(), 0);
    /// let rt = spinpark::Runtime::new().unwrap(); // adaptive
    /// assert!((8..=1024).contains(&rt.metrics().spin_probe_period()));
    /// ```
    pub fn spin_probe_period(&self) -> u32 {
        self.spin_probe_period
    }

    /// How long the adaptive policy's mode (spinning, or parking: [`Self::spin_parking`]) has
    /// held: the time since it last flipped, or since the runtime started.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let m = rt.metrics();
    /// if !m.spin_parking() {
    ///     println!("spinning has paid for {:?}", m.spin_since_flip());
    /// }
    /// ```
    pub fn spin_since_flip(&self) -> Duration {
        self.spin_since_flip
    }

    /// Whether the adaptive policy counts this runtime's CPUs as shared with its clients:
    /// every accepted TCP connection's client runs on these CPUs (a client on the same
    /// machine: the reactor says so). The policy then probes at once, with longer park probes,
    /// and charges spinning for the CPU it takes from the clients. Always `false` for a fixed
    /// window.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// println!("CPUs shared: {}", rt.metrics().spin_cpus_shared());
    /// ```
    pub fn spin_cpus_shared(&self) -> bool {
        self.spin_cpus_shared
    }

    /// How many spin windows lost their core to a neighbour that takes a large share of the
    /// CPU: one iteration of the spin loop took over 50 µs, the thread was switched out
    /// meanwhile (its `sched_yield` gave the core away, or it was preempted), and other
    /// threads have lately taken a quarter or more of the spinners' time. Each such loss makes
    /// every worker park at once for a while, twice as long as the last time if the last hold
    /// just ended (4 ms at first, at most about a second), so that no request waits for a
    /// spinner that is off its CPU. Shorter or rarer losses (an interrupt, a kernel thread,
    /// a light sidecar) are not counted: the spinner keeps spinning through them.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// println!("spin windows that lost their core: {}", rt.metrics().spin_lost_cores());
    /// ```
    pub fn spin_lost_cores(&self) -> u64 {
        self.spin_lost_cores
    }

    /// Whether a spin window's lost core holds parking now (see
    /// [`RuntimeMetrics::spin_lost_cores`]): workers park at once, and a worker that parks
    /// while another is awake drives the reactor if nobody does.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// println!("parking held by a lost core: {}", rt.metrics().spin_contended());
    /// ```
    pub fn spin_contended(&self) -> bool {
        self.spin_contended
    }

    /// Every wake-up issued, by workers, by other threads and by the watchdog: `FUTEX_WAKE`
    /// syscalls plus requests to unpark the reactor. The reactor coalesces concurrent unpark requests into
    /// one eventfd write, so this is an upper bound on the wake syscalls actually made.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// println!("{} wake syscalls so far", rt.metrics().wakes());
    /// ```
    pub fn wakes(&self) -> u64 {
        self.remote_wakes + self.watchdog_wakes + self.total().wakes
    }
}

/// A runtime's counters: one set per worker, each on cache lines of its own, and the
/// runtime-wide ones.
pub(crate) struct Counters {
    workers: Box<[WorkerCounters]>,
    global: GlobalCounters,
}

impl Counters {
    /// How many times worker `worker` blocked so far.
    pub(crate) fn parks(&self, worker: usize) -> u64 {
        self.workers[worker].parks.load(Relaxed)
    }

    /// Worker `worker`'s park/unpark count so far.
    pub(crate) fn park_unparks(&self, worker: usize) -> u64 {
        self.workers[worker].park_unparks.load(Relaxed)
    }

    /// Worker `worker`'s busy time so far, in nanoseconds.
    pub(crate) fn busy_nanos(&self, worker: usize) -> u64 {
        self.workers[worker].busy_nanos.load(Relaxed)
    }

    /// Zeroed counters for `workers` workers.
    pub(crate) fn new(workers: usize) -> Counters {
        Counters {
            workers: (0..workers).map(|_| WorkerCounters::default()).collect(),
            global: GlobalCounters::default(),
        }
    }

    /// Worker `i`'s counters.
    pub(crate) fn worker(&self, i: usize) -> &WorkerCounters {
        &self.workers[i]
    }

    /// The runtime-wide counters.
    pub(crate) fn global(&self) -> &GlobalCounters {
        &self.global
    }

    /// A snapshot of every counter, and of the spin `policy`.
    pub(crate) fn snapshot(&self, policy: &SpinPolicy) -> RuntimeMetrics {
        self.global.snapshot(&self.workers, policy)
    }
}

/// The figures that `RuntimeMetrics` reads live from its runtime (the scheduler's shared
/// state implements it), as tokio's metrics do.
pub(crate) trait Live: Send + Sync {
    /// Tasks in the injector now.
    fn global_queue_depth(&self) -> usize;
    /// Worker `worker`'s park count now.
    fn worker_parks(&self, worker: usize) -> u64;
    /// Worker `worker`'s park/unpark count now.
    fn worker_park_unparks(&self, worker: usize) -> u64;
    /// Worker `worker`'s busy time now, in nanoseconds.
    fn worker_busy_nanos(&self, worker: usize) -> u64;
    /// Tasks spawned and not finished now.
    fn alive_tasks(&self) -> usize;
}

/// The live source of a `RuntimeMetrics`, if any: not part of its value (equality, `Debug`).
#[derive(Clone, Default)]
struct LiveRef(Option<Arc<dyn Live>>);

impl PartialEq for LiveRef {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LiveRef {}

impl fmt::Debug for LiveRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "live" } else { "snapshot" })
    }
}
