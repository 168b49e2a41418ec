//! Children dropped before anyone reaped them: killed first if `kill_on_drop` asked for it,
//! then reaped as soon as they exit, so none stays a zombie, and none holds a descriptor
//! meanwhile.
//!
//! ```text
//! adopt(process, kill)  // kill if asked; reaped now, or its pid joins the orphan list
//! reap_queued()         // at every spawn: a reaper for the list if it has none
//! ```
//!
//! [`adopt`] looks once (`waitpid`, `WNOHANG`); a child still running gives up its watch (its
//! pidfd is closed) and its pid joins one process-wide list. One task, the reaper, serves the
//! whole list: it listens for `SIGCHLD` (a listener costs no descriptor of its own, see
//! `signal.rs`) and on each delivery looks at every listed pid with `waitpid(pid, WNOHANG)`,
//! dropping the ones it reaped. So a thousand running orphans cost a thousand pids in a
//! vector and one task, not a thousand pidfds (tokio, too, keeps orphans in a queue that it
//! looks at on `SIGCHLD`). The reaper ends once the list is empty; the next orphan starts
//! another. Each pass costs one `waitpid` per orphan, as tokio's does.
//!
//! The reaper runs on the runtime current where an orphan was adopted. With no runtime there
//! (the `Child` was dropped outside one, or while its runtime shut down), or once the
//! reaper's runtime shuts down and drops it, the list waits: every
//! [`Command::spawn`](super::Command::spawn) first looks whether the list has orphans and no
//! reaper, and starts one on the spawning runtime. As in tokio, that part is best effort: an
//! orphan listed while no runtime runs is reaped once the program spawns again (or exits).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use spinpark_executor::Handle;

use super::exit::Process;
use super::sys;
use crate::signal::{signal, SignalKind};

/// The orphans' pids, and whether a reaper task serves them.
struct Orphans {
    pids: Vec<libc::pid_t>,
    /// A reaper task exists (spawned, not yet ended or dropped).
    reaper: bool,
}

static ORPHANS: Mutex<Orphans> = Mutex::new(Orphans {
    pids: Vec::new(),
    reaper: false,
});

/// Whether the list has orphans and no reaper, so that the common case at a spawn (none, or
/// a reaper at work) takes no lock.
static UNSERVED: AtomicBool = AtomicBool::new(false);

fn orphans() -> MutexGuard<'static, Orphans> {
    // Only pids and a flag are kept under this lock, and no other lock is taken while it is
    // held (`waitpid` takes none of ours).
    ORPHANS.lock().unwrap_or_else(|e| e.into_inner())
}

impl Orphans {
    fn update_hint(&self) {
        // Relaxed: a hint for `reap_queued`, always written under the lock; a spawn that
        // reads a stale `false` leaves the start of a reaper to the next one.
        UNSERVED.store(!self.pids.is_empty() && !self.reaper, Ordering::Relaxed);
    }

    /// Reaps the listed children that have exited; keeps the others. An error (`ECHILD`:
    /// somebody else reaped the pid) leaves nothing to do for that pid either.
    fn reap_exited(&mut self) {
        self.pids
            .retain(|&pid| matches!(sys::try_reap(pid), Ok(None)));
    }
}

/// Takes care of a child whose `Child` went away without reaping it: kills it if `kill`, and
/// reaps it now or once it exits.
pub(super) fn adopt(process: Process, kill: bool) {
    if kill {
        // It may have exited already (a zombie still takes the signal); any failure leaves
        // nothing better to do than reaping it.
        let _ = process.kill();
    }
    if !matches!(process.try_wait(), Ok(None)) {
        // Reaped just now, or not ours to reap any more.
        return;
    }
    let pid = process.pid();
    // Its watch (a pidfd, or a SIGCHLD listener) goes: the reaper's SIGCHLD listener serves
    // every orphan.
    drop(process);
    let mut list = orphans();
    list.pids.push(pid);
    start_reaper(list);
}

/// Starts a reaper for the orphan list on the current runtime, if the list has orphans and
/// no reaper. Cheap when there is nothing to do (one atomic load).
pub(super) fn reap_queued() {
    // Relaxed: see `Orphans::update_hint`.
    if UNSERVED.load(Ordering::Relaxed) {
        start_reaper(orphans());
    }
}

/// Starts a reaper if `list` needs one and a runtime is there to run it.
fn start_reaper(mut list: MutexGuard<'static, Orphans>) {
    if list.reaper || list.pids.is_empty() {
        list.update_hint();
        return;
    }
    match Handle::try_current() {
        Ok(handle) if !handle.is_shutdown() => {
            list.reaper = true;
            list.update_hint();
            // Not spawned under the lock: a spawn may run code that drops a `Child`.
            drop(list);
            // The token goes into the task's future at once, so that a task dropped before
            // its first poll (its runtime shut down meanwhile) still says it is gone.
            drop(handle.spawn(reaper(Reaper { armed: true })));
        }
        _ => list.update_hint(),
    }
}

/// Held by the reaper task: when the task goes (ended, or dropped with its runtime), the list
/// has no reaper any more.
struct Reaper {
    /// Cleared when the task ends by itself, having said so under the lock already.
    armed: bool,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if self.armed {
            let mut list = orphans();
            list.reaper = false;
            list.update_hint();
        }
    }
}

/// The reaper: on each `SIGCHLD`, reaps the listed orphans that have exited; ends once none is
/// left.
async fn reaper(mut token: Reaper) {
    // Listening before the first look: an exit after the look below is delivered to it.
    let Ok(mut sigchld) = signal(SignalKind::child()) else {
        // No listener (no descriptor for the first one in the process, say): the orphans wait
        // for the next spawn, which tries again. Dropping the token says so.
        return;
    };
    loop {
        {
            let mut list = orphans();
            list.reap_exited();
            if list.pids.is_empty() {
                list.reaper = false;
                list.update_hint();
                token.armed = false;
                return;
            }
        }
        if sigchld.recv().await.is_none() {
            // The runtime is shutting down: the token's drop leaves the list to the next
            // spawn.
            return;
        }
    }
}

/// The orphans listed now (for tests).
#[cfg(test)]
pub(super) fn queued() -> Vec<libc::pid_t> {
    orphans().pids.clone()
}
