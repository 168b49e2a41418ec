//! The local set current on this thread, for `spawn_local` (`runtime/spawn.rs`), which
//! spawns onto it.
//!
//! ```
//! let rt = spinpark::Builder::new_current_thread().build().unwrap();
//! let set = spinpark::task::LocalSet::new();
//! set.block_on(&rt, async {
//!     let rc = std::rc::Rc::new("not Send");
//!     spinpark::task::spawn_local(async move { *rc }).await.unwrap()
//! });
//! ```
//!
//! How it works: a thread-local slot holds the set that a driving future
//! ([`LocalSet::run_until`](super::LocalSet::run_until)) or an enter guard made current; each
//! restores the previous one when done, so sets nest.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use super::set::SetCore;
use crate::task::JoinHandle;

thread_local! {
    static CURRENT: RefCell<Option<Rc<SetCore>>> = const { RefCell::new(None) };
}

/// Makes `set` current; returns the set that was.
pub(crate) fn replace(set: Option<Rc<SetCore>>) -> Option<Rc<SetCore>> {
    // While the thread's locals are destroyed nothing can be current (and nothing spawns).
    CURRENT.try_with(|c| c.replace(set)).ok().flatten()
}

/// The set current on this thread, if any.
pub(crate) fn get() -> Option<Rc<SetCore>> {
    CURRENT.try_with(|c| c.borrow().clone()).ok().flatten()
}

/// Whether a local set is current on this thread.
pub(crate) fn in_local_set() -> bool {
    get().is_some()
}

/// Spawns `future` on the current local set, or gives it back if there is none.
pub(crate) fn try_spawn_local<F>(future: F) -> Result<JoinHandle<F::Output>, F>
where
    F: Future + 'static,
    F::Output: 'static,
{
    match get() {
        Some(set) => Ok(set.spawn(future)),
        None => Err(future),
    }
}
