//! [`ListenerCore`]: accepting connections, written once for [`crate::TcpListener`] and
//! [`crate::UnixListener`], which are thin wrappers around it.
//!
//! ```text
//! pub struct TcpListener { core: ListenerCore<std::net::TcpListener> }
//!
//! let (stream, addr) = ready!(self.core.poll_accept(cx))?; // StreamCore, sys::SockAddr
//! Poll::Ready(Ok((TcpStream { core: stream }, addr.to_inet()?)))
//! ```
//!
//! # The accept policy
//!
//! * One call per connection: `accept4` with `SOCK_NONBLOCK | SOCK_CLOEXEC` hands back a
//!   socket that is ready for the reactor, with no `fcntl`/`ioctl` after it.
//! * The connection is registered with the listener's own reactor (the one `accept` polls
//!   through), not looked up again.
//! * An error that concerns only the connection being accepted (it was aborted or reset
//!   before it could be accepted: `ECONNABORTED`, `EPROTO`, `EPERM`, `ECONNRESET`,
//!   `ETIMEDOUT`) is skipped, and the next connection tried.
//! * When the process or the system runs out of descriptors or memory (`EMFILE`, `ENFILE`,
//!   `ENOBUFS`, `ENOMEM`) the pending connection stays queued in the kernel, and retrying at
//!   once would fail the same way, in a busy loop. So accepting pauses [`ACCEPT_BACKOFF`] on
//!   a timer of the listener's reactor, and tries again as long as it takes; existing
//!   connections keep being served meanwhile, and one of them closing frees a descriptor.
//! * Any other error is returned as the OS gave it.

use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use crate::io_source::IoSource;
use crate::readiness::Direction;
use crate::stream::StreamCore;
use crate::sys::{self, SockAddr};
use crate::time::Sleep;

/// How long accepting pauses after the process or system ran out of descriptors or memory.
/// Existing connections keep being served meanwhile; when one closes, the next try succeeds.
///
/// ```
/// assert!(spinpark::net::tcp::ACCEPT_BACKOFF < std::time::Duration::from_secs(1));
/// ```
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// A listening, non-blocking socket `S` on a reactor.
pub(crate) struct ListenerCore<S: AsRawFd> {
    io: IoSource<S>,
    /// Set while accepting pauses after running out of descriptors or memory.
    backoff: Mutex<Option<Pin<Box<Sleep>>>>,
}

impl<S: AsRawFd> ListenerCore<S> {
    /// Registers a listening socket that is already non-blocking with the current runtime.
    pub(crate) fn new(listener: S) -> io::Result<Self> {
        Ok(ListenerCore {
            io: IoSource::new(listener)?,
            backoff: Mutex::new(None),
        })
    }

    pub(crate) fn get(&self) -> &S {
        self.io.get()
    }

    /// Deregisters and hands back the socket (still non-blocking).
    pub(crate) fn into_inner(self) -> S {
        self.io.into_inner()
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }

    fn backoff(&self) -> MutexGuard<'_, Option<Pin<Box<Sleep>>>> {
        // Only a timer is kept under this lock; no user code runs while it is held.
        self.backoff.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Polls for a connection, under the policy in the module docs: the new stream `T`
    /// (registered with this listener's reactor) and its peer's address.
    pub(crate) fn poll_accept<T: AsRawFd + From<OwnedFd>>(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(StreamCore<T>, SockAddr)>> {
        loop {
            {
                let mut backoff = self.backoff();
                if let Some(pause) = backoff.as_mut() {
                    // A shut-down reactor fires no timer: skip the pause, and let the accept
                    // below report the shutdown.
                    if !self.io.reactor().is_shut_down() {
                        ready!(pause.as_mut().poll(cx));
                    }
                    *backoff = None;
                }
            }
            let accepted = ready!(self.io.poll_io(
                Direction::Read,
                cx,
                |l| sys::accept(l.as_raw_fd()),
                |_| false
            ));
            match accepted {
                Ok((fd, addr)) => {
                    let reactor = self.io.reactor().clone();
                    let stream = StreamCore::accepted(T::from(fd), reactor);
                    return Poll::Ready(stream.map(|s| (s, addr)));
                }
                Err(e) if is_per_connection(&e) => continue,
                Err(e) if is_resource_exhaustion(&e) => {
                    *self.backoff() = Some(Box::pin(crate::time::sleep_in(
                        self.io.reactor(),
                        ACCEPT_BACKOFF,
                    )));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

/// An error that concerns only the connection being accepted.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED | libc::EPERM | libc::EPROTO | libc::ECONNRESET | libc::ETIMEDOUT)
    )
}

/// Out of descriptors or memory: the pending connection stays queued in the kernel.
fn is_resource_exhaustion(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}
