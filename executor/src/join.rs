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
//! How it works: every task's future is wrapped in [`Guarded`], which catches a panic from
//! the future (so it never unwinds into a worker) and checks an abort flag before each poll.
//! The task's output is thus `Result<T, JoinError>` already; the handle only has to add the
//! case where the runtime dropped the task before it finished.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};

use crate::tasks::TaskList;

/// Why a task did not produce its output.
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(Box<dyn Any + Send + 'static>),
}

impl JoinError {
    pub(crate) fn cancelled() -> Self {
        Self {
            repr: Repr::Cancelled,
        }
    }

    /// The task was aborted, or dropped because its runtime shut down.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic's payload, to resume it with `std::panic::resume_unwind`.
    ///
    /// # Panics
    /// If the task did not panic; see [`JoinError::try_into_panic`].
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("JoinError::into_panic called on a task that was cancelled, not panicked")
    }

    /// The panic's payload, or the error back if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(p) => Ok(p),
            Repr::Cancelled => Err(self),
        }
    }

    fn panic_message(&self) -> Option<&str> {
        match &self.repr {
            Repr::Panic(p) => p
                .downcast_ref::<&'static str>()
                .copied()
                .or_else(|| p.downcast_ref::<String>().map(String::as_str)),
            Repr::Cancelled => None,
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => f.write_str("task was cancelled"),
            (Repr::Panic(_), Some(msg)) => write!(f, "task panicked: {msg}"),
            (Repr::Panic(_), None) => f.write_str("task panicked"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
            Repr::Panic(_) => write!(f, "JoinError::Panic({:?})", self.panic_message()),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> Self {
        std::io::Error::other(e.to_string())
    }
}

/// Shared between a task's [`Guarded`] future and its [`JoinHandle`]: the abort flag, and
/// where the task is listed in its runtime's live-task list (one allocation for both).
pub(crate) struct TaskMeta {
    aborted: AtomicBool,
    /// Blocking-pool closures run to completion in one poll and are never listed.
    listable: bool,
    /// The key in `tasks`, or `usize::MAX` while unlisted.
    key: AtomicUsize,
    /// The list the task is in, set when it is first listed (so a spawn does not touch the
    /// list's reference count, a cache line every spawning thread would share).
    tasks: OnceLock<Arc<TaskList>>,
}

impl TaskMeta {
    pub(crate) fn new(listable: bool) -> Arc<Self> {
        Arc::new(Self {
            aborted: AtomicBool::new(false),
            listable,
            key: AtomicUsize::new(usize::MAX),
            tasks: OnceLock::new(),
        })
    }

    /// Lists the task under `waker` the first time it returns `Pending`. A task that finishes
    /// in its first poll (most short tasks) never touches the list; one that has not run yet
    /// sits in a queue, which shutdown drains. Only a task that is waiting somewhere needs
    /// the list to be found at shutdown.
    fn list_once(&self, waker: &Waker) {
        // Relaxed: only the thread polling the task reads or writes the key (async-task's
        // task state orders successive polls and the final drop of the future).
        if !self.listable || self.key.load(Ordering::Relaxed) != usize::MAX {
            return;
        }
        // Tasks are polled only by their runtime's workers.
        let Some(list) = crate::context::with_worker(|w| w.map(|w| w.tasks.clone())) else {
            return;
        };
        self.key.store(list.insert(waker.clone()), Ordering::Relaxed);
        let _ = self.tasks.set(list);
    }

    /// The future is being dropped: the task is no longer live.
    fn unlist(&self) {
        let key = self.key.swap(usize::MAX, Ordering::Relaxed);
        if let (Some(t), true) = (self.tasks.get(), key != usize::MAX) {
            t.remove(key);
        }
    }
}

/// A task's future as the runtime runs it: panics are caught, aborts are honoured.
pub(crate) struct Guarded<F> {
    future: F,
    meta: Arc<TaskMeta>,
}

impl<F> Guarded<F> {
    pub(crate) fn new(future: F, meta: Arc<TaskMeta>) -> Self {
        Self { future, meta }
    }
}

impl<F> Drop for Guarded<F> {
    // Runs when the future is dropped (completed, aborted, or dropped with the runtime),
    // which is when the task stops being live.
    fn drop(&mut self) {
        self.meta.unlist();
    }
}

impl<F: Future> Future for Guarded<F> {
    type Output = Result<F::Output, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: we never move it out of `self` (not even in
        // `Drop`) and never hand out `&mut F`; `meta` is not pinned and only read through `&`.
        let this = unsafe { self.get_unchecked_mut() };
        // Acquire: pairs with the Release in `abort`, though the flag carries no data; any
        // ordering would be correct, this one is the conventional flag pairing.
        if this.meta.aborted.load(Ordering::Acquire) {
            return Poll::Ready(Err(JoinError::cancelled()));
        }
        // SAFETY: see above; `future` stays where it is for as long as `self` is pinned.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => {
                this.meta.list_once(cx.waker());
                Poll::Pending
            }
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(JoinError {
                repr: Repr::Panic(payload),
            })),
        }
    }
}

/// An owned permission to await, abort or detach a spawned task.
///
/// Awaiting it yields the task's output, or a [`JoinError`] if the task panicked, was aborted,
/// or was dropped by a runtime that shut down. Dropping the handle detaches the task: it keeps
/// running and its output is dropped.
pub struct JoinHandle<T> {
    task: Option<async_task::FallibleTask<Result<T, JoinError>>>,
    meta: Arc<TaskMeta>,
    waker: Waker,
}

impl<T> JoinHandle<T> {
    pub(crate) fn new(
        task: async_task::Task<Result<T, JoinError>>,
        meta: Arc<TaskMeta>,
        waker: Waker,
    ) -> Self {
        Self {
            task: Some(task.fallible()),
            meta,
            waker,
        }
    }

    /// Cancels the task: it is not polled again, its future is dropped on the runtime, and the
    /// handle resolves to a cancelled [`JoinError`]. Has no effect on a finished task.
    pub fn abort(&self) {
        // Release: see `Guarded::poll`.
        self.meta.aborted.store(true, Ordering::Release);
        self.waker.wake_by_ref();
    }

    /// Whether the task has finished (with output, a panic, or cancellation).
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(|t| t.is_finished())
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let task = self
            .task
            .as_mut()
            .expect("JoinHandle polled after it completed");
        match Pin::new(task).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(out) => {
                self.task = None;
                // `None`: the runtime dropped the task before it completed.
                Poll::Ready(out.unwrap_or_else(|| Err(JoinError::cancelled())))
            }
        }
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
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
