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
//! `Worker`: the LIFO slot, the queue, the injector, the reactor polled every 61 tasks, the
//! idle protocol) with one more source of work, its own future, polled whenever its waker
//! fired, and while it is woken at least once every 61 tasks and once tasks have polled for
//! 1 ms since its last poll (`GLOBAL_INTERVAL_NANOS`), so tasks that poll for milliseconds
//! each do not hold it off for 61 of their polls. Spawning, waking, `JoinHandle`,
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
use std::sync::Arc;
#[cfg(feature = "test-util")]
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use super::current;
use super::queues::LocalQueue;
use super::seat::{Seat, Take};
use super::shared::Shared;
use super::worker::{run_task, Ran, Work, Worker, GLOBAL_INTERVAL, GLOBAL_INTERVAL_NANOS};
use super::worker_state::WorkerState;
use crate::task::list;
use crate::task::panics::{self, Payload};

/// The waker of the `block_on` future (the runtime's "main" future): a flag, then a wake-up
/// for the thread wherever it sleeps (in the idle protocol if it drives, in `thread::park`
/// if it waits for the seat). The multi-thread runtime's `block_on` has a simpler one,
/// `runtime/block_on.rs`'s `ThreadWaker`.
struct MainWaker {
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
/// about to act (`time/paused.rs`). A mutex, not atomics, so that a wake and the end of the
/// call cannot leave an inhibition that nobody ends (the clock's lock nests inside it).
#[cfg(feature = "test-util")]
struct Hold {
    phase: Phase,
    inhibits: bool,
}

impl MainWaker {
    fn new(shared: &Arc<Shared>) -> MainWaker {
        MainWaker {
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

impl Wake for MainWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: what the waker published before waking is visible to the poll that follows
        // (the Acquire swap in `block_on`, or the re-check in `Worker::next_work`).
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
struct DoneOnExit<'a>(&'a MainWaker);

impl Drop for DoneOnExit<'_> {
    fn drop(&mut self) {
        self.0.set_phase(Phase::Done);
    }
}

/// `block_on` on a current-thread runtime: runs `future` to completion on this thread, running
/// the runtime's tasks meanwhile whenever this thread holds the seat.
///
/// With `may_drive` false (`Handle::block_on`, as tokio's) the caller never takes the seat:
/// it polls only its own future, and the runtime's tasks, I/O and timers progress only while
/// some `Runtime::block_on` drives it.
pub(crate) fn block_on<F: Future>(
    shared: &Arc<Shared>,
    seat: &Seat,
    may_drive: bool,
    future: F,
) -> F::Output {
    let signal = Arc::new(MainWaker::new(shared));
    let _exit = DoneOnExit(&signal);
    let waker = Waker::from(signal.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        let took = match may_drive {
            true => seat.take(),
            false => Take::Taken,
        };
        match took {
            Take::Seated(queue) => {
                signal.set_phase(Phase::Seated);
                let (queue, out) = drive(shared, queue, &signal, future.as_mut(), &mut cx);
                // Returning, unwinding, or going on alone after a shutdown: either way the
                // seat is given back with the worker's queue, so the runtime stays usable.
                signal.set_phase(Phase::Done);
                seat.leave(shared.slots.get(0), queue);
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
    queue: LocalQueue,
    signal: &MainWaker,
    mut future: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> (LocalQueue, Result<Option<F::Output>, Payload>) {
    let mut core = WorkerState::new(shared.addr(), 0, queue);
    let out = {
        let _worker = current::set_worker(&core);
        let _tasks = list::publish(shared.tasks.clone());
        let main = Some(&signal.woken);
        Worker::new(shared, &core, main).start_busy();
        // When the future was last polled (coarse clock).
        let mut main_polled = 0;
        let out = 'drive: loop {
            // Acquire: pairs with the Release in `wake_by_ref`.
            if signal.woken.swap(false, Ordering::Acquire) {
                // The last task's poll ends here, not when the next task starts.
                main_polled = Worker::new(shared, &core, main).end_poll(false);
                // The future gets a task's budget, so a loop on a ready socket in it lets the
                // tasks run.
                crate::task::coop::reset();
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
                let Some(task) = Worker::new(shared, &core, main).next_task() else {
                    break;
                };
                core = match run_task(shared, core, task) {
                    Ran::Continue(core) => core,
                    Ran::Shutdown(c) => {
                        core = c;
                        break 'drive Ok(None);
                    }
                    Ran::HandedOff => unreachable!(
                        "block_in_place refuses on a current-thread runtime, whose one worker \
                         has no thread to hand its place to"
                    ),
                };
                ran += 1;
                // Relaxed: a hint; the swap above, which polls the future, is the Acquire.
                // The time is when the task poll that just ran ended (read as it ended).
                if signal.woken.load(Ordering::Relaxed)
                    && core.poll_ended.get().saturating_sub(main_polled) >= GLOBAL_INTERVAL_NANOS
                {
                    break;
                }
            }
            if ran > 0 {
                // Back to the future if it was woken; else more tasks, or idle.
                continue;
            }
            if signal.woken.load(Ordering::Relaxed) {
                // The future woke itself (a `yield_now` loop waiting for a socket) with no
                // task to run: give the reactor a non-blocking turn first, or the I/O and
                // timers it waits for would never be seen (tokio's `yield_now` likewise
                // waits for a driver turn).
                Worker::new(shared, &core, main).poll_driver();
                continue;
            }
            let work = Worker::new(shared, &core, main).idle();
            match work {
                Some(Work::Task(task)) => {
                    core = match run_task(shared, core, task) {
                        Ran::Continue(core) => core,
                        Ran::Shutdown(c) => {
                            core = c;
                            break 'drive Ok(None);
                        }
                        Ran::HandedOff => unreachable!("see above"),
                    };
                }
                Some(Work::Main) => {}
                None => break 'drive Ok(None),
            }
        };
        let w = Worker::new(shared, &core, main);
        w.end_poll(false);
        w.end_busy(shared.policy.now());
        if matches!(out, Ok(None)) {
            w.drop_queued();
        }
        out
    };
    crate::task::coop::clear();
    (core.into_queue(), out)
}

/// A paused clock must not auto-advance while this lives (a thread outside the scheduler may
/// still act); dropping it unparks the driver, which may have blocked because of it.
#[cfg(feature = "test-util")]
struct Inhibit<'a>(&'a Shared);

#[cfg(feature = "test-util")]
impl<'a> Inhibit<'a> {
    fn new(shared: &'a Shared) -> Inhibit<'a> {
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
