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
//!   (`scheduler/`).
//! * An idle worker spins for a bounded window, then parks on one shared futex word; a
//!   producer makes a wake syscall only when nobody spins and somebody sleeps, and wakes one.
//!   The whole protocol, with the argument that no wake-up is lost, is in `idle/`.
//! * An I/O reactor plugs in through [`driver::Driver`]: spinning workers poll it, the last
//!   worker to park blocks in it. A watchdog thread makes sure a parked worker takes over
//!   the reactor when the awake ones are stuck in long polls (`idle/watch.rs`,
//!   `scheduler/watchdog.rs`), and a task queued behind a stuck worker is taken by another one
//!   (`scheduler/lifo.rs`).
//! * A current-thread runtime ([`Builder::new_current_thread`]) is the same scheduler with one
//!   worker slot and no thread: the thread in `block_on` takes the slot and runs the worker
//!   loop, its own future being one more source of work (`scheduler/current_thread.rs`).
//! * With the `test-util` feature each runtime has a clock that tests may pause, which the
//!   reactor's timers follow (`time/paused.rs`, `driver::clock`).
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

// The crate in layers, each folder importing only from the ones above it in this list:
//
// * `idle/`: the idle protocol (the futex word, the watch, the spin policy), which `--cfg loom`
//   model-checks; `time/`: the coarse clock and the clock tests may pause.
// * `task/`: what a task is (its future's wrapper, `JoinHandle`, `JoinError`, `AbortHandle`,
//   the live-task list, panics, the cooperative budget, work deferred to a poll's end, whose
//   late runner sleeps on `idle/`'s timerfd alarm).
// * `local/`: local tasks (`LocalSet`, `spawn_local`), built from `task/`'s parts only.
// * `scheduler/`: the state a runtime's threads share and the machinery that runs tasks on
//   them (queues, workers, the current-thread seat, the blocking pool, the watchdog,
//   metrics).
// * `runtime/`: the public face (`Builder`, `Runtime`, `Handle`, `block_on`, `JoinSet`).
//
// `exclusive.rs` (a wrapper that shares nothing, for `Sync` types holding `!Sync` parts) is
// used by any layer. `driver.rs` is the public module for reactor authors. Under `--cfg loom` only `idle/` is
// built (crossbeam's queues and real threads are not loom-aware).
#[cfg(not(loom))]
mod exclusive;
mod idle;
#[cfg(not(loom))]
mod local;
#[cfg(not(loom))]
mod runtime;
#[cfg(not(loom))]
mod scheduler;
#[cfg(not(loom))]
pub mod task;
#[cfg(not(loom))]
mod time;

#[cfg(not(loom))]
pub mod driver;

#[cfg(loom)]
#[doc(hidden)]
pub use idle::loom_model;

#[cfg(not(loom))]
pub use driver::Driver;
#[cfg(not(loom))]
pub use local::{LocalEnterGuard, LocalSet, RunUntil};
#[cfg(not(loom))]
#[doc(hidden)]
pub use runtime::rt_shutdown_err;
/// A runtime's id (`spinpark::runtime::Id`); see [`Handle::id`].
#[cfg(not(loom))]
pub use runtime::Id as RuntimeId;
#[cfg(not(loom))]
pub use runtime::{
    block_in_place, is_rt_shutdown_err, spawn, spawn_blocking, spawn_local, worker_index, Builder,
    EnterGuard, Handle, JoinSet, LocalOptions, LocalRuntime, Runtime, RuntimeFlavor,
    TryCurrentError, DEFAULT_SPIN,
};
#[cfg(not(loom))]
pub use scheduler::{RuntimeMetrics, WorkerMetrics};
#[cfg(not(loom))]
pub use task::{coop, yield_now, AbortHandle, JoinError, JoinHandle, YieldNow};

/// Whether blocking this thread would stall a runtime: it is one of a runtime's workers, or
/// runs a `block_on` (a blocking-pool thread and a `block_in_place` closure may block). For
/// the facade's `sync` module, whose `blocking_*` methods panic there, as tokio's do.
#[cfg(not(loom))]
#[doc(hidden)]
pub fn blocking_forbidden() -> bool {
    scheduler::current::block_on_forbidden()
}
