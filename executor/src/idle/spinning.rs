//! One spin window in progress: how an idle worker spins, once the spin policy (`spin.rs`)
//! has said for how long.
//!
//! ```text
//! let mut window = policy.start(decision);           // SpinWindow::new(decision.window())
//! while !found_work() && window.keep_spinning(polled) {}
//! if let Some(took) = window.suspicion(None) { policy.lost_core(now, took) }
//! ```
//!
//! Each iteration scans the queues and polls the reactor; every [`YIELD_EVERY`]th one yields
//! the core (`sched_yield`) so that a client thread sharing it is not starved. An iteration
//! that took longer than [`PREEMPTED`] pauses the window: a *suspicion* that the spinner lost
//! its core, which the caller hands to the policy (`spin/contend.rs` decides what it means).

use std::time::{Duration, Instant};

/// How often (in spin iterations) a spinner gives its core to another runnable thread. Each
/// iteration scans the queues (tens of nanoseconds) and polls the reactor (a syscall, about a
/// microsecond), so this is roughly every 30-50 us: a client thread that shares the core waits
/// for at most that long, and a spinner alone on its core pays one cheap syscall.
const YIELD_EVERY: u32 = 32;

/// An iteration that took this long is a suspicion that the spinner lost its core to another
/// thread (a yield that ran somebody, or a preemption); `contend.rs` decides what it means.
pub(crate) const PREEMPTED: Duration = Duration::from_micros(50);

/// One spin window in progress; see the module documentation.
#[derive(Debug)]
pub(crate) struct SpinWindow {
    deadline: Option<Instant>,
    started: Instant,
    last: Instant,
    iterations: u32,
    /// The last iteration took this long, over [`PREEMPTED`].
    suspect: Option<Duration>,
}

impl SpinWindow {
    /// A window that spins for `w` from now (none at all if `w` is zero).
    pub(crate) fn new(w: Duration) -> Self {
        let now = Instant::now();
        Self {
            deadline: (!w.is_zero()).then(|| now + w),
            started: now,
            last: now,
            iterations: 0,
            suspect: None,
        }
    }

    /// Called after each unsuccessful scan: says whether to scan again. The window ends at its
    /// deadline, and pauses on an iteration that took too long ([`SpinWindow::suspicion`]:
    /// the caller asks the policy whether to go on). A scan that `polled` the reactor made a
    /// syscall, which paces the loop; one that did not (no reactor, or another worker polling
    /// it) pauses briefly, so as not to hammer the queues' cache lines.
    pub(crate) fn keep_spinning(&mut self, polled: bool) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        self.iterations = self.iterations.wrapping_add(1);
        if self.iterations % YIELD_EVERY == 0 {
            std::thread::yield_now();
        } else if !polled {
            for _ in 0..4 {
                std::hint::spin_loop();
            }
        }
        let now = Instant::now();
        let took = now.duration_since(self.last);
        self.last = now;
        // A loss long enough to pass the deadline is still a loss: it is reported too.
        self.suspect = (took > PREEMPTED).then_some(took);
        now < deadline && self.suspect.is_none()
    }

    /// Whether the window's deadline has passed (at its last clock reading).
    pub(crate) fn expired(&self) -> bool {
        self.deadline.is_none_or(|d| self.last >= d)
    }

    /// How long the last iteration took, if that was over [`PREEMPTED`]: the one that ended
    /// with [`SpinWindow::keep_spinning`], or with a scan that found work at `found`, when
    /// given. A suspicion for `SpinPolicy::lost_core`; the window may go on after it.
    pub(crate) fn suspicion(&self, found: Option<Instant>) -> Option<Duration> {
        match found {
            Some(t) => Some(t.saturating_duration_since(self.last)).filter(|&d| d > PREEMPTED),
            None => self.suspect,
        }
    }

    /// How long this window has spun so far.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The window's last clock reading: its start, or the end of the last scan.
    pub(crate) fn last(&self) -> Instant {
        self.last
    }

    /// How long this window had spun at `t` (a reading the caller already took).
    pub(crate) fn elapsed_at(&self, t: Instant) -> Duration {
        t.saturating_duration_since(self.started)
    }
}
