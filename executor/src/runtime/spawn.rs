//! The free functions that spawn onto the current runtime (`spawn`, `spawn_blocking`), and
//! [`worker_index`].
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! rt.block_on(async {
//!     let task = spinpark_executor::spawn(async { 1 });
//!     assert_eq!(task.await.unwrap(), 1);
//! });
//! ```

use std::future::Future;

use super::handle::Handle;
use crate::scheduler::current;
use crate::task::JoinHandle;

/// Spawns a task on the current runtime and returns a handle to await its output.
///
/// On a worker the task goes into that worker's LIFO slot and runs next on the same worker (a
/// task that spawns another often awaits it); a task already in the slot moves to the worker's
/// queue, where idle workers can steal it. Other workers take a task from the LIFO slot only
/// if the spawning task then holds its worker for long (a blocking call). Elsewhere (inside
/// `block_on`, on a blocking thread) the task goes to the runtime's global queue.
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// let task = spinpark_executor::spawn(async { 2 + 2 });
/// assert_eq!(task.await.unwrap(), 4);
/// # });
/// ```
///
/// # Panics
/// Outside a spinpark runtime, with a message that says so.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match Handle::try_current() {
        Ok(h) => h.spawn(future),
        Err(_) => panic!(
            "spinpark::spawn called outside a spinpark runtime: call it from a task, from \
             Runtime::block_on, or from #[spinpark::main], or use Handle::spawn"
        ),
    }
}

/// The index of the worker the current thread is, from 0 to the runtime's number of workers,
/// or `None` on a thread that is not a worker (a `spawn_blocking` thread, a thread that only
/// waits in `block_on`). On a current-thread runtime the thread driving it in `block_on` is
/// worker 0. A task may move between workers between polls, so this is a hint (for sharding
/// per-worker state), not an identity.
///
/// ```
/// let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
/// let index = rt.block_on(async { spinpark::spawn(async { spinpark::runtime::worker_index() }).await });
/// assert!(matches!(index.unwrap(), Some(0 | 1)));
/// assert_eq!(spinpark::runtime::worker_index(), None); // not a worker
/// ```
pub fn worker_index() -> Option<usize> {
    current::with_worker(|w| w.map(|w| w.index))
}

/// Runs `f` on the runtime's blocking pool, a separate set of threads that may block (file
/// I/O, CPU-heavy work, a blocking library) without holding up the workers.
///
/// # Panics
/// Outside a spinpark runtime.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let hash = spinpark::spawn_blocking(|| (0..1000u64).sum::<u64>()).await.unwrap();
/// assert_eq!(hash, 499_500);
/// # });
/// ```
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    match Handle::try_current() {
        Ok(h) => h.spawn_blocking(f),
        Err(_) => panic!("spinpark::spawn_blocking called outside a spinpark runtime"),
    }
}
