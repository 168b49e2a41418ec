//! [`JoinHandle`]: awaiting, aborting and detaching a spawned task.
//!
//! ```
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! let handle = spinpark_executor::spawn(async { 6 * 7 });
//! assert_eq!(handle.await.unwrap(), 42);
//!
//! let stuck = spinpark_executor::spawn(std::future::pending::<()>());
//! stuck.abort();
//! assert!(stuck.await.unwrap_err().is_cancelled());
//! # });
//! ```
//!
//! How it works: every task's future is wrapped in `guarded.rs`'s `Guarded`, which catches a
//! panic from the future's poll or destructor (so it never unwinds into a worker) and checks
//! an abort flag before each poll. The task's output is thus `Result<T, JoinError>` already,
//! held in an [`Outcome`] whose destructor cannot unwind (async-task aborts the process if one
//! it runs panics); the handle only has to add the case where the runtime dropped the task
//! before it finished, reporting a panic of the future's destructor if there was one.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};

use super::abort::AbortHandle;
use super::coop;
use super::error::JoinError;
use super::guarded::{Outcome, TaskMeta};
use super::id::Id;

/// An owned permission to await, abort or detach a spawned task.
///
/// Awaiting it yields the task's output, or a [`JoinError`] if the task panicked, was aborted,
/// or was dropped by a runtime that shut down. Dropping the handle detaches the task: it keeps
/// running and its output is dropped.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::future::FusedFuture;
/// let mut handle = spinpark::spawn(async { 1 + 1 });
/// assert_eq!((&mut handle).await.unwrap(), 2);
/// assert!(handle.is_terminated()); // so futures::select! takes it as it is
/// # });
/// ```
pub struct JoinHandle<T> {
    task: Option<async_task::FallibleTask<Outcome<T>>>,
    meta: Arc<TaskMeta>,
    waker: Waker,
    /// `Send` and `Sync` only for `T: Send`, as tokio's (`Mutex<T>` is both exactly then):
    /// the handle hands its `T` over, so sharing it among threads may move a `T` across.
    _output: PhantomData<std::sync::Mutex<T>>,
}

impl<T> JoinHandle<T> {
    pub(crate) fn new(
        task: async_task::Task<Outcome<T>>,
        meta: Arc<TaskMeta>,
        waker: Waker,
    ) -> Self {
        Self {
            task: Some(task.fallible()),
            meta,
            waker,
            _output: PhantomData,
        }
    }

    /// Cancels the task: it is not polled again, its future is dropped on the runtime, and the
    /// handle resolves to a cancelled [`JoinError`]. Has no effect on a finished task.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(std::future::pending::<()>());
    /// task.abort();
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
    /// let task = spinpark::spawn(async { spinpark::task::id() });
    /// let id = task.id();
    /// assert_eq!(task.await.unwrap(), id);
    /// # });
    /// ```
    pub fn id(&self) -> Id {
        self.meta.id
    }

    /// A handle that can abort this task from anywhere, independently of this one (it may
    /// outlive it, and be cloned).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(std::future::pending::<()>());
    /// let abort = task.abort_handle();
    /// spinpark::spawn(async move { abort.abort() }).await.unwrap();
    /// assert!(task.await.unwrap_err().is_cancelled());
    /// # });
    /// ```
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle::new(self.meta.clone(), self.waker.clone())
    }

    /// Whether the task has finished (with output, a panic, or cancellation).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(async {});
    /// while !task.is_finished() {
    ///     spinpark::yield_now().await;
    /// }
    /// task.await.unwrap();
    /// # });
    /// ```
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(|t| t.is_finished())
    }
}

// Nothing in a handle is pinned (its output comes out of the task by value), so it is `Unpin`
// for every `T`, as tokio's, whatever the marker above says.
impl<T> Unpin for JoinHandle<T> {}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let task = self
            .task
            .as_mut()
            .expect("JoinHandle polled after it completed");
        // A join is one operation of the task's budget, as in tokio: a loop awaiting handles
        // of tasks that already finished still yields now and then.
        let coop = ready!(coop::poll_proceed(cx));
        match Pin::new(task).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(out) => {
                coop.made_progress();
                self.task = None;
                Poll::Ready(match out {
                    Some(outcome) => outcome.into_inner(),
                    // The runtime dropped the task before it completed; its future's
                    // destructor may have panicked meanwhile.
                    None => Err(match self.meta.take_drop_panic() {
                        Some(payload) => JoinError::panic(self.meta.id, payload),
                        None => JoinError::cancelled(self.meta.id),
                    }),
                })
            }
        }
    }
}

/// Terminated once it has produced the task's result, so `futures::select!` takes a
/// `JoinHandle` without `.fuse()`.
impl<T> futures_core::FusedFuture for JoinHandle<T> {
    fn is_terminated(&self) -> bool {
        self.task.is_none()
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            // A finished task's output is dropped here (through `Outcome`, quietly).
            task.detach();
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}
