//! [`LocalSet`]: a set of tasks that are not `Send`, run on the thread that owns the set while
//! a future drives it ([`LocalSet::run_until`], [`LocalSet::block_on`], or the set awaited).
//!
//! ```
//! use std::rc::Rc;
//! let rt = spinpark::Builder::new_current_thread().build().unwrap();
//! let set = spinpark::task::LocalSet::new();
//! let shared = Rc::new(5); // not Send
//! let v = set.block_on(&rt, async move {
//!     spinpark::task::spawn_local(async move { *shared * 2 }).await.unwrap()
//! });
//! assert_eq!(v, 10);
//! ```
//!
//! How it works: a local task is an `async_task` task built without the `Send` check, whose
//! runnable only ever goes to the set's queue (`queue.rs`) and is run by the set's thread; the
//! set is `!Send`, so that thread is the one that made the task. Each poll of the driving
//! future polls that future first, then runs up to [`TICK`] queued tasks, each with a fresh
//! cooperative budget; if more are queued it wakes itself and yields, so the runtime's other
//! tasks, I/O and timers get their turn. The set lists its tasks (`owned.rs`); when it is
//! dropped it aborts every unfinished one and runs it once more, on its own thread, so that
//! every future is dropped where it was made and every `JoinHandle` resolves to a cancelled
//! error. Only then is the queue closed.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::current;
use super::owned::Owned;
use super::queue::Remote;
use crate::task::{coop, Guarded, JoinHandle, TaskMeta};

/// Tasks run per poll of the driving future before the set yields to the runtime (tokio's
/// figure for its local queue).
pub(crate) const TICK: usize = 61;

/// What a [`LocalSet`] and its enter guards share (on the set's thread only).
#[derive(Debug, Default)]
pub(crate) struct SetCore {
    remote: Arc<Remote>,
    owned: RefCell<Owned>,
}

impl SetCore {
    /// Builds a local task for `future` and queues it.
    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let meta = TaskMeta::new(None);
        let guarded = Guarded::new(future, meta.clone());
        let remote = self.remote.clone();
        // SAFETY: async-task asks, of a future that is not `Send`, that its runnable be run
        // and dropped on the thread that made it. The runnable goes only to `remote` (the
        // schedule function below, on whatever thread wakes it), and `remote` is popped only
        // by the set's own thread (`tick`, `Drop`), the set being `!Send`. A closed queue
        // never drops a runnable (`Remote::schedule`). The future is `'static`. The schedule
        // function is `Send + Sync + 'static` (it holds an `Arc` of a mutex-guarded queue).
        let (runnable, task) = unsafe {
            async_task::Builder::new()
                .spawn_unchecked(move |()| guarded, move |r| remote.schedule(r))
        };
        let waker = runnable.waker();
        if self.remote.is_closed() {
            // A set already dropped (still current through an enter guard): the task is
            // cancelled at once, its future dropped here.
            meta.abort();
            runnable.run();
        } else {
            self.owned.borrow_mut().push(meta.clone(), waker.clone());
            runnable.schedule();
        }
        JoinHandle::new(task, meta, waker)
    }

    /// Runs up to [`TICK`] queued tasks; returns whether more are queued.
    fn tick(&self) -> bool {
        for _ in 0..TICK {
            let Some(runnable) = self.remote.pop() else {
                return false;
            };
            coop::budgeted(|| runnable.run());
        }
        self.remote.has_ready()
    }

    /// One turn of the set inside a poll of its driving future (whose waker is `cx`'s).
    fn turn(&self, cx: &mut Context<'_>) {
        self.remote.register(cx.waker());
        if self.tick() {
            cx.waker().wake_by_ref();
        }
    }

    /// The number of the set's tasks not finished yet.
    pub(crate) fn alive(&self) -> usize {
        self.owned.borrow().alive()
    }
}

/// A set of tasks that are not `Send`, run on the thread that owns the set; see the module
/// docs of [`crate::task`] and [`spawn_local`](crate::task::spawn_local).
///
/// Its tasks run only while a future drives the set: [`LocalSet::run_until`] (inside
/// any runtime), [`LocalSet::block_on`], or the set itself awaited (which completes when all
/// its tasks have). Dropping the set cancels its unfinished tasks.
///
/// ```
/// # let rt = spinpark::Runtime::new().unwrap();
/// let set = spinpark::task::LocalSet::new();
/// set.spawn_local(async { println!("runs when the set is awaited") });
/// rt.block_on(set); // all its tasks have finished
/// ```
pub struct LocalSet {
    core: Rc<SetCore>,
    /// `!Send` and `!Sync` (also implied by the `Rc`, said here for the reader).
    _not_send: PhantomData<*const ()>,
}

impl LocalSet {
    /// An empty set.
    ///
    /// ```
    /// let set = spinpark::task::LocalSet::new();
    /// # drop(set);
    /// ```
    pub fn new() -> Self {
        Self {
            core: Rc::default(),
            _not_send: PhantomData,
        }
    }

    /// Spawns a task on this set; it runs when the set is next driven. Works outside any
    /// runtime and outside the set's context.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// let set = spinpark::task::LocalSet::new();
    /// let task = set.spawn_local(async { std::rc::Rc::new(3) });
    /// assert_eq!(*set.block_on(&rt, task).unwrap(), 3);
    /// ```
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.core.spawn(future)
    }

    /// Runs `future` to completion, driving the set's tasks meanwhile (and only meanwhile).
    /// `future` and the tasks may call [`spawn_local`](crate::task::spawn_local).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let set = spinpark::task::LocalSet::new();
    /// let v = set
    ///     .run_until(async { spinpark::task::spawn_local(async { 4 }).await.unwrap() })
    ///     .await;
    /// assert_eq!(v, 4);
    /// # });
    /// ```
    pub fn run_until<F: Future>(&self, future: F) -> RunUntil<'_, F> {
        RunUntil {
            set: self,
            future,
            _pinned: PhantomPinned,
        }
    }

    /// Makes this set the current one (for [`spawn_local`](crate::task::spawn_local)) until the
    /// guard is dropped. Tasks spawned so still run only when the set is driven.
    ///
    /// ```
    /// let rt = spinpark::Builder::new_current_thread().build().unwrap();
    /// let set = spinpark::task::LocalSet::new();
    /// let task = {
    ///     let _guard = set.enter();
    ///     spinpark::task::spawn_local(async { 1 })
    /// };
    /// assert_eq!(set.block_on(&rt, task).unwrap(), 1);
    /// ```
    pub fn enter(&self) -> LocalEnterGuard {
        LocalEnterGuard {
            prev: current::replace(Some(self.core.clone())),
            _not_send: PhantomData,
        }
    }
}

impl Default for LocalSet {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSet")
            .field("alive", &self.core.alive())
            .finish_non_exhaustive()
    }
}

/// Awaiting the set runs its tasks until all have finished.
impl Future for LocalSet {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let _enter = self.enter();
        self.core.turn(cx);
        if self.core.owned.borrow_mut().all_finished() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for LocalSet {
    fn drop(&mut self) {
        // Destructors of the tasks' futures run here, with the set current: they may spawn
        // local tasks, which are cancelled in the next round.
        let _enter = self.enter();
        loop {
            let tasks = self.core.owned.borrow_mut().take();
            if tasks.is_empty() && !self.core.remote.has_ready() {
                break;
            }
            for (meta, waker) in &tasks {
                if !meta.is_finished() {
                    meta.abort();
                    waker.wake_by_ref();
                }
            }
            drop(tasks);
            while let Some(runnable) = self.core.remote.pop() {
                // An aborted task's run drops its future and completes it, cancelled.
                coop::budgeted(|| runnable.run());
            }
        }
        self.core.remote.close();
    }
}

/// Restores the previously current local set when dropped; see [`LocalSet::enter`].
///
/// ```
/// let set = spinpark::task::LocalSet::new();
/// let guard = set.enter();
/// drop(guard);
/// ```
pub struct LocalEnterGuard {
    prev: Option<Rc<SetCore>>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for LocalEnterGuard {
    fn drop(&mut self) {
        current::replace(self.prev.take());
    }
}

impl fmt::Debug for LocalEnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalEnterGuard").finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// The future of [`LocalSet::run_until`].
    #[must_use = "futures do nothing unless polled"]
    pub struct RunUntil<'a, F> {
        set: &'a LocalSet,
        #[pin]
        future: F,
        // `!Unpin` whatever `F` is, as tokio's: code written against it pins it as it would
        // tokio's.
        #[pin]
        _pinned: PhantomPinned,
    }
}

impl<F> fmt::Debug for RunUntil<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunUntil").finish_non_exhaustive()
    }
}

impl<F: Future> Future for RunUntil<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _enter = this.set.enter();
        if let Poll::Ready(out) = coop::budgeted(|| this.future.poll(cx)) {
            return Poll::Ready(out);
        }
        this.set.core.turn(cx);
        Poll::Pending
    }
}
