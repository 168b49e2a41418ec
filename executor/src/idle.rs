//! The idle protocol: how a worker with nothing to do spins, then sleeps, and how work that
//! arrives later gets somebody to run it.
//!
//! Everything a reader needs to check the protocol is in this file: the state word, the
//! transitions, the spin policy, and the argument that no wake-up is lost.
//!
//! # Example
//!
//! The worker loop (`worker.rs`) drives it like this (simplified):
//!
//! ```text
//! loop {
//!     if let Some(task) = find_work() { run(task); continue; }
//!     // Out of work.
//!     if sleepers.try_start_spinning() {
//!         spin for policy.window: find_work(), poll the reactor without blocking
//!         found => sleepers.stop_spinning(true, more_work, ..); run it
//!         window over => sleepers.stop_spinning(false, ..)
//!     }
//!     match sleepers.park(recheck = find_work, drive = block in the reactor) {
//!         Parked::Work(task) => run(task),
//!         Parked::Woken => go spin (we are already counted as a spinner),
//!         Parked::Shutdown => exit,
//!     }
//! }
//! // A producer, after pushing a task anywhere: fence(SeqCst); sleepers.notify(..)
//! ```
//!
//! # The sleepers word
//!
//! All idle state lives in one `AtomicU32`, so every decision ("is anybody looking for work?",
//! "whom do I wake?") is a single compare-and-swap and is totally ordered with every other:
//!
//! | bits  | field           | meaning |
//! |-------|-----------------|---------|
//! | 0-7   | `sleepers`      | workers parked on the futex (on this very word) |
//! | 8-15  | `spinners`      | workers spinning: awake, out of work, looking for more |
//! | 16    | `WAKING`        | a futex sleeper has been picked to wake and has not yet claimed it |
//! | 17    | `DRIVER`        | one worker is parked in the reactor (`Driver::park`), not on the futex |
//! | 18    | `DRIVER_WAKING` | that worker has been picked to wake and has not yet claimed it |
//! | 19    | `SHUTDOWN`      | the runtime is stopping; nobody parks any more |
//! | 20-31 | epoch           | bumped by every wake decision, so a sleeper that announced itself before that decision never blocks on the value it announced (no ABA) |
//!
//! Hence at most 255 workers. A worker is *awake* when it is neither counted in `sleepers`
//! nor parked as the `DRIVER`. "Somebody is looking for work" means `spinners > 0` or a
//! `WAKING` / `DRIVER_WAKING` bit is set: that worker will scan every queue before it parks.
//!
//! # Transitions
//!
//! * **Start spinning** (`try_start_spinning`): an awake worker out of work adds itself to
//!   `spinners` if `spinners` plus pending wake-ups is below `max_spinners`. Otherwise it parks
//!   straight away, so on a small machine there are never all cores spinning.
//! * **Stop spinning** (`stop_spinning`): a spinner that found work, or whose window ran out,
//!   removes itself. If it found work, was the *last* spinner, and sees more work queued behind
//!   what it took, it wakes one sleeper (**chain wake**): a burst is spread over the workers
//!   one wake-up at a time, and never with a thundering herd. A spinner that found a single
//!   request wakes nobody, which is what keeps a request/response server at zero context
//!   switches per request.
//! * **Park** (`park`): the worker *announces* itself (adds itself to `sleepers`, or, when it
//!   is the last awake worker and a reactor exists, sets `DRIVER`), issues a `SeqCst` fence,
//!   and *re-checks every queue*. Only if that finds nothing does it block: on the futex with
//!   the exact value it announced, or in the reactor (`Driver::park`) as the driver.
//! * **Notify** (`notify`): a producer that made work visible (a spawn, a wake of a task)
//!   issues a `SeqCst` fence and reads the word. If somebody is looking for work, it does
//!   nothing: no syscall. Otherwise it picks one parked worker, in one CAS that bumps the
//!   epoch: the `DRIVER` first (clear it, set `DRIVER_WAKING`, write the reactor's eventfd),
//!   else a futex sleeper (`sleepers -= 1`, set `WAKING`, `FUTEX_WAKE` one). Because the
//!   picked worker is counted as "looking" from that CAS on, the next producer does not wake
//!   another one: one wake-up per idle period, not one per task.
//! * **Claim**: a worker returning from the futex claims `WAKING` (clears it, becomes a
//!   spinner). `WAKING` is fungible between futex sleepers: if another one claims it first,
//!   this one is still counted in `sleepers` and simply waits again. Likewise the driver
//!   claims `DRIVER_WAKING`, or, when it returned on its own (I/O, a timer), clears `DRIVER`.
//!
//! # The driver
//!
//! A worker announces itself as the driver only when every other worker is counted in
//! `sleepers`, so there is at most one (`DRIVER` or `DRIVER_WAKING` is set). That does *not*
//! mean every other worker sleeps while the driver is blocked: a futex sleeper whose re-check
//! finds work un-announces and runs it, and may then spin, poll the reactor, register timers
//! and park on the futex again (it is not the last: the driver is not counted in `sleepers`),
//! all while the driver stays blocked in the reactor. What the protocol keeps, and relies on:
//!
//! * **One driver**: `DRIVER` is set only by a CAS that saw every other worker in `sleepers`,
//!   and cleared only by the driver itself or by the wake decision that picks it.
//! * **Its wake-up reaches it**: [`crate::Driver::unpark`] makes the current or next `park`
//!   return whatever other workers `poll` meanwhile. A wake-up that a spinner's zero-timeout
//!   poll could consume (spinpark-net's eventfd in the shared epoll set, before issue 9) breaks
//!   this: the driver, woken for nothing, blocks again, and a `DRIVER_WAKING` that is never
//!   claimed stops every later `notify`.
//! * **It waits for the earliest timer**: while it is parked, every other worker ends up on the
//!   futex, so nobody else will be awake when a timer is due. The reactor unparks it, through
//!   the same wake-up, when a timer is registered with an earlier deadline than the one it
//!   waits for.
//!
//! Preferring the driver when waking keeps the time it spends blocked beside awake workers
//! short: once a worker is awake it polls the reactor itself (without blocking) while it
//! spins, and a thread blocked in the reactor beside it would be woken by the kernel for
//! events that the spinner is about to pick up anyway.
//!
//! # The spin policy
//!
//! [`SpinPolicy`] is the one place that decides how a spinner spends its window. Each iteration
//! scans the queues and polls the reactor; every 32nd iteration yields the core
//! (`sched_yield`) so a client thread that shares it is not starved. If an iteration took more
//! than 50 µs, the spinner lost its core to another thread (the yield ran somebody, or it was
//! preempted). The core is wanted, so the window ends and the spinner parks. That makes
//! spinning self-limiting when the machine is busy. A window of zero means one scan, then park.
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
//! the `FUTEX_WAKE` / eventfd write, which is issued after the change (and, for the driver,
//! reaches it whatever other workers poll: see "The driver"). If the producer's fence
//! comes first, the worker's re-check sees the pushed task. Either way the task is run. The
//! same argument covers a producer that saw `spinners > 0` and relied on that spinner: a
//! spinner that gives up removes itself and then parks, which announces, fences and re-checks.
//! The epoch makes every wake decision change the word, so the value the sleeper announced is
//! never seen again by its own `FUTEX_WAIT` once a producer has acted on it.
//!
//! The fences cost a full barrier on each side (on x86 the RMW already is one, and the fence is
//! nearly free). Plain `Acquire`/`Release` would not do: both sides store then load different
//! locations, which only sequential consistency orders.
//!
//! Shutdown sets `SHUTDOWN` (which also changes the word, so no `FUTEX_WAIT` can block on an
//! old value), then wakes every futex sleeper and the driver.
//!
//! The protocol is model-checked with `loom` (`tests/loom_idle.rs`, with `--cfg loom`, where
//! the futex is replaced by [`crate::futex`]'s model and the reactor by a model of its
//! wake-up and timers, including workers that poll it beside a parked driver) and
//! stress-tested with real threads.

use std::time::{Duration, Instant};

use crate::futex::Futex;
use crate::sync::{fence, AtomicU32};
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};

const ONE_SLEEPER: u32 = 1;
const SLEEPERS_MASK: u32 = 0xff;
const ONE_SPINNER: u32 = 1 << 8;
const SPINNERS_SHIFT: u32 = 8;
const WAKING: u32 = 1 << 16;
const DRIVER: u32 = 1 << 17;
const DRIVER_WAKING: u32 = 1 << 18;
const SHUTDOWN: u32 = 1 << 19;
const EPOCH_ONE: u32 = 1 << 20;

/// The most workers the word can count.
pub(crate) const MAX_WORKERS: usize = SLEEPERS_MASK as usize;

fn sleepers(w: u32) -> u32 {
    w & SLEEPERS_MASK
}
fn spinners(w: u32) -> u32 {
    (w >> SPINNERS_SHIFT) & 0xff
}
/// Somebody awake will scan every queue before it parks.
fn someone_looking(w: u32) -> bool {
    spinners(w) > 0 || w & (WAKING | DRIVER_WAKING) != 0
}
fn bump_epoch(w: u32) -> u32 {
    w.wrapping_add(EPOCH_ONE)
}

/// Who a wake decision picked, so the caller can tell the reactor (the futex is woken here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// Nobody: somebody is already looking for work, or nobody sleeps.
    Nobody,
    /// A futex sleeper; `FUTEX_WAKE` was issued.
    Sleeper,
    /// The worker blocked in the reactor; the caller must unpark the reactor.
    Driver,
}

/// How a call to [`Sleepers::park`] ended.
#[derive(Debug)]
pub(crate) enum Parked<T> {
    /// The re-check after announcing found this work; the worker never blocked.
    Work(T),
    /// The worker blocked and was woken (or the reactor returned); it is now a spinner.
    Woken,
    /// The runtime is shutting down.
    Shutdown,
}

/// The shared idle state of one runtime's workers. See the module documentation.
pub(crate) struct Sleepers<F: Futex> {
    word: AtomicU32,
    futex: F,
    workers: u32,
    max_spinners: u32,
}

impl<F: Futex> Sleepers<F> {
    /// Idle state for `workers` workers (at most [`MAX_WORKERS`]), of which at most
    /// `max_spinners` spin at once.
    pub(crate) fn new(futex: F, workers: usize, max_spinners: usize) -> Self {
        assert!((1..=MAX_WORKERS).contains(&workers));
        Self {
            word: AtomicU32::new(0),
            futex,
            workers: workers as u32,
            max_spinners: max_spinners.clamp(1, workers) as u32,
        }
    }

    /// An awake worker ran out of work: may it spin? On `true` it is counted as a spinner and
    /// must later call [`Sleepers::stop_spinning`].
    pub(crate) fn try_start_spinning(&self) -> bool {
        // Relaxed: this only reads a count to decide whether to join it; the CAS below is what
        // publishes "I am looking", and a stale read only makes us retry or park.
        let mut cur = self.word.load(Relaxed);
        loop {
            let pending = ((cur & (WAKING | DRIVER_WAKING)) != 0) as u32;
            if cur & SHUTDOWN != 0 || spinners(cur) + pending >= self.max_spinners {
                return false;
            }
            // SeqCst: joins the single total order with the producers' fences (see `notify`).
            match self
                .word
                .compare_exchange_weak(cur, cur + ONE_SPINNER, SeqCst, Relaxed)
            {
                Ok(_) => return true,
                Err(actual) => cur = actual,
            }
        }
    }

    /// A spinner stops spinning: it `found_work`, or its window ran out. When it found work,
    /// is the last spinner, and `more_work` is queued behind what it took, one parked worker is
    /// woken to take the rest (the chain wake). `unpark_driver` is called if that is the
    /// worker blocked in the reactor.
    pub(crate) fn stop_spinning(
        &self,
        found_work: bool,
        more_work: bool,
        unpark_driver: impl FnOnce(),
    ) -> Woke {
        let mut cur = self.word.load(Relaxed);
        loop {
            debug_assert!(spinners(cur) > 0, "stop_spinning without spinning");
            let mut new = cur - ONE_SPINNER;
            let mut woke = Woke::Nobody;
            if found_work && more_work && !someone_looking(new) && new & SHUTDOWN == 0 {
                (new, woke) = Self::pick(new);
            }
            // SeqCst: a spinner that gives up parks next, and that announcement must be ordered
            // after this removal; a chain wake is a wake decision like `notify`'s.
            match self.word.compare_exchange_weak(cur, new, SeqCst, Relaxed) {
                Ok(_) => {
                    self.deliver(woke, unpark_driver);
                    return woke;
                }
                Err(actual) => cur = actual,
            }
        }
    }

    /// A producer made work visible (pushed a task onto any queue). Wakes one parked worker
    /// unless somebody is already looking for work. The caller must have issued
    /// `fence(SeqCst)` between the push and this call (`notify` does it itself).
    pub(crate) fn notify(&self, unpark_driver: impl FnOnce()) -> Woke {
        // SeqCst fence: pairs with the fence in `park` after the announcement; see "Why no
        // wake-up is lost" in the module docs.
        fence(SeqCst);
        let mut cur = self.word.load(Relaxed);
        loop {
            if someone_looking(cur) || cur & SHUTDOWN != 0 {
                return Woke::Nobody;
            }
            let (new, woke) = Self::pick(cur);
            if woke == Woke::Nobody {
                return Woke::Nobody;
            }
            // SeqCst: the wake decision is part of the total order the argument relies on.
            match self.word.compare_exchange_weak(cur, new, SeqCst, Relaxed) {
                Ok(_) => {
                    self.deliver(woke, unpark_driver);
                    return woke;
                }
                Err(actual) => cur = actual,
            }
        }
    }

    /// Chooses a parked worker to wake in word `w` (nobody is looking): the driver first,
    /// else a futex sleeper. Returns the new word and the choice.
    fn pick(w: u32) -> (u32, Woke) {
        if w & DRIVER != 0 {
            (bump_epoch((w & !DRIVER) | DRIVER_WAKING), Woke::Driver)
        } else if sleepers(w) > 0 {
            (bump_epoch((w - ONE_SLEEPER) | WAKING), Woke::Sleeper)
        } else {
            (w, Woke::Nobody)
        }
    }

    fn deliver(&self, woke: Woke, unpark_driver: impl FnOnce()) {
        match woke {
            Woke::Nobody => {}
            Woke::Sleeper => self.futex.wake(&self.word, 1),
            Woke::Driver => unpark_driver(),
        }
    }

    /// Parks the calling worker, which is awake and not spinning.
    ///
    /// `recheck` scans every queue once after the announcement. `drive`, when given, blocks in
    /// the reactor until an event, a timer, or an unpark; the worker uses it only when it is the
    /// last awake worker, and otherwise sleeps on the futex.
    pub(crate) fn park<T>(
        &self,
        mut recheck: impl FnMut() -> Option<T>,
        mut drive: Option<&mut dyn FnMut()>,
    ) -> Parked<T> {
        // Announce: one CAS that either adds us to `sleepers` or makes us the driver.
        let mut cur = self.word.load(Relaxed);
        let (announced, as_driver) = loop {
            if cur & SHUTDOWN != 0 {
                return Parked::Shutdown;
            }
            // The last awake worker: every other worker sleeps on the futex. (The driver
            // and any worker picked to wake are awake or not counted, so this also means
            // nobody spins and no wake-up is pending.)
            let last = drive.is_some() && sleepers(cur) + 1 == self.workers;
            let new = if last {
                cur | DRIVER
            } else {
                cur + ONE_SLEEPER
            };
            // SeqCst: the announcement is the worker's half of the store/fence/load pattern.
            match self.word.compare_exchange_weak(cur, new, SeqCst, Relaxed) {
                Ok(_) => break (new, last),
                Err(actual) => cur = actual,
            }
        };
        // SeqCst fence: orders the announcement before the re-check's loads of the queues,
        // against the producer's push / fence / load of the word.
        fence(SeqCst);
        if let Some(work) = recheck() {
            self.unannounce(as_driver);
            return Parked::Work(work);
        }

        if as_driver {
            if let Some(drive) = drive.as_mut() {
                drive();
            }
            // Acquire: pairs with the SeqCst CAS of whoever picked us, so what it published
            // before waking us is visible (the queues are re-scanned anyway).
            let mut cur = self.word.load(Acquire);
            loop {
                if cur & SHUTDOWN != 0 {
                    return Parked::Shutdown;
                }
                // Either we returned on our own (I/O, timer, spurious): clear DRIVER; or
                // somebody picked us: claim DRIVER_WAKING. Nobody else ever claims it.
                let new = if cur & DRIVER != 0 {
                    (cur & !DRIVER) + ONE_SPINNER
                } else {
                    debug_assert!(cur & DRIVER_WAKING != 0);
                    (cur & !DRIVER_WAKING) + ONE_SPINNER
                };
                match self.word.compare_exchange_weak(cur, new, SeqCst, Relaxed) {
                    Ok(_) => return Parked::Woken,
                    Err(actual) => cur = actual,
                }
            }
        }

        // A futex sleeper: wait on the exact value we announced, then try to claim WAKING.
        let mut expected = announced;
        loop {
            self.futex.wait(&self.word, expected);
            let mut cur = self.word.load(Acquire);
            loop {
                if cur & SHUTDOWN != 0 {
                    return Parked::Shutdown;
                }
                if cur & WAKING == 0 {
                    // Spurious, or another sleeper claimed the wake-up first. We are still
                    // counted in `sleepers` (sleepers + WAKING = futex waiters), so wait on
                    // the current value: any later producer changes it.
                    expected = cur;
                    break;
                }
                match self.word.compare_exchange_weak(
                    cur,
                    (cur & !WAKING) + ONE_SPINNER,
                    SeqCst,
                    Relaxed,
                ) {
                    Ok(_) => return Parked::Woken,
                    Err(actual) => cur = actual,
                }
            }
            debug_assert!(sleepers(expected) > 0, "a futex sleeper must be counted");
        }
    }

    /// The re-check after announcing found work: leave the parked state without blocking. If a
    /// producer already picked a sleeper, take its place (the wake-up is fungible): that work is
    /// what it woke somebody for, and we are about to run it.
    fn unannounce(&self, as_driver: bool) {
        let mut cur = self.word.load(Relaxed);
        loop {
            let new = if as_driver {
                if cur & DRIVER != 0 {
                    cur & !DRIVER
                } else {
                    cur & !DRIVER_WAKING
                }
            } else if cur & WAKING != 0 {
                cur & !WAKING
            } else {
                cur - ONE_SLEEPER
            };
            match self.word.compare_exchange_weak(cur, new, SeqCst, Relaxed) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Stops the protocol: nobody parks any more, and every parked worker is woken. Calls
    /// `unpark_driver` so a worker blocked in the reactor returns too.
    pub(crate) fn shutdown(&self, unpark_driver: impl FnOnce()) {
        // SeqCst: ordered with every announcement, so a worker either sees SHUTDOWN before it
        // blocks or is already blocked and gets the wake below.
        self.word.fetch_or(SHUTDOWN, SeqCst);
        self.futex.wake(&self.word, u32::MAX);
        unpark_driver();
    }

    /// Whether [`Sleepers::shutdown`] was called.
    pub(crate) fn is_shutdown(&self) -> bool {
        self.word.load(Acquire) & SHUTDOWN != 0
    }

    /// A snapshot for metrics and tests: (sleepers, spinners, driver parked).
    pub(crate) fn snapshot(&self) -> (u32, u32, bool) {
        let w = self.word.load(Relaxed);
        (sleepers(w), spinners(w), w & DRIVER != 0)
    }
}

/// The spin decision, in one place: how long an idle worker looks for work before it parks,
/// and how it shares the core meanwhile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpinPolicy {
    /// How long a worker spins after running out of work. Zero: one scan, then park.
    pub(crate) window: Duration,
}

/// How often (in spin iterations) a spinner gives its core to another runnable thread. Each
/// iteration scans the queues (tens of nanoseconds) and polls the reactor (a syscall, about a
/// microsecond), so this is roughly every 30-50 us: a client thread that shares the core waits
/// for at most that long, and a spinner alone on its core pays one cheap syscall.
const YIELD_EVERY: u32 = 32;

/// An iteration that took this long means the spinner lost its core to another thread (a
/// yield that ran somebody, or a preemption): the core is wanted, so the spinner parks now
/// instead of competing for it.
const PREEMPTED: Duration = Duration::from_micros(50);

impl SpinPolicy {
    /// Starts one spin window.
    pub(crate) fn start(&self) -> SpinWindow {
        let now = Instant::now();
        SpinWindow {
            deadline: if self.window.is_zero() {
                None
            } else {
                Some(now + self.window)
            },
            last: now,
            iterations: 0,
        }
    }
}

/// One spin window in progress; see [`SpinPolicy`].
#[derive(Debug)]
pub(crate) struct SpinWindow {
    deadline: Option<Instant>,
    last: Instant,
    iterations: u32,
}

impl SpinWindow {
    /// Called after each unsuccessful scan: pauses briefly and says whether to scan again.
    /// The window ends at its deadline, or early when the spinner was kept off its core.
    pub(crate) fn keep_spinning(&mut self) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        self.iterations = self.iterations.wrapping_add(1);
        if self.iterations % YIELD_EVERY == 0 {
            std::thread::yield_now();
        } else {
            for _ in 0..4 {
                std::hint::spin_loop();
            }
        }
        let now = Instant::now();
        let lost_core = now.duration_since(self.last) > PREEMPTED;
        self.last = now;
        now < deadline && !lost_core
    }
}
