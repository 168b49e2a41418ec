//! Helpers shared by the executor's integration tests (each test file that uses them
//! declares `mod common;`).

use std::sync::mpsc;
use std::time::Duration;

use spinpark_executor::{Builder, Runtime};

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
