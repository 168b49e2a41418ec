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
    /// The current worker's state, or null. Set by a worker loop for as long as its thread
    /// holds the worker's place (`set_worker`, and `lend`/`take_place` around a handoff).
    static WORKER: Cell<*const WorkerState> = const { Cell::new(std::ptr::null()) };
    /// The worker's place while one of its tasks runs (`lend`), where `block_in_place` can
    /// take it to hand it to another thread.
    static PLACE: Cell<Option<Box<WorkerState>>> = const { Cell::new(None) };
}

/// The runtime the current thread is in, if any.
pub(crate) fn current() -> Option<Arc<Shared>> {
    RUNTIME.try_with(|r| r.borrow().clone()).ok().flatten()
}

/// Runs `f` with the runtime the current thread is in, if any, without cloning its `Arc`
/// (with none while the thread's locals are being destroyed).
pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Shared>) -> R) -> R {
    let mut f = Some(f);
    let ran = RUNTIME.try_with(|r| (f.take().expect("called once"))(r.borrow().as_deref()));
    match (ran, f) {
        (Ok(r), _) => r,
        (Err(_), Some(f)) => f(None),
        (Err(_), None) => unreachable!("try_with failed after running its closure"),
    }
}

/// Whether `block_on` is forbidden here: on a worker, or inside another `block_on`.
/// (A blocking-pool thread may `block_on`: it is not needed by the workers.)
pub(crate) fn block_on_forbidden() -> bool {
    NO_BLOCK_ON.try_with(|b| b.get()).unwrap_or(false)
}

/// Makes `shared`'s runtime current until the guard is dropped; restores the previous state
/// then. `no_block_on`: also forbid `block_on` meanwhile.
///
/// On a thread whose thread-locals are being destroyed (a runtime kept in a thread-local and
/// dropped as the thread exits) nothing can be made current: the guard then does nothing.
pub(crate) fn enter(shared: Arc<Shared>, no_block_on: bool) -> CurrentGuard {
    let entered = (|| {
        let depth = DEPTH.try_with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let depth = depth.ok()?;
        let prev = RUNTIME.try_with(|r| r.borrow_mut().replace(shared)).ok()?;
        let prev_flag = NO_BLOCK_ON.try_with(|b| b.replace(no_block_on)).ok()?;
        Some(Entered {
            prev,
            prev_flag,
            depth,
        })
    })();
    CurrentGuard(entered)
}

/// Restores the previous current runtime on drop. (The public `EnterGuard` of
/// `Handle::enter` wraps one.)
pub(crate) struct CurrentGuard(Option<Entered>);

/// What a [`CurrentGuard`] restores.
struct Entered {
    prev: Option<Arc<Shared>>,
    prev_flag: bool,
    /// `DEPTH` once this guard was made: it must be the innermost when it drops.
    depth: usize,
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        if let Some(entered) = &mut self.0 {
            entered.restore();
        }
    }
}

impl Entered {
    fn restore(&mut self) {
        // Restoring out of order would leave a runtime current that the inner guard's owner
        // already left (perhaps one that has shut down): fail loudly, as tokio does. While
        // unwinding from another panic, leave the state alone instead of aborting.
        let Ok(depth) = DEPTH.try_with(|d| d.get()) else {
            return; // the thread is exiting: nothing is current any more
        };
        if depth != self.depth {
            if !std::thread::panicking() {
                panic!(
                    "spinpark: EnterGuards dropped out of order: a guard from Handle::enter or \
                     Runtime::enter must be dropped before the ones made earlier on the same \
                     thread (drop them in reverse order, as nested scopes do)"
                );
            }
            return;
        }
        let _ = DEPTH.try_with(|d| d.set(self.depth - 1));
        let prev = self.prev.take();
        let _ = RUNTIME.try_with(|r| *r.borrow_mut() = prev);
        let _ = NO_BLOCK_ON.try_with(|b| b.set(self.prev_flag));
    }
}

/// Publishes `state` as the current worker until the guard drops.
pub(crate) fn set_worker(state: &WorkerState) -> WorkerGuard {
    WORKER.with(|w| w.set(state as *const WorkerState));
    WorkerGuard(())
}

/// A task of this worker is about to run: its place waits in this thread's slot, where
/// [`take_place`] may find it, until [`reclaim`].
pub(crate) fn lend(core: Box<WorkerState>) {
    WORKER.with(|w| w.set(&*core as *const WorkerState));
    PLACE.with(|p| {
        let old = p.replace(Some(core));
        debug_assert!(old.is_none(), "a worker's place lent twice");
    });
}

/// The task's run is over: the worker's place back, or `None` if it was handed to another
/// thread meanwhile (then this thread is no longer a worker).
pub(crate) fn reclaim() -> Option<Box<WorkerState>> {
    PLACE.with(|p| p.take())
}

/// `block_in_place`: takes the place of the worker whose task runs here (if any) away from
/// this thread, which stops being that worker.
pub(crate) fn take_place() -> Option<Box<WorkerState>> {
    let core = PLACE.try_with(|p| p.take()).ok().flatten()?;
    WORKER.with(|w| w.set(std::ptr::null()));
    Some(core)
}

/// Sets whether `block_on` is forbidden here, returning the previous setting
/// (`block_in_place` allows it while its closure runs, as tokio does).
pub(crate) fn set_block_on_forbidden(forbidden: bool) -> bool {
    NO_BLOCK_ON.with(|b| b.replace(forbidden))
}

/// Clears the current worker on drop.
pub(crate) struct WorkerGuard(());

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        let _ = WORKER.try_with(|w| w.set(std::ptr::null()));
    }
}

/// Runs `f` with the current worker's state, if this thread is a worker.
pub(crate) fn with_worker<R>(f: impl FnOnce(Option<&WorkerState>) -> R) -> R {
    let ptr = WORKER.try_with(|w| w.get()).unwrap_or(std::ptr::null());
    // SAFETY: a non-null pointer was published by `set_worker` or `lend` from a worker's
    // boxed state, which this thread holds (in its loop, or in `PLACE` while a task runs)
    // until the pointer is cleared: by `take_place` before the box leaves the thread, and by
    // the `WorkerGuard` before the loop gives it up. Only this thread reads this thread-local,
    // and `WorkerState` is only ever accessed through shared references (its mutable parts
    // are `Cell`s).
    let state = unsafe { ptr.as_ref() };
    f(state)
}
