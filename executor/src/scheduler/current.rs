//! What the current thread is to spinpark: which runtime is current on it, and whether it is
//! one of that runtime's workers.
//!
//! ```text
//! let _current = current::enter(shared, no_block_on);   // Handle::enter, block_on, workers
//! current::current()                                     // Handle::current, spawn
//! let _worker = current::set_worker(&state);             // a worker's run loop
//! current::with_worker(|w| ..)                           // the schedule function
//! ```
//!
//! `Handle::current()`, `spawn` and the schedule function all start here. A worker publishes
//! a pointer to its [`WorkerState`] for the lifetime of its run loop; `block_on` publishes only
//! the runtime's shared state (which the public `Handle` wraps).

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::shared::Shared;
use super::worker_state::WorkerState;

thread_local! {
    /// The runtime the current thread is in.
    static RUNTIME: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
    /// How many `CurrentGuard`s are alive on this thread, to check they drop in reverse order.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// Set on workers and inside `block_on`: threads that must not block in `block_on`.
    static NO_BLOCK_ON: Cell<bool> = const { Cell::new(false) };
    /// The current worker's state, or null. Set only by `worker::run` for its whole loop.
    static WORKER: Cell<*const WorkerState> = const { Cell::new(std::ptr::null()) };
}

/// The runtime the current thread is in, if any.
pub(crate) fn current() -> Option<Arc<Shared>> {
    RUNTIME.with(|r| r.borrow().clone())
}

/// Runs `f` with the runtime the current thread is in, if any, without cloning its `Arc`.
#[cfg(feature = "test-util")]
pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Shared>) -> R) -> R {
    RUNTIME.with(|r| f(r.borrow().as_deref()))
}

/// Whether `block_on` is forbidden here: on a worker, or inside another `block_on`.
/// (A blocking-pool thread may `block_on`: it is not needed by the workers.)
pub(crate) fn block_on_forbidden() -> bool {
    NO_BLOCK_ON.with(|b| b.get())
}

/// Makes `shared`'s runtime current until the guard is dropped; restores the previous state
/// then. `no_block_on`: also forbid `block_on` meanwhile.
pub(crate) fn enter(shared: Arc<Shared>, no_block_on: bool) -> CurrentGuard {
    let prev = RUNTIME.with(|r| r.borrow_mut().replace(shared));
    let prev_flag = NO_BLOCK_ON.with(|b| b.replace(no_block_on));
    let depth = DEPTH.with(|d| {
        d.set(d.get() + 1);
        d.get()
    });
    CurrentGuard {
        prev,
        prev_flag,
        depth,
    }
}

/// Restores the previous current runtime on drop. (The public `EnterGuard` of
/// `Handle::enter` wraps one.)
pub(crate) struct CurrentGuard {
    prev: Option<Arc<Shared>>,
    prev_flag: bool,
    /// `DEPTH` once this guard was made: it must be the innermost when it drops.
    depth: usize,
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        // Restoring out of order would leave a runtime current that the inner guard's owner
        // already left (perhaps one that has shut down): fail loudly, as tokio does. While
        // unwinding from another panic, leave the state alone instead of aborting.
        if DEPTH.with(|d| d.get()) != self.depth {
            if !std::thread::panicking() {
                panic!(
                    "spinpark: EnterGuards dropped out of order: a guard from Handle::enter or \
                     Runtime::enter must be dropped before the ones made earlier on the same \
                     thread (drop them in reverse order, as nested scopes do)"
                );
            }
            return;
        }
        DEPTH.with(|d| d.set(self.depth - 1));
        let prev = self.prev.take();
        RUNTIME.with(|r| *r.borrow_mut() = prev);
        NO_BLOCK_ON.with(|b| b.set(self.prev_flag));
    }
}

/// Publishes `state` as the current worker until the guard drops.
pub(crate) fn set_worker(state: &WorkerState) -> WorkerGuard {
    WORKER.with(|w| w.set(state as *const WorkerState));
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
pub(crate) fn with_worker<R>(f: impl FnOnce(Option<&WorkerState>) -> R) -> R {
    let ptr = WORKER.try_with(|w| w.get()).unwrap_or(std::ptr::null());
    // SAFETY: a non-null pointer was published by `set_worker` from a `&WorkerState` that
    // lives on the worker thread's stack for the whole run loop, and the `WorkerGuard` clears
    // it before that borrow ends. Only this thread reads this thread-local, and `WorkerState`
    // is only ever accessed through shared references (its mutable parts are `Cell`s).
    let state = unsafe { ptr.as_ref() };
    f(state)
}
