#![allow(dead_code)] // each test binary uses a subset of these helpers
//! Helpers shared by the executor's integration tests (each test file that uses them
//! declares `mod common;`).

use std::sync::mpsc;
use std::time::Duration;

use spinpark_executor::{Builder, JoinError, Runtime};

/// Runs `f` on its own thread and returns its result, failing the test if it takes longer
/// than `watchdog` (the thread is then left behind, stuck). A panic in `f` is the test's.
pub(crate) fn within<T: Send + 'static>(
    watchdog: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(watchdog) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: still not done after {watchdog:?} (hang)"),
    }
}

/// A multi-thread runtime with `workers` workers.
pub(crate) fn rt(workers: usize) -> Runtime {
    Builder::new().worker_threads(workers).build().unwrap()
}

/// The message of the panic `e` carries (a `&str` or `String` payload); fails the test if
/// `e` is not a panic.
pub(crate) fn panic_text(e: JoinError) -> String {
    assert!(e.is_panic(), "expected a panic, got {e:?}");
    let p = e.into_panic();
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Panics, with its message, when dropped.
pub(crate) struct PanicOnDrop(pub(crate) &'static str);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("{}", self.0);
    }
}
