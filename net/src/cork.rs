//! Write coalescing on TCP: the small writes a task makes on a connection during one poll,
//! after its first, are handed to the kernel at once with `MSG_MORE`, which queues them
//! without pushing a segment, and the connection is pushed once when the poll ends. The peer
//! gets one segment and one wake-up per poll, and a write's `Ok(n)` means what it means on
//! tokio: the kernel has the `n` bytes.
//!
//! ```
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(rt.spawn(async {
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! let listener = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let mut client = spinpark_net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
//! let (mut server, _) = listener.accept().await.unwrap();
//! server.set_nodelay(true).unwrap();
//! for _ in 0..16 {
//!     // The first reply is pushed at once; the other 15 are queued in the kernel.
//!     server.write_all(b"reply\n").await.unwrap();
//! }
//! // The task's poll ends when the read below waits: the 15 replies leave in one segment.
//! let mut got = [0u8; 96];
//! client.read_exact(&mut got).await.unwrap();
//! assert!(got.starts_with(b"reply\nreply\n"));
//! # })).unwrap();
//! ```
//!
//! # The promise
//!
//! tokio's, by construction: a write that returns `Ok(n)` has handed `n` bytes to the kernel,
//! and nothing of them stays in the process. So dropping the socket, the runtime or the
//! thread, `into_std`, a peer that stops reading, `std::process::exit`, `abort`, a panic under
//! `panic = "abort"` and `SIGKILL` lose none of them: the kernel sends what it holds, then
//! end of stream, as it does for any closed socket. What coalescing changes is only *when the
//! kernel transmits* the bytes of a poll's later writes:
//!
//! * The first write a task's poll makes on a connection is an ordinary send, pushed at once,
//!   unless the connection's previous poll wrote more than once (a pipelining peer, whose
//!   batches would otherwise be split in two segments). So is a write from outside a task's
//!   poll (a `block_on` future, a future some other executor polls), a write of [`SMALL`]
//!   bytes or more, and every `try_write`.
//! * A later small write in the same poll is sent with `MSG_MORE`.
//! * What is queued is pushed (`TCP_CORK` set to 0, which transmits the queue as a send
//!   without `MSG_MORE` would: at once under `TCP_NODELAY`, as Nagle's rule allows
//!   without) when the poll ends (the task returns `Pending`, completes, panics or is
//!   aborted), at a `flush`, `close`/`shutdown` (its FIN goes after the bytes), at any ordinary
//!   send on the connection, at `into_std`, the socket's drop (the close sends it), and at
//!   `block_in_place`.
//! * A poll that lasts [`LATE_AFTER`](spinpark_executor::task::poll_end::LATE_AFTER) after
//!   it queued bytes (the task computes, or blocks its thread) has them pushed by another
//!   thread, the executor's late runner, on every runtime flavour. It needs no lock on any
//!   buffer: the bytes are in the kernel already, and the push is one `setsockopt`.
//! * Program order holds across sockets: before a write or a shutdown that pushes bytes on
//!   one socket, what the same poll queued earlier on others is pushed, and a poll's queued
//!   sockets are pushed in the order they were first written.
//!
//! Errors are the kernel's, returned by the write that met them, as on tokio. A Unix stream
//! has no `MSG_MORE` (each send wakes the peer), so its writes are ordinary sends; user-space
//! gathering there would break the promise above, which nothing at exit could mend.
//!
//! One caveat: a socket that its owner corks itself (`TCP_CORK` set through the raw fd) is
//! un-corked by the push at the end of a poll that coalesced writes on it.
//!
//! # How it works
//!
//! The stream's write paths ask the executor for the task's poll scope
//! (`spinpark_executor::task::poll_end`) and hand a small write to [`Cork::send_queued`],
//! which, under the cork's lock, remembers the last scope that wrote and how often: a scope's
//! first write is left to the stream as an ordinary send; a later one is sent with
//! `MSG_MORE`, noted, and the cork deferred to the scope once. At the scope's end (or from the
//! late runner) [`Cork::push`] pushes if anything was queued since the last push. The socket's
//! drop takes the same lock to mark the fd as no longer the cork's to push, so a late runner's
//! push never reaches a closed (or reused) fd.

use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use spinpark_executor::task::poll_end::{self, PollEnd, ScopeId};

use crate::sys;

/// Writes shorter than this are coalesced; longer ones are ordinary sends (they fill
/// segments of their own).
pub(crate) const SMALL: usize = 16 * 1024;

/// A TCP connection's coalescing state.
pub(crate) struct Cork {
    fd: RawFd,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The last poll scope that wrote on the socket, and how many small writes it made.
    wrote: Option<ScopeId>,
    writes: usize,
    /// The poll scope this cork is deferred to, if any.
    deferred: Option<ScopeId>,
    /// Bytes were sent with `MSG_MORE` since the last push.
    queued: bool,
    /// The fd is no longer this cork's to push (the socket was dropped or unwrapped).
    closed: bool,
}

/// How a small write from a task's poll is sent.
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    /// With `MSG_MORE`, the push deferred to the poll's end.
    More,
    /// As an ordinary send, which pushes: the poll's first write.
    Push,
}

impl Cork {
    /// The cork of the connected TCP socket `fd`.
    pub(crate) fn new(fd: RawFd) -> Arc<Self> {
        Arc::new(Cork {
            fd,
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No user code runs under this lock, and nothing under it panics.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a small write from the poll `scope` with `MSG_MORE` (`send_more`), if it is to
    /// be queued, and defers the push to the scope's end: `None` if it is to be an ordinary
    /// send instead ([`Cork::plan`]). One lock for both.
    pub(crate) fn send_queued(
        self: &Arc<Self>,
        scope: ScopeId,
        send_more: impl FnOnce() -> Poll<io::Result<usize>>,
    ) -> Option<Poll<io::Result<usize>>> {
        let mut st = self.lock();
        if st.plan(scope) == Plan::Push {
            return None;
        }
        // Under the lock: a push from the late runner either comes after `queued` is set, or
        // before the send, with `deferred` cleared so that this write defers anew.
        let sent = send_more();
        if let Poll::Ready(Ok(_)) = sent {
            st.queued = true;
            if st.deferred != Some(scope) {
                st.deferred = Some(scope);
                drop(st);
                scope.defer(self.clone());
            }
        }
        Some(sent)
    }

    /// Pushes what was queued, if anything was and the fd is still the cork's.
    pub(crate) fn push(&self) {
        let mut st = self.lock();
        if st.queued && !st.closed {
            st.queued = false;
            // A failure (the connection was reset meanwhile) is the next write's to report;
            // the bytes were the kernel's either way.
            let _ = sys::push(self.fd);
        }
    }

    /// The socket is going away: the fd is no longer the cork's to push. What is queued goes
    /// with the close (or with the next send of whoever takes the fd) as the kernel sends it.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
    }
}

impl State {
    /// How a small write from the poll `scope` goes: the scope's first is pushed at once,
    /// unless the socket's last poll wrote several times (pipelined replies, which would be
    /// split in two segments a batch); later ones are queued.
    fn plan(&mut self, scope: ScopeId) -> Plan {
        let st = self;
        if st.wrote != Some(scope) {
            st.wrote = Some(scope);
            let pipelined = std::mem::replace(&mut st.writes, 1) > 1;
            if !pipelined {
                return Plan::Push;
            }
        } else {
            st.writes += 1;
        }
        // Without a late runner a blocked poll would hold the bytes: push them at once.
        if poll_end::late_runner_available() {
            Plan::More
        } else {
            Plan::Push
        }
    }
}

/// Pushes what the task's poll queued so far, on every TCP socket, first-queued-first: for a
/// send that reaches its peer at once (a datagram, a pipe, a Unix stream, an ordinary TCP
/// send), which must come after them in program order. One thread-local read when nothing
/// was queued.
pub(crate) fn in_order() {
    poll_end::run_pending();
}

impl PollEnd for Cork {
    fn poll_end(self: Arc<Self>) {
        let mut st = self.lock();
        st.deferred = None;
        drop(st);
        self.push();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cork_costs_a_connection_under_100_bytes() {
        // The Arc's two counts, then the cork itself.
        let size = 2 * std::mem::size_of::<usize>() + std::mem::size_of::<Cork>();
        assert!(size < 100, "{size} bytes");
    }

    #[test]
    fn a_scope_pushes_its_first_write_and_queues_the_rest_unless_the_last_pipelined() {
        let rt = spinpark_executor::Runtime::new().unwrap();
        let plans = rt
            .block_on(rt.spawn(std::future::poll_fn(|cx| {
                let cork = Cork::new(-1);
                let scope = poll_end::current(cx.waker()).unwrap();
                let mut st = cork.lock();
                let first = [st.plan(scope), st.plan(scope), st.plan(scope)];
                // Another poll's first write, after a poll that wrote three times.
                st.wrote = None;
                let after_pipelined = st.plan(scope);
                // And after a poll that wrote once.
                st.wrote = None;
                let after_single = st.plan(scope);
                st.closed = true;
                std::task::Poll::Ready((first, after_pipelined, after_single))
            })))
            .unwrap();
        assert_eq!(plans.0, [Plan::Push, Plan::More, Plan::More]);
        assert_eq!(plans.1, Plan::More);
        assert_eq!(plans.2, Plan::Push);
    }
}
