//! Running std's blocking calls on the runtime's blocking pool, for the modules that have no
//! asynchronous system call to use (`fs`, and the standard streams of `io`), and the errors
//! for when there is no pool to run them on.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! // Each function of `spinpark::fs` is one closure on the pool:
//! assert!(spinpark::fs::metadata("/").await?.is_dir());
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! // Outside a runtime: an error, not a panic.
//! use futures_util::FutureExt;
//! let outside = spinpark::fs::metadata("/").now_or_never().unwrap();
//! assert!(outside.unwrap_err().to_string().contains("outside a spinpark runtime"));
//! ```
//!
//! How: a [`Pool`] names its user (for the error outside a runtime) and says what a
//! refused mandatory operation reports. [`Pool::asyncify`] takes the current runtime's
//! handle (an error without one), spawns the closure with [`Handle::spawn_blocking`] and
//! awaits its `JoinHandle`; a `JoinError` (the pool dropped the closure while shutting down,
//! or it panicked) becomes tokio's "background task failed". [`Pool::spawn_mandatory`] is
//! for writes whose caller is told the bytes were taken before they are written: it refuses,
//! as tokio's does, once the runtime is shutting down, so that such a write fails at once
//! instead of being dropped. [`Buf`] (`buf.rs`) carries the bytes of a buffered read or
//! write between a task and the pool; [`Blocking`] (`stream.rs`) is a std reader or writer
//! that goes to the pool with each operation.

mod buf;
mod stream;

pub(crate) use buf::Buf;
pub(crate) use stream::Blocking;

use std::io;

use spinpark_executor::{Handle, JoinHandle};

/// tokio's text for an operation whose closure did not run to completion.
const TASK_FAILED: &str = "background task failed";

/// The most bytes one buffered read or write moves (tokio's default for files and the
/// standard streams).
pub(crate) const DEFAULT_MAX_BUF_SIZE: usize = 2 * 1024 * 1024;

/// The error for a blocking task that was cancelled or panicked (tokio's text).
pub(crate) fn task_failed() -> io::Error {
    io::Error::other(TASK_FAILED)
}

/// Who runs closures on the blocking pool: see the module docs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pool {
    /// The API's name, for the error outside a runtime (`spinpark::fs`).
    pub(crate) what: &'static str,
    /// The error for a mandatory operation refused because the runtime shuts down.
    pub(crate) refused: fn() -> io::Error,
}

impl Pool {
    /// The current runtime's handle, or an error saying there is none.
    pub(crate) fn current(&self) -> io::Result<Handle> {
        Handle::try_current().map_err(|_| {
            io::Error::other(format!(
                "{} called outside a spinpark runtime: call it from a task, from \
                 Runtime::block_on or from #[spinpark::main]",
                self.what
            ))
        })
    }

    /// The handle to start a mandatory operation on: an error outside a runtime or once the
    /// runtime is shutting down, when the pool could drop it unrun.
    pub(crate) fn current_mandatory(&self) -> io::Result<Handle> {
        let handle = self.current()?;
        if handle.is_shutdown() {
            return Err((self.refused)());
        }
        Ok(handle)
    }

    /// Runs `f` on the blocking pool and returns its result.
    pub(crate) async fn asyncify<F, T>(&self, f: F) -> io::Result<T>
    where
        F: FnOnce() -> io::Result<T> + Send + 'static,
        T: Send + 'static,
    {
        match self.current()?.spawn_blocking(f).await {
            Ok(res) => res,
            Err(_) => Err(task_failed()),
        }
    }

    /// Starts `f` on the blocking pool.
    pub(crate) fn spawn<F, T>(&self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        Ok(self.current()?.spawn_blocking(f))
    }

    /// Starts `f` on the blocking pool unless the runtime is shutting down (tokio's
    /// `spawn_mandatory_blocking`).
    pub(crate) fn spawn_mandatory<F, T>(&self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        Ok(self.current_mandatory()?.spawn_blocking(f))
    }
}
