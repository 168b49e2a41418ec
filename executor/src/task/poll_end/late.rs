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
//! Every thread that defers work has an alarm of its own, a [`ThreadAlarm`]: a `timerfd` that
//! the runner's thread watches in one `epoll` set. A thread *waits* while some item it
//! deferred has run neither at its scope's end nor from here (`List::waiting` in
//! `poll_end.rs`, changed under that thread's list lock). The alarm must ring within
//! [`LATE_AFTER`] of the moment a thread begins waiting, and should not ring otherwise:
//!
//! * When a thread begins waiting at `t`, its alarm is armed to ring at `t + LATE_AFTER`,
//!   unless it is armed already to ring no sooner than `t + LATE_AFTER / 2` (an earlier poll's
//!   setting, which bounds this poll's wait too). So while deferring polls keep coming, the
//!   alarm is moved ahead at most once per half window (one `timerfd_settime`, which wakes
//!   nobody), and polls that come densely cost no syscall at all.
//! * When a thread goes idle, its alarm is disarmed if armed: at once when it parks; when it
//!   spins (a worker out of work), only once the alarm would ring within a quarter window, so
//!   that a poll that comes while it spins finds the alarm armed still. One more syscall per
//!   busy stretch at most.
//! * When an alarm rings, the runner takes that thread's items, if it still waits (it stops
//!   waiting; the items stay deferred to their scopes), and runs them first-deferred-first.
//!   The poll it finds has lasted at least half the window. The alarm is one-shot.
//!
//! * When a poll ends on a thread that is not inside another (and nothing waits), an alarm
//!   that would ring within a quarter window is disarmed too: a thread that stays busy with
//!   polls that defer nothing after one that did.
//!
//! So the alarm rings only for a poll that is actually late, or for one that ran across the
//! last quarter window after a deferring one: a poll that defers and ends within the window
//! wakes no thread, at any rate of such polls, on every flavour.
//! Nothing on that path is shared between threads: each thread's alarm and list are its own,
//! and the runner's registry of alarms is touched only when a thread makes its alarm, when
//! that thread is gone, and when an alarm rings. (The previous design shared one alarm under a
//! process-wide mutex and left it armed while such polls came densely, so it rang with nothing
//! to do up to once a request.)
//!
//! If the runner's thread, its `epoll` set or a thread's `timerfd` cannot be made (a process
//! out of threads or fds), nothing of that thread runs early: [`ThreadAlarm::new`] says so,
//! and callers that must not hold bytes do not defer.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::Items;

/// How long a poll may hold deferred work before the late runner runs it from its thread.
pub const LATE_AFTER: Duration = Duration::from_micros(500);

/// Rings of an alarm that found items to run.
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

/// The runner: its `epoll` set of the threads' alarms, and which thread each alarm is.
struct Runner {
    epoll: OwnedFd,
    /// Alarm token to its thread's items. Locked only to register, forget and look up on a
    /// ring, never on a poll's path.
    threads: Mutex<HashMap<u64, Weak<Items>>>,
    /// The next token.
    next: AtomicU64,
}

/// The runner, started on first use; `None` if it could not be.
fn runner() -> Option<&'static Runner> {
    static RUNNER: OnceLock<Option<Runner>> = OnceLock::new();
    RUNNER.get_or_init(|| Runner::start().ok()).as_ref()
}

/// The result `r` of a libc call that returns -1 and sets `errno` on failure, as an
/// `io::Error` that says what failed.
fn check(what: &str, r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("spinpark: {what} for the late runner: {e}"),
        ));
    }
    Ok(r)
}

impl Runner {
    fn start() -> io::Result<Runner> {
        // SAFETY: no pointers; a valid flag.
        let fd = check("epoll_create1", unsafe {
            libc::epoll_create1(libc::EPOLL_CLOEXEC)
        })?;
        // SAFETY: `fd` was just returned by epoll_create1 and is owned by nobody else.
        let epoll = unsafe { OwnedFd::from_raw_fd(fd) };
        let epfd = epoll.as_raw_fd();
        std::thread::Builder::new()
            .name("spinpark-late".into())
            .spawn(move || run(epfd))?;
        Ok(Runner {
            epoll,
            threads: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        })
    }

    fn threads(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Weak<Items>>> {
        // No code that can panic runs under it.
        self.threads.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One thread's alarm: rings the runner [`LATE_AFTER`] after the thread began waiting.
pub(super) struct ThreadAlarm {
    fd: OwnedFd,
    token: u64,
}

impl ThreadAlarm {
    /// The alarm of the thread whose items are `items`, registered with the runner (started
    /// if need be).
    ///
    /// # Errors
    /// The runner could not be started, or `timerfd_create`/`epoll_ctl` failed (`EMFILE`,
    /// `ENOMEM`), with context.
    pub(super) fn new(items: &Arc<Items>) -> io::Result<ThreadAlarm> {
        let runner = runner().ok_or_else(|| {
            io::Error::other("spinpark: the late runner's thread could not be started")
        })?;
        // SAFETY: no pointers; valid clock and flags. Non-blocking: the runner reads it only
        // after epoll said it rang, and a disarm in between leaves nothing to read.
        let fd = check("timerfd_create", unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
            )
        })?;
        // SAFETY: `fd` was just returned by timerfd_create and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // Relaxed: tokens only have to be distinct.
        let token = runner.next.fetch_add(1, Ordering::Relaxed);
        // In the registry before the fd is in the set, so that a ring always finds it.
        runner.threads().insert(token, Arc::downgrade(items));
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: both fds are valid and ours; `event` is a valid epoll_event on the stack.
        let added = check("epoll_ctl", unsafe {
            libc::epoll_ctl(
                runner.epoll.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                fd.as_raw_fd(),
                &mut event,
            )
        });
        if let Err(e) = added {
            runner.threads().remove(&token);
            return Err(e);
        }
        Ok(ThreadAlarm { fd, token })
    }

    /// Rings `after` from now.
    fn arm(&self, after: Duration) {
        settime(self.fd.as_raw_fd(), after);
    }

    /// Rings never (until armed again).
    fn disarm(&self) {
        settime(self.fd.as_raw_fd(), Duration::ZERO);
    }

    /// Whether the alarm is armed now (for tests).
    #[cfg(test)]
    pub(super) fn armed(&self) -> bool {
        // SAFETY: an all-zero itimerspec is a valid value to be overwritten.
        let mut cur: libc::itimerspec = unsafe { std::mem::zeroed() };
        // SAFETY: a valid timerfd we own and a valid itimerspec to write into.
        let r = unsafe { libc::timerfd_gettime(self.fd.as_raw_fd(), &mut cur) };
        assert_eq!(r, 0, "timerfd_gettime: {}", io::Error::last_os_error());
        cur.it_value.tv_sec != 0 || cur.it_value.tv_nsec != 0
    }
}

impl Drop for ThreadAlarm {
    fn drop(&mut self) {
        // The fd's close takes it out of the epoll set (nobody else holds a copy of it).
        if let Some(runner) = runner() {
            runner.threads().remove(&self.token);
        }
    }
}

/// A thread whose alarm rings at `until` (if armed) begins waiting now: arms it to ring
/// [`LATE_AFTER`] from now unless it rings no sooner than half that. Returns when it rings.
pub(super) fn keep_armed(alarm: &ThreadAlarm, until: Option<Instant>) -> Option<Instant> {
    let now = Instant::now();
    match until {
        Some(at) if at >= now + LATE_AFTER / 2 => Some(at),
        _ => {
            alarm.arm(LATE_AFTER);
            Some(now + LATE_AFTER)
        }
    }
}

/// A thread whose alarm rings at `until` goes idle: disarms it, unless it has rung already.
pub(super) fn disarm(alarm: &ThreadAlarm, until: Instant) {
    if until > Instant::now() {
        alarm.disarm();
    }
}

/// Sets the one-shot timer `fd` to ring `after` from now; zero disarms it.
fn settime(fd: RawFd, after: Duration) {
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: after.as_secs() as libc::time_t,
            tv_nsec: after.subsec_nanos() as libc::c_long,
        },
    };
    // SAFETY: a valid timerfd we own, a valid itimerspec on the stack, and a null old-value
    // pointer (allowed). The only possible errors (EBADF, EFAULT, EINVAL) cannot happen with
    // these arguments; were one to, a late poll's items would wait for its end.
    unsafe {
        libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut());
    }
}

/// The runner's thread: waits for any thread's alarm, then runs that thread's items.
fn run(epfd: RawFd) {
    const EVENTS: usize = 16;
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; EVENTS];
    loop {
        // SAFETY: a valid epoll fd (the runner lives in a static, never dropped) and a buffer
        // of EVENTS events on the stack.
        let n = unsafe { libc::epoll_wait(epfd, events.as_mut_ptr(), EVENTS as libc::c_int, -1) };
        if n < 0 {
            // EINTR: wait again. (Other errors are impossible on a valid epoll fd.)
            continue;
        }
        let Some(runner) = runner() else { return };
        for event in &events[..n as usize] {
            let token = event.u64;
            let items = runner.threads().get(&token).and_then(Weak::upgrade);
            if let Some(items) = items {
                items.rang();
                if super::run_late(&items) {
                    // Relaxed: a statistic.
                    RUNS.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

impl Items {
    /// Reads the ring off this thread's alarm, so that epoll stops reporting it.
    fn rang(&self) {
        if let Some(Some(alarm)) = self.alarm.get() {
            let mut expirations = 0u64;
            // SAFETY: reads 8 bytes into a local u64 from a non-blocking timerfd we own;
            // `EAGAIN` (disarmed since it rang) leaves nothing to do.
            unsafe {
                libc::read(
                    alarm.fd.as_raw_fd(),
                    (&mut expirations as *mut u64).cast(),
                    std::mem::size_of::<u64>(),
                );
            }
        }
    }
}
