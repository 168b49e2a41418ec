//! The reactor's timer store: pending timers ordered by deadline, and firing the due ones.
//!
//! ```text
//! Sleep::poll  --insert/update-->  Timers  <--fire_due--  every reactor turn
//!                                     \--next_deadline--> the parked worker's epoll timeout
//! ```
//!
//! The public futures built on it ([`crate::time`]) register a timer on their first poll and
//! remove it when dropped. Timers live in a `BTreeMap` keyed by (deadline, id) behind one
//! mutex; wakers are woken after the lock is released, so no user code runs under it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};
use std::task::Waker;
use std::time::Instant;

/// A registered timer: its deadline and a unique id (two timers may share a deadline).
pub(crate) type TimerKey = (Instant, u64);

/// The pending timers of one reactor.
pub(crate) struct Timers {
    map: Mutex<Map>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct Map {
    timers: BTreeMap<TimerKey, Waker>,
    /// Set by [`Timers::clear`] (runtime shutdown): nothing will ever fire again, so no timer
    /// may be inserted.
    closed: bool,
}

impl Timers {
    pub(crate) fn new() -> Self {
        Self {
            map: Mutex::new(Map::default()),
            next_id: AtomicU64::new(0),
        }
    }

    fn map(&self) -> MutexGuard<'_, Map> {
        // No user code runs under this lock (wakers are woken after it is released).
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers (or re-arms with a new waker) a timer; returns its key, or `None` once the
    /// store is closed (the runtime shut down).
    pub(crate) fn insert(&self, deadline: Instant, waker: Waker) -> Option<TimerKey> {
        // Relaxed: only uniqueness matters.
        let key = (deadline, self.next_id.fetch_add(1, Relaxed));
        let mut map = self.map();
        if map.closed {
            return None;
        }
        map.timers.insert(key, waker);
        Some(key)
    }

    /// Replaces the waker of a registered timer; false if it already fired.
    pub(crate) fn update(&self, key: TimerKey, waker: &Waker) -> bool {
        match self.map().timers.get_mut(&key) {
            Some(w) => {
                if !w.will_wake(waker) {
                    *w = waker.clone();
                }
                true
            }
            None => false,
        }
    }

    /// Forgets a timer (its `Sleep` was dropped or reset).
    pub(crate) fn remove(&self, key: TimerKey) {
        let w = self.map().timers.remove(&key);
        drop(w);
    }

    /// The earliest pending deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.map().timers.keys().next().map(|k| k.0)
    }

    /// Wakes every timer whose deadline is at or before `now`; returns how many.
    pub(crate) fn fire_due(&self, now: Instant) -> usize {
        let due: Vec<Waker> = {
            let map = &mut self.map().timers;
            match map.keys().next() {
                Some(k) if k.0 <= now => {}
                _ => return 0,
            }
            let later = map.split_off(&(now, u64::MAX));
            std::mem::replace(map, later).into_values().collect()
        };
        let n = due.len();
        for w in due {
            w.wake();
        }
        n
    }

    /// Closes the store (runtime shutdown): forgets every pending timer and wakes its waker,
    /// so that whoever waits on it polls again and learns that it will never fire. A task of
    /// the shut-down runtime is dropped by that wake instead.
    pub(crate) fn clear(&self) {
        let all = {
            let mut map = self.map();
            map.closed = true;
            std::mem::take(&mut map.timers)
        };
        for w in all.into_values() {
            w.wake();
        }
    }
}
