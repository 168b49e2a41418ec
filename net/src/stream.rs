//! [`StreamCore`]: everything a connected stream socket does, written once for
//! [`crate::TcpStream`], [`crate::UnixStream`] and their halves, which are thin wrappers
//! around it.
//!
//! ```text
//! pub struct TcpStream { core: StreamCore<std::net::TcpStream> }
//!
//! impl TcpStream {
//!     /// (the public docs and example)
//!     pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
//!         self.core.try_read(buf)
//!     }
//! }
//! ```
//!
//! # How it works
//!
//! The core owns an [`IoSource`] holding the standard library's socket type `S`, which only
//! owns the fd (and answers `peer_addr`, `local_addr` and socket options for the wrapper).
//! Every operation is a `sys` call on the fd run through the source's readiness loop: reads
//! are `recv` (into uninitialised memory when the caller has it), writes `send` or `sendmsg`
//! with `MSG_NOSIGNAL`, so a closed peer is an error and never a `SIGPIPE`, for TCP and Unix
//! alike. Connecting is here too: start a non-blocking `connect`, register the socket as not
//! yet ready, wait until it is writable, then read its error.
//!
//! Small writes made from a task's own poll after its first are gathered in the core's outbox
//! and sent when the poll ends, while the kernel is known to have room for them (`outbox.rs`,
//! which states the promise). Every path that writes to the kernel directly, shuts down, or
//! gives the socket up sends what the outbox holds first, so bytes keep their order; every
//! direct send is counted against the kernel's known room.

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll};

use spinpark_executor::coop;
use spinpark_executor::task::poll_end;

use crate::io_source::IoSource;
use crate::outbox::{Gather, Outbox, SMALL};
use crate::reactor::Reactor;
use crate::readiness::Direction;
use crate::sys::{self, SockAddr};

/// A connected, non-blocking stream socket `S` on a reactor.
pub(crate) struct StreamCore<S: AsRawFd> {
    io: IoSource<S>,
    out: Arc<Outbox>,
    /// An accepted TCP connection is counted by where its client runs (`peers.rs`).
    peer: Option<crate::peers::PeerTally>,
}

impl<S: AsRawFd> StreamCore<S> {
    /// Registers a connected socket that is already non-blocking with the current runtime.
    pub(crate) fn new(socket: S) -> io::Result<Self> {
        Ok(Self::on(IoSource::new(socket)?))
    }

    fn on(io: IoSource<S>) -> Self {
        let out = Outbox::new(io.raw_fd(), io.readiness().clone());
        StreamCore {
            io,
            out,
            peer: None,
        }
    }

    /// Registers a connection a listener accepted with that listener's reactor.
    pub(crate) fn accepted(socket: S, reactor: Arc<Reactor>) -> io::Result<Self> {
        Ok(Self::on(IoSource::in_reactor(socket, reactor, true)?))
    }

    /// Connects the non-blocking, unconnected `socket` to `addr`, on the current runtime.
    ///
    /// # Errors
    /// The connect error (`ConnectionRefused`, ...) as the kernel reports it; callers add
    /// the address.
    pub(crate) async fn connect(socket: S, addr: &SockAddr) -> io::Result<Self> {
        if !sys::connect(socket.as_raw_fd(), addr)? {
            return Self::new(socket);
        }
        // In progress: nothing is ready until the kernel says the connection is established
        // (or failed), which it does by making the socket writable.
        let core = Self::on(IoSource::connecting(socket)?);
        core.ready(Direction::Write).await?;
        if let Some(e) = core.take_error()? {
            return Err(e);
        }
        // Writable without an error but not connected would be a kernel oddity; make sure.
        sys::peer_addr(core.raw_fd())?;
        Ok(core)
    }

    pub(crate) fn get(&self) -> &S {
        self.io.get()
    }

    /// Counts this connection, accepted from `peer`, with its reactor's clients.
    pub(crate) fn tally_peer(&mut self, peer: &std::net::SocketAddr) {
        self.peer = Some(crate::peers::tally(
            self.io.reactor(),
            self.io.raw_fd(),
            peer,
        ));
    }

    /// Deregisters and hands back the socket (still non-blocking), after sending what the
    /// outbox holds. The kernel takes that at once unless it refused room it had (see
    /// `outbox.rs`): then this waits in `poll(2)` for at most [`HANDOVER`], and past it resets
    /// the connection and says so.
    pub(crate) fn into_inner(mut self) -> io::Result<S> {
        if self.out.is_pending() {
            self.send_blocking();
        }
        let lost = self.out.close();
        let socket = self.io.take().expect("present until dropped or taken");
        if lost {
            let _ = sys::set_linger(socket.as_raw_fd(), Some(std::time::Duration::ZERO));
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "into_std: the kernel did not take the socket's gathered bytes within 1 s; \
                 the connection is reset",
            ));
        }
        Ok(socket)
    }

    /// Sends what the outbox holds, waiting in `poll(2)` while the kernel takes nothing, for
    /// at most [`HANDOVER`].
    fn send_blocking(&self) {
        let deadline = std::time::Instant::now() + HANDOVER;
        loop {
            match self.out.try_drain() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                _ => return,
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || sys::fd::wait_writable(self.raw_fd(), left).is_err() {
                return;
            }
            // The readiness word learns of the room only from the reactor; say it here.
            self.io.readiness().set_ready(crate::readiness::WRITABLE);
        }
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }

    /// Reads into `buf`, waiting until the socket is readable; `0` is end of stream.
    pub(crate) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        // SAFETY: recv only writes initialised bytes into the buffer and never reads it, so
        // viewing initialised memory as possibly-uninitialised for it loses nothing.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.poll_read_uninit(cx, buf)
    }

    /// Reads into possibly uninitialised memory: on `Ok(n)` the first `n` bytes of `buf` are
    /// initialised.
    pub(crate) fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        let len = buf.len();
        self.io
            .poll_transfer(Direction::Read, cx, len, |s| sys::recv(s.as_raw_fd(), buf))
    }

    /// Writes from `buf`, waiting until the socket is writable. A small write from a task's
    /// own poll is gathered for the poll's end instead (`outbox.rs`).
    pub(crate) fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.len() < SMALL {
            if let Some(n) = std::task::ready!(self.poll_gather(cx, &[IoSlice::new(buf)]))? {
                return Poll::Ready(Ok(n));
            }
        }
        std::task::ready!(self.out.poll_drain(cx))?;
        let n = std::task::ready!(self.io.poll_transfer(Direction::Write, cx, buf.len(), |s| {
            sys::send(s.as_raw_fd(), buf)
        }))?;
        self.out.spend(n);
        Poll::Ready(Ok(n))
    }

    /// Gathers a small write from a task's own poll, taking a unit of the task's budget as a
    /// direct write does: `Some(n)` if the outbox took it, `None` if it is to go direct.
    fn poll_gather(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<Option<usize>>> {
        let Some(scope) = poll_end::current(cx.waker()) else {
            return Poll::Ready(Ok(None));
        };
        let coop = std::task::ready!(coop::poll_proceed(cx));
        match self.out.gather(scope, bufs)? {
            Gather::Taken(n) => {
                coop.made_progress();
                Poll::Ready(Ok(Some(n)))
            }
            // The direct write takes its unit itself; this one is given back.
            Gather::Direct => Poll::Ready(Ok(None)),
        }
    }

    /// Sends what the outbox holds now: `Ready(Ok)` once it is empty (a `flush`).
    pub(crate) fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.out.poll_drain(cx)
    }

    /// Sends what the outbox holds, then shuts down the write side (a `close`).
    pub(crate) fn poll_close(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.out.poll_drain(cx))?;
        self.shutdown(Shutdown::Write)
            .map_or_else(|e| Poll::Ready(Err(e)), |()| Poll::Ready(Ok(())))
    }

    /// Sends what the outbox holds if the kernel takes it now: `WouldBlock` otherwise (for
    /// the direct `try_` writes and `try_io`).
    pub(crate) fn try_flush(&self) -> io::Result<()> {
        self.out.try_drain()
    }

    /// Writes from `bufs` in one `sendmsg`, waiting until the socket is writable.
    pub(crate) fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // sendmsg takes at most IOV_MAX slices. Offer only those, and judge a short count
        // against their length: bytes left in the slices past the limit are not a sign that
        // the socket buffer is full, and clearing WRITABLE for them would wait for an edge
        // that never comes.
        let bufs = &bufs[..bufs.len().min(sys::IOV_MAX)];
        let len = bufs.iter().map(|b| b.len()).sum();
        if len < SMALL {
            if let Some(n) = std::task::ready!(self.poll_gather(cx, bufs))? {
                return Poll::Ready(Ok(n));
            }
        }
        std::task::ready!(self.out.poll_drain(cx))?;
        let n = std::task::ready!(self.io.poll_transfer(Direction::Write, cx, len, |s| {
            sys::send_vectored(s.as_raw_fd(), bufs)
        }))?;
        self.out.spend(n);
        Poll::Ready(Ok(n))
    }

    /// Reads what is available now: `WouldBlock` if nothing is.
    pub(crate) fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: as in `poll_read`.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.io
            .try_io(Direction::Read, |s| sys::recv(s.as_raw_fd(), buf))
    }

    /// Writes what fits now: `WouldBlock` if nothing does.
    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_flush()?;
        let n = self
            .io
            .try_io(Direction::Write, |s| sys::send(s.as_raw_fd(), buf))?;
        self.out.spend(n);
        Ok(n)
    }

    /// Waits until the socket may be ready in `dir` (an operation may still `WouldBlock`).
    pub(crate) async fn ready(&self, dir: Direction) -> io::Result<()> {
        poll_fn(|cx| self.io.poll_ready(dir, cx)).await
    }

    /// The socket's outbox (for tests of the memory bound).
    #[cfg(test)]
    pub(crate) fn outbox(&self) -> &Outbox {
        &self.out
    }

    /// The registered source (readiness and `try_io` for the public wrappers).
    pub(crate) fn io(&self) -> &IoSource<S> {
        &self.io
    }

    /// Reads without taking the bytes out of the socket's queue (`MSG_PEEK`), waiting until
    /// it is readable.
    pub(crate) fn poll_peek(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        // SAFETY: as in `poll_read`.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.io.poll_io(
            Direction::Read,
            cx,
            |s| sys::recv_from(s.as_raw_fd(), buf, libc::MSG_PEEK).map(|(n, _)| n),
            |_| false,
        )
    }

    /// Reads what is available now into possibly uninitialised memory.
    pub(crate) fn try_read_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        self.io
            .try_io(Direction::Read, |s| sys::recv(s.as_raw_fd(), buf))
    }

    /// Reads what is available now into several buffers (`readv`).
    pub(crate) fn try_read_vectored(
        &self,
        bufs: &mut [std::io::IoSliceMut<'_>],
    ) -> io::Result<usize> {
        self.io
            .try_io(Direction::Read, |s| sys::fd::readv(s.as_raw_fd(), bufs))
    }

    /// Writes what fits now from several buffers (`sendmsg`).
    pub(crate) fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.try_flush()?;
        let bufs = &bufs[..bufs.len().min(sys::IOV_MAX)];
        let n = self.io.try_io(Direction::Write, |s| {
            sys::send_vectored(s.as_raw_fd(), bufs)
        })?;
        self.out.spend(n);
        Ok(n)
    }

    /// Forgets the kernel's known room: a `try_io`/`async_io` closure may write on the fd.
    pub(crate) fn forget_room(&self) {
        self.out.forget_room();
    }

    /// Shuts down the read side, the write side, or both. A connection the peer already
    /// reset (`ENOTCONN`) counts as shut down, as in tokio: there is nothing left to close.
    ///
    /// Shutting down the write side while gathered bytes wait for room in the kernel leaves
    /// the shutdown to happen right after them.
    pub(crate) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        if how == Shutdown::Read {
            return crate::outbox::shutdown(self.raw_fd(), how);
        }
        if how == Shutdown::Both {
            crate::outbox::shutdown(self.raw_fd(), Shutdown::Read)?;
        }
        // Through the outbox: after what it holds, and it refuses writes from then on.
        self.out.shutdown_write()
    }

    /// Takes the socket's pending error (`SO_ERROR`).
    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        sys::take_error(self.raw_fd())
    }

    /// Whether epoll reported that the peer closed its sending side.
    pub(crate) fn is_read_closed(&self) -> bool {
        self.io.read_closed()
    }
}

impl<S: AsRawFd> Drop for StreamCore<S> {
    fn drop(&mut self) {
        if self.out.close() {
            // The kernel refused bytes it had room for (see `outbox.rs`): reset the connection
            // (the close that follows does), so the peer cannot take the truncated output for
            // a whole one.
            let _ = sys::set_linger(self.raw_fd(), Some(std::time::Duration::ZERO));
        }
    }
}

/// How long `into_std` waits for the kernel to take gathered bytes it refused room for.
const HANDOVER: std::time::Duration = std::time::Duration::from_secs(1);
