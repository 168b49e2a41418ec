//! The scheduler: the state one runtime's threads share, and the machinery that runs tasks on
//! them.
//!
//! ```text
//! Shared (shared.rs) ── owns ──> Queues, Slots (queues.rs, lifo.rs), Idle + SpinPolicy (idle/),
//!                                DriverCell (driver_cell.rs), Counters (metrics.rs),
//!                                TaskList (task/), BlockingPool (blocking.rs), Seat (seat.rs)
//! spawn.rs           a task or closure in;   schedule.rs   where a woken task goes, who is told
//! worker.rs          a worker's loop (worker_state.rs: what it keeps to itself)
//! current_thread.rs  the thread in block_on as a current-thread runtime's one worker
//! current.rs         which runtime (and worker) the current thread is
//! watchdog.rs        wakes a parked worker when the awake ones stopped attending
//! ```
//!
//! Ownership runs one way: what `Shared` owns never imports `Shared` (the blocking pool sees
//! the runtime through its `PoolHost` trait, the seat through the worker slot it is given);
//! the files that use `Shared` (spawn, schedule, worker, current-thread, watchdog) are not
//! owned by it.

mod block_in_place;
mod blocking;
pub(crate) mod current;
mod current_thread;
mod driver_cell;
mod foreign_context;
mod identity;
mod lifo;
mod metrics;
mod queues;
mod schedule;
mod seat;
mod shared;
mod spawn;
mod watchdog;
mod worker;
mod worker_state;

pub(crate) use block_in_place::block_in_place;
pub(crate) use blocking::BlockingPool;
pub(crate) use current_thread::block_on as block_on_seated;
pub use driver_cell::Driver;
pub(crate) use driver_cell::DriverCell;
pub(crate) use foreign_context::{within, ForeignContext};
pub(crate) use identity::Identity;
pub(crate) use metrics::Counters;
pub use metrics::{RuntimeMetrics, WorkerMetrics};
pub(crate) use queues::{Queues, Slots};
pub(crate) use seat::Seat;
pub(crate) use shared::Shared;
pub(crate) use spawn::{spawn, spawn_blocking};
pub(crate) use watchdog::start as start_watchdog;
pub(crate) use worker::{run as run_worker, Started, ThreadHook};
pub(crate) use worker_state::Places;
