//! spinpark: an async runtime for RPC servers whose idle workers spin briefly, then park on a
//! futex, and whose spinning workers pick up network events themselves.
//!
//! The API follows tokio's where it can, so a tokio program ports by changing paths:
//!
//! ```no_run
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! use spinpark::net::TcpListener;
//!
//! #[spinpark::main]
//! async fn main() -> std::io::Result<()> {
//!     let listener = TcpListener::bind("127.0.0.1:7000").await?;
//!     loop {
//!         let (mut stream, _) = listener.accept().await?;
//!         spinpark::spawn(async move {
//!             let mut buf = vec![0; 4096];
//!             while let Ok(n) = stream.read(&mut buf).await {
//!                 if n == 0 || stream.write_all(&buf[..n]).await.is_err() {
//!                     break;
//!                 }
//!             }
//!         });
//!     }
//! }
//! ```
//!
//! # What is different from tokio
//!
//! * An idle worker spins for a while before it sleeps, polling the run queues and the
//!   reactor. A request that arrives meanwhile is handled by that worker with no thread woken
//!   and no context switch. How long is learned from the gaps between requests, within a CPU
//!   budget, and spinning stops when it does not make work start sooner
//!   ([`Builder::spin_adaptive`], the default; [`Builder::spin`] sets a fixed window).
//! * Sleeping workers park on one shared futex word; a wake-up is issued only when nobody spins,
//!   and to one worker. [`Runtime::metrics`] shows the spins, parks and wake syscalls.
//! * Sockets implement `futures-io`'s `AsyncRead`/`AsyncWrite`, so the `futures` crate's
//!   `AsyncReadExt`/`AsyncWriteExt` helpers work on them.
//!
//! The crates behind the facade: `spinpark-executor` (scheduler and idle protocol),
//! `spinpark-net` (epoll reactor, TCP, timers) and `spinpark-macros`.

#![warn(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub use spinpark_executor::{
    spawn, spawn_blocking, yield_now, Builder, Handle, JoinError, JoinHandle, Runtime,
    RuntimeMetrics, TryCurrentError, WorkerMetrics, YieldNow, DEFAULT_SPIN,
};
pub use spinpark_macros::{main, test};

/// TCP networking: listeners, streams and their halves.
pub mod net {
    pub use spinpark_net::tcp::*;
}

/// Timers: `sleep`, `sleep_until`, `timeout`, `interval`.
pub mod time {
    pub use spinpark_net::time::*;
}

/// Tasks: spawning, joining, yielding.
pub mod task {
    pub use spinpark_executor::{
        spawn, spawn_blocking, yield_now, JoinError, JoinHandle, YieldNow,
    };
}

/// The runtime and its configuration and metrics.
pub mod runtime {
    pub use spinpark_executor::{
        Builder, Handle, Runtime, RuntimeMetrics, TryCurrentError, WorkerMetrics, DEFAULT_SPIN,
    };
}

#[cfg(feature = "hyper")]
pub mod hyper;

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
