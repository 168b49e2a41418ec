//! `tokio`, as tokio's own tests see it in the conformance run: spinpark's items under tokio's
//! paths, and nothing of tokio's runtime.
//!
//! The conformance harness copies this file into the crate it generates
//! (`target/conformance/shim`, package `spinpark-tokio-shim`), which tokio's test files get as
//! their `tokio` dependency. Every runtime item here is spinpark's, re-exported by glob from
//! the `spinpark` facade, so whatever spinpark adds to a module shows up under tokio's path on
//! the next run. From the real tokio come only what spinpark's README tells users to keep
//! using, because it needs no runtime: the I/O traits and utilities of `io` (without `net` and
//! `io-std`, so no tokio socket, `AsyncFd` or standard stream comes in), and the `select!`, `join!`, `try_join!` and `pin!`
//! macros (tokio's `macros` feature). `sync` is `spinpark::sync` (the `sync` feature): tokio's
//! primitives, wrapped where they wait.
//!
//! A path that tokio has and spinpark has elsewhere is mapped to tokio's: `signal::unix` and
//! `io::unix` hold spinpark's `signal` and `io` items. Anything not here is missing from
//! spinpark, and the tests that use it are counted as not compiled.

/// `tokio::spawn`.
pub use spinpark::spawn;

/// `#[tokio::main]` and `#[tokio::test]`: spinpark's attributes, which take tokio's arguments.
pub use spinpark::{main, test};

/// `tokio::task_local!`. (With `spawn`, `main` and `test`, the one tokio item at the crate
/// root that is a runtime's; add any other root item spinpark gains under tokio's name here.)
pub use spinpark::task_local;

/// What `#[tokio::main(crate = "path")]` expands to: spinpark's attributes call
/// `<crate>::Builder`, so the renamed crate must have it at its root.
#[doc(hidden)]
pub use spinpark::Builder;

/// tokio's runtime-free macros.
pub use real_tokio::{join, pin, select, try_join};

/// `tokio::runtime`.
pub mod runtime {
    pub use spinpark::runtime::*;
}

/// `tokio::task`.
pub mod task {
    pub use spinpark::task::*;
}

/// `tokio::net`, with `net::tcp` and `net::unix`.
pub mod net {
    pub use spinpark::net::*;
}

/// `tokio::time`.
pub mod time {
    pub use spinpark::time::*;
}

/// `tokio::signal` (`ctrl_c`) and `tokio::signal::unix` (`signal`, `SignalKind`).
pub mod signal {
    pub use spinpark::signal::*;

    /// `tokio::signal::unix`.
    pub mod unix {
        pub use spinpark::signal::*;
    }
}

/// `tokio::io`: tokio's traits and utilities, spinpark's standard streams, and spinpark's
/// `AsyncFd` as `io::unix`.
pub mod io {
    pub use real_tokio::io::*;
    pub use spinpark::io::{stderr, stdin, stdout, Stderr, Stdin, Stdout};
    pub use spinpark::io::{Interest, Ready};

    /// `tokio::io::unix`.
    pub mod unix {
        pub use spinpark::io::unix::*;
    }
}

/// `tokio::sync`: `spinpark::sync`, whose waits take spinpark's budget.
pub mod sync {
    pub use spinpark::sync::*;
}

/// `tokio::fs`: `spinpark::fs`, on spinpark's blocking pool.
pub mod fs {
    pub use spinpark::fs::*;
}

/// `tokio::process`: `spinpark::process`, children's pipes on spinpark's reactor.
pub mod process {
    pub use spinpark::process::*;
}
