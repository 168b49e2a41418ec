//! spinpark's executor: a work-stealing runtime whose idle workers spin briefly, then park on
//! a futex.
//!
//! Most users want the `spinpark` crate, which re-exports this one together with the reactor
//! (`spinpark::net`, `spinpark::time`) and the `#[spinpark::main]` macro.
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! let out = rt.block_on(async {
//!     let a = spinpark_executor::spawn(async { 1 });
//!     let b = spinpark_executor::spawn_blocking(|| 2);
//!     a.await.unwrap() + b.await.unwrap()
//! });
//! assert_eq!(out, 3);
//! ```
//!
//! # How it works
//!
//! * Tasks are [`async_task`] runnables. Each worker owns a `crossbeam-deque` FIFO queue and a
//!   LIFO slot; a global injector takes tasks from other threads; idle workers steal
//!   (`worker.rs`, `scheduler.rs`).
//! * An idle worker spins for a bounded window, then parks on one shared futex word; a
//!   producer makes a wake syscall only when nobody spins and somebody sleeps, and wakes one.
//!   The whole protocol, with the argument that no wake-up is lost, is in `idle/`.
//! * An I/O reactor plugs in through [`driver::Driver`]: spinning workers poll it, the last
//!   worker to park blocks in it. A watchdog thread makes sure a parked worker takes over
//!   the reactor when the awake ones are stuck in long polls (`idle/watch.rs`,
//!   `watchdog.rs`), and a task queued behind a stuck worker is taken by another one
//!   (`lifo.rs`).
//! * A current-thread runtime ([`Builder::new_current_thread`]) is the same scheduler with one
//!   worker slot and no thread: the thread in `block_on` takes the slot and runs the worker
//!   loop, its own future being one more source of work (`current_thread.rs`).
//! * With the `test-util` feature each runtime has a clock that tests may pause, which the
//!   reactor's timers follow (`test_clock.rs`, `driver::clock`).
//! * A task that blocks its worker (a CPU loop, a blocking call) is counted in
//!   [`WorkerMetrics::long_polls`]; move such work to [`spawn_blocking`].
//! * [`Runtime::metrics`] counts polls, steals, spins, parks and wake syscalls, so you can see
//!   why a request did or did not cost a context switch.

#![warn(missing_docs)]

// spinpark is Linux-only. This crate is the first one built (spinpark-net and the facade
// depend on it), and its only OS-specific code, the futex, is left out elsewhere, so a build
// on another OS stops at this one error instead of a wall of missing libc symbols.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "spinpark runs on Linux only: its idle workers park on a futex(2) and its reactor is an \
     epoll(7) set woken by an eventfd(2), which this target does not have"
);

mod alarm;
mod futex;
mod idle;
mod sync;

#[cfg(loom)]
#[doc(hidden)]
pub mod loom_model;

/// Everything but the idle protocol is left out of `--cfg loom` builds, which model-check only
/// `idle/` (crossbeam's queues and real threads are not loom-aware).
macro_rules! not_loom {
    ($($item:item)*) => { $( #[cfg(not(loom))] $item )* };
}

not_loom! {
mod abort;
mod block_on;
mod blocking;
mod clock;
mod context;
pub mod coop;
mod current_thread;
pub mod driver;
mod enter;
mod handle;
mod io_driver;
mod join;
mod join_set;
mod lifo;
mod metrics;
mod panics;
mod queues;
mod builder;
mod runtime;
mod scheduler;
mod shared;
mod tasks;
#[cfg(feature = "test-util")]
mod test_clock;
mod thread_context;
#[cfg(feature = "tokio-compat")]
mod tokio_compat;
mod watchdog;
mod worker;
mod yield_now;

pub use abort::AbortHandle;
pub use driver::Driver;
pub use enter::EnterGuard;
pub use handle::{Handle, RuntimeFlavor, TryCurrentError};
pub use join::{JoinError, JoinHandle};
pub use join_set::JoinSet;
pub use metrics::{RuntimeMetrics, WorkerMetrics};
pub use builder::{Builder, DEFAULT_SPIN};
pub use runtime::Runtime;
pub use yield_now::{yield_now, YieldNow};

use std::future::Future;

/// Spawns a task on the current runtime and returns a handle to await its output.
///
/// On a worker the task goes into that worker's LIFO slot and runs next on the same worker (a
/// task that spawns another often awaits it); a task already in the slot moves to the worker's
/// queue, where idle workers can steal it. Other workers take a task from the LIFO slot only
/// if the spawning task then holds its worker for long (a blocking call). Elsewhere (inside
/// `block_on`, on a blocking thread) the task goes to the runtime's global queue.
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// let task = spinpark_executor::spawn(async { 2 + 2 });
/// assert_eq!(task.await.unwrap(), 4);
/// # });
/// ```
///
/// # Panics
/// Outside a spinpark runtime, with a message that says so.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match Handle::try_current() {
        Ok(h) => h.spawn(future),
        Err(_) => panic!(
            "spinpark::spawn called outside a spinpark runtime: call it from a task, from \
             Runtime::block_on, or from #[spinpark::main], or use Handle::spawn"
        ),
    }
}

/// The index of the worker the current thread is, from 0 to the runtime's number of workers,
/// or `None` on a thread that is not a worker (a `spawn_blocking` thread, a thread that only
/// waits in `block_on`). On a current-thread runtime the thread driving it in `block_on` is
/// worker 0. A task may move between workers between polls, so this is a hint (for sharding
/// per-worker state), not an identity.
///
/// ```
/// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
/// let index = rt.block_on(async { spinpark::spawn(async { spinpark::runtime::worker_index() }).await });
/// assert!(matches!(index.unwrap(), Some(0 | 1)));
/// assert_eq!(spinpark::runtime::worker_index(), None); // not a worker
/// ```
pub fn worker_index() -> Option<usize> {
    context::with_worker(|w| w.map(|w| w.index))
}

/// Runs `f` on the runtime's blocking pool, a separate set of threads that may block (file
/// I/O, CPU-heavy work, a blocking library) without holding up the workers.
///
/// # Panics
/// Outside a spinpark runtime.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let hash = spinpark::spawn_blocking(|| (0..1000u64).sum::<u64>()).await.unwrap();
/// assert_eq!(hash, 499_500);
/// # });
/// ```
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    match Handle::try_current() {
        Ok(h) => h.spawn_blocking(f),
        Err(_) => panic!("spinpark::spawn_blocking called outside a spinpark runtime"),
    }
}
}
