//! Tasks: their ids, handles, errors, cooperative budget and task-local values (what
//! `spinpark::task` re-exports, with the spawn functions).
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let task = spinpark::spawn(async { spinpark::task::id() });
//! assert_eq!(task.id(), task.await.unwrap());
//! # });
//! ```
//!
//! What a task is, whichever runtime runs it: the wrapper its future runs in (`guarded.rs`),
//! what its owner holds (`join.rs`: `JoinHandle`; `error.rs`: `JoinError`; `abort.rs`:
//! `AbortHandle`),
//! the runtime's list of live tasks (`list.rs`), containing panics (`panics.rs`), the
//! cooperative budget (`coop.rs`), `yield_now`, and work deferred to a poll's end
//! (`poll_end.rs`).
//!
//! Nothing here knows the scheduler: `scheduler/spawn.rs` builds tasks from these parts, and
//! a worker publishes its runtime's task list on its thread (`list::publish`) for the tasks it
//! polls. `JoinSet`, which spawns through a `Handle`, is in `runtime/`.

mod abort;
pub mod coop;
mod error;
mod guarded;
mod id;
mod join;
pub(crate) mod list;
mod local_key;
pub(crate) mod panics;
pub mod poll_end;
mod yield_now;

pub use abort::AbortHandle;
pub use error::JoinError;
pub(crate) use guarded::{Guarded, TaskMeta};
pub use id::{id, try_id, Id};
pub use join::JoinHandle;
pub(crate) use list::TaskList;
pub use local_key::{AccessError, LocalKey, TaskLocalFuture};
pub(crate) use yield_now::{begin_deferring, end_deferring, without_deferring};
pub use yield_now::{yield_now, YieldNow};
