//! Noticing that a child has exited, without a thread per child: [`Process`], a pid this
//! process has not reaped yet, and the [`Watch`] that wakes its waiter.
//!
//! * Where the kernel has `pidfd_open` (Linux 5.3), a pidfd registered on the reactor for
//!   reading: it becomes readable when the process exits, and the waiter's task is woken by
//!   that event like by any socket's.
//! * Elsewhere (`ENOSYS`), or when no pidfd can be opened, a `SIGCHLD` listener from the
//!   signal module: every `SIGCHLD` wakes every waiting child, and each looks at its own pid.
//!
//! Either way the exit is collected with `waitpid` on the child's own pid, `WNOHANG` (never
//! `wait(-1)`: other code in the process may own other children), after the waker is
//! stored, so an exit between the look and the store is not missed.
//!
//! A watch belongs to the runtime that made it. If that runtime has shut down when the child
//! is waited for (spawned in one runtime, waited for in another), the pidfd moves to the
//! current runtime's reactor, or a new `SIGCHLD` listener is made there.

use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::task::{Context, Poll};

use crate::interest::Interest;
use crate::io_source::{runtime_gone, IoSource};
use crate::readiness::Direction;
use crate::signal::{signal, Signal, SignalKind};

use super::sys;

/// Set once `pidfd_open` said `ENOSYS`: this kernel has no pidfds, so no later spawn tries.
static NO_PIDFD: AtomicBool = AtomicBool::new(false);

/// How many readiness events one poll looks at before it yields (as the sockets' loop).
const MAX_LOOKS_PER_POLL: usize = 4;

/// Whether children are watched through pidfds (as far as this process knows yet).
pub(super) fn pidfd_enabled() -> bool {
    // Relaxed: a hint; a stale `true` costs one failing call.
    !NO_PIDFD.load(Relaxed)
}

/// What wakes the task waiting for a child's exit.
pub(super) enum Watch {
    /// The child's pidfd, registered for reading on a runtime's reactor.
    Pidfd(IoSource<OwnedFd>),
    /// A `SIGCHLD` listener on a runtime's reactor.
    Sigchld(Signal),
}

impl Watch {
    /// A watch for `pid` on the current runtime: a pidfd if `use_pidfd` and the kernel has
    /// them, a `SIGCHLD` listener otherwise.
    fn new(pid: libc::pid_t, use_pidfd: bool) -> io::Result<Watch> {
        if use_pidfd && pidfd_enabled() {
            match sys::pidfd_open(pid) {
                Ok(fd) => return Watch::register(fd),
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => NO_PIDFD.store(true, Relaxed),
                // Out of descriptors, say: a SIGCHLD listener needs none of its own (after
                // the first), so it still works. tokio falls back the same way.
                Err(_) => {}
            }
        }
        signal(SignalKind::child()).map(Watch::Sigchld)
    }

    fn register(fd: OwnedFd) -> io::Result<Watch> {
        IoSource::with_events(fd, Interest::READABLE.epoll_events())
            .map(Watch::Pidfd)
            .map_err(|(_, e)| e)
    }

    /// This watch moved to the current runtime (its own has shut down): the same pidfd
    /// registered anew, or a new `SIGCHLD` listener.
    fn renew(self, pid: libc::pid_t, use_pidfd: bool) -> io::Result<Watch> {
        match self {
            Watch::Pidfd(source) => Watch::register(source.into_inner()),
            Watch::Sigchld(_) => Watch::new(pid, use_pidfd),
        }
    }

    /// Whether the runtime this watch was made on has shut down (nothing will wake it).
    fn is_stale(&self) -> bool {
        match self {
            Watch::Pidfd(source) => source.reactor().is_shut_down(),
            // A listener says so itself: its `poll_recv` returns `None`.
            Watch::Sigchld(_) => false,
        }
    }
}

/// A child process that has not been reaped yet: its pid cannot be reused meanwhile, so
/// `kill` and `waitpid` on it reach this child and no other.
pub(super) struct Process {
    pid: libc::pid_t,
    /// Made by [`Process::watch`] (at spawn) or on the first poll.
    watch: Option<Watch>,
    use_pidfd: bool,
}

impl fmt::Debug for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match &self.watch {
            Some(Watch::Pidfd(_)) => "pidfd",
            Some(Watch::Sigchld(_)) => "SIGCHLD",
            None => "none yet",
        };
        f.debug_struct("Process")
            .field("pid", &self.pid)
            .field("watch", &how)
            .finish()
    }
}

impl Process {
    /// The child `pid`, with no watch yet; `use_pidfd: false` watches through `SIGCHLD` only.
    pub(super) fn new(pid: libc::pid_t, use_pidfd: bool) -> Process {
        Process {
            pid,
            watch: None,
            use_pidfd,
        }
    }

    pub(super) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Makes the watch on the current runtime now (at spawn, so that its errors are spawn's).
    pub(super) fn watch(&mut self) -> io::Result<()> {
        if self.watch.is_none() {
            self.watch = Some(Watch::new(self.pid, self.use_pidfd)?);
        }
        Ok(())
    }

    /// Reaps the child if it has exited, without waiting.
    pub(super) fn try_wait(&self) -> io::Result<Option<ExitStatus>> {
        sys::try_reap(self.pid)
    }

    /// Sends the child `SIGKILL`.
    pub(super) fn kill(&self) -> io::Result<()> {
        sys::kill(self.pid)
    }

    /// Waits for the child to exit and reaps it. Only the latest waker is kept.
    pub(super) fn poll_exit(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        let mut renewed = false;
        for _ in 0..MAX_LOOKS_PER_POLL {
            let stale = self.watch.as_ref().is_none_or(Watch::is_stale);
            if stale {
                self.renew(&mut renewed)?;
            }
            let watch = self.watch.as_mut().expect("made just above");
            match watch {
                Watch::Pidfd(source) => match source.poll_seen_latest(Direction::Read, cx) {
                    Poll::Pending => return Poll::Pending,
                    // The reactor shut down: the next turn moves the pidfd.
                    Poll::Ready(Err(_)) => continue,
                    Poll::Ready(Ok(seen)) => {
                        if let Some(status) = sys::try_reap(self.pid)? {
                            return Poll::Ready(Ok(status));
                        }
                        // Not exited after all: wait for the next event.
                        source.clear(seen);
                    }
                },
                Watch::Sigchld(listener) => {
                    // The waker is stored first: a SIGCHLD after the look below wakes us.
                    let delivery = listener.poll_recv(cx);
                    if let Some(status) = sys::try_reap(self.pid)? {
                        return Poll::Ready(Ok(status));
                    }
                    match delivery {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Some(())) => {}
                        // The listener's runtime shut down: drop it, make one here.
                        Poll::Ready(None) => self.watch = None,
                    }
                }
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Moves the watch to the current runtime (or makes the first one), once per poll.
    fn renew(&mut self, renewed: &mut bool) -> io::Result<()> {
        if *renewed {
            // Renewed in this very poll and stale again: the current runtime is shutting down.
            return Err(runtime_gone());
        }
        *renewed = true;
        self.watch = Some(match self.watch.take() {
            Some(old) => old.renew(self.pid, self.use_pidfd)?,
            None => Watch::new(self.pid, self.use_pidfd)?,
        });
        Ok(())
    }
}
