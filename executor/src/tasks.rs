//! The list of a runtime's live tasks, so that shutting down can drop every one of them.
//!
//! A task that waits on something outside the runtime's queues (a channel, a timer, a waker
//! someone stashed) is reachable only through its waker. The runtime keeps one waker per
//! waiting task here (a task is listed the first time it returns `Pending`; one that is queued
//! is dropped with its queue); shutting down wakes them all, and a wake after shutdown drops the task's future
//! instead of queueing it. A task removes itself when its future is dropped (it completed, was
//! aborted, or was dropped). The list is sharded so spawns on different threads rarely meet on
//! a lock.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::task::Waker;

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
