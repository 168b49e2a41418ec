//! [`AbortHandle`]: permission to abort a task, without the right to await it.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let task = spinpark::spawn(std::future::pending::<()>());
//! let abort = task.abort_handle();
//! abort.abort();
//! assert!(task.await.unwrap_err().is_cancelled());
//! assert!(abort.is_finished());
//! # });
//! ```
//!
//! How it works: the handle shares the task's `TaskMeta` (its abort flag and its "finished"
//! flag, `guarded.rs`) and holds a waker of the task, which it wakes after setting the flag so
//! that the task is polled, sees the flag, and drops its future, as [`JoinHandle::abort`]
//! does.
//!
//! [`JoinHandle::abort`]: crate::JoinHandle::abort

use std::fmt;
use std::sync::Arc;
use std::task::Waker;

use super::guarded::TaskMeta;
use super::id::Id;

/// Aborts a task from anywhere, as many times as it is cloned; unlike a [`JoinHandle`] it
/// cannot await the task's output, and dropping it does nothing. [`JoinSet::spawn`] returns
/// one, as does [`JoinHandle::abort_handle`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let mut set = spinpark::task::JoinSet::new();
/// let slow = set.spawn(std::future::pending::<u32>());
/// set.spawn(async { 1 });
/// slow.abort();
/// let mut results = Vec::new();
/// while let Some(r) = set.join_next().await {
///     results.push(r.map_err(|e| e.is_cancelled()));
/// }
/// results.sort();
/// assert_eq!(results, [Ok(1), Err(true)]);
/// # });
/// ```
///
/// [`JoinHandle`]: crate::JoinHandle
/// [`JoinHandle::abort_handle`]: crate::JoinHandle::abort_handle
/// [`JoinSet::spawn`]: crate::JoinSet::spawn
#[derive(Clone)]
pub struct AbortHandle {
    meta: Arc<TaskMeta>,
    waker: Waker,
}

impl AbortHandle {
    pub(crate) fn new(meta: Arc<TaskMeta>, waker: Waker) -> AbortHandle {
        AbortHandle { meta, waker }
    }

    /// Cancels the task: it is not polled again, its future is dropped on the runtime, and its
    /// [`JoinHandle`](crate::JoinHandle) resolves to a cancelled [`JoinError`](crate::JoinError).
    /// Has no effect on a finished task, nor on a `spawn_blocking` closure that has started.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(std::future::pending::<()>());
    /// task.abort_handle().abort();
    /// assert!(task.await.unwrap_err().is_cancelled());
    /// # });
    /// ```
    pub fn abort(&self) {
        self.meta.abort();
        self.waker.wake_by_ref();
    }

    /// The task's id.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(async {});
    /// assert_eq!(task.abort_handle().id(), task.id());
    /// # });
    /// ```
    pub fn id(&self) -> Id {
        self.meta.id
    }

    /// Whether the task has finished: it completed, panicked, or was cancelled (its future
    /// has been dropped).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(async {});
    /// let abort = task.abort_handle();
    /// task.await.unwrap();
    /// assert!(abort.is_finished());
    /// # });
    /// ```
    pub fn is_finished(&self) -> bool {
        self.meta.is_finished()
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}
