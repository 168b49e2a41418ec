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

/// Runs `f`, which may block (a blocking call, a long computation), on the current thread
/// without holding up the runtime: on a worker of a multi-thread runtime, another thread
/// takes over the worker's tasks first, and the task that called this goes on, on this
/// thread, once `f` returns. Unlike [`spawn_blocking`] it needs no `'static` closure: `f` may
/// borrow from the task. Elsewhere (outside a runtime, on a blocking-pool thread, in the
/// future of a multi-thread runtime's `block_on`) `f` simply runs. Inside `f`,
/// `Handle::block_on` is allowed.
///
/// ```
/// let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
/// let total = rt.block_on(rt.spawn(async {
///     let data = vec![1u64, 2, 3];
///     // Borrows `data`; the runtime's other tasks keep running on another thread meanwhile.
///     spinpark::task::block_in_place(|| data.iter().sum::<u64>())
/// }));
/// assert_eq!(total.unwrap(), 6);
/// ```
///
/// # Panics
/// On a current-thread runtime's worker (the thread in its `block_on`), as tokio's does:
/// there is no other thread to hand its tasks to; use [`spawn_blocking`] there. Also inside
/// a [`LocalSet`](crate::task::LocalSet) (its driving future or its tasks): the set's tasks
/// cannot move to another thread.
#[track_caller]
pub fn block_in_place<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    if crate::local::in_local_set() {
        panic!(
            "can call blocking only when running on the multi-threaded runtime: block_in_place \
             inside a LocalSet, whose tasks cannot move to another thread (use spawn_blocking)"
        );
    }
    crate::scheduler::block_in_place(f)
}

/// Spawns a task that need not be `Send` on the current [`LocalSet`](crate::task::LocalSet)
/// or [`LocalRuntime`](crate::LocalRuntime); it runs on this thread, when the set is driven.
///
/// # Panics
/// Outside a local set's context (not inside `LocalSet::run_until` or `block_on`, a local
/// task, an entered set, or a `LocalRuntime`), with tokio's message.
///
/// ```
/// let rt = spinpark::Builder::new_current_thread().build().unwrap();
/// let set = spinpark::task::LocalSet::new();
/// let n = set.block_on(&rt, async {
///     let cell = std::rc::Rc::new(std::cell::Cell::new(1));
///     let c = cell.clone();
///     spinpark::task::spawn_local(async move { c.set(2) }).await.unwrap();
///     cell.get()
/// });
/// assert_eq!(n, 2);
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    match crate::local::try_spawn_local(future) {
        Ok(handle) => handle,
        Err(_) if Handle::try_current().is_ok_and(|h| h.is_local()) => panic!(
            "Local tasks can only be spawned on a LocalRuntime from the thread the runtime was \
             created on"
        ),
        Err(_) => panic!(
            "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`"
        ),
    }
}
