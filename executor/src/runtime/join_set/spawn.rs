//! Spawning into a [`JoinSet`]: tasks on the current runtime or a given one, and closures on
//! the blocking pool.
//!
//! ```
//! let rt = spinpark::Runtime::new().unwrap();
//! let mut set = spinpark::task::JoinSet::new();
//! set.spawn_on(async { 1 }, rt.handle());
//! set.spawn_blocking_on(|| 2, rt.handle());
//! let mut sum = 0;
//! rt.block_on(async { while let Some(r) = set.join_next().await { sum += r.unwrap() } });
//! assert_eq!(sum, 3);
//! ```

use std::future::Future;

use super::JoinSet;
use crate::runtime::Handle;
use crate::task::AbortHandle;

impl<T: Send + 'static> JoinSet<T> {
    /// Spawns a task on the current runtime and adds it to the set; see [`crate::spawn`].
    /// Returns an [`AbortHandle`] to cancel that one task (dropping it does nothing).
    ///
    /// # Panics
    /// Outside a spinpark runtime, with a message that says so; see [`JoinSet::spawn_on`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn(async { "hello" });
    /// assert_eq!(set.join_next().await.unwrap().unwrap(), "hello");
    /// # });
    /// ```
    #[track_caller]
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        match Handle::try_current() {
            Ok(h) => self.insert(h.spawn(task)),
            Err(_) => panic!(
                "JoinSet::spawn called outside a spinpark runtime: call it from a task, from \
                 Runtime::block_on, or from #[spinpark::main], or use JoinSet::spawn_on"
            ),
        }
    }

    /// Spawns a task on `handle`'s runtime and adds it to the set. Works from any thread.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn_on(async { 1 + 1 }, rt.handle()); // not inside the runtime
    /// assert_eq!(rt.block_on(set.join_next()).unwrap().unwrap(), 2);
    /// ```
    pub fn spawn_on<F>(&mut self, task: F, handle: &Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(handle.spawn(task))
    }

    /// Runs `f` on the current runtime's blocking pool and adds it to the set; see
    /// [`crate::spawn_blocking`]. Aborting it has no effect once it has started.
    ///
    /// # Panics
    /// Outside a spinpark runtime; see [`JoinSet::spawn_blocking_on`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn_blocking(|| std::fs::metadata("/").is_ok());
    /// assert!(set.join_next().await.unwrap().unwrap());
    /// # });
    /// ```
    #[track_caller]
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        match Handle::try_current() {
            Ok(h) => self.insert(h.spawn_blocking(f)),
            Err(_) => panic!(
                "JoinSet::spawn_blocking called outside a spinpark runtime: call it from a \
                 task, from Runtime::block_on, or from #[spinpark::main], or use \
                 JoinSet::spawn_blocking_on"
            ),
        }
    }

    /// Runs `f` on `handle`'s blocking pool and adds it to the set. Works from any thread.
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn_blocking_on(|| 6 * 7, rt.handle());
    /// assert_eq!(rt.block_on(set.join_next()).unwrap().unwrap(), 42);
    /// ```
    pub fn spawn_blocking_on<F>(&mut self, f: F, handle: &Handle) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        self.insert(handle.spawn_blocking(f))
    }
}
