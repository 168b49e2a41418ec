//! The public face of a runtime: configuring and starting it (`builder.rs`), using and
//! stopping it (`lifecycle.rs`: `Runtime`), reaching it from anywhere (`handle.rs`,
//! `enter.rs`), spawning onto it (`spawn.rs`, `join_set/`), driving a future on the calling
//! thread (`block_on.rs`), the local runtime (`local_runtime.rs`: `LocalRuntime`,
//! `LocalSet::block_on`), and the tokio compatibility context (`tokio_compat.rs`).

mod block_on;
mod builder;
mod enter;
mod handle;
mod join_set;
mod lifecycle;
mod local_runtime;
mod shutdown_err;
mod spawn;
#[cfg(feature = "tokio-compat")]
mod tokio_compat;
mod tokio_knobs;

pub use builder::{Builder, DEFAULT_SPIN};
pub use enter::EnterGuard;
pub use handle::{Handle, RuntimeFlavor, TryCurrentError};
pub use join_set::JoinSet;
pub use lifecycle::Runtime;
pub use local_runtime::{LocalOptions, LocalRuntime};
pub use shutdown_err::{is_rt_shutdown_err, rt_shutdown_err};
pub use spawn::{block_in_place, spawn, spawn_blocking, spawn_local, worker_index};
pub use tokio_knobs::Id;
