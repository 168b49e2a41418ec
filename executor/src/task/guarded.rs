//! The wrapper every task's future runs in ([`Guarded`]: panics caught, aborts honoured),
//! and what a task shares with its handles ([`TaskMeta`]).
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! let task = rt.spawn(async { panic!("caught") });
//! assert!(rt.block_on(task).unwrap_err().is_panic()); // the worker did not unwind
//! ```
//!
//! How it works: a task is an `async_task` runnable whose future is wrapped in [`Guarded`],
//! and whose schedule function is the scheduler's (`scheduler/spawn.rs` builds it).
//!
//! `Guarded` drops the future itself, under `catch_unwind`: when it completes or is aborted
//! (a panicking destructor then becomes the task's [`JoinError`]), or when the task is
//! dropped unfinished (the panic is left in [`TaskMeta`] for the `JoinHandle` to report).
//! async-task aborts the process if a destructor it runs panics, and a destructor panicking
//! on a worker would unwind it; so no destructor of user code ever runs inside async-task.
//!
//! A task that returns `Pending` for the first time is listed in its runtime's live-task list
//! (`list.rs`), under its waker, so that shutdown can find it; it unlists itself when its
//! future is dropped.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use super::error::JoinError;
use super::id::{self, Id};
use super::list::{self, TaskList};
use super::panics::{self, Payload};

/// Shared between a task's [`Guarded`] future and its [`JoinHandle`]: the abort flag, and
/// where the task is listed in its runtime's live-task list (one allocation for both).
pub(crate) struct TaskMeta {
    /// The task's id.
    pub(crate) id: Id,
    aborted: AtomicBool,
    /// Set once the future is gone (completed, panicked, aborted, or dropped unfinished).
    finished: AtomicBool,
    /// Blocking-pool closures run to completion in one poll and are never listed (nor are
    /// local tasks); only a runtime's tasks are, and counted alive.
    listable: bool,
    /// The address of the runtime's live-task list a listable task counts in (0 for
    /// others): to tell, without holding a reference, whether a list found on the thread
    /// that drops the task is the task's own.
    home: usize,
    /// The key in `tasks`, or `usize::MAX` while unlisted.
    key: AtomicUsize,
    /// The list the task is in, set when it is first listed (so a spawn does not touch the
    /// list's reference count, a cache line every spawning thread would share).
    tasks: OnceLock<Arc<TaskList>>,
    /// The panic of the future's destructor when the task was dropped unfinished (runtime
    /// shutdown), for the [`JoinHandle`] to report.
    drop_panic: Mutex<Option<Payload>>,
}

impl TaskMeta {
    /// The metadata of a new task: a runtime's task, listed and counted in `home` (its
    /// runtime's live-task list, whose spawn count the caller bumps), or (`None`) a blocking
    /// closure or a local task.
    pub(crate) fn new(home: Option<&TaskList>) -> Arc<Self> {
        Arc::new(Self {
            id: Id::next(),
            aborted: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            listable: home.is_some(),
            home: home.map_or(0, |l| l as *const TaskList as usize),
            key: AtomicUsize::new(usize::MAX),
            tasks: OnceLock::new(),
            drop_panic: Mutex::new(None),
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
        // Tasks are polled only by their runtime's workers, which publish its list.
        let Some(list) = list::polling_for() else {
            return;
        };
        self.key
            .store(list.insert(waker.clone()), Ordering::Relaxed);
        let _ = self.tasks.set(list);
    }

    /// Marks the task aborted: its next poll returns a cancelled [`JoinError`].
    pub(crate) fn abort(&self) {
        // Release: see `Guarded::poll`.
        self.aborted.store(true, Ordering::Release);
    }

    /// The panic of the future's destructor, if the task was dropped unfinished and that
    /// destructor panicked.
    pub(crate) fn take_drop_panic(&self) -> Option<Payload> {
        self.drop_panic
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Whether the task's future is gone: it completed, panicked or was cancelled.
    pub(crate) fn is_finished(&self) -> bool {
        // Acquire: pairs with the Release in `finish`, so a caller that sees the task
        // finished also sees what it did.
        self.finished.load(Ordering::Acquire)
    }

    /// The task's future is gone (its output, if any, is being handed to async-task).
    fn finish(&self) {
        // Release: see `is_finished`.
        self.finished.store(true, Ordering::Release);
    }

    #[cfg(test)]
    pub(crate) fn finish_for_test(&self) {
        self.finish();
    }

    /// The task's future was dropped: one alive task fewer in its runtime's count. The list
    /// is the one the task was listed in, else the one this thread publishes if it is the
    /// task's (a worker of its runtime, or the thread that shuts it down). A task that never
    /// ran, dropped elsewhere (woken on another thread after its runtime shut down), is not
    /// counted out: the count of a runtime that has shut down may stay above zero.
    fn count_exit(&self) {
        if !self.listable {
            return;
        }
        if let Some(list) = self.tasks.get() {
            list.count_exit();
            return;
        }
        list::with_polling_for(|list| {
            if let Some(list) = list.filter(|l| *l as *const TaskList as usize == self.home) {
                list.count_exit();
            }
        });
    }

    /// The future is being dropped: the task is no longer live.
    fn unlist(&self) {
        let key = self.key.swap(usize::MAX, Ordering::Relaxed);
        if let (Some(t), true) = (self.tasks.get(), key != usize::MAX) {
            t.remove(key);
        }
    }
}

/// A task's future as the runtime runs it: panics are caught (in its poll and in its
/// destructor), aborts are honoured.
pub(crate) struct Guarded<F> {
    /// Dropped by [`Guarded::drop_future`], exactly once.
    future: ManuallyDrop<F>,
    /// Whether `future` has not been dropped yet.
    live: bool,
    meta: Arc<TaskMeta>,
}

impl<F> Guarded<F> {
    pub(crate) fn new(future: F, meta: Arc<TaskMeta>) -> Self {
        Self {
            future: ManuallyDrop::new(future),
            live: true,
            meta,
        }
    }

    /// Drops the future where it is (once; later calls do nothing), catching a panic from its
    /// destructor.
    fn drop_future(&mut self) -> Result<(), Payload> {
        if !std::mem::replace(&mut self.live, false) {
            return Ok(());
        }
        // SAFETY: `live` was true, so the future has not been dropped, and it is now false, so
        // it is never touched again (not even if its destructor panics). Dropping in place
        // keeps the pinning promise: a pinned value may be dropped where it is.
        let dropped = panics::catch(|| unsafe { ManuallyDrop::drop(&mut self.future) });
        self.meta.count_exit();
        dropped
    }
}

impl<F> Drop for Guarded<F> {
    // Runs when async-task drops the task's future slot: after completion or abort (the future
    // is gone already), or when the task is dropped unfinished (runtime shutdown).
    fn drop(&mut self) {
        // The future's destructor runs as part of its task (`task::id()` works there).
        let _id = id::enter(self.meta.id);
        if let Err(payload) = self.drop_future() {
            let mut slot = self
                .meta
                .drop_panic
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if slot.is_none() {
                *slot = Some(payload);
            } else {
                drop(slot);
                panics::forget_payload(payload);
            }
        }
        self.meta.unlist();
        self.meta.finish();
    }
}

/// Drops a task's future when the poll it guards unwinds (see `Guarded::poll`).
struct DropOnUnwind<F>(*mut Guarded<F>);

impl<F> Drop for DropOnUnwind<F> {
    fn drop(&mut self) {
        // SAFETY: made in `Guarded::poll` from the `&mut` it holds, which it does not use
        // while this guard lives; reached only while that poll unwinds, after the future's
        // `Pin` is gone.
        let guarded = unsafe { &mut *self.0 };
        if let Err(again) = guarded.drop_future() {
            panics::forget_payload(again);
        }
    }
}

impl<F: Future> Future for Guarded<F> {
    type Output = Outcome<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: we never move it out of `self` (it is only
        // dropped in place, by `drop_future`) and never hand out `&mut F`; `live` and `meta`
        // are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        assert!(this.live, "a spinpark task was polled after it completed");
        let task = this.meta.id;
        let _id = id::enter(task);
        // Work deferred to the poll's end (pushing queued writes) runs when this guard drops:
        // after the poll, and after the future's drop when it completes, panics or is aborted.
        let _scope = super::poll_end::Scope::enter(cx.waker());
        // Acquire: pairs with the Release in `abort`, though the flag carries no data; any
        // ordering would be correct, this one is the conventional flag pairing.
        if this.meta.aborted.load(Ordering::Acquire) {
            // Like tokio: a panic from the aborted future's destructor is what the handle sees.
            let err = match this.drop_future() {
                Ok(()) => JoinError::cancelled(task),
                Err(payload) => JoinError::panic(task, payload),
            };
            this.meta.finish();
            return Poll::Ready(Outcome::new(task, Err(err)));
        }
        // A future whose poll panics is dropped during the unwind, as tokio does (its
        // destructor sees `thread::panicking()`), by a guard that the unwinding drops; a
        // second panic from that destructor is contained there.
        let guarded: *mut Guarded<F> = this;
        let polled = panics::catch(|| {
            let on_unwind = DropOnUnwind(guarded);
            // SAFETY: see above; `future` stays where it is for as long as `self` is pinned,
            // and `live` says it has not been dropped. `guarded` points to `this`, which is
            // not used otherwise until this closure returns; the `Pin` made here is dropped
            // before `on_unwind` is (declared after it), so the guard's drop of the future,
            // on an unwind, never overlaps a borrow of it.
            let future = unsafe { Pin::new_unchecked(&mut *(*guarded).future) };
            let out = future.poll(cx);
            std::mem::forget(on_unwind);
            out
        });
        let out = match polled {
            Ok(Poll::Pending) => {
                this.meta.list_once(cx.waker());
                return Poll::Pending;
            }
            Ok(Poll::Ready(v)) => match this.drop_future() {
                Ok(()) => Ok(v),
                Err(payload) => {
                    // The destructor's panic is the task's outcome; the output goes.
                    panics::drop_quietly(v);
                    Err(JoinError::panic(task, payload))
                }
            },
            Err(payload) => {
                // The poll's panic is reported; a second one from the destructor is dropped.
                if let Err(again) = this.drop_future() {
                    panics::forget_payload(again);
                }
                Err(JoinError::panic(task, payload))
            }
        };
        this.meta.finish();
        Poll::Ready(Outcome::new(task, out))
    }
}

/// A finished task's result as the task stores it until its handle takes it. Dropping it
/// (the handle was dropped, so nobody will take it) never unwinds: a panic from the output's
/// destructor is contained, as tokio does, and runs as part of the task (`task::id()` is the
/// task's there), on whichever thread drops it.
pub(crate) struct Outcome<T> {
    task: Id,
    result: Option<Result<T, JoinError>>,
}

impl<T> Outcome<T> {
    pub(crate) fn new(task: Id, result: Result<T, JoinError>) -> Self {
        Self {
            task,
            result: Some(result),
        }
    }

    pub(crate) fn into_inner(mut self) -> Result<T, JoinError> {
        self.result.take().expect("an outcome is taken once")
    }
}

impl<T> Drop for Outcome<T> {
    fn drop(&mut self) {
        if let Some(result) = self.result.take() {
            let _id = id::enter(self.task);
            panics::drop_quietly(result);
        }
    }
}
