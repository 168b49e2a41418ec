//! Local tasks: futures that are not `Send`, run on the thread that owns their
//! [`LocalSet`] (what `spinpark::task` re-exports with [`spawn_local`]).
//!
//! ```
//! use std::rc::Rc;
//! let rt = spinpark::Runtime::new().unwrap();
//! let set = spinpark::task::LocalSet::new();
//! let total = set.block_on(&rt, async {
//!     let data = Rc::new(vec![1, 2, 3]); // Rc: not Send, so not for spinpark::spawn
//!     let d = data.clone();
//!     let sum = spinpark::task::spawn_local(async move { d.iter().sum::<i32>() });
//!     sum.await.unwrap()
//! });
//! assert_eq!(total, 6);
//! ```
//!
//! The parts: `set.rs` (the set, its driving future and its drop), `queue.rs` (the run queue,
//! the only part other threads touch, through the tasks' wakers), `owned.rs` (the tasks the
//! set must cancel when dropped), `current.rs` (the current set; `spawn_local` itself is in `runtime/spawn.rs`, which
//! knows the runtime too). A local
//! task is an ordinary task otherwise: the same `JoinHandle`, `AbortHandle`, ids, panic
//! containment and task-local values as a spawned one. `runtime/local_runtime.rs` builds
//! `LocalRuntime` and `LocalSet::block_on` on top.

mod current;
mod owned;
mod queue;
mod set;

pub(crate) use current::{in_local_set, try_spawn_local};
pub use set::{LocalEnterGuard, LocalSet, RunUntil};
