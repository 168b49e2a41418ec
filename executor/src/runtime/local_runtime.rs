//! [`LocalRuntime`]: a current-thread runtime whose thread also runs local tasks (futures that
//! are not `Send`) anywhere in it, and [`LocalSet::block_on`].
//!
//! ```
//! let rt = spinpark::Builder::new_current_thread()
//!     .build_local(Default::default())
//!     .unwrap();
//! let rc = std::rc::Rc::new(2);
//! let v = rt.block_on(async move { spinpark::task::spawn_local(async move { *rc }).await });
//! assert_eq!(v.unwrap(), 2);
//! ```
//!
//! How it works: a current-thread [`Runtime`] and a [`LocalSet`] kept together. Every
//! `block_on` drives the future inside the set's `run_until`, and entering the runtime also
//! makes the set current, so `spawn_local` works wherever `spawn` does. The type is `!Send`:
//! local tasks must stay on the thread that made them. Dropping it drops the set first (its
//! tasks' destructors run with the runtime current), then the runtime.

use std::fmt;
use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::time::Duration;

use super::{Builder, EnterGuard, Handle, Runtime, RuntimeFlavor};
use crate::local::LocalSet;
use crate::scheduler::RuntimeMetrics;
use crate::task::JoinHandle;

/// Options for [`Builder::build_local`] (none yet; it exists so that tokio's calls compile
/// and options can come without breaking them).
///
/// ```
/// let opts = spinpark::runtime::LocalOptions::default();
/// # drop(opts);
/// ```
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct LocalOptions {
    /// Neither `Send` nor `Sync`, as tokio's: options for a runtime that stays on its thread.
    _local: PhantomData<*mut ()>,
}

/// A current-thread runtime on which [`spawn_local`](crate::task::spawn_local) works
/// everywhere; see the module docs. Built by [`Builder::build_local`] or
/// [`LocalRuntime::new`].
///
/// ```
/// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
/// let task = rt.spawn_local(async { std::rc::Rc::new(7) });
/// assert_eq!(*rt.block_on(task).unwrap(), 7);
/// ```
pub struct LocalRuntime {
    /// Dropped first, in `Drop`, with the runtime entered.
    set: Option<LocalSet>,
    rt: Option<Runtime>,
}

impl fmt::Debug for LocalRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalRuntime").finish_non_exhaustive()
    }
}

impl LocalRuntime {
    /// A local runtime with the default settings (I/O and timers on).
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// assert_eq!(rt.block_on(async { 1 }), 1);
    /// ```
    pub fn new() -> io::Result<LocalRuntime> {
        Builder::new_current_thread().build_local(LocalOptions::default())
    }

    fn rt(&self) -> &Runtime {
        self.rt.as_ref().expect("present until dropped")
    }

    fn set(&self) -> &LocalSet {
        self.set.as_ref().expect("present until dropped")
    }

    /// The runtime's handle (for `Send` tasks, from any thread).
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// let task = rt.handle().spawn(async { 3 });
    /// assert_eq!(rt.block_on(task).unwrap(), 3);
    /// ```
    pub fn handle(&self) -> &Handle {
        self.rt().handle()
    }

    /// Spawns a local task; it runs during this runtime's `block_on` calls.
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// let task = rt.spawn_local(async { 4 });
    /// assert_eq!(rt.block_on(task).unwrap(), 4);
    /// ```
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.set().spawn_local(future)
    }

    /// Runs `f` on the blocking pool; see [`crate::spawn_blocking`].
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// let task = rt.spawn_blocking(|| 5);
    /// assert_eq!(rt.block_on(task).unwrap(), 5);
    /// ```
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.rt().spawn_blocking(f)
    }

    /// Runs `future` to completion on this thread, with the runtime and its local set current;
    /// tasks, local tasks, I/O and timers run meanwhile.
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// let v = rt.block_on(async { spinpark::task::spawn_local(async { 6 }).await.unwrap() });
    /// assert_eq!(v, 6);
    /// ```
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.rt().block_on(self.set().run_until(future))
    }

    /// Makes the runtime and its local set current on this thread until the guard is dropped.
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// let task = {
    ///     let _guard = rt.enter();
    ///     spinpark::task::spawn_local(async { 8 })
    /// };
    /// assert_eq!(rt.block_on(task).unwrap(), 8);
    /// ```
    pub fn enter(&self) -> EnterGuard<'_> {
        let mut guard = self.rt().enter();
        guard.set_local(self.set().enter());
        guard
    }

    /// A snapshot of the runtime's counters; see [`Runtime::metrics`].
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// assert_eq!(rt.metrics().num_workers(), 1);
    /// ```
    pub fn metrics(&self) -> RuntimeMetrics {
        self.rt().metrics()
    }

    /// Shuts down, waiting at most `timeout`; see [`Runtime::shutdown_timeout`].
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// rt.shutdown_timeout(std::time::Duration::from_secs(1));
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        self.drop_set();
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(timeout);
        }
    }

    /// Shuts down without waiting for running blocking closures; see
    /// [`Runtime::shutdown_background`].
    ///
    /// ```
    /// let rt = spinpark::runtime::LocalRuntime::new().unwrap();
    /// rt.shutdown_background();
    /// ```
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// Drops the local set (cancelling its tasks) with the runtime current.
    fn drop_set(&mut self) {
        if let (Some(set), Some(rt)) = (self.set.take(), self.rt.as_ref()) {
            let _enter = rt.enter();
            drop(set);
        }
    }
}

impl Drop for LocalRuntime {
    fn drop(&mut self) {
        self.drop_set();
    }
}

impl Builder {
    /// Builds a [`LocalRuntime`]: this builder's current-thread runtime, with a local set.
    ///
    /// # Errors
    /// Those of [`Builder::build`]; `InvalidInput` for a multi-thread builder (a local
    /// runtime is one thread).
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread()
    ///     .enable_all()
    ///     .build_local(Default::default())
    ///     .unwrap();
    /// assert_eq!(rt.block_on(async { 2 }), 2);
    /// ```
    pub fn build_local(mut self, options: LocalOptions) -> io::Result<LocalRuntime> {
        let LocalOptions { _local } = options;
        if self.flavor() != RuntimeFlavor::CurrentThread {
            // tokio panics there.
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "spinpark: build_local needs a current-thread builder \
                 (Builder::new_current_thread())",
            ));
        }
        self.knobs.local = true;
        Ok(LocalRuntime {
            set: Some(LocalSet::new()),
            rt: Some(self.build()?),
        })
    }
}

impl LocalSet {
    /// Runs `future` to completion on `rt` ([`Runtime::block_on`]), driving this set's tasks
    /// meanwhile; see [`LocalSet::run_until`].
    ///
    /// ```
    /// let rt = spinpark::Runtime::new().unwrap();
    /// let set = spinpark::task::LocalSet::new();
    /// let v = set.block_on(&rt, async { spinpark::task::spawn_local(async { 9 }).await });
    /// assert_eq!(v.unwrap(), 9);
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, rt: &Runtime, future: F) -> F::Output {
        rt.block_on(self.run_until(future))
    }
}
