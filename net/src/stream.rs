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
//! On TCP, when a task's poll answers several requests, its small writes are sent with
//! `MSG_MORE` and the connection is pushed once when the poll ends (`cork.rs`, which states the
//! promise: `Ok` means the kernel has the bytes); reads count their bytes for that judgement. Every path that pushes bytes, shuts down or gives
//! the socket up first pushes what the same poll queued earlier on other sockets, so peers
//! see the task's writes in program order.

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll};

use spinpark_executor::task::poll_end;

use crate::cork::{Cork, SMALL};
use crate::io_source::IoSource;
use crate::reactor::Reactor;
use crate::readiness::Direction;
use crate::sys::{self, SockAddr};

/// A connected, non-blocking stream socket `S` on a reactor.
pub(crate) struct StreamCore<S: AsRawFd> {
    io: IoSource<S>,
    /// A TCP connection's coalescing (`cork.rs`); `None` on a Unix stream.
    cork: Option<Arc<Cork>>,
    /// An accepted TCP connection is counted by where its client runs (`peers.rs`).
    peer: Option<crate::peers::PeerTally>,
}

impl<S: AsRawFd> StreamCore<S> {
    /// Registers a connected socket that is already non-blocking with the current runtime.
    pub(crate) fn new(socket: S) -> io::Result<Self> {
        Ok(Self::on(IoSource::new(socket)?))
    }

    fn on(io: IoSource<S>) -> Self {
        StreamCore {
            io,
            cork: None,
            peer: None,
        }
    }

    /// Coalesces the task's small writes on this connection (TCP only: `cork.rs`).
    pub(crate) fn corked(mut self) -> Self {
        self.cork = Some(Cork::new(self.io.raw_fd()));
        self
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

    /// Deregisters and hands back the socket (still non-blocking), with what a poll queued on
    /// it pushed.
    pub(crate) fn into_inner(mut self) -> io::Result<S> {
        self.push_pending();
        if let Some(cork) = &self.cork {
            cork.close();
        }
        Ok(self.io.take().expect("present until dropped or taken"))
    }

    /// Pushes what the task's poll queued so far, on every socket, in order, and what this
    /// socket holds queued from any poll.
    fn push_pending(&self) {
        crate::cork::in_order();
        if let Some(cork) = &self.cork {
            cork.push();
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
        let read = self
            .io
            .poll_transfer(Direction::Read, cx, len, |s| sys::recv(s.as_raw_fd(), buf));
        self.note_read(&read);
        read
    }

    /// Counts what a read returned, for the cork's judgement of how many requests a poll's
    /// writes answer (`cork.rs`).
    fn note_read(&self, read: &impl ReadCount) {
        if let (Some(cork), Some(n)) = (&self.cork, read.count()) {
            cork.note_read(n);
        }
    }

    /// Writes from `buf`, waiting until the socket is writable. On TCP a small write from a
    /// task's poll that answers several requests is queued in the kernel, for the poll's end to
    /// push (`cork.rs`).
    pub(crate) fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_send(
            cx,
            buf.len(),
            |fd| sys::send_more(fd, buf),
            |fd| sys::send(fd, buf),
        )
    }

    /// A write of `len` bytes: `more` (with `MSG_MORE`) if the cork queues it, else `plain`
    /// after what the poll queued before is pushed.
    fn poll_send(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        more: impl Fn(RawFd) -> io::Result<usize>,
        plain: impl Fn(RawFd) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        if let Some((cork, scope)) = self.coalescing(cx, len) {
            let queued = || {
                self.io
                    .poll_transfer(Direction::Write, cx, len, |s| more(s.as_raw_fd()))
            };
            if let Some(sent) = cork.send_queued(scope, queued) {
                return sent;
            }
        }
        crate::cork::in_order();
        self.io
            .poll_transfer(Direction::Write, cx, len, |s| plain(s.as_raw_fd()))
    }

    /// The cork and the task's poll scope, if a write of `len` bytes may be queued with
    /// `MSG_MORE` (the cork decides).
    fn coalescing(&self, cx: &Context<'_>, len: usize) -> Option<(&Arc<Cork>, poll_end::ScopeId)> {
        let cork = self.cork.as_ref().filter(|_| len < SMALL)?;
        Some((cork, poll_end::current(cx.waker())?))
    }

    /// Pushes what the task's poll queued: `Ready(Ok)` at once (a `flush`: the bytes are the
    /// kernel's already).
    pub(crate) fn poll_flush(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(cork) = &self.cork {
            // Before the push below, which may come from this poll's deferred items.
            cork.note_flush();
        }
        self.push_pending();
        Poll::Ready(Ok(()))
    }

    /// Shuts down the write side, after what the poll queued on other sockets is pushed (a
    /// `close`; the FIN pushes this socket's).
    pub(crate) fn poll_close(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown(Shutdown::Write))
    }

    /// Pushes what the task's poll queued so far, for a caller's own write on the fd
    /// (`try_io`/`async_io` for writing), which must come after it.
    pub(crate) fn before_foreign_write(&self) {
        self.push_pending();
    }

    /// Writes from `bufs` in one `sendmsg`, waiting until the socket is writable; queued on
    /// TCP as [`StreamCore::poll_write`].
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
        self.poll_send(
            cx,
            len,
            |fd| sys::send_vectored_more(fd, bufs),
            |fd| sys::send_vectored(fd, bufs),
        )
    }

    /// Reads what is available now: `WouldBlock` if nothing is.
    pub(crate) fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: as in `poll_read`.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.try_read_uninit(buf)
    }

    /// Writes what fits now: `WouldBlock` if nothing does.
    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        crate::cork::in_order();
        self.io
            .try_io(Direction::Write, |s| sys::send(s.as_raw_fd(), buf))
    }

    /// Waits until the socket may be ready in `dir` (an operation may still `WouldBlock`).
    pub(crate) async fn ready(&self, dir: Direction) -> io::Result<()> {
        poll_fn(|cx| self.io.poll_ready(dir, cx)).await
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
        let read = self
            .io
            .try_io(Direction::Read, |s| sys::recv(s.as_raw_fd(), buf));
        self.note_read(&read);
        read
    }

    /// Reads what is available now into several buffers (`readv`).
    pub(crate) fn try_read_vectored(
        &self,
        bufs: &mut [std::io::IoSliceMut<'_>],
    ) -> io::Result<usize> {
        let read = self
            .io
            .try_io(Direction::Read, |s| sys::fd::readv(s.as_raw_fd(), bufs));
        self.note_read(&read);
        read
    }

    /// Writes what fits now from several buffers (`sendmsg`).
    pub(crate) fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        crate::cork::in_order();
        let bufs = &bufs[..bufs.len().min(sys::IOV_MAX)];
        self.io.try_io(Direction::Write, |s| {
            sys::send_vectored(s.as_raw_fd(), bufs)
        })
    }

    /// Shuts down the read side, the write side, or both. A connection the peer already
    /// reset (`ENOTCONN`) counts as shut down, as in tokio: there is nothing left to close.
    /// Shutting down the write side sends a FIN after every byte the kernel holds; what the
    /// task's poll queued on other sockets before is pushed first.
    pub(crate) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        if how != Shutdown::Read {
            crate::cork::in_order();
        }
        match sys::shutdown(self.raw_fd(), how) {
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            r => r,
        }
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

/// The byte count of a read's result, if it read any.
trait ReadCount {
    fn count(&self) -> Option<usize>;
}

impl ReadCount for io::Result<usize> {
    fn count(&self) -> Option<usize> {
        self.as_ref().ok().copied().filter(|&n| n > 0)
    }
}

impl ReadCount for Poll<io::Result<usize>> {
    fn count(&self) -> Option<usize> {
        match self {
            Poll::Ready(r) => r.count(),
            Poll::Pending => None,
        }
    }
}

impl<S: AsRawFd> Drop for StreamCore<S> {
    fn drop(&mut self) {
        // The close sends what the kernel holds, then a FIN: what the poll queued earlier on
        // other sockets goes first.
        crate::cork::in_order();
        if let Some(cork) = &self.cork {
            cork.close();
        }
    }
}
