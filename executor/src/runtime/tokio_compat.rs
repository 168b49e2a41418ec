//! The tokio compatibility context (feature `tokio-compat`): a small background tokio runtime
//! whose context is current on every spinpark thread, so that tokio-bound code
//! (`tokio::spawn`, `tokio::time`, `tokio::net`, and the crates built on them) works inside
//! spinpark tasks as written.
//!
//! ```
//! let rt = spinpark_executor::Builder::new().tokio_compat().build().unwrap();
//! let n = rt.block_on(async {
//!     let t = spinpark_executor::spawn(async {
//!         tokio::time::sleep(std::time::Duration::from_millis(1)).await;
//!         tokio::spawn(async { 6 * 7 }).await.unwrap()
//!     });
//!     t.await.unwrap()
//! });
//! assert_eq!(n, 42);
//! ```
//!
//! How it works: [`Builder::build`](crate::Builder::build) starts a multi-threaded tokio
//! runtime with its I/O and time drivers and [`Builder::tokio_compat_threads`](crate::Builder::tokio_compat_threads)
//! worker threads (default 1), named `spinpark-tokio-compat`. Its context is a
//! `ForeignContext`: each spinpark worker and blocking-pool thread holds tokio's
//! `Handle::enter` guard for its whole life, and `block_on` for the call, so no future needs
//! wrapping. Sockets and timers created through tokio register with the tokio runtime's
//! drivers and are driven by its thread; a tokio-owned socket's readiness therefore reaches
//! the spinpark task through a wake-up from that thread, never through a spinning worker.
//!
//! Every thread that polls a spinpark task is one of those, so the per-poll fallback that
//! `async-compat` uses (entering the context around each poll) is not needed. What is left
//! out: a spinpark future that the user polls on a thread of their own (with another
//! executor's `block_on`), which spinpark never sees.
//!
//! The background runtime shuts down when the spinpark runtime does, after the spinpark
//! tasks are dropped: on a helper thread, with `shutdown_timeout` bounding the wait for its
//! blocking work to [`SHUTDOWN_GRACE`], so that dropping the spinpark runtime from inside an
//! async context neither panics in tokio nor waits forever.

use std::io;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use crate::scheduler::ForeignContext;

/// How long shutting down waits for the background runtime's blocking work.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// The background tokio runtime, and the handle every spinpark thread enters.
pub(crate) struct TokioCompat {
    handle: tokio::runtime::Handle,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
}

impl TokioCompat {
    /// Starts the background runtime with `threads` worker threads.
    pub(crate) fn start(threads: usize) -> io::Result<TokioCompat> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("spinpark-tokio-compat")
            .enable_io()
            .enable_time()
            .build()?; // tokio's error (an OS error, as is)
        Ok(TokioCompat {
            handle: runtime.handle().clone(),
            runtime: Mutex::new(Some(runtime)),
        })
    }
}

impl ForeignContext for TokioCompat {
    fn enter(&self, f: &mut dyn FnMut()) {
        let _tokio = self.handle.enter();
        f();
    }

    fn shutdown(&self) {
        let runtime = self
            .runtime
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(runtime) = runtime else {
            return;
        };
        // tokio refuses to block in its shutdown on a thread that is inside one of its
        // runtimes (it panics), and this may be such a thread; a helper thread of our own
        // never is. Joining it waits at most SHUTDOWN_GRACE plus tokio's own teardown.
        let cell = std::sync::Arc::new(Mutex::new(Some(runtime)));
        let theirs = cell.clone();
        let helper = thread::Builder::new()
            .name("spinpark-tokio-compat-shutdown".into())
            .spawn(move || {
                let runtime = theirs.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(runtime) = runtime {
                    runtime.shutdown_timeout(SHUTDOWN_GRACE);
                }
            });
        match helper {
            Ok(helper) => {
                let _ = helper.join();
            }
            Err(_) => {
                // No thread to wait on: stop the runtime without waiting for it.
                let runtime = cell.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(runtime) = runtime {
                    runtime.shutdown_background();
                }
            }
        }
    }
}
