//! The current-thread flavour: no worker thread; the thread inside `block_on` is the runtime's
//! one worker, and runs its tasks between polls of its own future.
//!
//! ```
//! let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
//! let caller = std::thread::current().id();
//! let ran_on = rt.block_on(async {
//!     spinpark_executor::spawn(async { std::thread::current().id() }).await.unwrap()
//! });
//! assert_eq!(ran_on, caller); // the task ran on the thread that called block_on
//! ```
//!
//! How it works: a current-thread runtime is the multi-thread one with a single worker slot
//! and no thread started to fill it. The worker's queue waits in the runtime's [`Seat`]; a
//! thread entering `block_on` takes it and runs the worker's machinery (`worker.rs`'s
//! `WorkerRef`: the LIFO slot, the queue, the injector, the reactor polled every 61 tasks, the
//! idle protocol) with one more source of work, its own future, polled whenever its waker
//! fired, and at least once every 61 tasks while it is woken. Spawning, waking, `JoinHandle`,
//! abort, panics and shutdown are the multi-thread runtime's code.
//!
//! When it has nothing to run the thread parks through the idle protocol, as every worker
//! does: being the last (only) worker, it blocks in the reactor as the driver until an event,
//! the next timer or a wake-up, or on the futex while the runtime has no reactor. The
//! future's waker is a producer like any other: it sets a flag, then notifies through the idle
//! word, and the park's re-check reads the flag after its announcement, so the
//! store / fence / load argument of `idle/mod.rs` covers it too. Spinning is off unless the
//! builder sets a window: a lone thread that spins only delays its own park.
//!
//! Tasks spawned from other threads go to the injector and wake the seated thread. They run
//! only while some thread is in `block_on`, as in tokio.
//!
//! A second thread calling `block_on` while the seat is taken polls only its own future, on
//! its own thread, whenever that future is woken (anything it spawns goes to the injector,
//! where the seated thread finds it). When the seated thread's future completes it leaves the
//! seat and wakes the threads waiting for it, and the first to come takes over. Neither waits
//! for the other, so two futures that depend on each other both progress.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use async_task::Runnable;
use crossbeam_deque::Worker;

use crate::context;
use crate::panics::{self, Payload};
use crate::shared::Shared;
use crate::worker::{Local, Work, WorkerRef, GLOBAL_INTERVAL};

/// The one worker's place on a current-thread runtime: its queue while no thread drives, and
/// the threads in `block_on` waiting to take it.
pub(crate) struct Seat {
    state: Mutex<SeatState>,
}

struct SeatState {
    /// The worker's queue; `None` while a thread drives (it holds the queue).
    queue: Option<Worker<Runnable>>,
    /// Threads in `block_on` waiting for the seat, to unpark when it frees up.
    waiting: Vec<Thread>,
    /// The runtime shut down: nobody takes the seat any more.
    closed: bool,
}

/// What [`Seat::take`] found.
enum Take {
    /// The seat is ours, with the worker's queue.
    Seated(Worker<Runnable>),
    /// Another thread drives; we are on the waiting list.
    Taken,
    /// The runtime shut down.
    Closed,
}

impl Seat {
    pub(crate) fn new(queue: Worker<Runnable>) -> Seat {
        Seat {
            state: Mutex::new(SeatState {
                queue: Some(queue),
                waiting: Vec::new(),
                closed: false,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, SeatState> {
        // No user code runs under this lock.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the seat for the calling thread, or puts it on the waiting list (once).
    fn take(&self) -> Take {
        let mut st = self.state();
        let me = thread::current();
        if st.closed {
            return Take::Closed;
        }
        match st.queue.take() {
            Some(queue) => {
                st.waiting.retain(|t| t.id() != me.id());
                Take::Seated(queue)
            }
            None => {
                if !st.waiting.iter().any(|t| t.id() == me.id()) {
                    st.waiting.push(me);
                }
                Take::Taken
            }
        }
    }

    /// Gives the seat back with the worker's queue, and wakes the threads waiting for it. After
    /// shutdown the queue's tasks are dropped instead (as a worker thread drops its own).
    fn leave(&self, shared: &Shared, queue: Worker<Runnable>) {
        let mut st = self.state();
        if st.closed {
            drop(st);
            crate::worker::drop_queued(shared.slots.get(0), &queue);
            return;
        }
        st.queue = Some(queue);
        let waiting = std::mem::take(&mut st.waiting);
        drop(st);
        for t in waiting {
            t.unpark();
        }
    }

    /// Shutdown: closes the seat, drops the tasks queued in it if no thread drives (a thread
    /// that drives drops them when it leaves), and wakes the waiting threads, which go on
    /// polling their futures without the runtime.
    pub(crate) fn close(&self, shared: &Shared) {
        let mut st = self.state();
        st.closed = true;
        let queue = st.queue.take();
        let waiting = std::mem::take(&mut st.waiting);
        drop(st);
        for t in waiting {
            t.unpark();
        }
        if let Some(queue) = queue {
            crate::worker::drop_queued(shared.slots.get(0), &queue);
        }
    }
}

/// The waker of the `block_on` future: a flag, then a wake-up for the thread wherever it
/// sleeps (in the idle protocol if it drives, in `thread::park` if it waits for the seat).
struct Signal {
    woken: AtomicBool,
    thread: Thread,
    shared: Arc<Shared>,
    /// Where the call is, and whether a wake holds a paused clock (see [`Hold`]).
    #[cfg(feature = "test-util")]
    hold: Mutex<Hold>,
}

/// Where a `block_on` call is (only paused time needs to know).
#[derive(Clone, Copy, PartialEq)]
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
enum Phase {
    /// Waiting for the seat: another thread drives.
    Waiting,
    /// Driving the runtime.
    Seated,
    /// Returned (or the runtime shut down): a late wake changes nothing.
    Done,
}

/// A wake of a thread that waits for the seat keeps a paused clock from jumping until the
/// future has been polled: the driver, finding nothing to run, cannot see that this thread is
/// about to act (`test_clock.rs`). A mutex, not atomics, so that a wake and the end of the
/// call cannot leave an inhibition that nobody ends (the clock's lock nests inside it).
#[cfg(feature = "test-util")]
struct Hold {
    phase: Phase,
    inhibits: bool,
}

impl Signal {
    fn new(shared: &Arc<Shared>) -> Signal {
        Signal {
            // Polled once first.
            woken: AtomicBool::new(true),
            thread: thread::current(),
            shared: shared.clone(),
            #[cfg(feature = "test-util")]
            hold: Mutex::new(Hold {
                phase: Phase::Waiting,
                inhibits: false,
            }),
        }
    }

    #[cfg(feature = "test-util")]
    fn hold(&self) -> MutexGuard<'_, Hold> {
        // No user code runs under this lock.
        self.hold.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The call moved to `phase`; at `Done`, ends a pending inhibition.
    fn set_phase(&self, _phase: Phase) {
        #[cfg(feature = "test-util")]
        {
            self.hold().phase = _phase;
            if _phase == Phase::Done {
                self.polled();
            }
        }
    }

    /// The future was polled: ends the inhibition a wake started, if any.
    fn polled(&self) {
        #[cfg(feature = "test-util")]
        {
            let mut hold = self.hold();
            let paused = std::mem::take(&mut hold.inhibits) && self.shared.clock.allow();
            drop(hold);
            if paused {
                // The driver may have blocked because of the inhibition: look again.
                self.shared.unpark_driver();
            }
        }
    }
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: what the waker published before waking is visible to the poll that follows
        // (the Acquire swap in `block_on`, or the re-check in `WorkerRef::next_work`).
        if !self.woken.swap(true, Ordering::Release) {
            #[cfg(feature = "test-util")]
            {
                let mut hold = self.hold();
                if hold.phase == Phase::Waiting && !hold.inhibits {
                    hold.inhibits = true;
                    self.shared.clock.inhibit();
                }
            }
            // The flag is "work made visible": notify fences and wakes the parked worker, as
            // after a push. A thread that waits for the seat is not in the idle word; it
            // parks in `thread::park`, which an unpark token makes return.
            self.shared.notify_from(None);
            self.thread.unpark();
        }
    }
}

/// Ends the call's phase however `block_on` ends (a panic in the future included).
struct DoneOnExit<'a>(&'a Signal);

impl Drop for DoneOnExit<'_> {
    fn drop(&mut self) {
        self.0.set_phase(Phase::Done);
    }
}

/// `block_on` on a current-thread runtime: runs `future` to completion on this thread, running
/// the runtime's tasks meanwhile whenever this thread holds the seat.
pub(crate) fn block_on<F: Future>(shared: &Arc<Shared>, seat: &Seat, future: F) -> F::Output {
    let signal = Arc::new(Signal::new(shared));
    let _exit = DoneOnExit(&signal);
    let waker = Waker::from(signal.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match seat.take() {
            Take::Seated(queue) => {
                signal.set_phase(Phase::Seated);
                let (queue, out) = drive(shared, queue, &signal, future.as_mut(), &mut cx);
                // Returning, unwinding, or going on alone after a shutdown: either way the
                // seat is given back with the worker's queue, so the runtime stays usable.
                signal.set_phase(Phase::Done);
                seat.leave(shared, queue);
                match out {
                    Ok(Some(out)) => return out,
                    Err(panic) => std::panic::resume_unwind(panic),
                    // The runtime shut down meanwhile: go on polling the future alone.
                    Ok(None) => {}
                }
            }
            Take::Taken => {
                // Another thread drives: poll only our own future, when it is woken.
                // Acquire: pairs with the Release in `wake_by_ref`.
                if signal.woken.swap(false, Ordering::Acquire) {
                    // While it runs, the future may do what a task could (spawn, register a
                    // timer), outside the scheduler: a paused clock must not jump meanwhile.
                    #[cfg(feature = "test-util")]
                    let no_jump = Inhibit::new(shared);
                    let poll = future.as_mut().poll(&mut cx);
                    signal.polled();
                    #[cfg(feature = "test-util")]
                    drop(no_jump);
                    if let Poll::Ready(out) = poll {
                        return out;
                    }
                } else {
                    // Until the waker fires or the seat frees up (or spuriously).
                    thread::park();
                }
            }
            Take::Closed => {
                if signal.woken.swap(false, Ordering::Acquire) {
                    if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                        return out;
                    }
                } else {
                    thread::park();
                }
            }
        }
    }
}

/// Runs the worker loop on this thread, with `future` as one more source of work, until the
/// future completes (`Ok(Some)`), the runtime shuts down (`Ok(None)`), or the future panics
/// (`Err`, for the caller to resume once it has given the seat back). Returns the worker's
/// queue, and leaves the thread's cooperative budget unlimited again, however it ends.
fn drive<F: Future>(
    shared: &Arc<Shared>,
    queue: Worker<Runnable>,
    signal: &Signal,
    mut future: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> (Worker<Runnable>, Result<Option<F::Output>, Payload>) {
    let local = Local::new(shared, 0, queue);
    let out = {
        let _worker = context::set_worker(&local);
        let w = WorkerRef::new(shared, &local, Some(&signal.woken));
        let out = 'drive: loop {
            // Acquire: pairs with the Release in `wake_by_ref`.
            if signal.woken.swap(false, Ordering::Acquire) {
                // The last task's poll ends here, not when the next task starts.
                w.end_poll(false);
                // The future gets a task's budget, so a loop on a ready socket in it lets the
                // tasks run.
                crate::coop::reset();
                // A panic is caught here only to be resumed by `block_on` once the seat and
                // the queue are back where the next caller finds them.
                let poll = panics::catch(|| future.as_mut().poll(cx));
                signal.polled();
                match poll {
                    Ok(Poll::Ready(out)) => break 'drive Ok(Some(out)),
                    Ok(Poll::Pending) => {}
                    Err(panic) => break 'drive Err(panic),
                }
            }
            let mut ran = 0;
            while ran < GLOBAL_INTERVAL {
                if shared.idle.is_shutdown() {
                    break 'drive Ok(None);
                }
                let Some(task) = w.next_task() else { break };
                if !w.run_task(task) {
                    break 'drive Ok(None);
                }
                ran += 1;
            }
            if ran > 0 || signal.woken.load(Ordering::Relaxed) {
                // Back to the future if it was woken; else more tasks, or idle.
                continue;
            }
            match w.idle() {
                Some(Work::Task(task)) => {
                    if !w.run_task(task) {
                        break 'drive Ok(None);
                    }
                }
                Some(Work::Main) => {}
                None => break 'drive Ok(None),
            }
        };
        w.end_poll(false);
        if matches!(out, Ok(None)) {
            w.drop_queued();
        }
        out
    };
    crate::coop::clear();
    (local.into_queue(), out)
}

/// A paused clock must not auto-advance while this lives (a thread outside the scheduler may
/// still act); dropping it unparks the driver, which may have blocked because of it.
#[cfg(feature = "test-util")]
pub(crate) struct Inhibit<'a>(&'a Shared);

#[cfg(feature = "test-util")]
impl<'a> Inhibit<'a> {
    pub(crate) fn new(shared: &'a Shared) -> Inhibit<'a> {
        shared.clock.inhibit();
        Inhibit(shared)
    }
}

#[cfg(feature = "test-util")]
impl Drop for Inhibit<'_> {
    fn drop(&mut self) {
        if self.0.clock.allow() {
            self.0.unpark_driver();
        }
    }
}
