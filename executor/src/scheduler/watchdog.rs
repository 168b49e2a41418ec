//! The watchdog: one thread per runtime (of two workers or more) that wakes a parked worker
//! when the running ones have stopped attending to the rest.
//!
//! ```text
//! while idle.wait_alarm() {                 // nobody polled the reactor for 2-4 ms
//!     idle.need_driver();                   // wake a sleeper to drive the reactor
//!     if a stuck worker has work queued: notify   // somebody comes to take it
//!     idle.rearm(..)                        // look again while the situation lasts
//! }
//! ```
//!
//! Workers attend to the reactor by polling it (spinners constantly, busy workers every 61
//! tasks, and between tasks once half a period has passed); each poll pushes the watch's alarm ahead (`idle/watch.rs`), and the alarm is armed
//! only while some worker is parked and another is not. So in a healthy runtime the alarm
//! never rings and this thread never runs: it costs a thread and a timerfd, no CPU. It rings
//! when every awake worker is stuck in a long poll (a CPU loop or a blocking call in a task)
//! while others are parked. Then this thread:
//!
//! * asks for a driver (`Idle::need_driver`): a futex sleeper wakes, polls the reactor (so
//!   events and timers are served), and parks again as the driver beside the stuck worker;
//! * looks for work stuck behind a long poll (the stuck worker's LIFO slot or queue) and, if
//!   there is any, wakes a worker, which takes it (`lifo.rs`);
//! * re-arms the alarm: one period on if it acted (to check that it worked), four otherwise
//!   (a driver is parked, nothing is stuck: only a new long poll would need it).
//!
//! It never runs a task, so it needs no thread hooks and no thread context.

use std::io;
use std::sync::Arc;
use std::thread;

use super::metrics::bump;
use super::shared::Shared;
use crate::idle::{Woke, WATCH_PERIOD};
use crate::time::coarse;

/// Starts the watchdog thread of `shared`'s runtime, named `name`.
///
/// # Errors
/// The OS error if the thread cannot be started.
pub(crate) fn start(shared: Arc<Shared>, name: String) -> io::Result<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name(name)
        .spawn(move || run(&shared))
}

fn run(shared: &Shared) {
    while shared.idle.wait_alarm() {
        let now = shared.policy.now();
        let mut acted = false;
        // No reactor, nothing to drive: the alarm is then only about stuck work.
        // A ring while the watch is not wanted (every worker parked, or none) is one the
        // workers left armed rather than pay a syscall to disarm (`idle/watch.rs`).
        if shared.driver.get().is_some()
            && shared.idle.watch_wanted()
            && shared.idle.need_driver() != Woke::Nobody
        {
            bump(&shared.counters.global().watchdog_wakes);
            acted = true;
        }
        if shared.stuck_work(coarse::now()) {
            // Wakes a worker unless somebody is looking for work already (who then steals it).
            let woke = shared.idle.notify(|| shared.unpark_driver());
            if woke != Woke::Nobody {
                bump(&shared.counters.global().watchdog_wakes);
            }
            acted = true;
        }
        let after = if acted {
            WATCH_PERIOD
        } else {
            WATCH_PERIOD * 4
        };
        shared.idle.rearm(now, after);
    }
}
