//! [`TaskList`]: a runtime's live tasks, by their wakers, so that shutting down can drop every
//! one of them.
//!
//! ```text
//! let key = list.insert(waker);   // a task returned Pending for the first time
//! list.remove(key);               // its future is being dropped
//! list.wake_all();                // shutdown: each task, woken, is dropped by the scheduler
//! ```
//!
//! How it works: a task that waits on something outside the runtime's queues (a channel, a
//! timer, a waker someone stashed) is reachable only through its waker. The runtime keeps one
//! waker per waiting task here (a task is listed the first time it returns `Pending`; one that
//! is queued is dropped with its queue); shutting down wakes them all, and a task woken after
//! shutdown goes to the global queue, which the shutting-down thread drains and drops (not
//! dropped inside the wake: a waker is often called with a lock held that the task's
//! destructor takes). The list is sharded so spawns on different threads rarely meet on a
//! lock.
//!
//! Which list a task joins is the one of the worker polling it: a worker publishes its
//! runtime's list on its thread for its whole run loop ([`publish`]), so that this layer
//! never needs to know what a worker is.
//!
//! The list also counts the runtime's alive tasks (spawned, future not dropped yet:
//! `RuntimeMetrics::num_alive_tasks`), in per-shard counters that the spawning and the
//! finishing threads bump on their own shard's cache line ([`TaskList::count_spawn`],
//! [`TaskList::count_exit`]), so that no line is shared by every spawn.

use std::cell::RefCell;
use std::sync::atomic::{
    AtomicU64, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::{Arc, Mutex};
use std::task::Waker;

thread_local! {
    /// The live-task list of the runtime whose worker this thread is, while it runs tasks.
    static POLLING_FOR: RefCell<Option<Arc<TaskList>>> = const { RefCell::new(None) };
}

/// The live-task list the current thread's worker publishes, if it is a worker.
pub(crate) fn polling_for() -> Option<Arc<TaskList>> {
    POLLING_FOR.try_with(|l| l.borrow().clone()).ok().flatten()
}

/// Runs `f` with the live-task list this thread publishes, if any, without cloning it.
pub(crate) fn with_polling_for<R>(f: impl FnOnce(Option<&TaskList>) -> R) -> R {
    let mut f = Some(f);
    // A task may be dropped while the list is being replaced (dropping the list a guard
    // takes out drops the wakers left in it, and so tasks): then the cell is borrowed and
    // nothing is published, as when the thread's locals are gone.
    let out = POLLING_FOR.try_with(|l| {
        let published = l.try_borrow().ok();
        (f.take().expect("called once"))(published.as_ref().and_then(|p| p.as_deref()))
    });
    match out {
        Ok(r) => r,
        Err(_) => (f.take().expect("not called"))(None),
    }
}

/// Publishes `list` as the current thread's (a worker's) until the guard drops.
pub(crate) fn publish(list: Arc<TaskList>) -> Published {
    // On a thread whose locals are being destroyed (a runtime kept in a thread-local, dropped
    // as the thread exits) nothing is published.
    let prev = POLLING_FOR
        .try_with(|l| l.borrow_mut().replace(list))
        .ok()
        .flatten();
    Published(prev)
}

/// Restores the list published before on drop.
pub(crate) struct Published(Option<Arc<TaskList>>);

impl Drop for Published {
    fn drop(&mut self) {
        let prev = self.0.take();
        // The list taken out is dropped after the cell's borrow ends: dropping it may drop
        // tasks, whose destructors look at the cell.
        let _out = POLLING_FOR.try_with(|l| std::mem::replace(&mut *l.borrow_mut(), prev));
    }
}

const SHARDS: usize = 16;

thread_local! {
    /// This thread's shard, picked once.
    static SHARD_HINT: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Live tasks' wakers, and the count of alive tasks.
pub(crate) struct TaskList {
    shards: [Mutex<Shard>; SHARDS],
    next_shard: AtomicUsize,
    /// Per shard, the tasks spawned and finished by the threads of that shard.
    counts: [Counts; SHARDS],
}

/// One shard's task counts, on a cache line of its own.
#[derive(Default)]
#[repr(align(128))]
struct Counts {
    spawned: AtomicU64,
    exited: AtomicU64,
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
            counts: std::array::from_fn(|_| Counts::default()),
        }
    }

    /// This thread's shard, picked the first time it asks.
    fn this_shard(&self) -> usize {
        SHARD_HINT.with(|h| {
            let v = h.get();
            if v == usize::MAX {
                // Relaxed: only spreads threads over shards; any value is correct.
                let n = self.next_shard.fetch_add(1, Relaxed) % SHARDS;
                h.set(n);
                n
            } else {
                v
            }
        })
    }

    /// A task of this runtime was spawned (before it is scheduled).
    pub(crate) fn count_spawn(&self) {
        // Relaxed: the task's scheduling (a queue push and pop) orders this before its exit.
        self.counts[self.this_shard()].spawned.fetch_add(1, Relaxed);
    }

    /// A task of this runtime is gone: its future was dropped (it completed, panicked, was
    /// cancelled, or was dropped at shutdown).
    pub(crate) fn count_exit(&self) {
        // Release: pairs with the Acquire in `alive`, so that a reader who sees this exit
        // also sees the task's spawn.
        self.counts[self.this_shard()].exited.fetch_add(1, Release);
    }

    /// Tasks spawned whose future was not dropped yet.
    pub(crate) fn alive(&self) -> usize {
        // Exits first: every spawn of a task whose exit was read is then visible (see
        // `count_exit`), so the difference never counts an exit without its spawn. It may
        // miss the latest spawns and exits, as any reading of a moving count does.
        let exited: u64 = self.counts.iter().map(|c| c.exited.load(Acquire)).sum();
        let spawned: u64 = self.counts.iter().map(|c| c.spawned.load(Relaxed)).sum();
        spawned.saturating_sub(exited) as usize
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
        let s = self.this_shard();
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
