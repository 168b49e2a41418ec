//! Local tasks in a [`JoinSet`]: [`JoinSet::spawn_local`] and [`JoinSet::spawn_local_on`].
//!
//! ```
//! let rt = spinpark::Builder::new_current_thread().build().unwrap();
//! let set = spinpark::task::LocalSet::new();
//! let mut tasks = spinpark::task::JoinSet::new();
//! tasks.spawn_local_on(async { std::rc::Rc::new(1) }, &set);
//! let one = set.block_on(&rt, async { tasks.join_next().await.unwrap().unwrap() });
//! assert_eq!(*one, 1);
//! ```
//!
//! A local task's handle is an ordinary `JoinHandle`, so the set holds it as any other; only
//! the output need not be `Send` (the set is then not `Send` either).

use std::future::Future;

use super::JoinSet;
use crate::local::LocalSet;
use crate::runtime::spawn_local;
use crate::task::AbortHandle;

impl<T: 'static> JoinSet<T> {
    /// Spawns a task that need not be `Send` on the current local set (see
    /// [`spawn_local`](crate::task::spawn_local)) and adds it to the set.
    ///
    /// # Panics
    /// Outside a local set's context, as `spawn_local` does.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// let local = spinpark::task::LocalSet::new();
    /// local.block_on(&rt, async {
    ///     let mut set = spinpark::task::JoinSet::new();
    ///     set.spawn_local(async { std::rc::Rc::new(2) });
    ///     assert_eq!(*set.join_next().await.unwrap().unwrap(), 2);
    /// });
    /// ```
    #[track_caller]
    pub fn spawn_local<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(spawn_local(task))
    }

    /// Spawns a task that need not be `Send` on `local_set` and adds it to the set; it runs
    /// when `local_set` is driven.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// let local = spinpark::task::LocalSet::new();
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn_local_on(async { 3 }, &local);
    /// let v = local.block_on(&rt, async { set.join_next().await.unwrap().unwrap() });
    /// assert_eq!(v, 3);
    /// ```
    pub fn spawn_local_on<F>(&mut self, task: F, local_set: &LocalSet) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(local_set.spawn_local(task))
    }
}
