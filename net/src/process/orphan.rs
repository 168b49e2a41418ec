//! Children dropped before anyone reaped them: killed first if `kill_on_drop` asked for it,
//! then reaped as soon as they exit, so none stays a zombie.
//!
//! [`adopt`] looks once (`waitpid`, `WNOHANG`); a child still running is handed to a small
//! task on the current runtime, which waits for its exit on the child's own watch (its pidfd,
//! or `SIGCHLD`) and reaps it: the runtime drives it like any other task, no thread waits.
//!
//! With no runtime to take it (the `Child` was dropped outside one, or while its runtime shut
//! down, or the task was dropped with its runtime before the child exited), the pid goes to a
//! process-wide queue. Every [`Command::spawn`](super::Command::spawn) first looks at that
//! queue: the exited children in it are reaped, and the others are handed to a task on the
//! spawning runtime. As in tokio, that part is best effort: a child queued while no runtime
//! runs is reaped once the program spawns again (or exits).

use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use spinpark_executor::Handle;

use super::exit::{self, Process};

/// Orphans that no runtime was there to take: their pids.
static QUEUE: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// How many pids [`QUEUE`] holds, so that the common case (none) takes no lock.
static QUEUED: AtomicUsize = AtomicUsize::new(0);

fn queue() -> MutexGuard<'static, Vec<libc::pid_t>> {
    // Only pids are kept under this lock, and no other lock is taken while it is held.
    QUEUE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes care of a child whose `Child` went away without reaping it: kills it if `kill`, and
/// reaps it now or once it exits.
pub(super) fn adopt(process: Process, kill: bool) {
    if kill {
        // It may have exited already (a zombie still takes the signal); any failure leaves
        // nothing better to do than reaping it.
        let _ = process.kill();
    }
    if !still_running(&process) {
        return;
    }
    match Handle::try_current() {
        Ok(handle) if !handle.is_shutdown() => {
            drop(handle.spawn(reap(Orphan(Some(process)))));
        }
        _ => enqueue(process.pid()),
    }
}

/// Reaps `process` if it has exited: whether it is still there to reap. An error (`ECHILD`:
/// somebody else reaped it) means there is nothing left to do either.
fn still_running(process: &Process) -> bool {
    matches!(process.try_wait(), Ok(None))
}

fn enqueue(pid: libc::pid_t) {
    let mut q = queue();
    q.push(pid);
    // Relaxed: a hint for `reap_queued`, updated under the lock.
    QUEUED.store(q.len(), Ordering::Relaxed);
}

/// Reaps the queued orphans that have exited and hands the others to the current runtime.
/// Cheap when the queue is empty (one atomic load).
pub(super) fn reap_queued() {
    // Relaxed: a pid queued just after this load is seen by the next call.
    if QUEUED.load(Ordering::Relaxed) == 0 {
        return;
    }
    let pids = {
        let mut q = queue();
        QUEUED.store(0, Ordering::Relaxed);
        std::mem::take(&mut *q)
    };
    for pid in pids {
        // Not killed again: a queued child was killed (if asked) when it was first adopted.
        adopt(Process::new(pid, exit::pidfd_enabled()), false);
    }
}

/// An adopted child, reaped by [`reap`]. If that task is dropped first (its runtime shut
/// down), the child goes to the queue.
struct Orphan(Option<Process>);

impl Drop for Orphan {
    fn drop(&mut self) {
        if let Some(process) = self.0.take() {
            if still_running(&process) {
                enqueue(process.pid());
            }
        }
    }
}

/// The task that waits for an orphan's exit and reaps it, then looks at the queue.
async fn reap(mut orphan: Orphan) {
    let process = orphan.0.as_mut().expect("present until reaped");
    if poll_fn(|cx| process.poll_exit(cx)).await.is_ok() {
        orphan.0 = None;
    }
    // On an error (no runtime to watch from), dropping `orphan` queues the child.
    drop(orphan);
    reap_queued();
}

/// How many orphans wait in the queue (for tests).
#[cfg(test)]
pub(super) fn queued() -> Vec<libc::pid_t> {
    queue().clone()
}
