//! A local set's run queue: what any thread may touch of a [`LocalSet`](super::LocalSet).
//!
//! ```
//! let set = spinpark::task::LocalSet::new();
//! let task = set.spawn_local(async { 1 }); // queued here until the set runs
//! let rt = spinpark::Builder::new_current_thread().build().unwrap();
//! assert_eq!(set.block_on(&rt, task).unwrap(), 1);
//! ```
//!
//! How it works: the waker of a local task may be used on any thread (a socket's readiness, a
//! channel's sender), so scheduling a local task only ever pushes its runnable here, under a
//! mutex, and wakes whoever drives the set. Only the set's own thread pops and runs them.
//! The mutex is taken once per wake-up and once per run batch; nothing else contends for it
//! but the wakers of the set's own tasks.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::task::Waker;

/// The queue of local tasks ready to run, and the waker of the future driving the set.
#[derive(Debug, Default)]
pub(crate) struct Remote {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    ready: VecDeque<async_task::Runnable>,
    /// The waker of the future that runs the set (`run_until`, the set itself awaited).
    driver: Option<Waker>,
    /// The set was dropped: every one of its tasks has completed (see `set.rs`'s `Drop`).
    closed: bool,
}

impl Remote {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing here runs user code under the lock, so a poisoned lock holds whole data.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a local task that was woken (on any thread) and wakes the set's driver.
    pub(crate) fn schedule(&self, runnable: async_task::Runnable) {
        let mut inner = self.lock();
        if inner.closed {
            // Unreachable in practice: a closed set's tasks have all completed, and a
            // completed task is never scheduled. Were it reached, dropping the runnable here
            // could drop a future that is not `Send` on the wrong thread: leak it instead.
            drop(inner);
            std::mem::forget(runnable);
            return;
        }
        inner.ready.push_back(runnable);
        let driver = inner.driver.take();
        drop(inner);
        if let Some(w) = driver {
            w.wake();
        }
    }

    /// Registers the waker of the future that drives the set, to be woken by the next wake-up.
    pub(crate) fn register(&self, waker: &Waker) {
        let mut inner = self.lock();
        match &inner.driver {
            Some(w) if w.will_wake(waker) => {}
            _ => inner.driver = Some(waker.clone()),
        }
    }

    /// The next task to run, if any (only on the set's own thread).
    pub(crate) fn pop(&self) -> Option<async_task::Runnable> {
        self.lock().ready.pop_front()
    }

    /// Whether a task is waiting to run.
    pub(crate) fn has_ready(&self) -> bool {
        !self.lock().ready.is_empty()
    }

    /// The set is gone; see [`Remote::schedule`].
    pub(crate) fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        inner.driver = None;
    }

    /// Whether [`Remote::close`] was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }
}
