//! Files and directories from async code: tokio's `tokio::fs` API, each call run on the
//! runtime's blocking pool.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//!
//! let dir = std::env::temp_dir().join(format!("spinpark-fs-doc-{}", std::process::id()));
//! spinpark::fs::create_dir_all(&dir).await?;
//! spinpark::fs::write(dir.join("greeting"), "hello").await?;
//! assert_eq!(spinpark::fs::read_to_string(dir.join("greeting")).await?, "hello");
//!
//! let mut file = spinpark::fs::File::create(dir.join("log")).await?;
//! file.write_all(b"one line\n").await?;
//! file.flush().await?; // the write ran on the blocking pool; flush waits for it
//! let mut text = String::new();
//! spinpark::fs::File::open(dir.join("log")).await?.read_to_string(&mut text).await?;
//! assert_eq!(text, "one line\n");
//!
//! spinpark::fs::remove_dir_all(&dir).await?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! # How it works
//!
//! Linux has no asynchronous file API that works everywhere (epoll does not take regular
//! files), so, as tokio does, every function here moves its arguments into a closure, runs
//! std's call in it on the blocking pool ([`crate::spawn_blocking`]) and awaits the result
//! (the crate's `blocking` module, which the standard streams of [`crate::io`] use too).
//! Dropping such a future stops the waiting, not the call: a `write` or `remove_file` whose
//! future was dropped after its first poll still happens.
//!
//! [`File`](crate::fs::File) keeps one operation in flight on the pool and a buffer of at
//! most [`File::max_buf_size`](crate::fs::File::max_buf_size) bytes (2 MiB unless set): a
//! write copies the caller's bytes into the buffer, hands it to the pool and returns, so the
//! next write, a flush or a seek waits for it, and its error comes back from one of those; a
//! read fills the buffer with up to as many bytes as asked for (capped at the bound) and
//! keeps what the caller did not take for the next read. `file_state.rs` has the state
//! machine (over the `blocking` module's buffer), and `file_io.rs` and `file_tokio_io.rs`
//! the I/O traits over it: futures-io's always, tokio's with the `tokio-io` feature.
//!
//! Outside a spinpark runtime these functions return an error rather than panic as tokio's
//! do. While the runtime shuts down, an operation whose closure the pool dropped fails with
//! tokio's errors: "background task failed" from the functions and from a `File`'s write,
//! "task was cancelled" from a `File` operation already in flight.

mod dir_builder;
mod dirs;
mod file;
mod file_io;
mod file_state;
mod file_times;
#[cfg(feature = "tokio-io")]
mod file_tokio_io;
mod links;
mod metadata;
mod open_options;
mod paths;
mod read_dir;
mod whole_file;

pub use dir_builder::DirBuilder;
pub use dirs::{create_dir, create_dir_all, remove_dir, remove_dir_all};
pub use file::File;
pub use file_times::FileTimes;
pub use links::{canonicalize, hard_link, read_link, symlink};
pub use metadata::{metadata, set_permissions, symlink_metadata, try_exists};
pub use open_options::OpenOptions;
pub use paths::{copy, remove_file, rename};
pub use read_dir::{read_dir, DirEntry, ReadDir};
pub use whole_file::{read, read_to_string, write};

/// The blocking pool as this module uses it: its name in the error outside a runtime, and
/// tokio's "background task failed" for a write refused while the runtime shuts down.
const POOL: crate::blocking::Pool = crate::blocking::Pool {
    what: "spinpark::fs",
    refused: crate::blocking::task_failed,
};
