//! Child processes on the runtime, as `tokio::process`: [`Command`] starts a [`Child`],
//! whose exit is awaited and whose piped standard streams ([`ChildStdin`], [`ChildStdout`],
//! [`ChildStderr`]) are written and read without blocking a worker.
//!
//! ```
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! use spinpark::process::Command;
//! use std::process::Stdio;
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let mut child = Command::new("tr")
//!     .args(["a-z", "A-Z"])
//!     .stdin(Stdio::piped())
//!     .stdout(Stdio::piped())
//!     .spawn()
//!     .unwrap();
//! let mut stdin = child.stdin.take().unwrap();
//! stdin.write_all(b"hello").await.unwrap();
//! drop(stdin); // end of file for `tr`
//! let out = child.wait_with_output().await.unwrap();
//! assert!(out.status.success());
//! assert_eq!(out.stdout, b"HELLO");
//! # });
//! ```
//!
//! The standard streams implement futures-io's `AsyncRead`/`AsyncWrite`, and tokio's with
//! the `tokio-io` feature. Outside a spinpark runtime, [`Command::spawn`] returns an error
//! and starts nothing (tokio panics there).
//!
//! # How a child's exit is noticed
//!
//! No thread waits for a child. Where the kernel has pidfds (Linux 5.3 and later), each
//! child's pidfd is registered on the reactor: it becomes readable when the child exits,
//! and that event wakes the task in [`Child::wait`] like a socket's would. Elsewhere, a
//! `SIGCHLD` listener from [`signal`](crate::signal) wakes the waiting tasks, and each looks
//! at its own child. Either way the child is reaped with `waitpid` on its own pid only,
//! never `wait(-1)`, so children that other code in the process spawned are left to it.
//! (The first `SIGCHLD` listener installs a handler for the rest of the process, as in
//! tokio, and as there a handler the program had for it is still called; pidfds need none.)
//!
//! A child spawned in one runtime may be waited for in another: if the first has shut down,
//! the watch moves to the runtime that waits.
//!
//! # Dropped children, and zombies
//!
//! A child that exits stays a zombie until its parent reaps it. Dropping a [`Child`] that
//! was not reaped ([`Command::kill_on_drop`] kills it first, if set) closes its watch (its
//! pidfd) and puts its pid on one process-wide orphan list, which one task (started when
//! the list gets its first orphan) looks at on every `SIGCHLD`, reaping the orphans that have
//! exited. So dropped children cost no descriptor each however many run on, and none stays
//! a zombie once it exits. tokio does likewise: its orphan queue is looked at on each
//! `SIGCHLD`. (So the first dropped child that still runs installs the `SIGCHLD` handler, as
//! the first `SIGCHLD` listener does.)
//!
//! The task runs on the runtime where the child was dropped. A child dropped where no
//! runtime runs (outside one, or while its runtime shuts down, whose tasks are dropped) waits
//! on the list until the next [`Command::spawn`], which starts a task for the list on the
//! spawning runtime. Like tokio's, this is best effort: a program that drops a running child
//! where no runtime runs, and never spawns again, leaves it a zombie once it exits, until the
//! program ends. Awaiting [`Child::wait`] (or `kill`) reaps for sure.

mod child;
mod command;
mod exit;
mod orphan;
mod stdio;
mod sys;
#[cfg(test)]
mod tests;

pub use child::Child;
pub use command::Command;
pub use stdio::{ChildStderr, ChildStdin, ChildStdout};
