//! The public face of a runtime: configuring and starting it (`builder.rs`), using and
//! stopping it (`lifecycle.rs`: `Runtime`), reaching it from anywhere (`handle.rs`,
//! `enter.rs`), spawning onto it (`spawn.rs`, `join_set.rs`), driving a future on the calling
//! thread (`block_on.rs`), and the tokio compatibility context (`tokio_compat.rs`).

mod block_on;
mod builder;
mod enter;
mod handle;
mod join_set;
mod lifecycle;
mod spawn;
#[cfg(feature = "tokio-compat")]
mod tokio_compat;

pub use builder::{Builder, DEFAULT_SPIN};
pub use enter::EnterGuard;
pub use handle::{Handle, RuntimeFlavor, TryCurrentError};
pub use join_set::JoinSet;
pub use lifecycle::Runtime;
pub use spawn::{spawn, spawn_blocking, worker_index};
