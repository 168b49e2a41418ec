//! A one-shot alarm behind a trait, so the watch (`idle/watch.rs`) can be model-checked.
//!
//! The watch needs three things from the kernel: "ring after this long" (re-settable by any
//! thread, without waking the waiter), "block until it rings", and "stop". [`Alarm`] names
//! them. [`SysAlarm`] is a Linux `timerfd(2)`: setting it is one syscall and wakes nobody,
//! which is the point (a worker that spins re-arms it every few milliseconds for free, see
//! `watch.rs`). Under `--cfg loom`, `LoomAlarm` models the same contract with a mutex and a
//! condition variable, where "time passes" whenever loom likes: an armed alarm may ring at
//! any point.

use std::time::Duration;

/// A re-settable one-shot alarm with one waiter.
pub(crate) trait Alarm: Send + Sync {
    /// Rings once `after` from now (replacing any earlier setting), or never (`None`).
    fn set(&self, after: Option<Duration>);
    /// Blocks until the alarm rings (`true`) or is closed (`false`). May return `true`
    /// spuriously; the caller re-checks what it was waiting for.
    fn wait(&self) -> bool;
    /// Makes the current and every later [`Alarm::wait`] return `false`.
    fn close(&self);
}

#[cfg(not(loom))]
pub(crate) use sys::SysAlarm;

#[cfg(not(loom))]
mod sys {
    use super::Alarm;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicBool, Ordering::Acquire, Ordering::Release};
    use std::time::Duration;

    /// A `timerfd` on `CLOCK_MONOTONIC`, read by the one thread that waits on it.
    #[derive(Debug)]
    pub(crate) struct SysAlarm {
        fd: OwnedFd,
        closed: AtomicBool,
    }

    impl SysAlarm {
        /// # Errors
        /// `timerfd_create`'s (`EMFILE`, `ENFILE`, `ENOMEM`), with context.
        pub(crate) fn new() -> io::Result<Self> {
            // SAFETY: no pointers; the flags are valid for timerfd_create.
            let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
            if fd < 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(
                    e.kind(),
                    format!("spinpark: timerfd_create for the watchdog: {e}"),
                ));
            }
            Ok(Self {
                // SAFETY: `fd` was just returned by timerfd_create and is owned by nobody else.
                fd: unsafe { OwnedFd::from_raw_fd(fd) },
                closed: AtomicBool::new(false),
            })
        }

        fn settime(&self, after: Duration) {
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: after.as_secs().min(i64::MAX as u64) as libc::time_t,
                    tv_nsec: after.subsec_nanos() as libc::c_long,
                },
            };
            // SAFETY: a valid timerfd we own, a valid itimerspec on the stack, and a null
            // old-value pointer (allowed). The only possible errors (EBADF, EFAULT, EINVAL)
            // cannot happen with these arguments; were one to, the alarm would not ring,
            // which costs the watchdog one check, not correctness elsewhere.
            unsafe {
                libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut());
            }
        }
    }

    impl Alarm for SysAlarm {
        fn set(&self, after: Option<Duration>) {
            // A zero it_value disarms a timerfd, so "now" is one nanosecond.
            self.settime(after.map_or(Duration::ZERO, |d| d.max(Duration::from_nanos(1))));
        }

        fn wait(&self) -> bool {
            // Acquire: pairs with `close`'s Release; nothing else is read through it.
            while !self.closed.load(Acquire) {
                let mut expirations = 0u64;
                // SAFETY: reads 8 bytes into a local u64 from a timerfd we own; it blocks
                // until the timer expires (the fd is blocking).
                let n = unsafe {
                    libc::read(
                        self.fd.as_raw_fd(),
                        (&mut expirations as *mut u64).cast(),
                        std::mem::size_of::<u64>(),
                    )
                };
                if n == std::mem::size_of::<u64>() as isize {
                    return !self.closed.load(Acquire);
                }
                // EINTR: read again. (Other errors are impossible on a valid timerfd.)
            }
            false
        }

        fn close(&self) {
            self.closed.store(true, Release);
            self.settime(Duration::from_nanos(1));
        }
    }
}

/// A model of the alarm for `loom`: `set(Some(_))` arms it, and an armed alarm may ring at
/// any point loom chooses, as long as it has rings left. Rings stand for time passing without
/// anybody attending the reactor, so the model grants them ([`LoomAlarm::grant`]) where that
/// can happen (a worker stuck in a task); a spinner, which attends every iteration, lets no
/// period pass. The budget also makes a model with a watchdog that keeps re-arming it end.
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct LoomAlarm {
    state: loom::sync::Mutex<LoomState>,
    cond: loom::sync::Condvar,
}

#[cfg(loom)]
#[derive(Debug)]
struct LoomState {
    armed: bool,
    closed: bool,
    rings: u32,
}

#[cfg(loom)]
impl LoomAlarm {
    pub(crate) fn new(rings: u32) -> Self {
        Self {
            state: loom::sync::Mutex::new(LoomState {
                armed: false,
                closed: false,
                rings,
            }),
            cond: loom::sync::Condvar::new(),
        }
    }
}

#[cfg(loom)]
impl LoomAlarm {
    /// Lets `rings` more periods pass.
    pub(crate) fn grant(&self, rings: u32) {
        self.state.lock().unwrap().rings += rings;
        self.cond.notify_all();
    }
}

#[cfg(loom)]
impl Alarm for LoomAlarm {
    fn set(&self, after: Option<Duration>) {
        let mut s = self.state.lock().unwrap();
        s.armed = after.is_some();
        self.cond.notify_all();
    }

    fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap();
        loop {
            if s.closed {
                return false;
            }
            if s.armed && s.rings > 0 {
                s.armed = false;
                s.rings -= 1;
                return true;
            }
            s = self.cond.wait(s).unwrap();
        }
    }

    fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.cond.notify_all();
    }
}
