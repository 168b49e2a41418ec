//! The late runner: one process-wide thread that runs the deferred items of polls that have
//! lasted [`LATE_AFTER`], so that work deferred to a poll's end (a socket's queued bytes
//! waiting for their push) is not held by a task that then computes or blocks its thread.
//!
//! ```
//! use spinpark_executor::task::poll_end;
//! // Runs of the late runner so far in this process (it has nothing to do here).
//! let _ = poll_end::late_runs();
//! assert!(poll_end::LATE_AFTER <= std::time::Duration::from_millis(1));
//! ```
//!
//! # How it works
//!
//! A thread *waits* while some item it deferred has run neither at its scope's end nor from
//! here (`List::waiting` in `poll_end.rs`, changed under that thread's list lock). [`LATE`]
//! counts the waiting threads. The thread itself sleeps on a `timerfd`, which is armed
//! whenever some thread waits:
//!
//! * When the count leaves 0, the alarm is armed to ring [`LATE_AFTER`] from now, unless it
//!   is armed already to ring sooner (one `timerfd_settime`, which wakes nobody).
//! * When the count returns to 0, the alarm is disarmed, unless polls that defer come so often
//!   (the previous one started less than [`LATE_AFTER`] before) that the next one will want it
//!   armed again at once: then a ring with nothing to do is cheaper than two syscalls a poll.
//! * When it rings, the late runner takes every waiting thread's items (they stop waiting;
//!   the items stay deferred to their scopes), runs them first-deferred-first per thread, and
//!   re-arms the alarm if a thread began waiting meanwhile.
//!
//! So a poll that deferred work and ends within [`LATE_AFTER`] (nearly all) costs at most the
//! two syscalls, and often none; an item waits at most about [`LATE_AFTER`] (plus the time
//! the kernel takes to schedule this thread) for a poll that lasts long. All of it is under
//! one mutex, taken when a thread starts or stops waiting: the waits' count and the alarm
//! change together, so no disarm can pass an arm that came after it.
//!
//! If the thread or its timer cannot be made (a process out of threads or fds), nothing runs
//! early: [`available`] says so, and callers that must not hold bytes do not defer.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::idle::{Alarm, SysAlarm};

/// How long a poll may hold deferred work before the late runner runs it from its thread.
pub const LATE_AFTER: Duration = Duration::from_micros(500);

/// The waiting threads and the alarm, changed together.
struct Late {
    /// Threads with items that have not run yet.
    waiting: usize,
    /// When the alarm rings, if it is armed.
    armed: Option<Instant>,
    /// When the count last left 0, to tell polls that defer often from rare ones.
    last_start: Option<Instant>,
    /// Polls that defer come often: leave the alarm armed when the count returns to 0.
    dense: bool,
    /// The runner's alarm, once it runs.
    alarm: Option<Arc<SysAlarm>>,
}

static LATE: Mutex<Late> = Mutex::new(Late {
    waiting: 0,
    armed: None,
    last_start: None,
    dense: false,
    alarm: None,
});

/// Whether the runner has started (`STARTED`), could not be (`FAILED`), or has not been
/// tried yet (0).
static RUNNER: AtomicU8 = AtomicU8::new(0);
const STARTED: u8 = 1;
const FAILED: u8 = 2;

/// Rings of the alarm that found items to run.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// How many times, in this process, the late runner has run the items of a poll that lasted
/// [`LATE_AFTER`] (one count per ring that found some). For tests and diagnostics.
///
/// ```
/// let before = spinpark_executor::task::poll_end::late_runs();
/// assert!(spinpark_executor::task::poll_end::late_runs() >= before);
/// ```
pub fn late_runs() -> u64 {
    // Relaxed: a statistic.
    RUNS.load(Ordering::Relaxed)
}

fn lock() -> MutexGuard<'static, Late> {
    // No code that can panic runs under it.
    LATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether the runner runs (starting it on the first call).
pub(super) fn available() -> bool {
    // Acquire: pairs with the Release store after the runner's alarm is in `LATE`.
    match RUNNER.load(Ordering::Acquire) {
        STARTED => true,
        FAILED => false,
        _ => {
            let mut late = lock();
            start(&mut late);
            late.alarm.is_some()
        }
    }
}

/// Starts the runner's thread if it has not been tried yet.
fn start(late: &mut Late) {
    if late.alarm.is_some() || RUNNER.load(Ordering::Relaxed) == FAILED {
        return;
    }
    let made = SysAlarm::new().and_then(|alarm| {
        let alarm = Arc::new(alarm);
        let theirs = alarm.clone();
        std::thread::Builder::new()
            .name("spinpark-late".into())
            .spawn(move || run(&theirs))
            .map(|_| alarm)
    });
    let state = match made {
        Ok(alarm) => {
            late.alarm = Some(alarm);
            STARTED
        }
        Err(_) => FAILED,
    };
    // Release: see `available`.
    RUNNER.store(state, Ordering::Release);
}

/// A thread began waiting (called under its list's lock).
pub(super) fn started_waiting() {
    let mut late = lock();
    late.waiting += 1;
    if late.waiting > 1 {
        // The alarm is armed for the first (or the runner re-arms it after its look).
        return;
    }
    let now = Instant::now();
    late.dense = late
        .last_start
        .is_some_and(|t| now.saturating_duration_since(t) < LATE_AFTER);
    late.last_start = Some(now);
    if late.armed.is_some_and(|at| at > now) {
        // Rings sooner than `LATE_AFTER` from now: early is harmless.
        return;
    }
    start(&mut late);
    arm(&mut late, now + LATE_AFTER);
}

/// A thread stopped waiting: its scope ended or it ran its items (called under its list's
/// lock).
pub(super) fn stopped_waiting() {
    let mut late = lock();
    late.waiting -= 1;
    if late.waiting == 0 && !late.dense && late.armed.is_some() {
        if let Some(alarm) = &late.alarm {
            alarm.set(None);
        }
        late.armed = None;
    }
}

fn arm(late: &mut Late, at: Instant) {
    if let Some(alarm) = &late.alarm {
        alarm.set(Some(at.saturating_duration_since(Instant::now())));
        late.armed = Some(at);
    }
}

/// The runner's thread: waits for the alarm, then runs the waiting threads' items.
fn run(alarm: &SysAlarm) {
    while alarm.wait() {
        {
            let mut late = lock();
            late.armed = None;
            if late.waiting == 0 {
                continue;
            }
        }
        let (items, threads) = super::take_waiting();
        {
            let mut late = lock();
            late.waiting -= threads;
            if late.waiting > 0 && late.armed.is_none() {
                // A thread began waiting after the look: its turn comes one period on.
                arm(&mut late, Instant::now() + LATE_AFTER);
            }
        }
        if !items.is_empty() {
            // Relaxed: a statistic.
            RUNS.fetch_add(1, Ordering::Relaxed);
            items.into_iter().for_each(|i| i.poll_end());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_starts_once_and_stays() {
        assert!(available());
        assert!(available());
        assert_eq!(RUNNER.load(Ordering::Acquire), STARTED);
    }
}
