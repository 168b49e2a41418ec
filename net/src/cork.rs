//! Write coalescing on TCP: when a task's poll answers several requests on a connection, its
//! small writes are handed to the kernel at once with `MSG_MORE`, which queues them without
//! pushing a segment, and the connection is pushed once when the poll ends. The peer gets one
//! segment and one wake-up per poll, and a write's `Ok(n)` means what it means on tokio: the
//! kernel has the `n` bytes. At one request in flight every write is an ordinary send, as on
//! tokio.
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
//!     // A new connection's first write is pushed at once; the other 15 are queued in the
//!     // kernel.
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
//! * A write is queued only when the poll's writes are known to answer more than one
//!   request: the input the poll answers is at least twice the smallest one request has
//!   been on this connection, or the previous poll wrote more than any single reply's shape
//!   (the peer pipelines; both queue the poll's first write too), or the poll has already made
//!   as many writes as the connection's smallest reply takes (one, until a poll has been
//!   seen). Both sizes are learned per connection from its last 32 to 64 writing polls
//!   (`State::plan`). A writer that flushes after every write gets ordinary sends (checked
//!   again every 256 polls).
//! * Everything else is an ordinary send, pushed at once: a reply at one request in flight,
//!   in one write or in several; a write from outside a task's poll (a `block_on` future, a
//!   future some other executor polls); a write of [`SMALL`] bytes or more; and every
//!   `try_write`.
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
//! which, under the cork's lock, remembers the last scope that wrote, how often, and how many
//! bytes the connection's reads had returned by its first write (the reads count them in an
//! atomic, [`Cork::note_read`]): a write the plan does not queue is left to the stream as an
//! ordinary send; a queued one is sent with `MSG_MORE`, noted, and the cork deferred to the
//! scope once. At the scope's end (or from the
//! late runner) [`Cork::push`] pushes if anything was queued since the last push. The socket's
//! drop takes the same lock to mark the fd as no longer the cork's to push, so a late runner's
//! push never reaches a closed (or reused) fd.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use spinpark_executor::task::poll_end::{self, PollEnd, ScopeId};

use crate::sys;

/// Writes shorter than this are coalesced; longer ones are ordinary sends (they fill
/// segments of their own).
pub(crate) const SMALL: usize = 16 * 1024;

/// How often (in writing polls) a writer found to flush every write is checked again: each
/// check costs two queued writes, their pushes and an alarm.
const FLUSH_RECHECK: usize = 256;
const _: () = assert!(
    FLUSH_RECHECK == u8::MAX as usize + 1,
    "the scope counter wraps there"
);

/// The most writes a poll may make and still count as one reply's shape (a length prefix and
/// a body, a header, a body and a trailer...).
const REPLY_SHAPE_MAX: u32 = 4;

/// A TCP connection's coalescing state.
pub(crate) struct Cork {
    fd: RawFd,
    /// Bytes the connection's reads have returned, wrapping: the write path tells from it
    /// how much input a poll's writes answer.
    read: AtomicU32,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The last poll scope that wrote on the socket, and how many small writes it made.
    wrote: Option<ScopeId>,
    writes: u32,
    /// The bytes read between the previous writing scope's first write and this one's: the
    /// input this scope's writes answer. And `read` at this scope's first write.
    input: u32,
    read_mark: u32,
    /// The fewest small writes a writing scope made (of those that made at most
    /// `REPLY_SHAPE_MAX`), and the fewest bytes of input one answered, over the last 32 to 64
    /// such scopes: the connection's reply to one request and one request, as far as the
    /// socket can tell.
    reply: RecentMin,
    request: RecentMin,
    /// The cork is deferred to the scope in `wrote` and has not run since.
    deferred: bool,
    /// The scope in `wrote` answers several requests (`State::plan`).
    pipelined: bool,
    /// Writes sent with `MSG_MORE` since the last push.
    queued_writes: u8,
    /// Flushes in a row that pushed a single queued write: the writer flushes every write
    /// (hyper does, once per response), so queuing gains nothing and costs a push a write.
    /// Forgotten every `FLUSH_RECHECK` scopes, to see whether it still does.
    flushed_each: u8,
    scopes: u8,
    /// Bytes were sent with `MSG_MORE` since the last push.
    queued: bool,
    /// The fd is no longer this cork's to push (the socket was dropped or unwrapped).
    closed: bool,
}

/// The smallest of the values seen over the last 32 to 64 (two windows of 32), so that a
/// connection whose shape changes is learned anew within 64 polls. `None` before any.
#[derive(Clone, Copy)]
struct RecentMin {
    current: u32,
    previous: u32,
    seen: u8,
}

impl Default for RecentMin {
    fn default() -> Self {
        RecentMin {
            current: u32::MAX,
            previous: u32::MAX,
            seen: 0,
        }
    }
}

impl RecentMin {
    const WINDOW: u8 = 32;

    fn add(&mut self, v: u32) {
        self.current = self.current.min(v);
        self.seen += 1;
        if self.seen == Self::WINDOW {
            self.previous = std::mem::replace(&mut self.current, u32::MAX);
            self.seen = 0;
        }
    }

    fn get(&self) -> Option<u32> {
        Some(self.current.min(self.previous)).filter(|&m| m != u32::MAX)
    }
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
            read: AtomicU32::new(0),
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
        // Relaxed: a count for a heuristic; the lock below orders nothing with it.
        let read = self.read.load(Ordering::Relaxed);
        let mut st = self.lock();
        if st.plan(scope, read) == Plan::Push {
            return None;
        }
        // Under the lock: a push from the late runner either comes after `queued` is set, or
        // before the send, with `deferred` cleared so that this write defers anew.
        let sent = send_more();
        if let Poll::Ready(Ok(_)) = sent {
            st.queued = true;
            st.queued_writes = st.queued_writes.saturating_add(1);
            if !st.deferred {
                st.deferred = true;
                drop(st);
                scope.defer(self.clone());
            }
        }
        Some(sent)
    }

    /// A read on the connection returned `n` bytes.
    pub(crate) fn note_read(&self, n: usize) {
        // Relaxed: a count for a heuristic (wrapping, and only differences are used).
        self.read.fetch_add(n as u32, Ordering::Relaxed);
    }

    /// A `flush` is about to push what was queued: notes whether that is a single write (a
    /// writer that flushes every write, whose writes are then better sent as ordinary sends).
    pub(crate) fn note_flush(&self) {
        let mut st = self.lock();
        if st.queued && !st.closed {
            st.flushed_each = match st.queued_writes {
                1 => st.flushed_each.saturating_add(1),
                _ => 0,
            };
        }
    }

    /// Pushes what was queued, if anything was and the fd is still the cork's.
    pub(crate) fn push(&self) {
        let mut st = self.lock();
        if st.queued && !st.closed {
            st.queued = false;
            st.queued_writes = 0;
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
    /// How a small write from the poll `scope` goes, `read` being the connection's read count
    /// now. It is queued when the poll's writes are known to answer more than one request:
    ///
    /// * the input this poll answers is at least twice the smallest one request has been, or
    ///   the previous poll wrote more than one reply takes and more than [`REPLY_SHAPE_MAX`]
    ///   (the peer pipelines: several requests are here, or were a moment ago). That queues
    ///   even the first write, so that a batch of replies leaves in one segment;
    /// * or the poll has already made as many writes as one reply takes: this write is past one
    ///   reply's worth.
    ///
    /// One reply takes the fewest writes a poll of this connection made, counting only polls
    /// of at most [`REPLY_SHAPE_MAX`] writes (a poll that wrote more answered several
    /// requests, or wrote a reply that gains from coalescing anyway); one write until such a
    /// poll has been seen. Otherwise a write is an ordinary send. So at one request in flight a
    /// reply written in one write, or in a header and a body, leaves as tokio's does, write by
    /// write, and nothing is left to push or for the late runner to watch.
    fn plan(&mut self, scope: ScopeId, read: u32) -> Plan {
        if self.wrote != Some(scope) {
            let previous = self.writes;
            if previous > 0 {
                // The previous writing scope's figures are final.
                if previous <= REPLY_SHAPE_MAX {
                    self.reply.add(previous);
                }
                if self.input > 0 {
                    self.request.add(self.input);
                }
            }
            self.wrote = Some(scope);
            self.deferred = false;
            self.writes = 0;
            self.scopes = self.scopes.wrapping_add(1);
            if self.scopes == 0 {
                // Every FLUSH_RECHECK scopes.
                self.flushed_each = 0;
            }
            self.input = read.wrapping_sub(self.read_mark);
            self.read_mark = read;
            let one_reply = self.reply.get().unwrap_or(1);
            // A previous poll that wrote more than one reply takes, and more than a single
            // reply's shape could be, answered several requests.
            self.pipelined = (previous > one_reply && previous > REPLY_SHAPE_MAX)
                || self
                    .request
                    .get()
                    .is_some_and(|one| u64::from(self.input) >= 2 * u64::from(one));
        }
        let earlier = self.writes;
        self.writes = self.writes.saturating_add(1);
        let past_one_reply = earlier >= self.reply.get().unwrap_or(1);
        // A writer that flushes every write pushes each one anyway: a queued write would cost
        // a push more. Without a late runner a blocked poll would hold the bytes: push them at
        // once.
        let flushes_each = self.flushed_each >= 2;
        if (self.pipelined || past_one_reply) && !flushes_each && poll_end::late_runner_available()
        {
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
        st.deferred = false;
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

    /// The plans of a poll of `writes` small writes that answers `input` bytes read.
    fn poll(cork: &Cork, scope: ScopeId, input: u32, writes: usize) -> Vec<Plan> {
        cork.note_read(input as usize);
        let read = cork.read.load(Ordering::Relaxed);
        let mut st = cork.lock();
        // Each call stands for a new poll: forget which scope wrote last, keep what it did.
        st.wrote = None;
        (0..writes).map(|_| st.plan(scope, read)).collect()
    }

    fn plans<T: Send + 'static>(f: impl FnOnce(&Cork, ScopeId) -> T + Send + 'static) -> T {
        let rt = spinpark_executor::Runtime::new().unwrap();
        let mut f = Some(f);
        rt.block_on(rt.spawn(std::future::poll_fn(move |cx| {
            let cork = Cork::new(-1);
            let scope = poll_end::current(cx.waker()).unwrap();
            let out = (f.take().unwrap())(&cork, scope);
            cork.lock().closed = true;
            std::task::Poll::Ready(out)
        })))
        .unwrap()
    }

    use Plan::{More, Push};

    #[test]
    fn a_reply_in_two_writes_at_one_request_in_flight_is_two_ordinary_sends() {
        let got = plans(|cork, scope| {
            (0..5)
                .map(|_| poll(cork, scope, 100, 2))
                .collect::<Vec<_>>()
        });
        // The first poll knows no reply yet: its second write is queued, as any write past
        // the first of a poll that has nothing to go by.
        assert_eq!(got[0], [Push, More]);
        // Then a reply is known to take two writes: both go at once.
        for g in &got[1..] {
            assert_eq!(g, &[Push, Push]);
        }
    }

    #[test]
    fn a_poll_that_answers_several_requests_queues_from_its_first_write() {
        let got = plans(|cork, scope| {
            [
                (1600, 16),
                (1600, 16),
                (100, 1),
                (1500, 15),
                (100, 1),
                (100, 1),
                (300, 3),
            ]
            .map(|(input, writes)| poll(cork, scope, input, writes))
        });
        // A connection's first poll knows nothing: its first write goes at once, the rest are
        // past one reply's worth (one write until a poll has been seen).
        assert_eq!(got[0][0], Push);
        assert!(got[0][1..].iter().all(|p| *p == More));
        // The last poll wrote more than a reply takes: the peer pipelines; all queued, so the
        // batch leaves in one segment.
        assert!(got[1].iter().all(|p| *p == More));
        // A lone request after a batch: queued too (its poll ends at once, pushing it).
        assert_eq!(got[2], [More]);
        // Several requests' worth of input: every reply queued, the first included.
        assert!(got[3].iter().all(|p| *p == More));
        assert_eq!(got[4], [More]);
        // A lone request after a lone request: at once.
        assert_eq!(got[5], [Push]);
        assert!(got[6].iter().all(|p| *p == More));
    }

    #[test]
    fn a_one_write_reply_after_a_two_write_reply_goes_at_once() {
        // One request in flight, replies alternating between two writes and one.
        let got = plans(|cork, scope| {
            (0..10)
                .map(|i| poll(cork, scope, 100, if i % 2 == 0 { 2 } else { 1 }))
                .collect::<Vec<_>>()
        });
        for g in got.iter().skip(1).filter(|g| g.len() == 1) {
            assert_eq!(g, &[Push]);
        }
        // The two-write polls' first writes go at once too (their second, past the smallest
        // reply's one write, is queued).
        for g in got.iter().skip(1).filter(|g| g.len() == 2) {
            assert_eq!(g, &[Push, More]);
        }
    }

    #[test]
    fn batches_of_the_same_size_every_poll_leave_in_one_segment() {
        // A peer that always sends 16 requests at once: no poll shows one request alone.
        let got = plans(|cork, scope| {
            (0..100)
                .map(|_| poll(cork, scope, 1600, 16))
                .collect::<Vec<_>>()
        });
        assert_eq!(got[0][0], Push);
        for g in &got[1..] {
            assert!(g.iter().all(|p| *p == More));
        }
    }

    #[test]
    fn sixteen_writes_in_a_poll_of_a_new_connection_are_queued_after_the_first() {
        let got = plans(|cork, scope| poll(cork, scope, 0, 16));
        assert_eq!(got[0], Push);
        assert!(got[1..].iter().all(|p| *p == More));
    }

    #[test]
    fn the_learned_shape_follows_a_change_within_64_polls() {
        let got = plans(|cork, scope| {
            // One write a reply for a while, then two-write replies: the second writes are
            // queued until the one-write polls have left the window.
            for _ in 0..10 {
                poll(cork, scope, 100, 1);
            }
            (0..70)
                .map(|_| poll(cork, scope, 100, 2))
                .collect::<Vec<_>>()
        });
        assert_eq!(got[0], [Push, More]);
        assert_eq!(got[69], [Push, Push]);
    }

    #[test]
    fn a_writer_that_flushes_every_write_gets_ordinary_sends() {
        let got = plans(|_, scope| {
            let cork = Arc::new(Cork {
                fd: -1,
                read: AtomicU32::new(0),
                state: Mutex::new(State::default()),
            });
            let mut plans = Vec::new();
            for _ in 0..260 {
                // A poll of 16 pipelined requests whose writer flushes after each reply.
                cork.note_read(1600);
                cork.lock().wrote = None;
                let mut polled = Vec::new();
                for _ in 0..16 {
                    let queued = cork.send_queued(scope, || Poll::Ready(Ok(100)));
                    polled.push(if queued.is_some() { More } else { Push });
                    cork.note_flush();
                    cork.push();
                }
                plans.push(polled);
            }
            cork.lock().closed = true;
            plans
        });
        // Queued until two flushes showed the pattern, then ordinary sends, until the 256th
        // poll forgets it and two more flushes show it again.
        assert_eq!(got[0][..3], [Push, More, More]);
        assert!(got[0][3..].iter().all(|p| *p == Push));
        assert!(got[1..255].iter().flatten().all(|p| *p == Push));
        assert_eq!(got[255][..3], [More, More, Push]);
    }

    #[test]
    fn recent_min_forgets_after_two_windows() {
        let mut m = RecentMin::default();
        assert_eq!(m.get(), None);
        m.add(1);
        for _ in 0..31 {
            m.add(5);
        }
        assert_eq!(m.get(), Some(1), "within the window");
        for _ in 0..31 {
            m.add(5);
        }
        assert_eq!(m.get(), Some(1), "in the previous window");
        m.add(5);
        assert_eq!(m.get(), Some(5), "two windows on");
    }
}
