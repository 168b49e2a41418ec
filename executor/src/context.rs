//! What the current thread is to spinpark: which runtime it is in, and whether it is one of
//! that runtime's workers.
//!
//! `Handle::current()`, `spawn` and the schedule function all start here. A worker publishes
//! a pointer to its [`Local`] state for the lifetime of its run loop; `block_on` publishes only
//! the runtime's handle.

use std::cell::{Cell, RefCell};

use crate::handle::Handle;
use crate::worker::Local;

thread_local! {
    static HANDLE: RefCell<Option<Handle>> = const { RefCell::new(None) };
    /// Set on workers and inside `block_on`: threads that must not block in `block_on`.
    static NO_BLOCK_ON: Cell<bool> = const { Cell::new(false) };
    /// The current worker's state, or null. Set only by `worker::run` for its whole loop.
    static WORKER: Cell<*const Local> = const { Cell::new(std::ptr::null()) };
}

/// The handle of the runtime the current thread is in, if any.
pub(crate) fn current() -> Option<Handle> {
    HANDLE.with(|h| h.borrow().clone())
}

/// Whether `block_on` is forbidden here: on a worker, or inside another `block_on`.
/// (A blocking-pool thread may `block_on`: it is not needed by the workers.)
pub(crate) fn block_on_forbidden() -> bool {
    NO_BLOCK_ON.with(|b| b.get())
}

/// Makes `handle` current until the guard is dropped; restores the previous state then.
/// `no_block_on`: also forbid `block_on` meanwhile.
pub(crate) fn enter(handle: Handle, no_block_on: bool) -> EnterGuard {
    let prev = HANDLE.with(|h| h.borrow_mut().replace(handle));
    let prev_flag = NO_BLOCK_ON.with(|b| b.replace(no_block_on));
    EnterGuard { prev, prev_flag }
}

/// Restores the previous current runtime on drop.
pub(crate) struct EnterGuard {
    prev: Option<Handle>,
    prev_flag: bool,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        let prev = self.prev.take();
        HANDLE.with(|h| *h.borrow_mut() = prev);
        NO_BLOCK_ON.with(|b| b.set(self.prev_flag));
    }
}

/// Publishes `local` as the current worker until the guard drops.
pub(crate) fn set_worker(local: &Local) -> WorkerGuard {
    WORKER.with(|w| w.set(local as *const Local));
    WorkerGuard(())
}

/// Clears the current worker on drop.
pub(crate) struct WorkerGuard(());

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        WORKER.with(|w| w.set(std::ptr::null()));
    }
}

/// Runs `f` with the current worker's state, if this thread is a worker.
pub(crate) fn with_worker<R>(f: impl FnOnce(Option<&Local>) -> R) -> R {
    let ptr = WORKER.try_with(|w| w.get()).unwrap_or(std::ptr::null());
    // SAFETY: a non-null pointer was published by `set_worker` from a `&Local` that lives on
    // the worker thread's stack for the whole run loop, and the `WorkerGuard` clears it before
    // that borrow ends. Only this thread reads this thread-local, and `Local` is only ever
    // accessed through shared references (its mutable parts are `Cell`s).
    let local = unsafe { ptr.as_ref() };
    f(local)
}
