//! Write combining: the small writes a task makes on a stream socket during one poll, after
//! its first, are gathered in the socket's [`Outbox`] and handed to the kernel with one `send`
//! when the poll ends, instead of one `send` each, but only while the kernel is known to have
//! room for them: a gathered write returns `Ok` only when the `send` at the poll's end is sure
//! to take it whole.
//!
//! ```
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(rt.spawn(async {
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! let listener = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let mut client = spinpark_net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
//! let (mut server, _) = listener.accept().await.unwrap();
//! for _ in 0..16 {
//!     // The first reply goes to the kernel at once; the other 15 are gathered.
//!     server.write_all(b"reply\n").await.unwrap();
//! }
//! // The task's poll ends when the read below waits; the 15 replies leave in one send.
//! let mut got = [0u8; 96];
//! client.read_exact(&mut got).await.unwrap();
//! assert!(got.starts_with(b"reply\nreply\n"));
//! # })).unwrap();
//! ```
//!
//! # The promise
//!
//! tokio's: a write that returns `Ok(n)` has put `n` bytes where the kernel will send them.
//! Dropping the socket, the runtime or the thread, `into_std`, or a peer that stops reading
//! loses none of them, and the connection closes as the kernel closes it (every byte, then
//! end of stream). What gathering changes is only *when the kernel is handed* the bytes:
//!
//! * The first write a task's poll makes on a socket goes to the kernel at once, unless the
//!   socket's previous poll wrote more than once (a pipelining peer, whose batches would
//!   otherwise be split in two), as do writes from outside a task's poll (a `block_on` future,
//!   a future some other executor polls) and writes of [`SMALL`] bytes or more. So on a
//!   request-response connection a reply written in one write leaves when it is written,
//!   whatever the task does next in the same poll.
//! * A later small write in the same poll is gathered if the kernel's send buffer is known to
//!   hold it and everything gathered before it (below), and at most [`BOUND`] bytes are
//!   gathered. Otherwise it goes to the kernel at once, after what was gathered.
//! * Gathered bytes reach the kernel, in order with every other write on the socket, when the
//!   poll ends (the task returns `Pending`, completes, panics or is aborted), or sooner: at a
//!   `flush`, `close`/`shutdown`, any write that goes to the kernel directly (a large one,
//!   `try_write`, `try_io`/`async_io` for writing), `into_std`, the socket's drop, and
//!   `block_in_place`.
//!
//! So what a task writes in one poll after its first write may wait for that poll's end: a
//! task that writes twice and then blocks its thread, or computes for long, without `flush`,
//! holds the second write that long, unless the runtime's watchdog runs the stuck poll's
//! deferred sends first (`poll_end::run_stuck`, when every awake worker has been stuck in a
//! poll for milliseconds while another is parked).
//!
//! An error of the send at the poll's end (the peer reset the connection meanwhile, as it
//! could have right after a direct write) is returned by the next write, flush or close.
//!
//! # Knowing the kernel has room
//!
//! Linux takes a `send` on a stream socket whole while the memory the socket has queued stays
//! below its send buffer (`SO_SNDBUF`), and stops taking bytes only when it is over. The
//! outbox keeps a lower bound of that room: it reads it (`SO_MEMINFO`, one `getsockopt`) when
//! a poll wants to gather more than the bound allows, at most once per poll, and takes from it
//! what every send on the socket may cost the kernel, gathered or direct (twice the bytes and
//! 8 KiB a send: the kernel's per-buffer overhead on top of the payload). Acknowledgements
//! only add room. With a fast reader the room is megabytes and is read again rarely; with a
//! slow one it runs out and writes go to the kernel one by one, as on tokio.
//!
//! The kernel can still refuse bytes it had room for: when the machine reaches its TCP memory
//! limit, or when the fd is written or reconfigured behind the socket's back (a duplicate of
//! it, a lowered `SO_SNDBUF`). Then the rest waits in the outbox, in order, and drains from the
//! reactor through a waker of the outbox's own (so a task waiting for the peer's next request
//! does not have to help), while the socket lives; writes queue behind it. A socket dropped
//! with such bytes resets its TCP connection, so the peer cannot take the truncated output for
//! a whole one.
//!
//! # How it works
//!
//! The socket's write paths ask the executor for the task's poll scope
//! (`spinpark_executor::task::poll_end`). The outbox remembers the last scope that wrote: a
//! write from a scope it has not seen goes direct. Inside a scope it has seen, a small write
//! is copied to the outbox, which defers itself to the scope once; at the scope's end it sends
//! what it holds and gives its buffer back to its thread (an idle connection holds none).
//!
//! The outbox holds the socket's fd and sends on it only while `closed` is false, under its
//! lock; the socket's drop sets it before the fd is closed.

use std::cell::Cell;
use std::io::{self, IoSlice};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use spinpark_executor::task::poll_end::{PollEnd, ScopeId};

use crate::readiness::{Direction, Readiness, ERROR, SHUTDOWN, WRITE_CLOSED};
use crate::sys;

/// Writes shorter than this are gathered; longer ones go to the kernel directly (after what
/// was gathered before them).
pub(crate) const SMALL: usize = 16 * 1024;
/// At most this many bytes wait in an outbox: a write that would pass it sends first.
pub(crate) const BOUND: usize = 64 * 1024;
/// The largest buffer a thread keeps for its next gathering poll (see [`spare`]).
const KEEP: usize = BOUND + SMALL;
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
    /// What the socket's direct sends may have cost the kernel since the last gather (see
    /// [`charge`]), for the next gather to take from its room; saturates. Relaxed: it is
    /// read and reset under the state's lock by the gatherer, and a send that races with a
    /// gather on the same socket from another thread has no order with it anyway.
    spent: AtomicUsize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    buf: Vec<u8>,
    /// Bytes at the front of `buf` the kernel has taken already.
    sent: usize,
    /// The poll scope this outbox is deferred to, if any.
    scope: Option<ScopeId>,
    /// The last poll scope that wrote on the socket, and how many small writes it made.
    wrote: Option<ScopeId>,
    writes: usize,
    /// A lower bound of the kernel memory the socket may still queue without refusing a
    /// send: what [`sys::send_room`] said, less the [`charge`] of every send since.
    room: usize,
    /// The scope that last read the room from the kernel (once per scope at most).
    looked: Option<ScopeId>,
    /// The fd is no longer this outbox's to send on (the socket was dropped or unwrapped).
    closed: bool,
    /// A drain waker is registered for writability.
    draining: bool,
    /// The write side is to be shut down once the bytes are out.
    shut_write: bool,
    /// The write side is shut down: writes are refused, as the socket refuses them.
    shut: bool,
    /// The error of a deferred send, for the next operation.
    error: Option<io::Error>,
}

impl State {
    fn unsent(&self) -> &[u8] {
        &self.buf[self.sent..]
    }
}

/// Where a small write from a task's poll goes.
pub(crate) enum Gather {
    /// Gathered: all `n` bytes are the outbox's to send at the poll's end.
    Taken(usize),
    /// To the kernel now (after what was gathered): the poll's first write, more than the
    /// bound or the kernel's known room, or a connection that reported an error.
    Direct,
}

/// What a send of `n` bytes may cost the kernel's send buffer, at most: the payload and the
/// buffers' overhead (a few hundred bytes to 2 KiB each; a send fills one buffer per segment
/// the kernel cuts, 64 KiB with segmentation offload, an MSS without it), with a margin.
pub(crate) fn charge(n: usize) -> usize {
    n.saturating_mul(2).saturating_add(8 * 1024)
}

thread_local! {
    /// A buffer an emptied outbox gave back, for the next one this thread gathers into, so
    /// that a connection between bursts holds no capacity and a burst allocates nothing.
    static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A buffer to gather into: this thread's spare if it has one.
fn spare() -> Vec<u8> {
    SPARE.try_with(Cell::take).unwrap_or_default()
}

/// Gives `buf` (emptied) back to this thread, unless it keeps a larger one already.
fn give_back(mut buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > KEEP {
        return;
    }
    buf.clear();
    let _ = SPARE.try_with(|s| {
        let kept = s.take();
        s.set(if kept.capacity() >= buf.capacity() {
            kept
        } else {
            std::mem::take(&mut buf)
        });
    });
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
            spent: AtomicUsize::new(0),
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

    /// Gathers `bufs` (fewer than [`SMALL`] bytes in all) for the end of the poll `scope`, if
    /// this is not the scope's first write and the kernel is known to have room for them and
    /// everything gathered before; [`Gather::Direct`] otherwise, for the caller to send them
    /// itself once what waits is out.
    pub(crate) fn gather(
        self: &Arc<Self>,
        scope: ScopeId,
        bufs: &[IoSlice<'_>],
    ) -> io::Result<Gather> {
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        let mut st = self.lock();
        self.take_error(&mut st)?;
        if st.shut_write || st.shut {
            // The write side is shut down (its `shutdown` waits only for the bytes before it):
            // what a socket says to a write after that.
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        if self.readiness.ready_now_mask(SHUTDOWN).is_some() {
            return Err(crate::io_source::runtime_gone());
        }
        if st.wrote != Some(scope) {
            // The poll's first write leaves at once, so a reply written in one write is not
            // held by whatever the task does next; unless the socket's last poll wrote several
            // times (pipelined replies), where sending the first alone would split every batch
            // in two segments, and the peer's next batch with them.
            st.wrote = Some(scope);
            let pipelined = std::mem::replace(&mut st.writes, 1) > 1;
            if !pipelined {
                return Ok(Gather::Direct);
            }
        } else {
            st.writes += 1;
        }
        let total = st.unsent().len() + len;
        if total > BOUND
            || self
                .readiness
                .ready_now_mask(ERROR | WRITE_CLOSED)
                .is_some()
            || !self.has_room(&mut st, scope, total)
        {
            return Ok(Gather::Direct);
        }
        if st.buf.capacity() == 0 {
            st.buf = spare();
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
        Ok(Gather::Taken(len))
    }

    /// Whether the kernel is known to take `total` bytes in one send now, reading its room
    /// again if it may have grown and this scope has not read it yet.
    fn has_room(&self, st: &mut State, scope: ScopeId, total: usize) -> bool {
        // Relaxed: see `spent`.
        st.room = st
            .room
            .saturating_sub(self.spent.swap(0, Ordering::Relaxed));
        let need = charge(total);
        if need <= st.room {
            return true;
        }
        if st.looked == Some(scope) {
            return false;
        }
        st.looked = Some(scope);
        st.room = sys::send_room(self.fd).unwrap_or(0);
        need <= st.room
    }

    /// Counts `n` bytes the socket sent directly against the kernel's known room.
    pub(crate) fn spend(&self, n: usize) {
        self.spend_charge(charge(n));
    }

    /// Forgets the kernel's known room: something wrote on the fd for an unknown amount (a
    /// `try_io` or `async_io` closure).
    pub(crate) fn forget_room(&self) {
        self.spend_charge(usize::MAX);
    }

    fn spend_charge(&self, c: usize) {
        // Relaxed: see `spent`. Saturating, so a socket that never gathers cannot wrap it.
        let _ = self
            .spent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_add(c))
            });
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
        st.shut = true;
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
                    st.room = st.room.saturating_sub(charge(n));
                    if !st.unsent().is_empty() {
                        // A short send: the kernel's buffer is full.
                        st.room = 0;
                        self.readiness.clear(seen);
                        return Ok(Sent::Blocked);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    st.room = 0;
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
        give_back(std::mem::take(&mut st.buf));
        st.sent = 0;
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

    /// The socket is going away: the outbox no longer sends on the fd. Returns whether bytes
    /// the kernel refused (see "Knowing the kernel has room") are lost with it, after one last
    /// try.
    pub(crate) fn close(&self) -> bool {
        // Without `pending` no bytes nor shutdown wait (a failed send drops both), so a poll's
        // end or a drain waker that still holds this outbox has nothing to send on the fd,
        // and the socket's last owner writes nothing more: the usual drop takes no lock.
        if !self.is_pending() {
            return false;
        }
        let mut st = self.lock();
        let _ = self.send(&mut st);
        st.closed = true;
        let lost = !st.unsent().is_empty();
        st.buf = Vec::new();
        st.sent = 0;
        st.shut_write = false;
        st.error = None;
        self.settle(&st);
        lost
    }
}

impl Outbox {
    /// The capacity the outbox's buffer holds now (for tests of the memory bound).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.lock().buf.capacity()
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

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::AsyncWriteExt;

    #[test]
    fn an_outbox_costs_a_connection_under_200_bytes() {
        // The Arc's two counts, then the outbox itself.
        let size = 2 * std::mem::size_of::<usize>() + std::mem::size_of::<Outbox>();
        assert!(size < 200, "{size} bytes");
    }

    #[test]
    fn an_idle_connection_holds_no_outbox_capacity_after_a_burst() {
        let rt = spinpark_executor::Runtime::new().unwrap();
        let (ours, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let (during, after) = rt
            .block_on(rt.spawn(async move {
                let mut s = crate::UnixStream::from_std(ours).unwrap();
                for _ in 0..64 {
                    s.write_all(&[1u8; 500]).await.unwrap(); // all but the first gathered
                }
                let during = s.core().outbox().capacity();
                crate::time::sleep(std::time::Duration::from_millis(1)).await; // the poll ends
                (during, s.core().outbox().capacity())
            }))
            .unwrap();
        assert!(during >= 63 * 500, "the burst was gathered: {during}");
        assert_eq!(after, 0, "the sent outbox kept its buffer");
    }
}
