//! Task bookkeeping: building a task ([`spawn`], [`spawn_blocking`]), the wrapper every
//! task's future runs in ([`Guarded`]), and the list of a runtime's live tasks, so that
//! shutting down can drop every one of them.
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! let waiting = rt.spawn(std::future::pending::<()>());
//! drop(rt); // shutdown drops the waiting task
//! assert!(futures_util::FutureExt::now_or_never(waiting).unwrap().unwrap_err().is_cancelled());
//! ```
//!
//! How it works: a task is an `async_task` runnable whose future is wrapped in [`Guarded`]
//! (panics caught, aborts honoured) and whose schedule function is [`Shared::schedule`].
//!
//! `Guarded` also drops the future itself, under `catch_unwind`: when it completes or is
//! aborted (a panicking destructor then becomes the task's [`JoinError`]), or when the task is
//! dropped unfinished (the panic is left in [`TaskMeta`] for the [`JoinHandle`] to report).
//! async-task aborts the process if a destructor it runs panics, and a destructor panicking
//! on a worker would unwind it; so no destructor of user code ever runs inside async-task.
//!
//! A task that waits on something outside the runtime's queues (a channel, a timer, a waker
//! someone stashed) is reachable only through its waker. The runtime keeps one waker per
//! waiting task in a [`TaskList`] (a task is listed the first time it returns `Pending`; one
//! that is queued is dropped with its queue); shutting down wakes them all, and a task woken
//! after shutdown goes to the global queue, which the shutting-down thread drains and drops
//! (not dropped inside the wake: a waker is often called with a lock held that the task's
//! destructor takes). A task removes itself when its
//! future is dropped (it completed, was aborted, or was dropped). The list is sharded so
//! spawns on different threads rarely meet on a lock.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use crate::join::{JoinError, JoinHandle, Outcome};
use crate::panics::{self, Payload};
use crate::shared::Shared;

/// Builds a task for `future` and schedules it on `shared`'s runtime; see [`crate::spawn`].
pub(crate) fn spawn<F>(shared: &Arc<Shared>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let meta = TaskMeta::new(true);
    let schedule_on = shared.clone();
    let guarded = Guarded::new(future, meta.clone());
    let (runnable, task) = async_task::Builder::new().spawn(
        move |()| guarded,
        async_task::WithInfo(move |r, info: async_task::ScheduleInfo| {
            schedule_on.schedule(r, info.woken_while_running)
        }),
    );
    let waker = runnable.waker();
    shared.schedule_new(runnable);
    JoinHandle::new(task, meta, waker)
}

/// Builds a task that runs `f` once on `shared`'s blocking pool; see
/// [`crate::spawn_blocking`].
pub(crate) fn spawn_blocking<F, R>(shared: &Arc<Shared>, f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let meta = TaskMeta::new(false);
    let schedule_on = shared.clone();
    let guarded = Guarded::new(
        {
            let mut f = Some(f);
            std::future::poll_fn(move |_| Poll::Ready(f.take().expect("polled once")()))
        },
        meta.clone(),
    );
    let (runnable, task) = async_task::spawn(guarded, move |r| {
        schedule_on.blocking.schedule(r, &schedule_on)
    });
    let waker = runnable.waker();
    crate::metrics::bump(&shared.counters.global().spawned);
    runnable.schedule();
    JoinHandle::new(task, meta, waker)
}

/// Shared between a task's [`Guarded`] future and its [`JoinHandle`]: the abort flag, and
/// where the task is listed in its runtime's live-task list (one allocation for both).
pub(crate) struct TaskMeta {
    aborted: AtomicBool,
    /// Set once the future is gone (completed, panicked, aborted, or dropped unfinished).
    finished: AtomicBool,
    /// Blocking-pool closures run to completion in one poll and are never listed.
    listable: bool,
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
    pub(crate) fn new(listable: bool) -> Arc<Self> {
        Arc::new(Self {
            aborted: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            listable,
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
        // Tasks are polled only by their runtime's workers.
        let Some(list) = crate::context::with_worker(|w| w.map(|w| w.tasks.clone())) else {
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
        panics::catch(|| unsafe { ManuallyDrop::drop(&mut self.future) })
    }
}

impl<F> Drop for Guarded<F> {
    // Runs when async-task drops the task's future slot: after completion or abort (the future
    // is gone already), or when the task is dropped unfinished (runtime shutdown).
    fn drop(&mut self) {
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

impl<F: Future> Future for Guarded<F> {
    type Output = Outcome<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: we never move it out of `self` (it is only
        // dropped in place, by `drop_future`) and never hand out `&mut F`; `live` and `meta`
        // are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        assert!(this.live, "a spinpark task was polled after it completed");
        // Acquire: pairs with the Release in `abort`, though the flag carries no data; any
        // ordering would be correct, this one is the conventional flag pairing.
        if this.meta.aborted.load(Ordering::Acquire) {
            // Like tokio: a panic from the aborted future's destructor is what the handle sees.
            let err = match this.drop_future() {
                Ok(()) => JoinError::cancelled(),
                Err(payload) => JoinError::panic(payload),
            };
            this.meta.finish();
            return Poll::Ready(Outcome::new(Err(err)));
        }
        // SAFETY: see above; `future` stays where it is for as long as `self` is pinned, and
        // `live` says it has not been dropped.
        let future = unsafe { Pin::new_unchecked(&mut *this.future) };
        let out = match panics::catch(|| future.poll(cx)) {
            Ok(Poll::Pending) => {
                this.meta.list_once(cx.waker());
                return Poll::Pending;
            }
            Ok(Poll::Ready(v)) => match this.drop_future() {
                Ok(()) => Ok(v),
                Err(payload) => {
                    // The destructor's panic is the task's outcome; the output goes.
                    panics::drop_quietly(v);
                    Err(JoinError::panic(payload))
                }
            },
            Err(payload) => {
                // The poll's panic is reported; a second one from the destructor is dropped.
                if let Err(again) = this.drop_future() {
                    panics::forget_payload(again);
                }
                Err(JoinError::panic(payload))
            }
        };
        this.meta.finish();
        Poll::Ready(Outcome::new(out))
    }
}

const SHARDS: usize = 16;

thread_local! {
    /// This thread's shard, picked once.
    static SHARD_HINT: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Live tasks' wakers.
pub(crate) struct TaskList {
    shards: [Mutex<Shard>; SHARDS],
    next_shard: AtomicUsize,
}

#[derive(Default)]
struct Shard {
    slots: Vec<Option<Waker>>,
    free: Vec<usize>,
}

impl TaskList {
    pub(crate) fn new() -> Self {
        Self {
            shards: std::array::from_fn(|_| Mutex::new(Shard::default())),
            next_shard: AtomicUsize::new(0),
        }
    }

    fn shard(&self, i: usize) -> std::sync::MutexGuard<'_, Shard> {
        // No code runs user code while holding a shard lock, so poisoning cannot happen;
        // recover anyway rather than cascade.
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a task by its waker; returns the key to [`TaskList::remove`] it with.
    pub(crate) fn insert(&self, waker: Waker) -> usize {
        // Spread over shards by thread, so concurrent spawners rarely share a lock; removal
        // finds the shard from the key.
        let s = SHARD_HINT.with(|h| {
            let v = h.get();
            if v == usize::MAX {
                // Relaxed: only spreads threads over shards; any value is correct.
                let n = self.next_shard.fetch_add(1, Relaxed) % SHARDS;
                h.set(n);
                n
            } else {
                v
            }
        });
        let mut shard = self.shard(s);
        let i = match shard.free.pop() {
            Some(i) => {
                shard.slots[i] = Some(waker);
                i
            }
            None => {
                shard.slots.push(Some(waker));
                shard.slots.len() - 1
            }
        };
        i * SHARDS + s
    }

    /// Forgets a task (its future is being dropped).
    pub(crate) fn remove(&self, key: usize) {
        let (i, s) = (key / SHARDS, key % SHARDS);
        let waker = {
            let mut shard = self.shard(s);
            let w = shard.slots.get_mut(i).and_then(Option::take);
            if w.is_some() {
                shard.free.push(i);
            }
            w
        };
        // Dropped outside the lock: dropping a waker may free a task.
        drop(waker);
    }

    /// Wakes every live task once (after shutdown, that drops them) and forgets them all.
    pub(crate) fn wake_all(&self) {
        for s in 0..SHARDS {
            let slots = std::mem::take(&mut self.shard(s).slots);
            self.shard(s).free.clear();
            for w in slots.into_iter().flatten() {
                w.wake();
            }
        }
    }

    /// How many tasks are alive.
    pub(crate) fn len(&self) -> usize {
        (0..SHARDS)
            .map(|s| {
                let sh = self.shard(s);
                sh.slots.len() - sh.free.len()
            })
            .sum()
    }
}
