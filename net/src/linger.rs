//! A dropped stream socket whose gathered writes the kernel has not taken yet *lingers*: its
//! fd stays open, on a task of its runtime, until the bytes are out, for at most the socket's
//! `SO_LINGER` time (or [`LINGER`](crate::outbox::LINGER) without one). A connection that
//! does not drain in time is reset, so that its peer cannot take the truncated output for a
//! whole one; so is one whose runtime shuts down first, or that has no runtime to linger on.
//!
//! ```text
//! let (rest, shut_write) = outbox.close();          // the socket is being dropped
//! if !rest.is_empty() { linger::start(reactor, fd, rest, shut_write) }
//! // ... then the socket's own fd is closed; the lingering task holds a duplicate
//! ```
//!
//! How: the task owns a duplicate of the fd (`F_DUPFD_CLOEXEC`), registered with the
//! socket's reactor, so the socket's own drop closes its fd as always. A zero `SO_LINGER` time
//! means "discard and reset", which the kernel does on the close that follows, so nothing
//! lingers then.

use std::future::Future;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::task::Poll;

use crate::io_source::IoSource;
use crate::outbox::LINGER;
use crate::reactor::Reactor;
use crate::readiness::Direction;
use crate::sys;

/// Keeps the connection on `fd` (about to be closed by its owner) open until `rest` is sent
/// (and the write side shut down after it if `shut_write`), in a task on the current runtime.
pub(crate) fn start(reactor: &Arc<Reactor>, fd: RawFd, rest: Vec<u8>, shut_write: bool) {
    let limit = match sys::linger(fd) {
        Ok(Some(limit)) => limit,
        Ok(None) => LINGER,
        Err(_) => LINGER,
    };
    if limit.is_zero() {
        // The owner's close resets the connection and discards what is left, as asked.
        return;
    }
    let Ok(handle) = spinpark_executor::Handle::try_current() else {
        reset(fd);
        return;
    };
    // SAFETY: the caller's socket owns `fd` and closes it only after this call returns; the
    // borrow ends with this statement.
    let dup = match unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned() {
        Ok(dup) => dup,
        Err(_) => {
            reset(fd);
            return;
        }
    };
    let source = match IoSource::in_reactor(dup, reactor.clone(), true) {
        Ok(source) => source,
        Err(_) => {
            reset(fd);
            return;
        }
    };
    let sleep = crate::time::sleep_in(reactor, limit);
    // Made before the task, so that a task dropped before its first poll (the runtime shuts
    // down) resets the connection too.
    let mut guard = ResetUnlessDone {
        source,
        done: false,
    };
    handle.spawn(async move {
        let mut sleep = std::pin::pin!(sleep);
        let mut sent = 0;
        std::future::poll_fn(|cx| {
            while sent < rest.len() {
                let unsent = &rest[sent..];
                match guard
                    .source
                    .poll_transfer(Direction::Write, cx, unsent.len(), |s| {
                        sys::send(s.as_raw_fd(), unsent)
                    }) {
                    Poll::Ready(Ok(n)) => sent += n,
                    // The connection broke: nothing more can reach the peer.
                    Poll::Ready(Err(_)) => return Poll::Ready(()),
                    Poll::Pending => {
                        return match sleep.as_mut().poll(cx) {
                            Poll::Ready(()) => Poll::Ready(()),
                            Poll::Pending => Poll::Pending,
                        }
                    }
                }
            }
            guard.done = true;
            if shut_write {
                let _ = sys::shutdown(guard.source.raw_fd(), std::net::Shutdown::Write);
            }
            Poll::Ready(())
        })
        .await;
    });
}

/// Sets a zero `SO_LINGER` time on `fd`, so that its close resets the connection.
fn reset(fd: RawFd) {
    // Nobody to report a failure to: the close that follows then ends the connection normally.
    let _ = sys::set_linger(fd, Some(std::time::Duration::ZERO));
}

/// The lingering duplicate; reset on close unless everything was sent.
struct ResetUnlessDone {
    source: IoSource<OwnedFd>,
    done: bool,
}

impl Drop for ResetUnlessDone {
    fn drop(&mut self) {
        if !self.done {
            reset(self.source.raw_fd());
        }
    }
}
