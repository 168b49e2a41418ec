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
//! * `tokio::spawn`, `tokio::time` and `tokio::net` need tokio's runtime, so use [`spawn`],
//!   [`time`] and [`net`] instead. For `tokio::sync`, enable the `sync` feature and use
//!   `spinpark::sync`, the same API: `tokio::sync` itself compiles and runs on spinpark, but
//!   its waits never yield to the worker's other tasks (tokio's budget is set by tokio's
//!   scheduler only), its `blocking_*` methods block a worker instead of panicking, and
//!   `mpsc::Sender::send_timeout` needs tokio's runtime. `tokio::select!` works as it is.
//!   `docs/tokio.md` has the full "tokio -> spinpark" table.
//!
//! The modules: [`net`] (TCP, UDP, Unix sockets, host-name lookup), [`time`] (sleep, timeout,
//! interval), [`fs`] (files and directories, on the blocking pool), [`signal`] (Ctrl-C and
//! Unix signals), [`io`] (`AsyncFd` for any other fd; stdin, stdout and stderr),
//! [`task`], [`runtime`], and with the `sync` feature `sync` (channels and locks). Linux only.
//!
//! # Features
//!
//! * `tokio-compat` (off by default): `Builder::tokio_compat()` starts a small background tokio
//!   runtime whose context is current on every spinpark thread, so tokio-bound crates (redis,
//!   sqlx, reqwest, ...) work inside tasks; `#[spinpark::main(tokio_compat)]` turns it on.
//!   Sockets and timers those crates create are driven by tokio's thread, not by spinpark's
//!   spinning workers. See "Using tokio-bound crates" in `docs/tokio.md`.
//! * `hyper` (off by default): [`hyper`] serves hyper 1.x (and so axum and tonic)
//!   on spinpark.
//! * `hyper-client` (off by default; implies `hyper`): `hyper::Connector` and
//!   `hyper::client_builder`, so hyper-util's pooled client and tonic's channels call
//!   downstream services over spinpark's own sockets, executor and timer (no tokio runtime).
//! * `tokio-io` (off by default): tokio's `AsyncRead`/`AsyncWrite` on the TCP and Unix streams
//!   and on [`io::Stdin`], [`io::Stdout`] and [`io::Stderr`], and tokio's
//!   `AsyncRead`/`AsyncWrite`/`AsyncSeek` on [`fs::File`].
//! * `sync` (off by default, as tokio's): `spinpark::sync`, tokio's sync API (channels,
//!   `Mutex`, `RwLock`, `Semaphore`, `Notify`...) whose waits take part in spinpark's
//!   cooperative budget, whose `blocking_*` methods panic on a worker as tokio's do, and whose
//!   `send_timeout` runs on spinpark's timer. It pulls tokio with tokio's `sync` feature only.
//! * `test-util` (off by default; for `[dev-dependencies]`): paused time, as tokio's
//!   `test-util`: `time::{pause, resume, advance}`, `Builder::start_paused` and
//!   `#[spinpark::test(start_paused = true)]`, on current-thread runtimes. While the clock is
//!   paused and the runtime has nothing to run, it jumps to the next timer, so expiry and
//!   timeout tests run at once.
//! * `spin-ablation` (off by default; not for users): reads `SPINPARK_SPIN_ABLATE` to switch
//!   parts of the adaptive spin policy off, for the benchmark's ablation matrix.
//!
//! Two flavours, as in tokio: the default, worker threads that spin, then park, and steal
//! from each other; and [`Builder::new_current_thread`] (`flavor = "current_thread"` in the
//! macros, and `#[spinpark::test]`'s default), where tasks run on the thread in `block_on`.
//!
//! The crates behind the facade: `spinpark-executor` (scheduler and idle protocol),
//! `spinpark-net` (epoll reactor, sockets, signals, timers) and `spinpark-macros`.

#![warn(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub use spinpark_executor::task_local;
pub use spinpark_executor::{
    spawn, spawn_blocking, yield_now, AbortHandle, Builder, EnterGuard, Handle, JoinError,
    JoinHandle, JoinSet, Runtime, RuntimeFlavor, RuntimeMetrics, TryCurrentError, WorkerMetrics,
    YieldNow, DEFAULT_SPIN,
};
pub use spinpark_macros::{main, test};

/// Networking on the runtime's reactor: TCP, UDP and Unix-domain sockets.
pub mod net {
    pub use spinpark_net::{lookup_host, ToSocketAddrs};
    pub use spinpark_net::{
        TcpListener, TcpSocket, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixSocket,
        UnixStream,
    };

    /// TCP stream halves, futures and listener settings (as `tokio::net::tcp`).
    pub mod tcp {
        pub use spinpark_net::tcp::*;
    }

    /// Unix-domain socket halves, addresses and futures (as `tokio::net::unix`).
    pub mod unix {
        pub use spinpark_net::unix::*;
    }

    // Where 0.1.0 had them (before `net::tcp`); kept so that code naming them here compiles.
    #[doc(hidden)]
    pub use spinpark_net::tcp::{
        Accept, Incoming, OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf,
        ACCEPT_BACKOFF, DEFAULT_BACKLOG,
    };
}

/// Putting any non-blocking fd on the runtime's reactor (`AsyncFd`, with `Interest` and
/// `Ready`, tokio's `io::{Interest, Ready}` and `io::unix::AsyncFd`), and the process's
/// standard streams ([`io::stdin`], [`io::stdout`], [`io::stderr`]) on the blocking pool.
pub mod io;

/// Files and directories on the blocking pool, as `tokio::fs`: whole-file `read`/`write`,
/// directory and link functions, `read_dir`, and [`fs::File`] with buffered background reads
/// and writes.
pub mod fs;

/// Timers: `sleep`, `sleep_until`, `timeout`, `timeout_at`, `interval`, `interval_at` (with
/// tokio's `MissedTickBehavior` and resets), `Instant` (the runtime's clock) and std's
/// `Duration`; with the `test-util` feature, `pause`, `resume` and `advance` (paused time for
/// tests).
pub mod time {
    pub use spinpark_net::time::*;
}

/// Unix signals on the runtime's reactor: `ctrl_c` and `signal(SignalKind)`.
pub mod signal {
    pub use spinpark_net::signal::*;
}

/// Child processes on the runtime's reactor, as `tokio::process`: `Command`, `Child` (its
/// exit awaited through a pidfd, or `SIGCHLD` where the kernel has no pidfds) and the
/// children's piped standard streams.
pub mod process {
    pub use spinpark_net::process::*;
}

/// Tasks: spawning, joining (one at a time or as a [`JoinSet`]), yielding.
pub mod task {
    pub use spinpark_executor::coop;
    pub use spinpark_executor::coop::{consume_budget, unconstrained, Unconstrained};
    pub use spinpark_executor::task::{id, try_id, AccessError, Id, LocalKey};

    /// The futures of this module's functions, as `tokio::task::futures`.
    pub mod futures {
        pub use spinpark_executor::task::TaskLocalFuture;
    }
    pub use spinpark_executor::{
        block_in_place, spawn, spawn_blocking, spawn_local, yield_now, AbortHandle, JoinError,
        JoinHandle, JoinSet, LocalEnterGuard, LocalSet, RunUntil, YieldNow,
    };
}

/// The runtime and its configuration and metrics.
pub mod runtime {
    pub use spinpark_executor::RuntimeId as Id;
    pub use spinpark_executor::{
        is_rt_shutdown_err, worker_index, Builder, EnterGuard, Handle, LocalOptions, LocalRuntime,
        Runtime, RuntimeFlavor, RuntimeMetrics, TryCurrentError, WorkerMetrics, DEFAULT_SPIN,
    };
}

mod blocking;

#[cfg(feature = "hyper")]
pub mod hyper;

#[cfg(feature = "sync")]
pub mod sync;

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The examples of `docs/tokio.md` (porting from tokio, hyper, tonic, tokio-io and
/// tokio-bound crates), compiled as doc tests.
#[doc = include_str!("../docs/tokio.md")]
#[cfg(doctest)]
pub struct TokioDocDoctests;
