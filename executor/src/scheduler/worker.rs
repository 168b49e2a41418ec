//! A worker thread: run tasks, and when there are none, go idle through [`crate::idle`].
//!
//! Where a worker looks for its next task, in order:
//!
//! 1. every 61st task, and between two tasks once 1 ms of polling has passed since it last
//!    looked there, the global injector first, so remote spawns and wakes cannot starve
//!    behind a busy local queue (a count alone lets tasks that poll for milliseconds each,
//!    CPU work in slices with `yield_now` between, hold them off for 61 slices);
//! 2. its LIFO slot (the task the last task woke), at most three times in a row, so two tasks
//!    that keep waking each other cannot starve the queue;
//! 3. its local queue, then the injector, then the other workers' queues (stealing half),
//!    then the LIFO slot of any worker stuck in a long poll (`lifo.rs`).
//!
//! A batch taken from the injector or from another worker leaves all but one task in this
//! worker's queue; a worker between tasks then notifies, as after a push, and an idle one
//! looks at every queue once it stops looking for work, so the rest of the batch is never
//! left behind a task that blocks this worker while the others sleep (`idle/mod.rs`, "Every
//! queue").
//!
//! A busy worker also polls the reactor (without blocking) every 61 tasks, and between two
//! tasks once half a watch period has passed since it last did, so I/O and timers are served
//! even when no worker is idle. A task that yields (`yield_now`, or its cooperative budget
//! spent) is not queued at once: its waker waits in the worker's deferred list until the
//! worker's next reactor poll, the periodic one or the one it makes when it runs out of
//! other tasks, as in tokio. So tasks that yield in a loop never keep the worker from its
//! timers and sockets for longer than one of their slices. Every task poll is stamped on the
//! coarse clock (`time/coarse.rs`): other workers and the watchdog read the stamp to tell a
//! worker stuck in a long poll, and a poll past `Builder::long_poll_threshold` is counted in
//! `WorkerMetrics::long_polls`.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Acquire;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use async_task::Runnable;
use crossbeam_deque::Steal;

use super::current;
use super::metrics::{add, bump, WorkerCounters};
use super::queues::{drop_queued, LocalQueue, WorkerSlot};
use super::shared::Shared;
use super::worker_state::WorkerState;
use crate::idle::{Nanos, Parked};
use crate::task::poll_end;
use crate::task::{self, coop, list, panics};
use crate::time::coarse;

/// Callbacks run on each worker thread as it starts and stops.
pub(crate) type ThreadHook = Arc<dyn Fn() + Send + Sync>;

/// How many tasks run between checks of the injector and of the reactor (and, on a
/// current-thread runtime, at most between two polls of the `block_on` future).
pub(crate) const GLOBAL_INTERVAL: u32 = 61;
/// How much polling (coarse-clock nanoseconds) passes at most between two looks at the
/// injector (and, on a current-thread runtime, between a wake of the `block_on` future and
/// its poll), whatever the count: tasks whose polls take milliseconds reach
/// [`GLOBAL_INTERVAL`] only after a long time. tokio gets there by tuning its interval to the
/// mean poll time; a bound on time does it with the coarse stamp every poll takes anyway. The
/// coarse clock advances once per kernel tick (1-4 ms), so the bound is in effect one tick,
/// and polls shorter than a tick look at the injector once per tick more, not once per poll.
pub(crate) const GLOBAL_INTERVAL_NANOS: u64 = 1_000_000;
/// How many times in a row the LIFO slot may be preferred over the queue.
const MAX_LIFO_STREAK: u32 = 3;

/// What an idle worker found to do.
pub(crate) enum Work {
    Task(Runnable),
    /// The future of the `block_on` call driving a current-thread runtime was woken.
    Main,
}

/// How a worker's start went: `Err` carries the message of its `on_thread_start` panic.
pub(crate) type Started = Result<(), String>;

/// The body of worker thread `index`. Reports on `started` once its `on_thread_start` hook
/// ran: a worker whose hook panicked does not start (and `Builder::build` fails).
pub(crate) fn run(
    shared: Arc<Shared>,
    index: usize,
    queue: LocalQueue,
    on_start: Option<ThreadHook>,
    on_stop: Option<ThreadHook>,
    started: mpsc::Sender<Started>,
) {
    if let Some(f) = &on_start {
        if let Err(payload) = panics::catch(|| f()) {
            let msg = panics::message(&payload)
                .unwrap_or("(no message)")
                .to_string();
            panics::forget_payload(payload);
            // Its place never runs: shutdown must not wait for it.
            shared.places.retire();
            let _ = started.send(Err(msg));
            return;
        }
    }
    // The builder may have given up already (another worker failed); that is fine.
    let _ = started.send(Ok(()));
    drop(started);
    let core = WorkerState::new(shared.addr(), index, queue);
    {
        let _enter = current::enter(shared.clone(), true);
        run_place(&shared, core);
    }
    if let Some(f) = &on_stop {
        // The worker is done either way; the panic hook has reported the panic.
        if let Err(payload) = panics::catch(|| f()) {
            panics::forget_payload(payload);
        }
    }
}

/// Runs the worker loop with `core` (a worker's place) on this thread until the runtime shuts
/// down, then drops what is queued there and retires the place; or until a task hands the
/// place to another thread (`block_in_place`), which then goes on with it. Worker threads
/// start here, and so does the thread that takes a place over (`block_in_place.rs`).
pub(crate) fn run_place(shared: &Shared, mut core: Box<WorkerState>) {
    let _worker = current::set_worker(&core);
    Worker::new(shared, &core, None).start_busy();
    let _tasks = list::publish(shared.tasks.clone());
    loop {
        let task = {
            let w = Worker::new(shared, &core, None);
            match w.next_task() {
                Some(task) => task,
                None => match w.idle() {
                    Some(Work::Task(task)) => task,
                    // A worker thread has no `block_on` future (`main` is `None`).
                    Some(Work::Main) => continue,
                    None => break,
                },
            }
        };
        core = match run_task(shared, core, task) {
            Ran::Continue(core) => core,
            Ran::Shutdown(core) => {
                // Dropped on the next line, with the rest of the queue.
                core
            }
            Ran::HandedOff => return,
        };
        if shared.idle.is_shutdown() {
            break;
        }
    }
    let w = Worker::new(shared, &core, None);
    // A worker that saw the shutdown between tasks, without idling, shows its last stretch.
    w.end_busy(shared.policy.now());
    w.drop_queued();
    drop(core);
    shared.places.retire();
}

/// How running one task ended, for the loop that ran it.
pub(crate) enum Ran {
    /// The task ran (or was dropped because the runtime is shutting down); here is the place.
    Continue(Box<WorkerState>),
    /// The runtime is shutting down: the task was dropped, not run.
    Shutdown(Box<WorkerState>),
    /// The task handed the worker's place to another thread (`block_in_place`), which goes
    /// on with it: this thread is no longer a worker.
    HandedOff,
}

/// Runs `task` on the worker whose place is `core`, unless the runtime has begun to shut
/// down: then the task is dropped (here, with the runtime current, as shutdown drops queued
/// tasks), so no task is polled once a worker has seen the shutdown (a timer first polled then
/// could not register any more). While the task runs, the place waits in the thread's slot
/// (`current::lend`), where `block_in_place` may take it.
pub(crate) fn run_task(shared: &Shared, core: Box<WorkerState>, task: Runnable) -> Ran {
    if shared.idle.is_shutdown() {
        drop(task);
        return Ran::Shutdown(core);
    }
    let (now, tick) = Worker::new(shared, &core, None).before_run();
    // Tasks that yield during the run wait in the worker's deferred list (`yield_now.rs`).
    task::begin_deferring(core.take_deferred());
    current::lend(core);
    // A panic inside the task's poll or its future's destructor is caught by `Guarded`.
    task.run();
    let deferred = task::end_deferring();
    let Some(core) = current::reclaim() else {
        // This thread is no longer a worker: whoever runs the place now runs them.
        for waker in deferred {
            waker.wake();
        }
        return Ran::HandedOff;
    };
    core.put_deferred(deferred);
    Worker::new(shared, &core, None).after_run(now, tick);
    Ran::Continue(core)
}

/// A worker at work: the task machinery, shared by worker threads and by the thread that
/// drives a current-thread runtime from `block_on` (`current_thread.rs`). Made afresh from
/// the worker's place for each step, and never kept across a task's run, during which the
/// place may change threads.
pub(crate) struct Worker<'a> {
    shared: &'a Shared,
    state: &'a WorkerState,
    /// This worker's slot in `shared.slots`.
    slot: &'a WorkerSlot,
    /// This worker's counters in `shared.counters`.
    counters: &'a WorkerCounters,
    /// On a current-thread runtime, the flag that the `block_on` future's waker sets: one
    /// more thing an idle worker looks for, and whose waker notifies like a producer.
    main: Option<&'a AtomicBool>,
}

impl<'a> Worker<'a> {
    pub(crate) fn new(
        shared: &'a Shared,
        state: &'a WorkerState,
        main: Option<&'a AtomicBool>,
    ) -> Worker<'a> {
        Worker {
            shared,
            state,
            slot: shared.slots.get(state.index),
            counters: shared.counters.worker(state.index),
            main,
        }
    }

    /// Shutdown: drops what is still queued here. Dropping a runnable drops its future,
    /// whose destructor may wake other tasks; once shut down, `schedule` puts those in the
    /// injector, which the shutting-down thread drains.
    pub(crate) fn drop_queued(&self) {
        drop_queued(self.slot, &self.state.queue);
    }

    /// A task is about to run: counts it, gives it a fresh budget, stamps its poll. Returns
    /// the coarse time and the task's tick, for [`Worker::after_run`].
    fn before_run(&self) -> (u64, u32) {
        bump(&self.counters.polls);
        let tick = self.state.tick.get().wrapping_add(1);
        self.state.tick.set(tick);
        coop::reset();
        (self.end_poll(true), tick)
    }

    /// The task that began at coarse time `began` as tick `tick` has run: stamps its end (the
    /// worker's time until the next poll), and polls the reactor every [`GLOBAL_INTERVAL`]
    /// tasks, or when it has gone unattended for long.
    fn after_run(&self, began: u64, tick: u32) {
        let now = coarse::now().max(began);
        self.state.poll_ended.set(now);
        self.settle();
        if tick % GLOBAL_INTERVAL == 0 || self.reactor_unattended(now) {
            // A worker that never idles still shows its busy time now and then.
            self.end_busy(self.shared.policy.now());
            self.state.last_driver_poll.set(now);
            self.poll_driver();
            self.state.wake_deferred();
        }
    }

    /// Whether this worker last polled the reactor at least half a watch period before coarse
    /// time `now` (the start of the task that just ran). Workers that go from task to task
    /// without idling (short blocking tasks back to back, each stealing the next) poll the
    /// reactor every [`GLOBAL_INTERVAL`] tasks, which may be seconds, and nobody parks, so the
    /// watchdog has nothing to watch: this bounds the wait of timers and sockets by the
    /// period instead, at one zero-timeout `epoll_wait` per half period per busy worker. The
    /// stamp is the worker's own, so the check is a compare on a local `Cell`.
    fn reactor_unattended(&self, now: u64) -> bool {
        now.saturating_sub(self.state.last_driver_poll.get()) >= self.shared.slots.attend_every()
    }

    /// The busy time since the worker found work (or since the last call) is added to its
    /// counter, up to policy time `now`, a reading the caller took anyway (the idle period's
    /// start; a periodic reactor poll's): no clock read per task.
    pub(crate) fn end_busy(&self, now: Nanos) {
        let since = self.state.busy_since.replace(now);
        add(&self.counters.busy_nanos, now.saturating_sub(since));
    }

    /// The loop starts on this thread with the worker busy (a worker thread starting, a pool
    /// thread taking the place over, a `block_on` driving a current-thread runtime).
    pub(crate) fn start_busy(&self) {
        self.state.busy_since.set(self.shared.policy.now());
    }

    /// The previous task poll, if one is stamped, is over: count it if it ran long. Then
    /// stamp the one that starts now (`starting`), or mark the worker idle. One coarse clock
    /// read per task, whose reading it returns.
    pub(crate) fn end_poll(&self, starting: bool) -> u64 {
        let now = coarse::now();
        if self.shared.slots.end_poll(self.state.index, now, starting) {
            bump(&self.counters.long_polls);
        }
        now
    }

    /// The next task from this worker's own sources or anybody else's (see the module docs),
    /// for a worker going from task to task. If taking it moved tasks into this worker's
    /// queue (a batch, or a LIFO task put behind the queue), the other workers are told, as
    /// after any push: this worker is not looking for work, and whatever it runs next may
    /// block it (`idle/mod.rs`, "Every queue").
    pub(crate) fn next_task(&self) -> Option<Runnable> {
        let (task, landed) = self.take_task()?;
        if landed && self.shared.queues.workers() > 1 {
            self.shared.notify_from(Some(self.state.index));
        }
        Some(task)
    }

    /// The next task, and whether taking it left tasks in this worker's queue that nobody
    /// was told of (they were moved there, not pushed). An idle worker's own re-check after
    /// it stops looking covers those; a busy one notifies ([`Worker::next_task`]).
    fn take_task(&self) -> Option<(Runnable, bool)> {
        let state = self.state;
        if self.injector_due() {
            if let Some(t) = self.steal_injector() {
                return Some(t);
            }
        }
        let mut demoted = false;
        if let Some(t) = self.slot.lifo.take() {
            let streak = state.lifo_streak.get() + 1;
            if streak <= MAX_LIFO_STREAK {
                state.lifo_streak.set(streak);
                return Some((t, false));
            }
            // Too many in a row: the LIFO task goes behind the queue like any other.
            state.queue.push(t);
            demoted = true;
        }
        state.lifo_streak.set(0);
        if let Some(t) = state.queue.pop() {
            // A demoted LIFO task that stays queued (behind others) was never told of.
            return Some((t, demoted && !state.queue.is_empty()));
        }
        self.steal_injector()
            .or_else(|| self.steal_others())
            .or_else(|| self.after_yields().map(|t| (t, false)))
    }

    /// Nothing else to run, but tasks yielded: the reactor gets a non-blocking turn first, so
    /// the timers and sockets that came due while they ran are served before they run again
    /// (a task that yields in a loop would otherwise hold them off until the next periodic
    /// poll), then they are woken and the first of them (or of what the turn woke) is taken.
    fn after_yields(&self) -> Option<Runnable> {
        if !self.state.has_deferred() {
            return None;
        }
        self.state.last_driver_poll.set(coarse::now());
        self.poll_driver();
        self.state.wake_deferred();
        self.slot.lifo.take().or_else(|| self.state.queue.pop())
    }

    /// What an idle worker looks for: the `block_on` future, if it was woken (current-thread
    /// runtime), else the next task.
    fn next_work(&self) -> Option<Work> {
        // Acquire: pairs with the waker's Release. Against a lost wake-up the flag is ordered
        // like a queue: set, then the waker's `notify` fences; the parker announces, fences,
        // then re-checks here (see `idle/mod.rs`).
        if self.main.is_some_and(|m| m.load(Acquire)) {
            return Some(Work::Main);
        }
        self.take_task().map(|(t, _)| Work::Task(t))
    }

    /// Whether the injector should be looked at before this worker's own tasks: every
    /// [`GLOBAL_INTERVAL`] tasks, or once [`GLOBAL_INTERVAL_NANOS`] has passed since it last
    /// was, by the end of the last task poll (its stamp, no further clock read). So a spawn
    /// or wake from another thread waits at most the interval plus one poll: beside tasks
    /// that compute in 5 ms slices, one slice, as on tokio.
    fn injector_due(&self) -> bool {
        let state = self.state;
        state.tick.get() % GLOBAL_INTERVAL == GLOBAL_INTERVAL - 1
            || state
                .poll_ended
                .get()
                .saturating_sub(state.injector_looked.get())
                >= GLOBAL_INTERVAL_NANOS
    }

    /// A batch of the injector's tasks: one to run, and whether the rest landed in this
    /// worker's queue.
    fn steal_injector(&self) -> Option<(Runnable, bool)> {
        self.state.injector_looked.set(self.state.poll_ended.get());
        let queue = &self.state.queue;
        let before = queue.len();
        let t = self.shared.queues.steal_injector_into(queue)?;
        Some((t, queue.len() > before))
    }

    /// Half of another worker's queue: one task to run, and whether the rest landed in this
    /// worker's queue (empty before: this comes after its own queue and the injector).
    fn steal_others(&self) -> Option<(Runnable, bool)> {
        let queues = &self.shared.queues;
        let n = queues.workers();
        if n <= 1 {
            return None;
        }
        // Start after ourselves, so workers do not all raid worker 0 first.
        loop {
            let mut retry = false;
            for k in 1..n {
                let victim = (self.state.index + k) % n;
                match queues.steal_into(victim, &self.state.queue) {
                    Steal::Success(t) => {
                        bump(&self.counters.steals);
                        return Some((t, !self.state.queue.is_empty()));
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return self.steal_stuck_lifo().map(|t| (t, false));
            }
            std::hint::spin_loop();
        }
    }

    /// Whether another worker has been in one poll for too long: it does not attend the
    /// reactor, so this worker, parking while nobody spins, should drive it (`idle/word.rs`).
    fn others_stuck(&self) -> bool {
        self.shared
            .slots
            .others_stuck(self.state.index, coarse::now())
    }

    /// The task in the LIFO slot of a worker that has been in one poll for too long (see
    /// `lifo.rs`): it would otherwise wait for that poll to end while this worker idles.
    fn steal_stuck_lifo(&self) -> Option<Runnable> {
        let task = self.shared.slots.take_stuck_lifo(self.state.index)?;
        bump(&self.counters.steals);
        Some(task)
    }

    /// Whether work is queued, anywhere another worker may take it, behind the task this
    /// worker just took on its way out of looking for work (a spinner that found work, a
    /// parker whose re-check did): then another worker should come and help (the chain
    /// wake). Every queue, not only this worker's and the injector: `idle/mod.rs`, "Every
    /// queue".
    fn more_work_queued(&self) -> bool {
        self.shared.queues.any_queued()
    }

    /// Polls the reactor without blocking, unless another worker is already doing so. Returns
    /// whether it dispatched anything. Either way this worker is attending: it pushes the
    /// watch's alarm ahead (`idle/watch.rs`), which costs a syscall every half period at most.
    pub(crate) fn poll_driver(&self) -> bool {
        self.poll_driver_at(self.shared.policy.now()) == Some(true)
    }

    /// [`Worker::poll_driver`] at policy time `now` (a reading the caller took): `None` when
    /// it did not poll (no reactor, or another worker is polling it), else whether it
    /// dispatched anything.
    fn poll_driver_at(&self, now: Nanos) -> Option<bool> {
        self.shared.idle.attend(now);
        let mut polled = false;
        let n = self.shared.driver.try_poll(|| {
            polled = true;
            bump(&self.counters.driver_polls);
        });
        polled.then_some(n > 0)
    }

    /// The spin policy learns from the idle period that ended last, now that the work it
    /// found has run (or, for a `block_on` future, before the next period begins): see
    /// `idle::Ended`. Settling first in `idle` keeps the policy's periods in order.
    fn settle(&self) {
        if let Some(ended) = self.state.unsettled.take() {
            add(&self.counters.spin_nanos, self.shared.policy.settle(ended));
        }
    }

    /// An iteration of this worker's spin window, ending at `at`, took `took` (a suspicion
    /// that it lost its core): unless another of the runtime's workers is awake (it may be the
    /// thread that ran, on a CPU the workers share: that is the runtime's own work, not a
    /// neighbour), the policy weighs it (`idle/spin/contend.rs`). Returns whether parking
    /// now holds: then the window ends.
    fn lost_core(&self, at: Nanos, took: Duration) -> bool {
        !self.shared.idle.others_awake()
            && self.shared.policy.lost_core(at, took.as_nanos() as Nanos)
    }

    /// Out of work: spin, then park, until there is work (`Some`) or the runtime shuts down.
    /// One call is one idle period: the spin policy decides how it starts and learns, from
    /// how long it lasted, how the next ones should (see `idle/spin.rs`). That learning waits
    /// until the work found has run ([`Worker::settle`]): between a request's arrival and its
    /// handler there is only one clock read.
    pub(crate) fn idle(&self) -> Option<Work> {
        let shared = self.shared;
        let policy = &shared.policy;
        let counters = self.counters;
        self.settle();
        self.end_poll(false);
        let began = policy.now();
        self.end_busy(began);
        // Busy: another worker is awake or work is queued; the policy runs no park probe
        // then (it would measure the others, or queueing: idle/spin.rs, "When to probe").
        let busy = shared.idle.others_awake() || !shared.queues.injector_is_empty();
        // Whether the clients share our CPUs, which the policy cannot time (idle/spin.rs,
        // "Clients on our own CPUs"): an atomic load in the reactor.
        policy.clients_colocated(shared.driver.get().is_some_and(|d| d.clients_colocated()));
        let decision = policy.begin(began, self.state.index, busy);
        if decision.parks_by_choice() {
            bump(&counters.parked_by_choice);
        }
        let mut spinning = decision.spins() && shared.idle.try_start_spinning();
        let spun = spinning;
        // The period is over: work turned up at `at`, `window` into the spin window that
        // caught it, if one did. The worker polled the reactor while it spun, or was woken by
        // it (or to look at it).
        let found = |work: Work, at: Nanos, window: Option<Nanos>| {
            let ended = policy.ended(decision, spun, at, window);
            self.state.unsettled.set(Some(ended));
            self.state.last_driver_poll.set(coarse::now());
            self.state.busy_since.set(at);
            Some(work)
        };
        loop {
            if spinning {
                // After a wake-up, too, the worker spins this period's window (a period the
                // policy chose to park in scans once).
                let mut window = policy.start(decision);
                loop {
                    if let Some(work) = self.next_work() {
                        // One clock read: the window is charged when the period settles.
                        let t = Instant::now();
                        let spun_ns = window.elapsed_at(t).as_nanos() as Nanos;
                        if let Some(took) = window.suspicion(Some(t)) {
                            // It found the work on its return: somebody else may have run
                            // meanwhile.
                            self.lost_core(policy.at(t), took);
                        }
                        let woke = shared.idle.stop_spinning(
                            true,
                            || self.more_work_queued(),
                            || shared.unpark_driver(),
                        );
                        shared.count_wake(woke, Some(self.state.index));
                        bump(&counters.spins_found_work);
                        return found(work, policy.at(t), Some(spun_ns));
                    }
                    if shared.idle.is_shutdown() {
                        shared.idle.stop_spinning(false, || false, || {});
                        return None;
                    }
                    // The window's last clock reading serves the watch (one read per scan), and
                    // the late alarm of polls that deferred work and have all ended: it must
                    // not ring for them while this thread spins.
                    poll_end::thread_idle(window.last(), false);
                    let polled = match self.poll_driver_at(policy.at(window.last())) {
                        Some(true) => continue,
                        Some(false) => true,
                        None => false,
                    };
                    if !window.keep_spinning(polled) {
                        // A long iteration ends the window early only if it holds parking.
                        let held = window
                            .suspicion(None)
                            .is_some_and(|took| self.lost_core(policy.at(window.last()), took));
                        if held || window.expired() {
                            break;
                        }
                    }
                }
                let ns = window.elapsed().as_nanos() as Nanos;
                policy.spun(policy.now(), ns);
                add(&counters.spin_nanos, ns);
                shared.idle.stop_spinning(false, || false, || {});
                bump(&counters.spins_expired);
            }
            let driver = shared.driver.get();
            let mut drive = || {
                if let Some(d) = driver {
                    d.park();
                }
            };
            let drive: Option<&mut dyn FnMut()> = driver.map(|_| &mut drive as &mut dyn FnMut());
            if shared.identity.parking() {
                // The hook may wake this thread's own `block_on` future (an event loop that
                // drives the runtime in bursts), and then the park below returns at once:
                // give timers and I/O their turn first, or they would never get one.
                self.poll_driver();
            }
            // Nor while it parks.
            poll_end::thread_idle(Instant::now(), true);
            // Odd while parked, as tokio's park/unpark count.
            bump(&counters.park_unparks);
            let now = policy.now();
            // Beside a lost core (`idle/spin/contend.rs`) a parker drives if nobody does and
            // nobody spins, as tokio's first parker does: an awake worker may be off its CPU
            // for a whole slice, and events must not wait for it.
            let stuck = driver.is_some() && (policy.contended(now) || self.others_stuck());
            let parked = shared.idle.park(
                now,
                stuck,
                || self.next_work(),
                (|| self.more_work_queued(), || shared.unpark_driver()),
                drive,
                || shared.driver.get().is_some(),
            );
            bump(&counters.park_unparks);
            shared.identity.unparked();
            match parked {
                Parked::Work(work, woke) => {
                    shared.count_wake(woke, Some(self.state.index));
                    let now = policy.now();
                    shared.idle.attend(now);
                    return found(work, now, None);
                }
                Parked::Woken => {
                    bump(&counters.parks);
                    shared.idle.attend(policy.now());
                    spinning = true;
                }
                Parked::Shutdown => {
                    // Counted as a park: a worker parks for good when the runtime is idle at
                    // shutdown (at most one park too many if it saw the shutdown first).
                    bump(&counters.parks);
                    return None;
                }
                // Park again, now able to drive (`idle/mod.rs`, "The reactor may appear
                // late").
                Parked::DriverAppeared => spinning = false,
            }
        }
    }
}
