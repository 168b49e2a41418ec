//! [`EnterGuard`]: a runtime made current on a thread that is not one of its own.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::exclusive::Exclusive;
use crate::local::LocalEnterGuard;
use crate::scheduler::{current, Shared};

/// Returned by [`Handle::enter`] and [`crate::Runtime::enter`]: while it lives, the runtime
/// is current on this thread, so `spawn`, `Handle::current` and the reactor's constructors
/// (sockets, timers, signals) work here. Dropping it restores what was current before.
///
/// Guards must be dropped in the reverse order they were made (as scopes do); dropping one
/// out of order panics, as tokio's does, rather than leave the wrong runtime current. The
/// guard stays on the thread that made it (it is not `Send`); it is `Sync`, as tokio's, since
/// a shared reference to it can do nothing.
///
/// ```
/// let rt = spinpark_executor::Runtime::new().unwrap();
/// let handle = rt.handle().clone();
/// std::thread::spawn(move || {
///     let _guard = handle.enter();
///     let task = spinpark_executor::spawn(async { 1 });
///     assert_eq!(handle.block_on(task).unwrap(), 1);
/// })
/// .join()
/// .unwrap();
/// ```
///
/// [`Handle::enter`]: crate::Handle::enter
#[must_use = "the runtime is current only while the guard lives"]
pub struct EnterGuard<'a> {
    /// A `LocalRuntime`'s local set, current as long as the runtime (dropped first). Its
    /// guard holds an `Rc`, which is not `Sync`; nothing reads it through `&self` (only the
    /// drop does), so it is wrapped to keep the `EnterGuard` `Sync`.
    local: Exclusive<Option<LocalEnterGuard>>,
    _restore: current::CurrentGuard,
    /// Borrows the runtime (the `Handle` or `Runtime` it was made from).
    _runtime: PhantomData<&'a Shared>,
    /// Thread-local state is restored on drop: keep the guard on its thread (not `Send`). A
    /// `MutexGuard` is the standard library's type that is `Sync` but not `Send`.
    _not_send: PhantomData<std::sync::MutexGuard<'static, ()>>,
}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

/// Makes `shared`'s runtime current on this thread until the guard drops.
pub(crate) fn enter(shared: &Arc<Shared>) -> EnterGuard<'_> {
    // Keep the thread's "no block_on here" flag: entering from a worker or from inside
    // block_on must not make a nested block_on (which would deadlock) look allowed.
    let restore = current::enter(shared.clone(), current::block_on_forbidden());
    EnterGuard {
        local: Exclusive::new(None),
        _restore: restore,
        _runtime: PhantomData,
        _not_send: PhantomData,
    }
}

impl EnterGuard<'_> {
    /// Also keeps `local` (a `LocalRuntime`'s set) current while the guard lives.
    pub(crate) fn set_local(&mut self, local: LocalEnterGuard) {
        *self.local.get_mut() = Some(local);
    }
}
