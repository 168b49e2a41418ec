//! Counters that explain where a runtime's time and wake-ups went.
//!
//! Every counter is a relaxed atomic increment on a cache line owned by one worker (or on a
//! runtime-wide line for events that have no worker), so keeping them costs next to nothing.
//! A snapshot is read with [`crate::Runtime::metrics`] or [`crate::Handle::metrics`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One worker's counters, padded to its own cache lines so workers do not share them.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct WorkerCounters {
    pub(crate) polls: AtomicU64,
    pub(crate) steals: AtomicU64,
    pub(crate) spins_found_work: AtomicU64,
    pub(crate) spins_expired: AtomicU64,
    pub(crate) parks: AtomicU64,
    pub(crate) wakes: AtomicU64,
    pub(crate) driver_polls: AtomicU64,
}

/// Runtime-wide counters.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct GlobalCounters {
    pub(crate) spawned: AtomicU64,
    pub(crate) remote_schedules: AtomicU64,
    /// Wake syscalls issued by threads that are not workers.
    pub(crate) remote_wakes: AtomicU64,
}

pub(crate) fn bump(c: &AtomicU64) {
    // Relaxed: a statistic; nothing is ordered by it.
    c.fetch_add(1, Relaxed);
}

/// A point-in-time copy of one worker's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerMetrics {
    /// Tasks polled by this worker.
    pub polls: u64,
    /// Times this worker took tasks from another worker's queue.
    pub steals: u64,
    /// Spin windows that ended because work turned up (no context switch needed).
    pub spins_found_work: u64,
    /// Spin windows that ran out, after which the worker parked.
    pub spins_expired: u64,
    /// Times this worker blocked: on the futex, or in the reactor as the last awake worker.
    pub parks: u64,
    /// Wake-ups this worker issued: `FUTEX_WAKE` syscalls, or unparks of the reactor.
    pub wakes: u64,
    /// Non-blocking polls of the reactor made by this worker.
    pub driver_polls: u64,
}

/// A point-in-time copy of a runtime's counters. Each field only grows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeMetrics {
    /// Tasks spawned (including `spawn_blocking`).
    pub tasks_spawned: u64,
    /// Tasks scheduled from outside the runtime's workers (through the global queue).
    pub remote_schedules: u64,
    /// Wake-ups issued by threads that are not workers (spawns and wakes from outside).
    pub remote_wakes: u64,
    /// Per worker, in worker index order.
    pub workers: Vec<WorkerMetrics>,
}

impl RuntimeMetrics {
    /// The sum of all workers' counters.
    pub fn total(&self) -> WorkerMetrics {
        self.workers.iter().fold(WorkerMetrics::default(), |a, w| WorkerMetrics {
            polls: a.polls + w.polls,
            steals: a.steals + w.steals,
            spins_found_work: a.spins_found_work + w.spins_found_work,
            spins_expired: a.spins_expired + w.spins_expired,
            parks: a.parks + w.parks,
            wakes: a.wakes + w.wakes,
            driver_polls: a.driver_polls + w.driver_polls,
        })
    }

    /// Every wake-up syscall or reactor unpark issued, by workers and by other threads.
    pub fn wake_syscalls(&self) -> u64 {
        self.remote_wakes + self.total().wakes
    }
}

impl WorkerCounters {
    pub(crate) fn snapshot(&self) -> WorkerMetrics {
        WorkerMetrics {
            polls: self.polls.load(Relaxed),
            steals: self.steals.load(Relaxed),
            spins_found_work: self.spins_found_work.load(Relaxed),
            spins_expired: self.spins_expired.load(Relaxed),
            parks: self.parks.load(Relaxed),
            wakes: self.wakes.load(Relaxed),
            driver_polls: self.driver_polls.load(Relaxed),
        }
    }
}
