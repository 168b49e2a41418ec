//! [`JoinSet`]: a collection of spawned tasks whose results are taken as the tasks finish, as
//! `tokio::task::JoinSet`. A server keeps its connection tasks in one, to reap them as they end
//! and to abort the rest when it shuts down.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use spinpark::task::JoinSet;
//!
//! let mut set = JoinSet::new();
//! for i in 0..10u64 {
//!     set.spawn(async move { i * i });
//! }
//! let mut sum = 0;
//! while let Some(res) = set.join_next().await {
//!     sum += res.unwrap(); // or a JoinError: the task panicked or was aborted
//! }
//! assert_eq!(sum, 285);
//! # });
//! ```
//!
//! How it works: the set owns a [`JoinHandle`] per task, in a slab (a `Vec` of slots with a
//! free list). Each entry has its own waker, registered with its handle when the task is
//! added; when the task finishes, that waker appends the entry's key to a ready list shared
//! with the set (a `VecDeque` under a mutex) and wakes whoever last waited in
//! [`JoinSet::join_next`]. `join_next` takes keys from the ready list and polls only those
//! handles, so a finished task costs O(1) however many tasks the set holds: it never polls
//! every handle on a wake-up. A per-entry flag keeps an entry in the ready list at most once,
//! and a key carries the entry's id, so a key left behind by a removed entry is recognised and
//! skipped. An entry leaves the set only when `join_next` returns its result (or
//! `detach_all`, drop), so dropping a `join_next` future (a `select!` branch that lost)
//! loses nothing.
//!
//! Why not `futures_util::stream::FuturesUnordered`: the executor depends on `futures-core`
//! only, and `FuturesUnordered` would bring `futures-util` in as a runtime dependency for a
//! small part of what it does (a lock-free intrusive queue and per-future wakers, for futures
//! it owns and polls itself). A `JoinHandle` only needs to be polled once it has finished, so
//! a ready list of keys is all it takes, with no `unsafe`.

use std::collections::VecDeque;
use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll, Wake, Waker};

use crate::task::{coop, panics, AbortHandle, Id, JoinError, JoinHandle};

mod local;
mod spawn;

/// A collection of tasks spawned on a spinpark runtime, whose results are taken in the order
/// the tasks finish. The same API as `tokio::task::JoinSet`: `spawn` returns an
/// [`AbortHandle`] for the task it adds.
///
/// All the tasks return the same type `T`. [`join_next`](JoinSet::join_next) waits for the next
/// task to finish and gives its output (or a [`JoinError`] if it panicked or was aborted);
/// it returns `None` once the set is empty. Dropping the set aborts every task still in it;
/// [`detach_all`](JoinSet::detach_all) lets them run on instead.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::task::JoinSet;
///
/// let mut connections = JoinSet::new();
/// for id in 0..3 {
///     connections.spawn(async move {
///         // ... serve connection `id` ...
///         id
///     });
/// }
/// let mut served = Vec::new();
/// while let Some(res) = connections.join_next().await {
///     served.push(res.unwrap());
/// }
/// served.sort();
/// assert_eq!(served, [0, 1, 2]);
/// # });
/// ```
///
/// How it works: the set owns the tasks' [`JoinHandle`]s, each with a waker of its own that
/// puts the task on the set's ready list when it finishes. `join_next` polls only the handles
/// on that list, so a task's end costs O(1) whatever the size of the set.
pub struct JoinSet<T> {
    /// The entries; `None` slots are listed in `free`.
    slots: Vec<Option<Entry<T>>>,
    free: Vec<usize>,
    /// The number of `Some` slots.
    len: usize,
    /// The id the next entry gets; ids are never reused, so a stale key is recognised.
    next_id: u64,
    /// Keys of entries whose tasks have finished (or may have), pushed by the entries' wakers.
    ready: Arc<ReadyList>,
    /// Keys taken from `ready` in one go (one lock per batch), not yet looked at.
    batch: VecDeque<Key>,
    /// How many times a task's `JoinHandle` was polled, for the O(1)-per-wake-up unit test.
    #[cfg(test)]
    handle_polls: u64,
}

/// Where an entry is, and which entry: a slot can be reused by a later entry.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    slot: usize,
    id: u64,
}

struct Entry<T> {
    /// The task's id, reported by the `*_with_id` methods.
    id: Id,
    state: State<T>,
    /// This entry's key (its id says which entry this is) and flag, shared with its waker.
    notify: Arc<EntryWaker>,
    /// The waker registered with the entry's `JoinHandle` (made from `notify`).
    waker: Waker,
}

enum State<T> {
    /// The task was running when it was added; its handle has `waker` registered.
    Running(JoinHandle<T>),
    /// The task had already finished when it was added: the poll that registers the waker
    /// returned its result. In a `Mutex` only so that the set stays `Sync` (a `JoinError`
    /// holds a panic payload, which is `Send` but not `Sync`); it is only ever taken out with
    /// `into_inner`, never locked.
    Done(Mutex<Result<T, JoinError>>),
}

/// The keys of entries ready to be polled, and the waker of the last `join_next` that found
/// none.
struct ReadyList {
    inner: Mutex<ReadyInner>,
}

struct ReadyInner {
    keys: VecDeque<Key>,
    waker: Option<Waker>,
}

impl ReadyList {
    fn lock(&self) -> MutexGuard<'_, ReadyInner> {
        // No user code runs under this lock (wakers are woken and dropped after it is
        // released), so it cannot be poisoned; recover anyway rather than cascade.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The waker of one entry: puts the entry's key on the ready list (once until the set takes
/// it) and wakes the set's waiter.
struct EntryWaker {
    key: Key,
    /// Set when the key is put on the ready list, cleared when the set takes it to poll the
    /// entry. Also set for good when the entry leaves the set, so a late wake-up does nothing.
    queued: AtomicBool,
    ready: Arc<ReadyList>,
}

impl Wake for EntryWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Relaxed: the flag guards no data (the key travels through the ready list's mutex).
        // The wake-up that matters, the task finishing, reads this waker from the task after
        // `poll_entry` registered it, which it did after clearing the flag; async-task orders
        // the registration before that read, so this swap sees the cleared flag (or a later
        // value) and the key is queued.
        if self.queued.swap(true, Relaxed) {
            return;
        }
        let waiter = {
            let mut inner = self.ready.lock();
            inner.keys.push_back(self.key);
            inner.waker.take()
        };
        if let Some(w) = waiter {
            w.wake();
        }
    }
}

impl<T> JoinSet<T> {
    /// An empty set.
    ///
    /// ```
    /// let set = spinpark::task::JoinSet::<()>::new();
    /// assert!(set.is_empty());
    /// ```
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
            next_id: 0,
            ready: Arc::new(ReadyList {
                inner: Mutex::new(ReadyInner {
                    keys: VecDeque::new(),
                    waker: None,
                }),
            }),
            batch: VecDeque::new(),
            #[cfg(test)]
            handle_polls: 0,
        }
    }

    /// The number of tasks in the set, counting those that have finished but whose results
    /// have not been taken yet.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn(async { 1 });
    /// set.spawn(async { 2 });
    /// assert_eq!(set.len(), 2);
    /// set.join_next().await;
    /// assert_eq!(set.len(), 1);
    /// # });
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set holds no task.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// assert!(set.is_empty());
    /// set.spawn(async {});
    /// assert!(!set.is_empty());
    /// # });
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Waits for one of the tasks to finish and returns its result: its output, or a
    /// [`JoinError`] if it panicked or was aborted. Results come in the order the tasks
    /// finish, not the order they were spawned. Returns `None` if the set is empty.
    ///
    /// # Cancel safety
    /// Cancel-safe: if the future is dropped before it completes (a `select!` branch that
    /// lost), no result is lost; every task stays in the set until a `join_next` returns it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn(async { panic!("boom") });
    /// let err = set.join_next().await.unwrap().unwrap_err();
    /// assert!(err.is_panic());
    /// assert!(set.join_next().await.is_none()); // empty now
    /// # });
    /// ```
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// Polls for a task to finish: what [`JoinSet::join_next`] does, for hand-written futures.
    ///
    /// * `Ready(Some(result))`: a task finished; it has left the set.
    /// * `Ready(None)`: the set is empty.
    /// * `Pending`: no task has finished yet; the context's waker is woken when one does
    ///   (only the waker of the latest call is kept). Also returned, with the waker woken at
    ///   once, when the task has used up its cooperative budget ([`crate::coop`]), so a loop
    ///   over many finished tasks lets its worker's other tasks run.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn(async { 5 });
    /// let out = std::future::poll_fn(|cx| set.poll_join_next(cx)).await;
    /// assert_eq!(out.unwrap().unwrap(), 5);
    /// # });
    /// ```
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|o| o.map(|r| r.map(|(_, out)| out)))
    }

    /// [`JoinSet::poll_join_next`], with the finished task's id beside its output (a failed
    /// task's id is in its [`JoinError`]).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// let id = set.spawn(async { 5 }).id();
    /// let out = std::future::poll_fn(|cx| set.poll_join_next_with_id(cx)).await;
    /// assert_eq!(out.unwrap().unwrap(), (id, 5));
    /// # });
    /// ```
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        let coop = ready!(coop::poll_proceed(cx));
        loop {
            let Some(key) = self.pop_ready(Some(cx.waker())) else {
                return Poll::Pending;
            };
            if let Some(out) = self.poll_entry(key) {
                coop.made_progress();
                return Poll::Ready(Some(out));
            }
        }
    }

    /// Returns the result of a task that has finished, if there is one, without waiting.
    /// `None` if no task has finished yet, or the set is empty.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn(std::future::pending::<()>());
    /// assert!(set.try_join_next().is_none()); // still running
    /// set.abort_all();
    /// let res = loop {
    ///     match set.try_join_next() {
    ///         Some(res) => break res,
    ///         None => spinpark::yield_now().await,
    ///     }
    /// };
    /// assert!(res.unwrap_err().is_cancelled());
    /// # });
    /// ```
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id().map(|r| r.map(|(_, out)| out))
    }

    /// [`JoinSet::join_next`], with the finished task's id beside its output (a failed task's
    /// id is in its [`JoinError`]).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// let id = set.spawn(async { 1 }).id();
    /// assert_eq!(set.join_next_with_id().await.unwrap().unwrap(), (id, 1));
    /// # });
    /// ```
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// [`JoinSet::try_join_next`], with the finished task's id beside its output.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::<()>::new();
    /// assert!(set.try_join_next_with_id().is_none());
    /// # });
    /// ```
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        while let Some(key) = self.pop_ready(None) {
            if let Some(out) = self.poll_entry(key) {
                return Some(out);
            }
        }
        None
    }

    /// Waits for every task and returns their outputs, in the order the tasks finished.
    ///
    /// # Panics
    /// If a task panicked, with its panic (resumed); if one was aborted, with the
    /// [`JoinError`]'s message. The tasks still in the set are then aborted, as the set is
    /// dropped. To handle failures otherwise, call [`JoinSet::join_next`] in a loop.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let set: spinpark::task::JoinSet<_> = (1..=4).map(|i| async move { i * 10 }).collect();
    /// let mut outputs = set.join_all().await;
    /// outputs.sort();
    /// assert_eq!(outputs, [10, 20, 30, 40]);
    /// # });
    /// ```
    pub async fn join_all(mut self) -> Vec<T> {
        let mut outputs = Vec::with_capacity(self.len);
        while let Some(res) = self.join_next().await {
            match res {
                Ok(v) => outputs.push(v),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => panic!("JoinSet::join_all: {e}"),
            }
        }
        outputs
    }

    /// Aborts every task in the set, including those not polled yet; see
    /// [`JoinHandle::abort`]. The tasks stay in the set: [`JoinSet::join_next`] returns a
    /// cancelled [`JoinError`] for each task that had not finished, and the output of each
    /// one that had.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn(std::future::pending::<()>());
    /// set.abort_all();
    /// assert!(set.join_next().await.unwrap().unwrap_err().is_cancelled());
    /// # });
    /// ```
    pub fn abort_all(&mut self) {
        for entry in self.slots.iter().flatten() {
            if let State::Running(handle) = &entry.state {
                handle.abort();
            }
        }
    }

    /// Removes every task from the set without aborting it: the tasks run on, and their
    /// outputs are dropped when they finish.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let mut set = spinpark::task::JoinSet::new();
    /// set.spawn(async move { tx.send("still ran").unwrap() });
    /// set.detach_all();
    /// assert!(set.is_empty());
    /// drop(set); // does not abort the detached task
    /// assert_eq!(rx.recv().unwrap(), "still ran");
    /// # });
    /// ```
    pub fn detach_all(&mut self) {
        self.clear(false);
    }

    /// Aborts every task and waits until they have all finished (their futures dropped),
    /// discarding their results. The set is empty afterwards.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut set = spinpark::task::JoinSet::new();
    /// for _ in 0..3 {
    ///     set.spawn(std::future::pending::<()>());
    /// }
    /// set.shutdown().await;
    /// assert!(set.is_empty());
    /// # });
    /// ```
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Adds a task by its handle and registers the entry's waker with it; returns a handle to
    /// abort the task.
    pub(super) fn insert(&mut self, mut handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let task = handle.id();
        let id = self.next_id;
        self.next_id += 1;
        let slot = self.free.pop().unwrap_or(self.slots.len());
        let notify = Arc::new(EntryWaker {
            key: Key { slot, id },
            queued: AtomicBool::new(false),
            ready: self.ready.clone(),
        });
        let waker = Waker::from(notify.clone());
        self.count_handle_poll();
        // This poll registers `waker` with the task, so that its end is signalled to the set
        // from now on (as tokio sets the join waker at spawn). It may find the task finished
        // already (another worker ran it): then the result is kept, and the key is queued with
        // the set's waiter woken, as the task's end would have done.
        let state = match Pin::new(&mut handle).poll(&mut Context::from_waker(&waker)) {
            Poll::Pending => State::Running(handle),
            Poll::Ready(out) => {
                notify.wake_by_ref();
                State::Done(Mutex::new(out))
            }
        };
        let entry = Some(Entry {
            id: task,
            state,
            notify,
            waker,
        });
        if slot == self.slots.len() {
            self.slots.push(entry);
        } else {
            self.slots[slot] = entry;
        }
        self.len += 1;
        abort
    }

    /// The next key to look at: from the batch, else from the ready list. When both are empty,
    /// `register` (if any) becomes the waker woken by the next key pushed; it is stored under
    /// the same lock the wakers push under, so no key can slip in unnoticed.
    fn pop_ready(&mut self, register: Option<&Waker>) -> Option<Key> {
        if let Some(key) = self.batch.pop_front() {
            return Some(key);
        }
        let mut inner = self.ready.lock();
        if inner.keys.is_empty() {
            let replaced = match (register, &inner.waker) {
                (Some(w), Some(old)) if old.will_wake(w) => None,
                (Some(w), _) => inner.waker.replace(w.clone()),
                (None, _) => None,
            };
            drop(inner);
            // Dropped outside the lock: dropping a waker may drop a task.
            drop(replaced);
            return None;
        }
        // Take the whole list (the batch is empty), leaving the batch's buffer in its place.
        std::mem::swap(&mut inner.keys, &mut self.batch);
        drop(inner);
        self.batch.pop_front()
    }

    /// Polls the entry `key` names, if it is still in the set; returns its result (with the
    /// task's id) and removes it if its task has finished.
    fn poll_entry(&mut self, key: Key) -> Option<Result<(Id, T), JoinError>> {
        let entry = match self.slots.get_mut(key.slot) {
            Some(Some(entry)) if entry.notify.key == key => entry,
            // A key left behind by an entry that has left the set.
            _ => return None,
        };
        let out = match &mut entry.state {
            State::Done(_) => None,
            State::Running(handle) => {
                // Cleared before the poll, which registers the waker: a wake-up from now on
                // queues the key again (see `EntryWaker::wake_by_ref`).
                entry.notify.queued.store(false, Relaxed);
                #[cfg(test)]
                {
                    self.handle_polls += 1;
                }
                // The unit of budget was taken for the whole `join_next`: the handle's own
                // check must not find it spent and wake its entry again (a loop).
                let poll = coop::with_unconstrained(|| {
                    Pin::new(handle).poll(&mut Context::from_waker(&entry.waker))
                });
                match poll {
                    Poll::Pending => return None,
                    Poll::Ready(out) => Some(out),
                }
            }
        };
        let entry = self.remove(key.slot);
        let out = match (out, entry.state) {
            (Some(out), _) => out,
            (None, State::Done(out)) => out.into_inner().unwrap_or_else(|e| e.into_inner()),
            (None, State::Running(_)) => {
                unreachable!("a running entry's result comes from its poll")
            }
        };
        Some(out.map(|v| (entry.id, v)))
    }

    /// Takes the entry out of `slot`, which must hold one.
    fn remove(&mut self, slot: usize) -> Entry<T> {
        let entry = self.slots[slot].take().expect("the slot holds an entry");
        // For good: a late wake-up of this entry's waker queues nothing.
        entry.notify.queued.store(true, Relaxed);
        self.len -= 1;
        if self.len == 0 {
            // Nothing to keep track of: start the slab over (keys left in the ready list
            // carry ids that no entry will have again).
            self.slots.clear();
            self.free.clear();
        } else {
            self.free.push(slot);
        }
        entry
    }

    /// Empties the set, aborting the tasks first if `abort`. Results already taken from
    /// finished tasks are dropped; a panic from an output's destructor is contained, as when
    /// a `JoinHandle` is dropped.
    fn clear(&mut self, abort: bool) {
        if abort {
            self.abort_all();
        }
        let slots = std::mem::take(&mut self.slots);
        self.free.clear();
        self.len = 0;
        self.batch.clear();
        for entry in slots.into_iter().flatten() {
            entry.notify.queued.store(true, Relaxed);
            // Dropping a running handle detaches its task.
            panics::drop_quietly(entry);
        }
        let (keys, waiter) = {
            let mut inner = self.ready.lock();
            (std::mem::take(&mut inner.keys), inner.waker.take())
        };
        drop((keys, waiter));
    }

    fn count_handle_poll(&mut self) {
        #[cfg(test)]
        {
            self.handle_polls += 1;
        }
    }
}

/// Aborts every task still in the set (as tokio does); use [`JoinSet::detach_all`] first to
/// let them run on.
impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        self.clear(true);
    }
}

impl<T> Default for JoinSet<T> {
    /// An empty set.
    ///
    /// ```
    /// let set: spinpark::task::JoinSet<u8> = Default::default();
    /// assert!(set.is_empty());
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    /// Shows the number of tasks.
    ///
    /// ```
    /// let set = spinpark::task::JoinSet::<()>::new();
    /// assert_eq!(format!("{set:?}"), "JoinSet { len: 0 }");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len).finish()
    }
}

/// Spawns each future on the current runtime, as [`JoinSet::spawn`] (and panics likewise
/// outside one).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::task::JoinSet;
/// let mut set: JoinSet<_> = (0..5).map(|i| async move { i }).collect();
/// let mut n = 0;
/// while let Some(res) = set.join_next().await {
///     n += res.unwrap();
/// }
/// assert_eq!(n, 10);
/// # });
/// ```
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

/// Spawns each future on the current runtime, as [`JoinSet::spawn`] (and panics likewise
/// outside one).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let mut set = spinpark::task::JoinSet::new();
/// set.extend((0..3).map(|i| async move { i }));
/// assert_eq!(set.len(), 3);
/// # });
/// ```
impl<T, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for task in iter {
            self.spawn(task);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Builder;

    /// 10 000 tasks, released ten at a time and joined as they finish, so the set's waiter
    /// is woken at least a thousand times while thousands of tasks are still running. Each
    /// handle is polled at most twice (once when added, to register its waker; once after its
    /// task finished). A set that polled every handle on each wake-up would poll them about
    /// 5 million times here.
    #[test]
    fn joining_many_tasks_polls_each_handle_at_most_twice() {
        const N: u64 = 10_000;
        const STEP: u64 = 10;
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let (polls, sum) = rt.block_on(async {
            let gate = Arc::new(tokio::sync::Semaphore::new(0));
            let mut set = JoinSet::new();
            for i in 0..N {
                let gate = gate.clone();
                set.spawn(async move {
                    gate.acquire().await.unwrap().forget();
                    i
                });
            }
            let mut sum = 0;
            for _ in 0..N / STEP {
                gate.add_permits(STEP as usize);
                for _ in 0..STEP {
                    sum += set.join_next().await.unwrap().unwrap();
                }
            }
            assert!(set.join_next().await.is_none());
            (set.handle_polls, sum)
        });
        println!("{polls} handle polls for {N} tasks");
        assert_eq!(sum, N * (N - 1) / 2);
        assert!(polls <= 2 * N, "{polls} handle polls for {N} tasks");
        assert!(polls >= N, "every handle is polled when added: {polls}");
    }

    /// A handle whose task finished before it was added: its result is kept, reported by
    /// `join_next`, and an output nobody takes is dropped quietly (its destructor may panic).
    #[test]
    fn a_task_finished_before_it_is_added_is_reported_and_its_output_dropped_quietly() {
        struct PanicOnDrop;
        impl Drop for PanicOnDrop {
            fn drop(&mut self) {
                panic!("output destructor");
            }
        }
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let finished = |rt: &crate::Runtime| {
            let h = rt.spawn(async { 7 });
            while !h.is_finished() {
                std::thread::yield_now();
            }
            h
        };
        let mut set = JoinSet::new();
        set.insert(finished(&rt));
        assert!(matches!(
            set.slots[0].as_ref().unwrap().state,
            State::Done(_)
        ));
        assert_eq!(set.try_join_next().unwrap().unwrap(), 7);
        assert!(set.is_empty());

        let mut set = JoinSet::new();
        let h = rt.spawn(async { PanicOnDrop });
        while !h.is_finished() {
            std::thread::yield_now();
        }
        set.insert(h);
        drop(set); // must not unwind
    }
}
