//! [`IoSource`]: a non-blocking socket registered with the reactor, and the loop every
//! operation on it runs ("wait until ready, try the syscall, on `WouldBlock` clear and wait").

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use spinpark_executor::coop;

use crate::reactor::{Reactor, Token};
use crate::readiness::{Direction, Readiness, Seen};

/// How many times one poll of an I/O operation may try its syscall (see `poll_io`).
const MAX_ATTEMPTS_PER_POLL: usize = 4;

/// A socket `T` registered with a runtime's reactor. Dropping it removes the fd from epoll
/// first, then closes it (by dropping `T`).
pub(crate) struct IoSource<T: AsRawFd> {
    io: Option<T>,
    readiness: Arc<Readiness>,
    token: Token,
    reactor: Arc<Reactor>,
}

impl<T: AsRawFd> IoSource<T> {
    /// Registers `io` (already non-blocking, and connected or listening) with the current
    /// runtime's reactor.
    pub(crate) fn new(io: T) -> io::Result<Self> {
        Self::with_readiness(io, true)
    }

    /// Registers a socket whose connection is still in progress: nothing is ready until the
    /// kernel says so.
    pub(crate) fn connecting(io: T) -> io::Result<Self> {
        Self::with_readiness(io, false)
    }

    fn with_readiness(io: T, assume_ready: bool) -> io::Result<Self> {
        Self::in_reactor(io, Reactor::current()?, assume_ready)
    }

    /// Registers `io` with `reactor` rather than the current runtime's: a connection accepted
    /// by a listener goes to the listener's reactor.
    pub(crate) fn in_reactor(io: T, reactor: Arc<Reactor>, assume_ready: bool) -> io::Result<Self> {
        let (token, readiness) = reactor.register(io.as_raw_fd(), assume_ready)?;
        Ok(Self {
            io: Some(io),
            readiness,
            token,
            reactor,
        })
    }

    /// Registers `io` with the current runtime's reactor for the epoll `events` given (an
    /// `AsyncFd`'s interest), nothing assumed ready. On failure `io` comes back with the
    /// error.
    pub(crate) fn with_events(io: T, events: u32) -> Result<Self, (T, io::Error)> {
        Self::with_initial(io, 0, events)
    }

    /// Registers `io` for all the sockets' events, assumed writable but not readable (a
    /// datagram socket: room to send at once, nothing to receive until the kernel says so).
    pub(crate) fn writable_first(io: T) -> io::Result<Self> {
        Self::with_initial(io, crate::readiness::WRITABLE, crate::sys::INTEREST).map_err(|(_, e)| e)
    }

    fn with_initial(io: T, initial: usize, events: u32) -> Result<Self, (T, io::Error)> {
        let reactor = match Reactor::current() {
            Ok(r) => r,
            Err(e) => return Err((io, e)),
        };
        match reactor.register_events(io.as_raw_fd(), initial, events) {
            Ok((token, readiness)) => Ok(Self {
                io: Some(io),
                readiness,
                token,
                reactor,
            }),
            Err(e) => Err((io, e)),
        }
    }

    /// Deregisters and hands back the socket, leaving this source empty (its drop then does
    /// nothing): for an owner that must give the socket up from `&mut self` (a `Drop` impl's
    /// neighbour, `into_inner` of a type that has one).
    pub(crate) fn take(&mut self) -> Option<T> {
        let io = self.io.take()?;
        self.reactor.deregister(io.as_raw_fd(), self.token);
        Some(io)
    }

    /// The source's readiness, for a sender that waits on it without the source (an
    /// `AutoFlush` buffer flushed from another thread).
    pub(crate) fn readiness(&self) -> &Arc<Readiness> {
        &self.readiness
    }

    /// The reactor this source is registered with.
    pub(crate) fn reactor(&self) -> &Arc<Reactor> {
        &self.reactor
    }

    pub(crate) fn get(&self) -> &T {
        self.io.as_ref().expect("present until dropped or taken")
    }

    /// Deregisters and hands back the socket.
    pub(crate) fn into_inner(mut self) -> T {
        let io = self.io.take().expect("present until dropped or taken");
        self.reactor.deregister(io.as_raw_fd(), self.token);
        io
    }

    /// Runs `op` when the socket is ready in `dir`, until it does not return `WouldBlock`.
    /// Each call that completes takes one unit of the task's cooperative budget.
    ///
    /// `drained` looks at a successful result: when it says the operation emptied the socket's
    /// buffer (a read) or filled it (a write), the direction's readiness is cleared at once, so
    /// the next operation waits for the next edge instead of spending a syscall to learn
    /// `WouldBlock`. The tick check in `clear` keeps an edge that arrived meanwhile.
    pub(crate) fn poll_io<R>(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
        op: impl FnMut(&T) -> io::Result<R>,
        drained: impl Fn(&R) -> bool,
    ) -> Poll<io::Result<R>> {
        let coop = ready!(coop::poll_proceed(cx));
        let out = self.attempt_io(dir, cx, op, drained);
        if out.is_ready() {
            coop.made_progress();
        }
        out
    }

    /// [`IoSource::poll_io`]'s attempts, without the budget.
    fn attempt_io<R>(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
        mut op: impl FnMut(&T) -> io::Result<R>,
        drained: impl Fn(&R) -> bool,
    ) -> Poll<io::Result<R>> {
        // Each attempt follows a fresh readiness: after `WouldBlock` the direction is cleared,
        // so another attempt happens only if an event arrived meanwhile (or on `EINTR`). A
        // source that keeps reporting readiness while its syscall keeps failing that way would
        // still loop, so the attempts per poll are bounded: past the bound the task yields
        // (wakes itself) and the worker gets to run others first.
        for _ in 0..MAX_ATTEMPTS_PER_POLL {
            let seen = ready!(self.readiness.poll_ready(dir, cx));
            if seen.is_shutdown() {
                return Poll::Ready(Err(runtime_gone()));
            }
            match op(self.get()) {
                Ok(r) => {
                    if drained(&r) {
                        self.readiness.clear(seen);
                    }
                    return Poll::Ready(Ok(r));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readiness.clear(seen),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// [`IoSource::poll_io`] for a read or write of `len` bytes: moving some but fewer than
    /// `len` bytes means the buffer was drained (or filled). `len` must be what the syscall
    /// was offered: bytes it could never take in one call (slices past `IOV_MAX`) would turn
    /// a full transfer into a "short" one and clear readiness with no edge to come.
    pub(crate) fn poll_transfer(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
        len: usize,
        op: impl FnMut(&T) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io(dir, cx, op, |&n| n > 0 && n < len)
    }

    /// Tries `op` once if the socket looks ready, without waiting.
    pub(crate) fn try_io<R>(
        &self,
        dir: Direction,
        op: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        match self.readiness.ready_now(dir) {
            None => Err(io::ErrorKind::WouldBlock.into()),
            // The runtime is gone, the socket is not: what the kernel still holds for it is
            // read (or written) as on tokio; where the operation would wait, nobody will ever
            // report readiness again, so that is the runtime's error.
            Some(seen) if seen.is_shutdown() => op(self.get()).map_err(gone_if_would_block),
            Some(seen) => {
                let r = op(self.get());
                if matches!(&r, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                    self.readiness.clear(seen);
                }
                r
            }
        }
    }

    /// Waits until the socket may be ready in `dir` (it can still turn out not to be).
    pub(crate) fn poll_ready(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_seen(dir, cx).map(|r| r.map(drop))
    }

    /// Whether the peer has closed its sending side (end of stream seen by epoll).
    pub(crate) fn read_closed(&self) -> bool {
        self.readiness
            .ready_now(Direction::Read)
            .is_some_and(|s| s.is_read_closed())
    }

    /// Waits until the socket may be ready in `dir` and returns what was seen, for a caller
    /// that runs its own syscall and hands `seen` to [`IoSource::clear`] after `WouldBlock`
    /// (`AsyncFd`'s guards).
    pub(crate) fn poll_seen(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<io::Result<Seen>> {
        self.readiness.poll_ready(dir, cx).map(|seen| {
            if seen.is_shutdown() {
                Err(runtime_gone())
            } else {
                Ok(seen)
            }
        })
    }

    /// Clears the readiness `seen` allowed, unless an event arrived since.
    pub(crate) fn clear(&self, seen: Seen) {
        self.readiness.clear(seen);
    }

    /// Clears `bits` of what `seen` allowed, unless an event arrived since.
    pub(crate) fn clear_bits(&self, seen: Seen, bits: usize) {
        self.readiness.clear_bits(seen, bits);
    }

    /// Waits until the source is ready for any of `interest` and says how (`ready(Interest)`
    /// on the socket types).
    pub(crate) async fn ready(
        &self,
        interest: crate::interest::Interest,
    ) -> io::Result<crate::interest::Ready> {
        let seen = std::future::poll_fn(|cx| self.poll_mask(interest.mask(), cx)).await?;
        Ok(crate::interest::Ready::from_word(
            seen.ready_bits() & interest.reported(),
        ))
    }

    /// [`IoSource::poll_ready`] keeping only the latest waker per direction (the sockets'
    /// `poll_read_ready`/`poll_write_ready`).
    pub(crate) fn poll_ready_latest(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        self.poll_seen_latest(dir, cx).map(|r| r.map(drop))
    }

    /// [`IoSource::poll_seen`] for `poll_read_ready`-style callers: only the latest waker
    /// per direction is kept.
    pub(crate) fn poll_seen_latest(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Seen>> {
        self.readiness.poll_ready_latest(dir, cx).map(|seen| {
            if seen.is_shutdown() {
                Err(runtime_gone())
            } else {
                Ok(seen)
            }
        })
    }

    /// [`IoSource::poll_seen`] for any readiness bits (an `Interest`'s mask).
    pub(crate) fn poll_mask(&self, mask: usize, cx: &mut Context<'_>) -> Poll<io::Result<Seen>> {
        self.readiness.poll_mask(mask, cx).map(|seen| {
            if seen.is_shutdown() {
                Err(runtime_gone())
            } else {
                Ok(seen)
            }
        })
    }

    /// Whether any of `mask` is set now, without waiting.
    pub(crate) fn ready_now_mask(&self, mask: usize) -> Option<Seen> {
        self.readiness.ready_now_mask(mask)
    }

    /// [`IoSource::try_io`] for any readiness bits: runs `op` once if one of `mask` is set,
    /// and clears them if it returns `WouldBlock`.
    pub(crate) fn try_io_mask<R>(
        &self,
        mask: usize,
        op: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        match self.readiness.ready_now_mask(mask) {
            None => Err(io::ErrorKind::WouldBlock.into()),
            // As in `try_io`.
            Some(seen) if seen.is_shutdown() => op().map_err(gone_if_would_block),
            Some(seen) => {
                let r = op();
                if matches!(&r, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                    self.readiness.clear(seen);
                }
                r
            }
        }
    }

    /// Waits until one of `mask` is set, runs `op`, and on `WouldBlock` clears and waits
    /// again (`async_io`). Each attempt takes one unit of the task's budget.
    pub(crate) fn poll_io_mask<R>(
        &self,
        mask: usize,
        cx: &mut Context<'_>,
        op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let coop = ready!(coop::poll_proceed(cx));
        let out = self.attempt_io_mask(mask, cx, op);
        if out.is_ready() {
            coop.made_progress();
        }
        out
    }

    /// [`IoSource::poll_io_mask`]'s attempts, without the budget.
    fn attempt_io_mask<R>(
        &self,
        mask: usize,
        cx: &mut Context<'_>,
        mut op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        for _ in 0..MAX_ATTEMPTS_PER_POLL {
            let seen = ready!(self.poll_mask(mask, cx))?;
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readiness.clear(seen),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return Poll::Ready(r),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.io.as_mut().expect("present until dropped or taken")
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.get().as_raw_fd()
    }
}

impl<T: AsRawFd> Drop for IoSource<T> {
    fn drop(&mut self) {
        if let Some(io) = self.io.take() {
            self.reactor.deregister(io.as_raw_fd(), self.token);
            drop(io);
        }
    }
}

/// The error of an operation on a socket whose runtime has shut down (one that
/// `spinpark::runtime::is_rt_shutdown_err` recognises).
pub(crate) fn runtime_gone() -> io::Error {
    spinpark_executor::rt_shutdown_err("the spinpark runtime this socket belongs to has shut down")
}

/// `WouldBlock` from an operation on a socket whose runtime is gone becomes the runtime's
/// error: no event will ever say the socket is ready again.
fn gone_if_would_block(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::WouldBlock {
        runtime_gone()
    } else {
        e
    }
}
