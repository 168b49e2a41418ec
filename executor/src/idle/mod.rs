//! The idle protocol: how a worker with nothing to do spins, then sleeps, and how work that
//! arrives later gets somebody to run it.
//!
//! One idea per file: this one holds [`Idle`] (the atomic word, the futex, and the argument
//! that no wake-up is lost); `word.rs` holds the word's layout and its transitions as pure
//! functions, tested exhaustively; `spin.rs` (and `spin/`) holds [`SpinPolicy`], the one
//! place that decides whether and how long an idle worker spins; `watch.rs` holds the dead
//! man's switch that keeps the reactor attended while a worker is stuck in a long poll, and
//! `alarm.rs` the timerfd it rings; `futex.rs` the futex; `sync.rs` picks std's or loom's
//! atomics; `loom_model.rs` exports the protocol over loom's models for `tests/loom_idle.rs`.
//! The watchdog thread that answers the alarm is the scheduler's (`scheduler/watchdog.rs`),
//! as is the worker loop that drives all this (`scheduler/worker.rs`).
//!
//! # Example
//!
//! The worker loop (`scheduler/worker.rs`) drives it like this (simplified):
//!
//! ```text
//! loop {
//!     if let Some(task) = find_work() { run(task); continue; }
//!     // Out of work: an idle period starts.
//!     let decision = policy.begin(now, worker, busy);
//!     let mut spinning = decision.spins() && idle.try_start_spinning();
//!     loop {
//!         if spinning {
//!             spin for decision's window: find_work(), poll the reactor without blocking
//!             found => idle.stop_spinning(true, more_work_queued, unpark_driver); run it
//!             window over => idle.stop_spinning(false, ..)
//!         }
//!         match idle.park(now, others_stuck, recheck = find_work,
//!                         drive = block in the reactor (if there is one), driver_appeared) {
//!             Parked::Work(task) => { idle.attend(now); run(task) }
//!             Parked::Woken => { idle.attend(now); spinning = true }  // counted as a spinner
//!             Parked::DriverAppeared => spinning = false,  // park again, able to drive
//!             Parked::Shutdown => exit,
//!         }
//!     }
//!     // Work found at t: ended = policy.ended(decision, spun, t, window); run it, then
//!     // policy.settle(ended), which learns as policy.end(decision, spun, d) would have.
//! }
//! // Every poll of the reactor, by a spinner or between tasks: idle.attend(now).
//! // A producer, after pushing a task anywhere: idle.notify(..) (which fences itself).
//! // The watchdog thread: while idle.wait_alarm() { idle.need_driver(); idle.rearm(..) }
//! ```
//!
//! # The idle word
//!
//! All idle state lives in one `AtomicU32` (laid out in `word.rs`: `sleepers`, `spinners`,
//! `WAKING`, `DRIVER`, `DRIVER_WAKING`, `SHUTDOWN`, `DRIVER_NEEDED`, and an epoch), so every
//! decision ("is
//! anybody looking for work?", "whom do I wake?") is a single compare-and-swap and is totally
//! ordered with every other. Each transition is a pure function from word to word; `Idle`
//! applies it with one CAS loop (`Idle::update`). At most 255 workers. A worker is *awake*
//! when it is neither counted in `sleepers` nor parked as the `DRIVER`. "Somebody is looking
//! for work" means `spinners > 0` or a `WAKING` / `DRIVER_WAKING` bit is set: that worker
//! will scan every queue before it parks.
//!
//! # Transitions
//!
//! * **Start spinning** (`try_start_spinning`): an awake worker out of work, whose spin
//!   policy says spin, adds itself to `spinners` if `spinners` plus pending wake-ups is below
//!   `max_spinners`. Otherwise it parks straight away, so on a small machine there are never
//!   all cores spinning.
//! * **Stop spinning** (`stop_spinning`): a spinner that found work, or whose window ran out,
//!   removes itself. If it found work, it then fences and looks again: if more work is queued
//!   behind what it took and nobody else is looking, it wakes one parked worker (**chain
//!   wake**): a burst is spread over the workers one wake-up at a time, and never with a
//!   thundering herd. A spinner that found a single request wakes nobody, which is what keeps
//!   a request/response server at zero context switches per request.
//! * **Park** (`park`): the worker *announces* itself (adds itself to `sleepers`, or, when a
//!   reactor exists and no driver does, and it is the last awake worker, or the watchdog set
//!   `DRIVER_NEEDED`, or it saw another worker stuck in a long poll while nobody spins,
//!   sets `DRIVER` and clears the flag), issues a `SeqCst` fence, and
//!   *re-checks every queue*. If that finds work it *un-announces* (taking a wake-up already
//!   decided for it, which is fungible) and runs it. Otherwise it brings the watch in line
//!   and blocks: on the futex with the exact value it announced, or in the reactor
//!   (`Driver::park`) as the driver.
//! * **Notify** (`notify`): a producer that made work visible (a spawn, a wake of a task)
//!   issues a `SeqCst` fence and reads the word. If somebody is looking for work, it does
//!   nothing: no syscall. Otherwise it *picks* one parked worker, in one CAS that bumps the
//!   epoch: the `DRIVER` first (clear it, set `DRIVER_WAKING`, unpark the reactor), else a
//!   futex sleeper (`sleepers -= 1`, set `WAKING`, `FUTEX_WAKE` one). Because the picked
//!   worker is counted as "looking" from that CAS on, the next producer does not wake
//!   another one: one wake-up per idle period, not one per task.
//! * **Claim**: a worker returning from the futex claims `WAKING` (clears it, becomes a
//!   spinner). `WAKING` is fungible between futex sleepers: if another one claims it first,
//!   this one is still counted in `sleepers` and simply waits again. Likewise the driver
//!   claims `DRIVER_WAKING`, or, when it returned on its own (I/O, a timer), clears `DRIVER`.
//! * **Need a driver** (`need_driver`, by the watchdog when nobody attended the reactor for a
//!   while although a worker is parked, and no driver is): sets `DRIVER_NEEDED` and, unless
//!   somebody is looking for work already, picks a futex sleeper to wake, in one CAS that
//!   bumps the epoch like any wake decision. The sleeper spins (polling the reactor), then
//!   parks as the driver. See "The driver" and `watch.rs`.
//! * **Shutdown** sets `SHUTDOWN` (which also changes the word, so no `FUTEX_WAIT` can block
//!   on an old value), then wakes every futex sleeper and the driver, and closes the watch.
//!
//! # The driver
//!
//! The driver is the worker blocked in the reactor: the kernel wakes it for I/O and it waits
//! for the earliest timer. The runtime needs one whenever a worker is idle and nobody else
//! attends the reactor; it must not have one blocked there while another worker spins,
//! because then every event would wake the parked thread for work the spinner picks up
//! itself (the context switch per request that spinning exists to save). So:
//!
//! * **The last worker to park drives**: when every other worker is counted in `sleepers`,
//!   nobody spins and nobody runs a task, and the parker blocks in the reactor.
//! * **A worker stuck in a poll is covered by the watch.** A worker that is awake is not
//!   necessarily attending the reactor: it may be running a task for seconds. Then the last
//!   parker was not the last awake worker, and parked on the futex. The watch (`watch.rs`)
//!   notices: every poll of the reactor pushes an alarm ahead, and when nobody has polled for
//!   half its period while a worker is parked, the watchdog sets `DRIVER_NEEDED` and wakes a
//!   futex sleeper. That worker spins (polling the reactor, running what turned up), then
//!   parks as the driver beside the busy worker. Events wait at most a period (4 ms by
//!   default) plus two wake-ups, instead of the whole long poll; timers are late by as much.
//!   Once a worker's poll has run past `Slots`' `stuck_after` (two ticks of the coarse clock,
//!   at least a period), a worker that parks while nobody spins sees it stuck (from the poll
//!   stamps) and drives at once: so a driver that returned for an event and ran what it
//!   brought parks as the driver again, without waiting for the watchdog.
//!   tokio instead lets the first parker drive; here that would make the parked driver and a
//!   spinner race for every event (the first comes back, the second gets the kernel's wake).
//!
//! The protocol keeps, and relies on:
//!
//! * **One driver**: `DRIVER` is set only by an announcing CAS that saw no driver (neither
//!   `DRIVER` nor `DRIVER_WAKING`), and cleared only by the driver itself or by the wake
//!   decision that picks it. `DRIVER_NEEDED` is never set beside a driver.
//! * **Its wake-up reaches it**: [`crate::Driver::unpark`] makes the current or next `park`
//!   return whatever other workers `poll` meanwhile (spinpark-net waits in `poll(2)` on the
//!   epoll fd plus a private eventfd that no `epoll_wait` collects). A wake-up that a
//!   spinner's zero-timeout poll could consume would break this: the driver, woken for
//!   nothing, blocks again, and a `DRIVER_WAKING` that is never claimed stops every later
//!   `notify` (the loom suite's `shared_wake_*` models show exactly that). A futex sleeper
//!   whose re-check finds work un-announces and runs it, and may then spin and poll the
//!   reactor beside a parked driver; that is allowed, and is why this matters.
//! * **It waits for the earliest timer**: while it is parked, every other worker may end up
//!   on the futex, so nobody else will be awake when a timer is due. The reactor unparks it,
//!   through the same wake-up, when a timer is registered with an earlier deadline than the
//!   one it waits for.
//! * **A parked worker is never left unattended for long**: whenever some worker is parked
//!   and another is not, the watch's alarm is armed (changes of the parked count bring it in
//!   line under a lock, with the `SeqCst` argument in `watch.rs`), and only a poll of the
//!   reactor pushes it; so within a period of the last poll either the reactor is polled
//!   again, a driver is parked, or the watchdog wakes a sleeper to become one. The
//!   `busy_worker_*` loom models check that a timer is delivered beside a worker that never
//!   returns, and fail without the watchdog.
//!
//! Preferring the driver when waking keeps the time it spends blocked beside awake workers
//! short: once a worker is awake it polls the reactor itself (without blocking) while it
//! spins, and a thread blocked in the reactor beside it would be woken by the kernel for
//! events that the spinner is about to pick up anyway.
//!
//! # Why no wake-up is lost
//!
//! The danger is the classic one: a worker checks the queues, finds them empty, and goes to
//! sleep just as a producer pushes a task and sees nobody to wake. Both sides follow the same
//! shape, a store, a `SeqCst` fence, then a load:
//!
//! ```text
//! worker:   announce on the word (RMW)  ; fence(SeqCst) ; load the queues
//! producer: push onto a queue (store)   ; fence(SeqCst) ; load the word
//! ```
//!
//! The two fences are totally ordered. If the worker's fence comes first, the producer's load
//! of the word sees the announcement (or a later value), so the producer picks a parked worker
//! and changes the word; the worker then either sees the changed value and never blocks (the
//! futex compares the value atomically with going to sleep) or is already blocked and receives
//! the `FUTEX_WAKE` / reactor unpark, which is issued after the change (and, for the driver,
//! reaches it whatever other workers poll: see "The driver"). If the producer's fence
//! comes first, the worker's re-check sees the pushed task. Either way the task is run. The
//! epoch makes every wake decision change the word, so the value the sleeper announced is
//! never seen again by its own `FUTEX_WAIT` once a producer has acted on it.
//!
//! A producer that saw `spinners > 0` relied on a spinner, which ends in one of two ways:
//!
//! * **It gives up**: it removes itself, then parks, which announces, fences and re-checks:
//!   the argument above, with the spinner as the worker. If the re-check finds work, the
//!   worker takes one task (with a batch: half of a queue, the injector's included) and may
//!   leave the producer's behind; so it looks again once it is out (below).
//! * **It found work**: it removes itself (a store), fences, then loads the queues to decide
//!   the chain wake: the same store / fence / load shape. If its fence comes first, the
//!   producer's load sees it gone and wakes somebody (unless another worker is looking, who
//!   is then relied on in turn); if the producer's comes first, the spinner sees the pushed
//!   task queued and wakes somebody for it. The spinner used to read "more work
//!   queued" *before* removing itself: a task pushed in between was not lost (the spinner
//!   would find it after the task it took) but waited behind that task, however long it ran,
//!   while other workers slept. The re-check after the removal costs a fence and two loads
//!   per idle period that found work; the `found_work_then_more_queued` loom model checks it
//!   (and `more_read_before_the_cas_strands_work` shows the model catches the old order).
//!
//! A parker whose re-check found work may have been relied on twice over: as the spinner it
//! was until its window ran out (a producer that saw it spinning woke nobody), and through a
//! `WAKING` (or `DRIVER_WAKING`) that it takes in its un-announcement (`Word::unannounce`): a
//! producer that saw the wake-up pending woke nobody either. Its re-check takes one task, or
//! half of a queue (crossbeam's batch steal), and leaves the rest. So after the
//! un-announcement (a change of the word) it fences, looks at every queue once more, and
//! wakes one parked worker if anything is queued, as a spinner that found work does.
//! Without that, tasks spawned at once could be left in the injector, behind a task that
//! blocks the worker that took the first, with the others asleep, for good: the watchdog
//! looks only behind stuck workers (tokio's `yield_defers_until_park` hung this way: two
//! spinners gave up, their re-checks took one task each from the injector, and the third
//! stayed there; the `spinner_gave_up_then_its_recheck_found_work` and
//! `parker_took_the_wake_up_then_more_queued` loom models, and their twins that do not
//! look again, which deadlock).
//!
//! ## Every queue
//!
//! "The queues" in this argument are every place a worker other than the pusher may take a
//! task from: the injector and every worker's local queue (the LIFO slot is the exception:
//! its owner runs it next, and once the owner's poll has run long the watchdog and the stuck
//! LIFO steal take over, `scheduler/lifo.rs`). Every re-check reads them all, because the
//! task a producer left to a looker may be in any of them by the time the looker stops: in a
//! busy worker's queue (its push saw a spinner and woke nobody), or in the queue of a worker
//! that took half of a burst from the injector while the looker took the rest. If the looker
//! read only its own queue and the injector, that task would wait behind the busy worker's
//! task, which may block for seconds, while the other workers sleep: of tasks spawned at once
//! from `block_on`, each of which blocks its worker, one waited until the watchdog saw the
//! worker stuck (`tests/spread.rs`).
//!
//! Tasks also move between queues: a worker that takes a batch (from the injector, or half
//! of a peer's queue) runs one and keeps the rest in its own queue, and a LIFO task that
//! waited too long goes behind the queue. The batch leaves the old queue before it appears
//! in the new one, so a looker's re-check can miss it in flight. So a move is a push like any
//! other: a worker that is not looking (a busy worker between tasks) notifies when a move
//! left tasks in its queue (push, fence, load of the word), and a worker that is looking (a
//! spinner, or a parker in its re-check) counts them in its own re-check when it stops
//! looking. The argument above then holds for the last queue each task landed in, and so:
//! **no task waits in a queue while a worker sleeps and nobody is looking**; whatever the
//! worker that holds the queue then runs, however long, another worker comes for the task.
//! The `batch_taken_then_more_queued` and `batch_moved_while_the_spinner_looks` loom models
//! check it, and their twins that read fewer queues, or do not notify after a move, strand
//! the task.
//!
//! None of this adds a wake-up where nobody would miss it: a worker is woken only when a task
//! is queued, nobody is looking, and a worker is parked, which is exactly when a task pushed
//! from outside would wake one; a re-check costs a fence and two loads per queue, once per
//! idle period that found work, and a move costs a fence and a load of the word.
//!
//! # The reactor may appear late
//!
//! A runtime gets its reactor when the first socket or timer is made, which may be after
//! every worker parked: those parked on the futex, since nobody could drive. The installer
//! stores the reactor, fences, and notifies (`notify`'s fence, load of the word), so a
//! parked worker gets up, spins, and the last one to park again drives. A worker that had
//! looked for the reactor before it was stored, and announces after the installer's notify
//! read the word, is the same race with the reactor's slot in place of a queue: the
//! installer saw nobody to wake (or a spinner, this very worker, about to park), and the
//! worker, finding no work, would sleep on the futex with no driver; nothing polls epoll or
//! fires a timer again (a server's listener is never accepted from). So the parker, after its
//! fence, loads the slot again when it announced unable to drive; if the reactor is there it
//! un-announces and parks again, able to drive. Store / fence / load on both sides, as above.
//! The `driver_installed_while_the_last_worker_parks` loom model checks it, and its twin
//! without the second look deadlocks.
//!
//! The fences cost a full barrier on each side (on x86 the RMW already is one, and the fence is
//! nearly free). Plain `Acquire`/`Release` would not do: both sides store then load different
//! locations, which only sequential consistency orders.
//!
//! The protocol is model-checked with `loom` (`tests/loom_idle.rs`, with `--cfg loom`, where
//! the futex is replaced by [`crate::futex`]'s model, the alarm by `alarm.rs`'s and the
//! reactor by a model of its wake-up and timers, including workers that poll it beside a
//! parked driver and a worker that never returns from a task), its transitions are checked
//! over every reachable word in `word.rs`'s tests, and it is stress-tested with real threads
//! (`tests/stress.rs`, `tests/liveness.rs`).

mod alarm;
mod futex;
#[cfg(loom)]
pub mod loom_model;
#[cfg_attr(loom, allow(dead_code))]
mod spin;
mod spinning;
mod sync;
mod watch;
mod word;

#[cfg(not(loom))]
pub(crate) use alarm::SysAlarm;
#[cfg(not(loom))]
pub(crate) use futex::SysFutex;
#[cfg_attr(loom, allow(unused_imports))]
pub(crate) use spin::{Decided, Ended, Nanos, SpinPolicy};
pub(crate) use word::{Woke, MAX_WORKERS};

pub(crate) use alarm::Alarm;
use futex::Futex;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::time::Duration;
use sync::{fence, AtomicU32};
use watch::Watch;
use word::{Claim, Word};

/// How long nobody may attend the reactor, while a worker is parked, before the watchdog
/// wakes one to drive it (at least half of this passes first; see `watch.rs`). Events that
/// arrive while every awake worker is stuck in a long poll wait at most about this long.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) const WATCH_PERIOD: Duration = Duration::from_millis(4);

/// How a call to [`Idle::park`] ended.
#[derive(Debug)]
pub(crate) enum Parked<T> {
    /// The re-check after announcing found this work; the worker never blocked. The `Woke`
    /// is whom it then woke for the work still queued (for the worker's metrics, which the
    /// loom models leave out).
    Work(T, #[cfg_attr(loom, allow(dead_code))] Woke),
    /// The worker blocked and was woken (or the reactor returned); it is now a spinner.
    Woken,
    /// The runtime is shutting down.
    Shutdown,
    /// The caller parked unable to drive (no reactor yet) and, after announcing, saw that a
    /// reactor now exists: it un-announced and must park again, able to drive. See "The
    /// reactor may appear late".
    DriverAppeared,
}

/// The shared idle state of one runtime's workers, its watch, and its shutdown. See the
/// module docs.
pub(crate) struct Idle<F: Futex, A: Alarm> {
    word: AtomicU32,
    futex: F,
    watch: Watch<A>,
    workers: u32,
    max_spinners: u32,
}

impl<F: Futex, A: Alarm> Idle<F, A> {
    /// Idle state for `workers` workers (at most [`MAX_WORKERS`]), of which at most
    /// `max_spinners` spin at once, watched with `alarm` over `period` (see `watch.rs`).
    pub(crate) fn new(
        futex: F,
        alarm: A,
        period: Duration,
        workers: usize,
        max_spinners: usize,
    ) -> Self {
        assert!((1..=MAX_WORKERS).contains(&workers));
        Self {
            word: AtomicU32::new(Word::EMPTY.0),
            futex,
            watch: Watch::new(alarm, period),
            workers: workers as u32,
            max_spinners: max_spinners.clamp(1, workers) as u32,
        }
    }

    fn current(&self) -> Word {
        // SeqCst: the watch's argument ("Why no change is lost" in `watch.rs`).
        Word(self.word.load(SeqCst))
    }

    /// A worker polled the reactor, or it just parked or woke: keeps the watch in line (see
    /// `watch.rs`). Two loads and a compare unless the alarm needs setting.
    pub(crate) fn attend(&self, now: Nanos) {
        self.watch.attend(now, self.workers, || self.current());
    }

    /// The watchdog thread: blocks until the watch's alarm rings (`true`) or the runtime
    /// shuts down (`false`).
    pub(crate) fn wait_alarm(&self) -> bool {
        self.watch.wait()
    }

    /// The watchdog, after the alarm rang (nobody polled the reactor for half a period while
    /// a worker was parked): asks for a driver, waking a futex sleeper to become it unless
    /// somebody is already looking for work or a driver is parked. Returns whom it woke.
    pub(crate) fn need_driver(&self) -> Woke {
        let woke = self.update(|w| w.need_driver().ok_or(Woke::Nobody));
        if woke == Woke::Sleeper {
            self.futex.wake(&self.word, 1);
        }
        woke
    }

    /// Whether the watch is wanted now (some worker parked, another not): an alarm that
    /// rings otherwise was left armed on purpose (`watch.rs`) and asks for nothing.
    pub(crate) fn watch_wanted(&self) -> bool {
        self.current().wants_watch(self.workers)
    }

    /// The watch's alarm (for the loom model).
    #[cfg(loom)]
    pub(crate) fn alarm(&self) -> &A {
        self.watch.alarm()
    }

    /// The watchdog: arms the alarm to ring `after` from `now` if the watch is still wanted
    /// (some worker parked, another not), else disarms it.
    pub(crate) fn rearm(&self, now: Nanos, after: Duration) {
        self.watch
            .rearm(now, after, self.workers, || self.current());
    }

    /// The one compare-and-swap loop: `step` maps the current word to `Ok((new, r))` to
    /// install `new` and return `r`, or to `Err(r)` to return `r` leaving the word alone.
    /// `step` is pure (see `word.rs`) and may run several times.
    fn update<R>(&self, mut step: impl FnMut(Word) -> Result<(Word, R), R>) -> R {
        // SeqCst (on x86 and ARM the same instruction as Acquire): a caller that returns
        // without writing (`Err`) acts on what it read (shutdown, "not picked", "somebody is
        // looking"), so it must see what was published before that value; and reading the
        // latest value in the total order saves the model checker from exploring stale reads
        // that only make the CAS below fail and retry.
        let mut cur = self.word.load(SeqCst);
        loop {
            match step(Word(cur)) {
                Err(r) => return r,
                Ok((new, r)) => {
                    // SeqCst: every change of the word (announcements, removals of spinners,
                    // wake decisions) is part of the single total order with the producers'
                    // and parkers' fences that "Why no wake-up is lost" relies on.
                    match self.word.compare_exchange_weak(cur, new.0, SeqCst, SeqCst) {
                        Ok(_) => return r,
                        Err(actual) => cur = actual,
                    }
                }
            }
        }
    }

    /// An awake worker ran out of work: may it spin? On `true` it is counted as a spinner and
    /// must later call [`Idle::stop_spinning`].
    pub(crate) fn try_start_spinning(&self) -> bool {
        let max = self.max_spinners;
        self.update(|w| w.start_spinning(max).map(|n| (n, true)).ok_or(false))
    }

    /// A spinner stops spinning: it `found_work`, or its window ran out. When it found work,
    /// it then re-checks `more_work` (is anything queued behind what it took?) and, if so,
    /// wakes one parked worker unless somebody else is looking (the chain wake);
    /// `unpark_driver` is called if that is the worker blocked in the reactor. The re-check
    /// comes after the removal so that a producer that relied on this spinner is never left
    /// waiting behind the task it took (see "Why no wake-up is lost").
    pub(crate) fn stop_spinning(
        &self,
        found_work: bool,
        more_work: impl FnOnce() -> bool,
        unpark_driver: impl FnOnce(),
    ) -> Woke {
        self.update(|w| Ok((w.stop_spinning(), ())));
        if !found_work {
            // It parks next, and the announcement re-checks every queue.
            return Woke::Nobody;
        }
        self.stopped_looking(more_work, unpark_driver)
    }

    /// A worker that was relied on to look for work (a spinner, or a parker that took a
    /// wake-up in its un-announcement) has just stopped looking, with work in hand, by a
    /// change of the word: if `more_work` is queued anywhere, it wakes one parked worker
    /// unless somebody else is looking (see "Why no wake-up is lost").
    fn stopped_looking(
        &self,
        more_work: impl FnOnce() -> bool,
        unpark_driver: impl FnOnce(),
    ) -> Woke {
        // SeqCst fence: the change of the word (a store) just before, then this fence, then
        // the loads of the queues, against a producer's push, fence, load of the word.
        fence(SeqCst);
        if !more_work() {
            return Woke::Nobody;
        }
        self.wake_one(unpark_driver)
    }

    /// A producer made work visible (pushed a task onto any queue). Wakes one parked worker
    /// unless somebody is already looking for work. Issues the `SeqCst` fence between the
    /// caller's push and its read of the word itself: the caller issues none.
    pub(crate) fn notify(&self, unpark_driver: impl FnOnce()) -> Woke {
        // SeqCst fence: pairs with the fence in `park` after the announcement (and the one in
        // `stop_spinning` after a removal); see "Why no wake-up is lost".
        fence(SeqCst);
        self.wake_one(unpark_driver)
    }

    /// The wake decision and its delivery; the caller has fenced.
    fn wake_one(&self, unpark_driver: impl FnOnce()) -> Woke {
        let woke = self.update(|w| w.pick().ok_or(Woke::Nobody));
        match woke {
            Woke::Nobody => {}
            Woke::Sleeper => self.futex.wake(&self.word, 1),
            Woke::Driver => unpark_driver(),
        }
        woke
    }

    /// Parks the calling worker, which is awake and not spinning.
    ///
    /// `recheck` scans every queue once after the announcement; if it finds work, the worker
    /// un-announces, then looks at every queue once more (the pair's `more_work`) and wakes
    /// one parked worker for what is still queued, as a spinner that found work does (the
    /// pair's `unpark_driver` if that is the driver; the `Woke` in [`Parked::Work`] says
    /// whom). `drive`, when given, blocks in
    /// the reactor until an event, a timer, or an unpark; the worker uses it only when it is
    /// the last awake worker, the watchdog asked for a driver, or `others_stuck` (it saw
    /// another worker stuck in a long poll) while nobody spins; otherwise it sleeps on the
    /// futex. `now` is the policy clock, for the watch. A worker that returns awake (`Work`,
    /// `Woken`) calls [`Idle::attend`] next. When `drive` is `None`, `driver_appeared` is
    /// asked after the announcement whether a reactor exists now; if so the worker
    /// un-announces and returns [`Parked::DriverAppeared`] to park again with it.
    pub(crate) fn park<T>(
        &self,
        now: Nanos,
        others_stuck: bool,
        mut recheck: impl FnMut() -> Option<T>,
        (more_work, unpark_driver): (impl FnOnce() -> bool, impl FnOnce()),
        mut drive: Option<&mut dyn FnMut()>,
        driver_appeared: impl FnOnce() -> bool,
    ) -> Parked<T> {
        let (workers, can_drive) = (self.workers, drive.is_some());
        // Announce: one CAS that adds us to `sleepers` or makes us the driver.
        let step = |w: Word| w.announce(workers, can_drive, others_stuck);
        let Some((announced, as_driver)) = self.update(|w| match step(w) {
            Some((new, d)) => Ok((new, Some((new, d)))),
            None => Err(None),
        }) else {
            return Parked::Shutdown;
        };
        // SeqCst fence: orders the announcement before the re-check's loads of the queues,
        // against the producer's push / fence / load of the word.
        fence(SeqCst);
        if let Some(work) = recheck() {
            self.update(|w| Ok((w.unannounce(as_driver), ())));
            // Producers may have left work to this worker (the spinner it was until its
            // window ran out, or the wake-up its un-announcement took), and the re-check took
            // one task or half a queue: it must not run that and leave the rest queued while
            // the others sleep. See "Why no wake-up is lost".
            let woke = self.stopped_looking(more_work, unpark_driver);
            return Parked::Work(work, woke);
        }
        // The same fence orders the announcement before this load of the reactor's slot,
        // against the installer's store / fence / load of the word: if we were the worker
        // that should drive, either the installer sees us announced and wakes somebody, or we
        // see its reactor here (see "The reactor may appear late").
        if drive.is_none() && driver_appeared() {
            self.update(|w| Ok((w.unannounce(as_driver), ())));
            return Parked::DriverAppeared;
        }
        // Parked for real: arm the watch if another worker is awake, disarm it if every
        // worker is now parked (one of them as the driver).
        self.attend(now);

        if as_driver {
            if let Some(drive) = drive.as_mut() {
                drive();
            }
            // Returned on its own, or picked: either way claim and become a spinner.
            return match self.update(|w| w.claim_driver().map(|n| (n, true)).ok_or(false)) {
                true => Parked::Woken,
                false => Parked::Shutdown,
            };
        }

        // A futex sleeper: wait on the exact value we announced, then try to claim WAKING.
        let mut expected = announced;
        loop {
            self.futex.wait(&self.word, expected.0);
            let claimed = self.update(|w| match w.claim_sleeper() {
                Claim::Woken(new) => Ok((new, Ok(Parked::Woken))),
                Claim::Shutdown => Err(Ok(Parked::Shutdown)),
                // Spurious, or another sleeper claimed the wake-up first. We are still
                // counted in `sleepers` (sleepers + WAKING = futex waiters), so wait on the
                // current value: any later wake decision changes it.
                Claim::NotPicked => Err(Err(w)),
            });
            match claimed {
                Ok(parked) => return parked,
                Err(now) => {
                    debug_assert!(now.sleepers() > 0, "a futex sleeper must be counted");
                    expected = now;
                }
            }
        }
    }

    /// Stops the protocol: nobody parks any more, and every parked worker is woken. Calls
    /// `unpark_driver` so a worker blocked in the reactor returns too.
    pub(crate) fn shutdown(&self, unpark_driver: impl FnOnce()) {
        // The CAS is SeqCst, ordered with every announcement: a worker either sees SHUTDOWN
        // before it blocks or is already blocked and gets the wake below.
        self.update(|w| Ok((w.shutdown(), ())));
        self.futex.wake(&self.word, u32::MAX);
        unpark_driver();
        self.watch.close();
    }

    /// Whether [`Idle::shutdown`] was called.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn is_shutdown(&self) -> bool {
        // Acquire: a worker that sees SHUTDOWN stops; nothing else is read through this.
        Word(self.word.load(Acquire)).is_shutdown()
    }

    /// Whether a worker other than the caller (an awake worker) is awake: neither counted in
    /// `sleepers` nor parked as the driver. A hint for the spin policy's probes only.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn others_awake(&self) -> bool {
        // Relaxed: a hint; a stale answer only moves one probe by a period.
        let w = Word(self.word.load(Relaxed));
        w.sleepers() + w.driver_parked() as u32 + 1 < self.workers
    }

    /// A snapshot for metrics and tests: (sleepers, spinners, driver parked).
    pub(crate) fn snapshot(&self) -> (u32, u32, bool) {
        // Relaxed: a statistic.
        let w = Word(self.word.load(Relaxed));
        (w.sleepers(), w.spinners(), w.driver_parked())
    }
}
