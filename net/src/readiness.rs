//! One registered file descriptor's readiness, and the tasks waiting on it.
//!
//! The reactor registers each fd once, edge-triggered. An edge says "something changed"; the
//! fd stays readable until a read returns `WouldBlock`. So each source keeps a readiness word
//! that the reactor ORs bits into, and that an I/O operation clears only after the syscall
//! said `WouldBlock`:
//!
//! ```text
//! bits 0-6: READABLE | WRITABLE | READ_CLOSED | WRITE_CLOSED | ERROR | SHUTDOWN | PRIORITY
//! bits 16-: tick, bumped by every event the reactor delivers
//! ```
//!
//! The tick closes the race between "the syscall returned WouldBlock" and "clear the bit": the
//! operation remembers the tick it saw before the syscall and clears only if the tick is still
//! the same. If an event arrived in between, the bit stays set and the task retries instead of
//! sleeping through it. `READ_CLOSED`, `WRITE_CLOSED` and `SHUTDOWN` are never cleared: end of
//! stream is sticky, and so is the end of the runtime (operations then fail instead of hanging).
//!
//! `ERROR` (epoll's `EPOLLERR`) is *not* sticky. It means "the socket has a pending error", and
//! the kernel hands that error to exactly one operation (a `recv` that gets `ECONNREFUSED`
//! takes it out of `SO_ERROR`). So it wakes both directions, lets the next operation run to
//! collect the error, and is cleared with the direction's readiness when an operation then
//! returns `WouldBlock`, as tokio does. Were it sticky, a `WouldBlock` could never make the
//! socket look not-ready again: every poll would retry the syscall at once (a UDP socket
//! connected to a closed port spun at 100 % CPU inside one poll, stalling its worker).
//!
//! Waiting follows store-then-check: a task stores its waker under the lock, then re-reads
//! readiness, so an event that landed while it was storing is not missed. The reactor takes the
//! wakers under the lock and wakes them after releasing it.
//!
//! Several tasks may wait in one direction (two tasks accepting on one `Arc<TcpListener>`, or
//! reading one `Arc<TcpStream>`), and an event wakes all of them, so that none is stranded
//! when another is aborted. The usual single waiter costs what it always did: it sits in a slot
//! of its own, and only a second, different waker goes to a list (which allocates only then).
//! A waker is kept until the next event in its direction (or shutdown, or the socket's drop)
//! even if its task gave up waiting: waking a finished task does nothing, and a task that still
//! waits is found again by `will_wake`, so the list holds one entry per task that waited since
//! the last event.

use std::sync::atomic::{AtomicUsize, Ordering::AcqRel, Ordering::Acquire};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

pub(crate) const READABLE: usize = 1;
pub(crate) const WRITABLE: usize = 1 << 1;
pub(crate) const READ_CLOSED: usize = 1 << 2;
pub(crate) const WRITE_CLOSED: usize = 1 << 3;
pub(crate) const ERROR: usize = 1 << 4;
/// The runtime that owns the reactor shut down: every operation fails from now on.
pub(crate) const SHUTDOWN: usize = 1 << 5;
/// Out-of-band data (`EPOLLPRI`), only for fds registered with that interest. Its waiters
/// wait with the readers.
pub(crate) const PRIORITY: usize = 1 << 6;
const READY_MASK: usize = (1 << 16) - 1;
const TICK_ONE: usize = 1 << 16;
/// Bits that are never cleared once set. (`ERROR` is cleared: see the module docs.)
const STICKY: usize = READ_CLOSED | WRITE_CLOSED | SHUTDOWN;

/// A direction a task waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The readiness bits that let an operation in this direction proceed (to succeed or to
    /// report the error / end of stream).
    pub(crate) fn mask(self) -> usize {
        match self {
            Direction::Read => READABLE | READ_CLOSED | ERROR | SHUTDOWN,
            Direction::Write => WRITABLE | WRITE_CLOSED | ERROR | SHUTDOWN,
        }
    }
}

/// What an operation saw when it was allowed to proceed; hand it back to
/// [`Readiness::clear`] after `WouldBlock`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    word: usize,
    /// The bits the operation waited for (what `clear` clears).
    mask: usize,
}

impl Seen {
    /// The readiness bits seen that the operation waited for.
    pub(crate) fn ready_bits(&self) -> usize {
        self.word & self.mask
    }

    /// The same sighting, with `bits` no longer counted as ready.
    pub(crate) fn without(self, bits: usize) -> Seen {
        Seen {
            word: self.word & !bits,
            mask: self.mask,
        }
    }

    pub(crate) fn is_read_closed(&self) -> bool {
        self.word & READ_CLOSED != 0
    }

    /// The reactor is gone: fail instead of waiting for an event that will never come.
    pub(crate) fn is_shutdown(&self) -> bool {
        self.word & SHUTDOWN != 0
    }
}

#[derive(Default)]
struct Waiters {
    reader: Wakers,
    writer: Wakers,
    /// The waker of the latest `poll_read_ready`-style call, which replaces the one before
    /// (as tokio documents for its `poll_*_ready`): one slot per direction.
    poll_reader: Option<Waker>,
    poll_writer: Option<Waker>,
}

/// The tasks waiting in one direction: the first in a slot, any others in a list.
#[derive(Default)]
struct Wakers {
    first: Option<Waker>,
    more: Vec<Waker>,
}

impl Wakers {
    /// Adds `waker` unless a waker that wakes the same task is there already.
    fn register(&mut self, waker: &Waker) {
        match &self.first {
            None => self.first = Some(waker.clone()),
            Some(w) if w.will_wake(waker) => {}
            Some(_) => {
                if !self.more.iter().any(|w| w.will_wake(waker)) {
                    self.more.push(waker.clone());
                }
            }
        }
    }

    /// Takes every waker out (moving an empty list does not allocate).
    fn take(&mut self) -> Wakers {
        std::mem::take(self)
    }

    fn wake(self) {
        if let Some(w) = self.first {
            w.wake();
        }
        for w in self.more {
            w.wake();
        }
    }
}

/// The readiness state of one registered fd. Shared by the reactor and the I/O object.
pub(crate) struct Readiness {
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
}

impl Readiness {
    /// `assume_ready`: a connected socket is assumed ready both ways, so the first operation
    /// just tries (an edge arrives after a `WouldBlock` anyway). A socket that is still
    /// connecting must wait for the kernel's first event instead.
    #[cfg(test)]
    pub(crate) fn new(assume_ready: bool) -> Self {
        Self::with_bits(if assume_ready { READABLE | WRITABLE } else { 0 })
    }

    /// A source whose readiness starts as `bits` (a fresh datagram socket: writable, but
    /// nothing to read until the kernel says so).
    pub(crate) fn with_bits(bits: usize) -> Self {
        Self {
            readiness: AtomicUsize::new(bits),
            waiters: Mutex::new(Waiters::default()),
        }
    }

    fn waiters(&self) -> std::sync::MutexGuard<'_, Waiters> {
        // Only wakers are stored under this lock and no user code runs while it is held.
        self.waiters.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called by the reactor for an event with readiness `bits`: records it, bumps the tick,
    /// and wakes the tasks waiting in the directions it concerns.
    pub(crate) fn set_ready(&self, bits: usize) {
        // AcqRel: publishes the event to the operation that reads the word (Acquire there), and
        // reads the previous word to build on it.
        let _ = self.readiness.fetch_update(AcqRel, Acquire, |w| {
            Some((w & !READY_MASK).wrapping_add(TICK_ONE) | (w & READY_MASK) | bits)
        });
        let (r, w) = {
            let mut ws = self.waiters();
            let mut r = Wakers::default();
            if bits & (Direction::Read.mask() | PRIORITY) != 0 {
                r = ws.reader.take();
                if let Some(p) = ws.poll_reader.take() {
                    r.register(&p);
                }
            }
            let mut w = Wakers::default();
            if bits & Direction::Write.mask() != 0 {
                w = ws.writer.take();
                if let Some(p) = ws.poll_writer.take() {
                    w.register(&p);
                }
            }
            (r, w)
        };
        r.wake();
        w.wake();
    }

    /// The readiness in `dir` now, without registering interest.
    pub(crate) fn ready_now(&self, dir: Direction) -> Option<Seen> {
        self.ready_now_mask(dir.mask())
    }

    /// Whether any of the bits in `mask` is set now, without registering interest.
    pub(crate) fn ready_now_mask(&self, mask: usize) -> Option<Seen> {
        // Acquire: pairs with the AcqRel in `set_ready`.
        let w = self.readiness.load(Acquire);
        (w & mask != 0).then_some(Seen { word: w, mask })
    }

    /// Ready to try an operation in `dir`? If not, stores the task's waker and returns
    /// `Pending`; it is woken by the next event in that direction, as is every other task
    /// waiting in that direction.
    pub(crate) fn poll_ready(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<Seen> {
        self.poll_mask(dir.mask(), cx)
    }

    /// [`Readiness::poll_ready`] whose waker replaces the one of the previous call of this
    /// kind in `dir`, rather than joining the other waiters: the `poll_read_ready` /
    /// `poll_write_ready` contract ("only the latest context is woken").
    pub(crate) fn poll_ready_latest(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<Seen> {
        let mask = dir.mask();
        // Acquire: pairs with the AcqRel in `set_ready`.
        let w = self.readiness.load(Acquire);
        if w & mask != 0 {
            return Poll::Ready(Seen { word: w, mask });
        }
        let mut ws = self.waiters();
        let slot = match dir {
            Direction::Read => &mut ws.poll_reader,
            Direction::Write => &mut ws.poll_writer,
        };
        if !slot.as_ref().is_some_and(|p| p.will_wake(cx.waker())) {
            *slot = Some(cx.waker().clone());
        }
        // Re-check under the lock, as in `poll_mask`.
        let w = self.readiness.load(Acquire);
        if w & mask != 0 {
            return Poll::Ready(Seen { word: w, mask });
        }
        Poll::Pending
    }

    /// [`Readiness::poll_ready`] for any set of readiness bits (an `Interest`'s): the waker
    /// waits with the readers if a read-side bit (or only the error bit) is in `mask`, with
    /// the writers if a write-side bit is, or with both.
    pub(crate) fn poll_mask(&self, mask: usize, cx: &mut Context<'_>) -> Poll<Seen> {
        // Acquire: pairs with the AcqRel in `set_ready`.
        let w = self.readiness.load(Acquire);
        if w & mask != 0 {
            return Poll::Ready(Seen { word: w, mask });
        }
        let mut ws = self.waiters();
        let read_side = READABLE | READ_CLOSED | PRIORITY;
        let write_side = WRITABLE | WRITE_CLOSED;
        if mask & read_side != 0 || mask & write_side == 0 {
            ws.reader.register(cx.waker());
        }
        if mask & write_side != 0 {
            ws.writer.register(cx.waker());
        }
        // Re-check under the lock: `set_ready` updates the word before taking the lock, so an
        // event we did not see above is either visible now or will find our waker.
        let w = self.readiness.load(Acquire);
        if w & mask != 0 {
            return Poll::Ready(Seen { word: w, mask });
        }
        Poll::Pending
    }

    /// The operation allowed by `seen` returned `WouldBlock`: clear that direction's
    /// readiness, unless an event arrived since (the tick moved on).
    pub(crate) fn clear(&self, seen: Seen) {
        self.clear_bits(seen, seen.mask);
    }

    /// Clears `bits` (sticky ones aside) unless an event arrived since `seen` (the tick
    /// moved on): a guard's `clear_ready_matching`.
    pub(crate) fn clear_bits(&self, seen: Seen, bits: usize) {
        let clear = bits & !STICKY;
        let _ = self.readiness.fetch_update(AcqRel, Acquire, |w| {
            if w & !READY_MASK == seen.word & !READY_MASK {
                Some(w & !clear)
            } else {
                None
            }
        });
    }

    /// The runtime shut down: marks the source so every later operation fails, and wakes (then
    /// drops) the tasks waiting on it.
    pub(crate) fn shutdown(&self) {
        self.set_ready(SHUTDOWN);
        self.clear_wakers();
    }

    /// Drops stored wakers (at runtime shutdown, or when the I/O object goes away).
    pub(crate) fn clear_wakers(&self) {
        let ws = std::mem::take(&mut *self.waiters());
        drop(ws);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::task::Wake;

    /// A waker that counts its wakes.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, AcqRel);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let c = Arc::new(Count(AtomicUsize::new(0)));
        (c.clone(), Waker::from(c))
    }

    #[test]
    fn an_event_wakes_every_waiter_in_its_direction_once() {
        let r = Readiness::new(false);
        let (a, wa) = waker();
        let (b, wb) = waker();
        let (w, ww) = waker();
        for _ in 0..3 {
            // Re-polling with the same waker adds no entry.
            assert!(r
                .poll_ready(Direction::Read, &mut Context::from_waker(&wa))
                .is_pending());
            assert!(r
                .poll_ready(Direction::Read, &mut Context::from_waker(&wb))
                .is_pending());
        }
        assert!(r
            .poll_ready(Direction::Write, &mut Context::from_waker(&ww))
            .is_pending());
        r.set_ready(READABLE);
        assert_eq!((a.0.load(Acquire), b.0.load(Acquire)), (1, 1));
        assert_eq!(
            w.0.load(Acquire),
            0,
            "a read event leaves the writer waiting"
        );
        r.set_ready(READABLE);
        assert_eq!((a.0.load(Acquire), b.0.load(Acquire)), (1, 1), "taken");
        r.set_ready(WRITABLE);
        assert_eq!(w.0.load(Acquire), 1);
    }

    #[test]
    fn an_error_is_cleared_by_would_block_and_end_of_stream_is_not() {
        let r = Readiness::new(false);
        let (_, w) = waker();
        let mut cx = Context::from_waker(&w);
        for dir in [Direction::Read, Direction::Write] {
            // One bit for both directions: whichever operation meets the error clears it.
            r.set_ready(ERROR);
            let Poll::Ready(seen) = r.poll_ready(dir, &mut cx) else {
                panic!("an error must let {dir:?} operations run to report it");
            };
            r.clear(seen);
            assert!(
                r.poll_ready(dir, &mut cx).is_pending(),
                "{dir:?}: the error bit survived a WouldBlock"
            );
        }
        r.set_ready(READ_CLOSED);
        let Poll::Ready(seen) = r.poll_ready(Direction::Read, &mut cx) else {
            panic!("end of stream must be readable");
        };
        r.clear(seen);
        assert!(r.poll_ready(Direction::Read, &mut cx).is_ready(), "sticky");
    }
}
