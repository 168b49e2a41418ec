//! The reactor: one epoll instance and one timer list per runtime, polled by the workers.
//!
//! It joins the runtime's idle protocol as its [`Driver`]: a spinning worker calls
//! [`Driver::poll`] (epoll with timeout 0, then due timers), and the last worker to park calls
//! [`Driver::park`] (until the next timer deadline). [`Driver::unpark`] writes an eventfd; an
//! `unparked` flag coalesces writes so that, however many threads ask, at most one write is in
//! flight per wait.
//!
//! The eventfd is in the epoll set, *level-triggered* and under a token of its own
//! (`WAKE_TOKEN`), and only the parked worker drains it: it blocks in `epoll_wait` like any
//! poller, and a spinner's zero-timeout poll that sees the eventfd readable skips it and
//! leaves it readable. So a spinner can never take the wake-up meant for the parked worker
//! (which would then find nothing and block again with its old timeout: a timer registered
//! meanwhile, or the worker a producer picked to wake, would be lost), and the parked worker
//! needs one syscall to wait and collect its events, as tokio's does. (It used to block in
//! `poll(2)` on the epoll fd and a private eventfd, then collect with a second, zero-timeout
//! `epoll_wait`: one syscall more per wake-up, some 5 % of a request's CPU when every request
//! wakes the driver.) Events of sources may be taken by either side; whoever takes one
//! dispatches it, so the parked worker finding nothing is then correct. An edge-triggered
//! eventfd would not do: the first poll to see the edge, a spinner's, would consume it.
//!
//! Sources are kept in a slab indexed by the epoll token's low 32 bits; the high 32 bits are
//! the slot's generation. Removing a source bumps the generation, so an event already read for
//! a closed fd (whose number the kernel may have handed to a new socket) is recognised as
//! stale and dropped: it can never touch freed memory or wake the new socket's task.
//!
//! The reactor is created the first time a runtime needs it (the first socket or timer), with
//! [`spinpark_executor::driver::get_or_install`]; a runtime that never does I/O has no epoll
//! fd at all.
//!
//! Timers follow the runtime's clock: std's, or with the `test-util` feature the runtime's
//! own, which a test may pause. While it is paused real time does not move it, so the parked
//! worker does not wait for a deadline: it looks at the sources without blocking and, when
//! nothing came and nothing holds it off, jumps the clock to the earliest timer and fires it
//! (auto-advance, `park_paused`; the executor's `test_clock.rs` says when that is safe).

use std::any::Any;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use spinpark_executor::driver::{self, Driver};
use spinpark_executor::Handle;

use crate::readiness::{Readiness, ERROR, PRIORITY, READABLE, READ_CLOSED, WRITABLE, WRITE_CLOSED};
use crate::sys::{self, Epoll, EventFd};
use crate::timers::Timers;

/// Events read per `epoll_wait`.
const EVENTS: usize = 64;
/// The unpark eventfd's token: no source's (a source's low 32 bits index the slab, which
/// never holds `u32::MAX` entries).
const WAKE_TOKEN: u64 = u64::MAX;
/// How many events a turn files under the slab's lock before it dispatches them.
const DISPATCH_BATCH: usize = 8;

/// Per-runtime reactor state, shared by the driver and every I/O object.
pub(crate) struct Reactor {
    epoll: Epoll,
    eventfd: EventFd,
    /// Set by `unpark` before writing the eventfd; cleared by the parked worker after it
    /// drains the eventfd.
    unparked: AtomicBool,
    slab: Mutex<Slab>,
    /// Registrations of process-wide fds that many listeners share (each signal kind's
    /// eventfd): one per fd, kept as long as the reactor.
    shared: Mutex<Vec<(RawFd, Arc<Readiness>)>>,
    pub(crate) timers: Timers,
    /// The deadline (nanos since `base`, plus one) that a parked worker waits for: 0 when none
    /// is parked, `u64::MAX` when one waits without a deadline. A timer due earlier must
    /// unpark it.
    park_deadline: AtomicU64,
    base: Instant,
    shut_down: AtomicBool,
    /// The accepted connections, by where their clients run (`peers.rs`).
    pub(crate) peers: crate::peers::Peers,
    /// The runtime's clock, which timers follow.
    #[cfg(feature = "test-util")]
    clock: spinpark_executor::driver::Clock,
}

#[derive(Default)]
struct Slab {
    entries: Vec<Entry>,
    free: Vec<u32>,
}

#[derive(Default)]
struct Entry {
    generation: u32,
    source: Option<Arc<Readiness>>,
}

/// A source's registration: remove it with [`Reactor::deregister`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token(u64);

/// The installed driver: a thin owner of the shared reactor.
struct NetDriver(Arc<Reactor>);

impl Reactor {
    /// The reactor of the current runtime, created and installed on first use.
    pub(crate) fn current() -> io::Result<Arc<Reactor>> {
        // The common case, on every timer's first poll: installed and running. One reference
        // count, no handle.
        let installed = driver::with_current(|d| {
            d.and_then(|d| d.as_any().downcast_ref::<NetDriver>())
                .filter(|d| !d.0.is_shut_down())
                .map(|d| d.0.clone())
        });
        if let Some(r) = installed {
            return Ok(r);
        }
        let handle = Handle::try_current().map_err(|_| {
            io::Error::other(
                "spinpark-net needs a spinpark runtime: use it from a task, from \
                 Runtime::block_on, or from #[spinpark::main]",
            )
        })?;
        Self::of(&handle)
    }

    /// The reactor of `handle`'s runtime, created and installed on first use.
    ///
    /// # Errors
    /// Once the runtime has shut its reactor down: nobody would ever poll it, so a socket or
    /// timer registered with it would wait forever. (While the runtime is shutting down, up
    /// to the point where its workers have stopped, a task a worker polled just before it saw
    /// the shutdown still gets the reactor, and is dropped with the rest afterwards.)
    pub(crate) fn of(handle: &Handle) -> io::Result<Arc<Reactor>> {
        let driver = driver::get_or_install(handle, || {
            let r = Reactor::new(handle)?;
            Ok(Box::new(NetDriver(Arc::new(r))))
        })?;
        match driver.as_any().downcast_ref::<NetDriver>() {
            // Shut down meanwhile (the executor shuts down a driver installed too late).
            Some(d) if d.0.is_shut_down() => Err(shut_down()),
            Some(d) => Ok(d.0.clone()),
            None => Err(io::Error::other(
                "this runtime already has an I/O driver that is not spinpark-net's",
            )),
        }
    }

    /// The reactor of `handle`'s runtime, if it has one already (none is created).
    #[cfg(feature = "test-util")]
    pub(crate) fn installed(handle: &Handle) -> Option<Arc<Reactor>> {
        let d = driver::get(handle)?;
        d.as_any().downcast_ref::<NetDriver>().map(|d| d.0.clone())
    }

    fn new(handle: &Handle) -> io::Result<Self> {
        let epoll = Epoll::new()?;
        let eventfd = EventFd::new()?;
        // Level-triggered, readable only: see the module docs.
        epoll.add(eventfd.raw(), WAKE_TOKEN, libc::EPOLLIN as u32)?;
        #[cfg(feature = "test-util")]
        let clock = driver::clock(handle);
        #[cfg(feature = "test-util")]
        let base = clock.now();
        #[cfg(not(feature = "test-util"))]
        let base = Instant::now();
        Ok(Self {
            epoll,
            eventfd,
            unparked: AtomicBool::new(false),
            slab: Mutex::new(Slab::default()),
            shared: Mutex::new(Vec::new()),
            // A timer shard per worker (and one for other threads).
            timers: Timers::new(base, handle.metrics().workers().len()),
            park_deadline: AtomicU64::new(0),
            base,
            shut_down: AtomicBool::new(false),
            peers: crate::peers::Peers::new(),
            #[cfg(feature = "test-util")]
            clock,
        })
    }

    /// The reading timers fire at, and whether the clock is paused (the timers then fire
    /// at exactly their deadline, which the paused clock jumps to).
    pub(crate) fn timer_now(&self) -> (Instant, bool) {
        #[cfg(feature = "test-util")]
        return (self.clock.now(), self.clock.is_paused());
        #[cfg(not(feature = "test-util"))]
        (Instant::now(), false)
    }

    /// The time timers follow: the runtime's clock (`test-util`), else std's.
    pub(crate) fn now(&self) -> Instant {
        #[cfg(feature = "test-util")]
        return self.clock.now();
        #[cfg(not(feature = "test-util"))]
        Instant::now()
    }

    fn slab(&self) -> MutexGuard<'_, Slab> {
        // No user code runs under this lock.
        self.slab.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `fd` (edge-triggered, both directions) and returns its token and readiness.
    pub(crate) fn register(
        &self,
        fd: RawFd,
        assume_ready: bool,
    ) -> io::Result<(Token, Arc<Readiness>)> {
        let initial = if assume_ready { READABLE | WRITABLE } else { 0 };
        self.register_events(fd, initial, sys::INTEREST)
    }

    /// [`Reactor::register`] for the epoll `events` given (an `AsyncFd`'s interest), with
    /// the readiness bits `initial` assumed until the first event.
    pub(crate) fn register_events(
        &self,
        fd: RawFd,
        initial: usize,
        events: u32,
    ) -> io::Result<(Token, Arc<Readiness>)> {
        let source = Arc::new(Readiness::with_bits(initial));
        let token = {
            let mut slab = self.slab();
            // Checked under the lock that `shutdown` takes after setting the flag: either it
            // finds this source, or this sees the flag.
            if self.shut_down.load(Ordering::Acquire) {
                return Err(shut_down());
            }
            let index = match slab.free.pop() {
                Some(i) => i,
                None => {
                    slab.entries.push(Entry::default());
                    (slab.entries.len() - 1) as u32
                }
            };
            let e = &mut slab.entries[index as usize];
            e.source = Some(source.clone());
            Token(((e.generation as u64) << 32) | index as u64)
        };
        if let Err(e) = self.epoll.add(fd, token.0, events) {
            self.release(token);
            return Err(e);
        }
        Ok((token, source))
    }

    /// The readiness of `fd`, an fd that stays open for the rest of the process and that
    /// many listeners share (a signal kind's eventfd): registered the first time, as not yet
    /// ready, and the same registration for every later caller, which opens nothing and makes
    /// no call. It is never deregistered: the fd outlives the reactor.
    pub(crate) fn shared_source(&self, fd: RawFd) -> io::Result<Arc<Readiness>> {
        // No user code runs under this lock; it is taken before the slab's, never after.
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, r)) = shared.iter().find(|(f, _)| *f == fd) {
            return Ok(r.clone());
        }
        let (_, readiness) = self.register(fd, false)?;
        shared.push((fd, readiness.clone()));
        Ok(readiness)
    }

    /// Removes `fd` from epoll (before the caller closes it) and frees its slot.
    pub(crate) fn deregister(&self, fd: RawFd, token: Token) {
        // Failure here means the fd is already gone from the set; nothing else to undo.
        let _ = self.epoll.delete(fd);
        self.release(token);
    }

    fn release(&self, token: Token) {
        let index = (token.0 & u32::MAX as u64) as u32;
        let source = {
            let mut slab = self.slab();
            let e = &mut slab.entries[index as usize];
            e.generation = e.generation.wrapping_add(1);
            let s = e.source.take();
            slab.free.push(index);
            s
        };
        if let Some(s) = source {
            s.clear_wakers();
        }
    }

    /// Reads ready events (waiting at most `timeout`), dispatches them, then fires due timers.
    /// Returns how many it dispatched, not counting the unpark eventfd.
    fn turn(&self, timeout: Option<Duration>) -> usize {
        self.collect(timeout).0 + self.timers.fire_due(|| self.timer_now())
    }

    /// Reads ready events (waiting at most `timeout`) and dispatches those of sources;
    /// returns how many, and whether the unpark eventfd was readable (which only the parked
    /// worker acts on: see the module docs).
    fn collect(&self, timeout: Option<Duration>) -> (usize, bool) {
        let mut events = [MaybeUninit::<libc::epoll_event>::uninit(); EVENTS];
        // epoll_wait on a valid epoll fd with a valid buffer cannot fail (EINTR is reported as
        // zero events); if it somehow does, report nothing rather than spin on the error.
        let n = self.epoll.wait(&mut events, timeout).unwrap_or_default();
        let mut dispatched = 0;
        let mut woken = false;
        // Collected under the slab lock, dispatched after it: a woken task may drop a socket,
        // which takes the lock to deregister. A few at a time, so that the common turn (one or
        // two events) fills and drops a small array, not one the size of `events`.
        for batch in events[..n].chunks(DISPATCH_BATCH) {
            let mut ready: [Option<(Arc<Readiness>, usize)>; DISPATCH_BATCH] =
                [const { None }; DISPATCH_BATCH];
            let mut k = 0;
            {
                let slab = self.slab();
                for ev in batch {
                    // SAFETY: epoll_wait initialised the first `n` entries.
                    let ev = unsafe { ev.assume_init() };
                    let token = ev.u64;
                    if token == WAKE_TOKEN {
                        woken = true;
                        continue;
                    }
                    let index = (token & u32::MAX as u64) as usize;
                    let generation = (token >> 32) as u32;
                    match slab.entries.get(index) {
                        Some(Entry {
                            generation: g,
                            source: Some(s),
                        }) if *g == generation => {
                            ready[k] = Some((s.clone(), readiness_bits(ev.events)));
                            k += 1;
                        }
                        // Stale: the fd was deregistered after the kernel queued this event.
                        _ => {}
                    }
                }
            }
            for (source, bits) in ready[..k].iter_mut().filter_map(Option::take) {
                source.set_ready(bits);
            }
            dispatched += k;
        }
        (dispatched, woken)
    }

    /// Whether the runtime that owns this reactor has shut down.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Acquire)
    }

    /// Asks a parked (or about-to-park) worker to return from [`Driver::park`].
    pub(crate) fn unpark(&self) {
        // AcqRel: at most one write per wait; the Release half orders the caller's state
        // changes before the wake-up, the Acquire half pairs with `park`'s clear.
        if !self.unparked.swap(true, Ordering::AcqRel) {
            self.eventfd.signal();
        }
    }

    /// A timer with `deadline` was added: if a worker is parked in [`Driver::park`] until later,
    /// wake it so it waits for the earlier deadline instead.
    /// `when` is in nanoseconds since the base ([`Timers::nanos`]).
    pub(crate) fn timer_added(&self, when: u64) {
        let at = when.saturating_add(1);
        // Acquire: pairs with the Release store in `park`, so we see its current deadline.
        if at < self.park_deadline.load(Ordering::Acquire) {
            self.unpark();
        }
    }

    /// The parked worker's wait in `epoll_wait`: dispatches what came and returns (how many
    /// sources had events, somebody unparked us), after taking the wake-up if there was one.
    /// Due timers are the caller's to fire.
    fn wait(&self, timeout: Option<Duration>) -> (usize, bool) {
        let (io, unparked) = self.collect(timeout);
        if unparked {
            // Drain, then re-arm the flag. An `unpark` in between finds the flag still set and
            // writes nothing, which is right: it was asked while this park was current, and
            // this park is returning. The other order could leave the flag set over an empty
            // eventfd, and every later `unpark` would write nothing.
            self.eventfd.drain();
            self.unparked.store(false, Ordering::Release);
        }
        (io, unparked)
    }

    /// [`Driver::park`] while the clock is paused (`test-util`). The worker parks as the
    /// driver only with nothing to run, having re-checked every queue (on a current-thread
    /// runtime, the only kind that pauses, it is the only worker). So if the clock may jump
    /// (nothing inhibits it) and a timer is pending, it looks at the sources and its wake-up
    /// without blocking, and if neither has anything, moves the clock to the earliest
    /// deadline and fires what is due: tokio's auto-advance. Otherwise it waits, with no
    /// timeout (real time does not move a paused clock), for an event or an unpark: a new
    /// timer, work, or the end of what inhibited the jump each bring one.
    #[cfg(feature = "test-util")]
    fn park_paused(&self) {
        // The largest value: any timer added while we wait unparks us, to look again.
        self.park_deadline.store(u64::MAX, Ordering::SeqCst);
        let jump_to = self
            .timers
            .next_deadline_exact()
            .filter(|_| self.clock.can_auto_advance());
        let (io, unparked) = self.wait(jump_to.map(|_| Duration::ZERO));
        if io == 0 {
            if let (Some(to), false) = (jump_to, unparked) {
                // Nothing came and nobody asked for this thread: move time. Refused (and
                // nothing fires) if something started to inhibit it meanwhile.
                self.clock.auto_advance(to);
            }
        }
        self.timers.fire_due(|| self.timer_now());
        self.park_deadline.store(0, Ordering::Release);
    }

    fn nanos_since_base(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base)
            .as_nanos()
            .min(u64::MAX as u128 - 2) as u64
    }
}

/// The error of registering with the reactor of a runtime that has shut down (one that
/// `spinpark::runtime::is_rt_shutdown_err` recognises).
fn shut_down() -> io::Error {
    spinpark_executor::rt_shutdown_err("the spinpark runtime has shut down")
}

/// Maps epoll's event bits to the source's readiness bits.
fn readiness_bits(ev: u32) -> usize {
    let ev = ev as libc::c_int;
    let mut bits = 0;
    if ev & libc::EPOLLIN != 0 {
        bits |= READABLE;
    }
    if ev & libc::EPOLLOUT != 0 {
        bits |= WRITABLE;
    }
    if ev & (libc::EPOLLRDHUP | libc::EPOLLHUP) != 0 {
        bits |= READ_CLOSED;
    }
    if ev & libc::EPOLLHUP != 0 {
        bits |= WRITE_CLOSED;
    }
    if ev & libc::EPOLLPRI != 0 {
        bits |= PRIORITY;
    }
    if ev & libc::EPOLLERR != 0 {
        // Wakes both directions; the operation then reports the socket's error.
        bits |= ERROR;
    }
    bits
}

impl Driver for NetDriver {
    fn poll(&self) -> usize {
        self.0.turn(Some(Duration::ZERO))
    }

    fn park(&self) {
        let r = &self.0;
        #[cfg(feature = "test-util")]
        if r.clock.is_paused() {
            return r.park_paused();
        }
        let deadline = r.timers.next_deadline();
        // Publish how long we intend to wait before computing the timeout, so a timer added
        // concurrently with an earlier deadline either is seen by `next_deadline` below or
        // sees our deadline and unparks us. What orders this is the timer store's mutexes, not
        // the atomic: `timer_added` runs after the insert released its shard's mutex, and
        // `next_deadline` below takes every shard's after this store. If the insert took it first, we
        // see the timer; otherwise our store happens-before the insert, hence before
        // `timer_added`'s load. (SeqCst is stronger than that needs; kept as it was.)
        r.park_deadline.store(
            deadline.map_or(u64::MAX, |d| r.nanos_since_base(d) + 1),
            Ordering::SeqCst,
        );
        let deadline = r.timers.next_deadline();
        let timeout = deadline.map(|d| d.saturating_duration_since(r.now()));
        r.wait(timeout);
        // One clock read, and none when no timer is pending.
        r.timers.fire_due(|| r.timer_now());
        r.park_deadline.store(0, Ordering::Release);
    }

    fn unpark(&self) {
        self.0.unpark();
    }

    fn shutdown(&self) {
        let r = &self.0;
        r.shut_down.store(true, Ordering::Release);
        let sources: Vec<Arc<Readiness>> = r
            .slab()
            .entries
            .iter()
            .filter_map(|e| e.source.clone())
            .collect();
        for s in sources {
            s.shutdown();
        }
        // Wakes the timers' wakers: a timer's next poll panics (it can never fire), instead of
        // a `block_on` elsewhere waiting for good.
        r.timers.clear();
    }

    fn clients_colocated(&self) -> bool {
        self.0.peers.all_colocated()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// How long a parked worker gets to return after it was unparked before the test calls
    /// the wake-up lost. Generous: it only bounds a failing run.
    const WATCHDOG: Duration = Duration::from_secs(20);

    fn driver() -> Arc<NetDriver> {
        // A runtime only for its clock; the reactor is not installed in it.
        let rt = spinpark_executor::Runtime::new().unwrap();
        Arc::new(NetDriver(Arc::new(Reactor::new(rt.handle()).unwrap())))
    }

    /// Parks `d` on a new thread; the receiver yields once `park` has returned.
    fn park_on_thread(d: &Arc<NetDriver>) -> mpsc::Receiver<()> {
        let (tx, rx) = mpsc::channel();
        let d = d.clone();
        std::thread::spawn(move || {
            d.park();
            let _ = tx.send(());
        });
        rx
    }

    /// The lost wake-up the module docs describe, forced in the order that lost it: the
    /// wake-up for the parked worker is written, a spinner's zero-timeout poll runs before the
    /// parked worker looks, then the parked worker looks. When the wake-up went through the
    /// shared epoll set, that poll took it and this park blocked for ever (no timers: no
    /// timeout).
    #[test]
    fn a_spinners_poll_does_not_take_the_unpark() {
        let d = driver();
        d.unpark();
        assert_eq!(d.poll(), 0, "no source is registered, nothing to dispatch");
        park_on_thread(&d)
            .recv_timeout(WATCHDOG)
            .expect("park blocked although unpark was called before it: the poll took it");
        // The wake-up was used up: the flag is re-armed, so the next unpark writes again.
        assert!(!d.0.unparked.load(Ordering::Acquire));
    }

    /// The same race on real threads: a worker is parked without a deadline, a timer due
    /// earlier is added, and another thread keeps polling as a spinner would. The parked
    /// worker must return to take the new deadline into account.
    #[test]
    fn a_timer_added_while_parked_unparks_despite_spinners() {
        let d = driver();
        // A first poll takes any event a fresh reactor might report.
        d.poll();
        let returned = park_on_thread(&d);
        // Wait (bounded) until the worker is inside `park` with its infinite deadline.
        let mut tries = 0;
        while d.0.park_deadline.load(Ordering::Acquire) != u64::MAX {
            tries += 1;
            assert!(tries < 20_000, "the parked thread never reached park");
            std::thread::sleep(Duration::from_millis(1));
        }
        d.0.timer_added(d.0.timers.nanos(Instant::now() + Duration::from_millis(1)));
        for _ in 0..1000 {
            d.poll();
        }
        returned
            .recv_timeout(WATCHDOG)
            .expect("the parked worker missed the earlier timer's unpark");
    }
}
