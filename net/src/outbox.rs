//! Write combining: the small writes a task makes on a stream socket during one poll are
//! gathered in the socket's [`Outbox`] and handed to the kernel with one `send` when the poll
//! ends, instead of one `send` each.
//!
//! ```
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(rt.spawn(async {
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! let listener = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let mut client = spinpark_net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
//! let (mut server, _) = listener.accept().await.unwrap();
//! for _ in 0..16 {
//!     server.write_all(b"reply\n").await.unwrap(); // gathered: no syscall yet
//! }
//! // The task's poll ends when the read below waits; the 16 replies leave in one send.
//! let mut got = [0u8; 96];
//! client.read_exact(&mut got).await.unwrap();
//! assert!(got.starts_with(b"reply\nreply\n"));
//! # })).unwrap();
//! ```
//!
//! # The promise
//!
//! A write of fewer than [`SMALL`] bytes made from a task's own poll returns `Ok` at once and
//! the bytes reach the kernel, in order with every other write on the socket, no later than:
//! the end of that poll (when the task returns `Pending` or completes, panics or is aborted),
//! a `flush`, `close`/`shutdown`, any write that goes to the kernel directly (a large one,
//! `try_write`, `try_io`/`async_io` for writing), `into_std`, the socket's drop, or
//! `block_in_place`. [`BOUND`] bytes gathered are sent before more are taken. Writes from
//! outside a task's poll (a `block_on` future, a future polled by another executor inside a
//! task) go to the kernel at once, as before.
//!
//! An error of a deferred send (the peer reset the connection) is returned by the next write,
//! flush or close on the socket, as tokio's `BufWriter` users already expect.
//!
//! # How it works
//!
//! The socket's write paths ask the executor for the task's poll scope
//! (`spinpark_executor::task::poll_end`). Inside one, a small write is copied to the outbox,
//! which defers itself to the scope once per scope; at the scope's end it sends what it holds.
//! If the kernel takes only part (the peer does not read), the rest stays, in order, and the
//! outbox registers a waker of its own for the socket's writability, so it drains from the
//! reactor without the task's help (the task may be waiting to read the peer's next request);
//! writes meanwhile queue behind it, up to the bound, then wait as a full socket does.
//!
//! The outbox holds the socket's fd and sends on it only while `closed` is false, under its
//! lock; the socket's drop sets it before the fd is closed. A socket dropped with bytes the
//! kernel will not take yet *lingers*: a task on its runtime keeps the fd open and drains it
//! until done, for at most the socket's `SO_LINGER` time or [`LINGER`] without one, and then
//! resets the connection (so the peer cannot take a truncated reply for a whole one), as it
//! does if the runtime shuts down first. Without a runtime to linger on, the connection is
//! reset at once.

use std::io::{self, IoSlice};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use spinpark_executor::task::poll_end::{PollEnd, ScopeId};

use crate::readiness::{Direction, Readiness, SHUTDOWN};
use crate::sys;

/// Writes shorter than this are gathered; longer ones go to the kernel directly (after what
/// was gathered before them).
pub(crate) const SMALL: usize = 16 * 1024;
/// At most this many bytes wait in an outbox: a write that would pass it sends first.
pub(crate) const BOUND: usize = 64 * 1024;
/// How long a dropped socket's unsent bytes may keep its fd open when it has no `SO_LINGER`
/// time of its own: the order of the kernel's own patience with a peer whose window stays
/// shut.
pub(crate) const LINGER: Duration = Duration::from_secs(30);
/// Capacity an outbox keeps between polls: more is given back once sent, so that connections
/// that once wrote much do not each hold it.
const KEEP: usize = 2 * SMALL;
/// How many times a send re-checks a readiness that keeps turning up between its `send`'s
/// `WouldBlock` and its waker's registration; each turn means a new writability event.
const DRAIN_ATTEMPTS: usize = 32;

/// A stream socket's gathered writes.
pub(crate) struct Outbox {
    fd: RawFd,
    readiness: Arc<Readiness>,
    /// Whether bytes wait, so the direct paths skip the lock in the common case. Written
    /// under the lock; Acquire/Release so a thread that sees `false` after another thread's
    /// send also sees that send's effects on the state.
    pending: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    buf: Vec<u8>,
    /// Bytes at the front of `buf` the kernel has taken already.
    sent: usize,
    /// The poll scope this outbox is deferred to, if any.
    scope: Option<ScopeId>,
    /// The fd is no longer this outbox's to send on (the socket was dropped or unwrapped).
    closed: bool,
    /// A drain waker is registered for writability.
    draining: bool,
    /// The write side is to be shut down once the bytes are out.
    shut_write: bool,
    /// The error of a deferred send, for the next operation.
    error: Option<io::Error>,
}

impl State {
    fn unsent(&self) -> &[u8] {
        &self.buf[self.sent..]
    }
}

/// What a send of the gathered bytes came to.
enum Sent {
    /// Everything is out (or nothing was waiting).
    All,
    /// The kernel's buffer is full; the rest waits.
    Blocked,
}

impl Outbox {
    /// An outbox for the connected socket `fd`, whose readiness is `readiness`.
    pub(crate) fn new(fd: RawFd, readiness: Arc<Readiness>) -> Arc<Self> {
        Arc::new(Self {
            fd,
            readiness,
            pending: AtomicBool::new(false),
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No user code runs under this lock; a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether bytes or an error wait (cheap: no lock).
    pub(crate) fn is_pending(&self) -> bool {
        // Acquire: see `pending`.
        self.pending.load(Ordering::Acquire)
    }

    /// Gathers `bufs` (fewer than [`SMALL`] bytes in all) for the end of the poll `scope`.
    /// `Ok(n)` means all `n` bytes were taken; `Pending` that the outbox is full and the
    /// kernel takes nothing now (the task is woken when the socket turns writable).
    pub(crate) fn poll_gather(
        self: &Arc<Self>,
        cx: &mut Context<'_>,
        scope: ScopeId,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        let mut st = self.lock();
        self.take_error(&mut st)?;
        if st.shut_write {
            // The write side is shut down (its `shutdown` waits only for the bytes before it):
            // what a socket says to a write after that.
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if self.readiness.ready_now_mask(SHUTDOWN).is_some() {
            return Poll::Ready(Err(crate::io_source::runtime_gone()));
        }
        if st.unsent().len() + len > BOUND {
            st = std::task::ready!(self.send_or_wait(st, cx))?;
        }
        // (`sent` is 0 here: a send that empties the outbox clears it, and one that does not
        // leaves bytes, so the new ones go after them.)
        for b in bufs {
            st.buf.extend_from_slice(b);
        }
        // Release: see `pending`.
        self.pending.store(true, Ordering::Release);
        if st.scope != Some(scope) {
            st.scope = Some(scope);
            drop(st);
            scope.defer(self.clone());
        }
        Poll::Ready(Ok(len))
    }

    /// Sends what waits, for a direct write, flush or close that must come after it:
    /// `Ready(Ok)` once the outbox is empty, `Pending` (the task woken when the socket turns
    /// writable) while the kernel takes no more, and the error of an earlier deferred send.
    pub(crate) fn poll_drain(self: &Arc<Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.is_pending() {
            return Poll::Ready(Ok(()));
        }
        let st = self.lock();
        self.send_or_wait(st, cx).map_ok(drop)
    }

    /// [`Outbox::poll_drain`] without waiting: `WouldBlock` if bytes are left.
    pub(crate) fn try_drain(&self) -> io::Result<()> {
        if !self.is_pending() {
            return Ok(());
        }
        let mut st = self.lock();
        self.take_error(&mut st)?;
        match self.send(&mut st)? {
            Sent::All => Ok(()),
            Sent::Blocked => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    /// The error of an earlier deferred send, taken: the operation that sees it returns it.
    fn take_error(&self, st: &mut State) -> io::Result<()> {
        match st.error.take() {
            Some(e) => {
                self.settle(st);
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// Sends what waits; while the kernel takes nothing, registers the task for writability
    /// and returns `Pending`.
    fn send_or_wait<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<MutexGuard<'a, State>>> {
        self.take_error(&mut st)?;
        match self.send_then_watch(&mut st, cx.waker())? {
            Sent::All => Poll::Ready(Ok(st)),
            Sent::Blocked => Poll::Pending,
        }
    }

    /// Sends what waits; if the kernel refuses the rest, leaves `waker` with the socket's
    /// writers, so the next writability event wakes it. Sends again instead when the socket
    /// turned writable meanwhile.
    fn send_then_watch(&self, st: &mut State, waker: &Waker) -> io::Result<Sent> {
        let mut cx = Context::from_waker(waker);
        for _ in 0..DRAIN_ATTEMPTS {
            if let Sent::All = self.send(st)? {
                return Ok(Sent::All);
            }
            // Lock order: this state, then the readiness's waiters, never the other way
            // (the reactor wakes wakers after releasing its lock).
            if self
                .readiness
                .poll_ready(Direction::Write, &mut cx)
                .is_pending()
            {
                return Ok(Sent::Blocked);
            }
        }
        // A writability event arrived between every `WouldBlock` and its clearing, so the
        // readiness never let the waker be stored: store it anyway, for the next event.
        self.readiness.register_writer(waker);
        Ok(Sent::Blocked)
    }

    /// Shuts down the write side once what waits is out (now, if nothing does).
    pub(crate) fn shutdown_write(self: &Arc<Self>) -> io::Result<()> {
        let mut st = self.lock();
        if st.unsent().is_empty() {
            drop(st);
            return shutdown_write(self.fd);
        }
        st.shut_write = true;
        // When `send` empties the outbox it shuts the write side down itself.
        if let Sent::Blocked = self.send(&mut st)? {
            self.watch_writable(&mut st);
        }
        Ok(())
    }

    /// Sends as much of the gathered bytes as the kernel takes now. Emptying the outbox
    /// carries out a pending write shutdown. On an error the bytes are dropped (the
    /// connection is broken) and the error is returned.
    fn send(&self, st: &mut State) -> io::Result<Sent> {
        if st.closed {
            return Ok(Sent::All);
        }
        while !st.unsent().is_empty() {
            let Some(seen) = self.readiness.ready_now(Direction::Write) else {
                return Ok(Sent::Blocked);
            };
            match sys::send(self.fd, st.unsent()) {
                Ok(n) => {
                    st.sent += n;
                    if !st.unsent().is_empty() {
                        // A short send: the kernel's buffer is full.
                        self.readiness.clear(seen);
                        return Ok(Sent::Blocked);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readiness.clear(seen);
                    return Ok(Sent::Blocked);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // The connection is broken: the bytes and a shutdown after them go.
                    st.shut_write = false;
                    self.empty(st);
                    return Err(e);
                }
            }
        }
        self.empty(st);
        if std::mem::take(&mut st.shut_write) {
            shutdown_write(self.fd)?;
        }
        Ok(Sent::All)
    }

    /// Forgets the gathered bytes (sent, or lost with the connection).
    fn empty(&self, st: &mut State) {
        st.buf.clear();
        st.sent = 0;
        if st.buf.capacity() > KEEP {
            st.buf = Vec::new();
        }
        self.settle(st);
    }

    /// Updates `pending` after the state changed.
    fn settle(&self, st: &State) {
        let pending = !st.unsent().is_empty() || st.error.is_some();
        // Release: see `pending`.
        self.pending.store(pending, Ordering::Release);
    }

    /// Sends at a poll's end (or from the drain waker); what the kernel does not take now is
    /// left to the drain waker, and an error to the next operation.
    fn send_deferred(self: &Arc<Self>, st: &mut State) {
        match self.send(st) {
            Ok(Sent::All) => {}
            Ok(Sent::Blocked) => self.watch_writable(st),
            Err(e) => {
                st.error = Some(e);
                self.settle(st);
            }
        }
    }

    /// Registers the drain waker for the socket's writability, unless it is registered
    /// already; sends at once if the socket turned writable meanwhile.
    fn watch_writable(self: &Arc<Self>, st: &mut State) {
        if st.draining || st.closed {
            return;
        }
        match self.send_then_watch(st, &Waker::from(self.clone())) {
            Ok(Sent::Blocked) => st.draining = true,
            Ok(Sent::All) => {}
            Err(e) => {
                st.error = Some(e);
                self.settle(st);
            }
        }
    }

    /// The socket is going away: the outbox no longer sends on the fd. Returns the bytes
    /// the kernel has not taken, after one last try, and whether the write side was to be
    /// shut down after them.
    pub(crate) fn close(&self) -> (Vec<u8>, bool) {
        // Without `pending` no bytes nor shutdown wait (a failed send drops both), so a poll's
        // end or a drain waker that still holds this outbox has nothing to send on the fd,
        // and the socket's last owner writes nothing more: the usual drop takes no lock.
        if !self.is_pending() {
            return (Vec::new(), false);
        }
        let mut st = self.lock();
        let _ = self.send(&mut st);
        st.closed = true;
        let rest = st.unsent().to_vec();
        let shut = st.shut_write;
        st.buf = Vec::new();
        st.sent = 0;
        st.error = None;
        self.settle(&st);
        (rest, shut)
    }
}

impl PollEnd for Outbox {
    fn poll_end(self: Arc<Self>) {
        let mut st = self.lock();
        st.scope = None;
        self.send_deferred(&mut st);
    }
}

impl Wake for Outbox {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut st = self.lock();
        st.draining = false;
        if !st.unsent().is_empty() {
            self.send_deferred(&mut st);
        }
    }
}

fn shutdown_write(fd: RawFd) -> io::Result<()> {
    shutdown(fd, std::net::Shutdown::Write)
}

/// `shutdown(2)` on a connected stream; a connection the peer already reset (`ENOTCONN`)
/// counts as shut down, as in tokio: there is nothing left to close.
pub(crate) fn shutdown(fd: RawFd, how: std::net::Shutdown) -> io::Result<()> {
    match sys::shutdown(fd, how) {
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
        r => r,
    }
}
