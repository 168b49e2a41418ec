//! The spin policy: whether, and for how long, an idle worker spins before it parks.
//!
//! ```text
//! let decision = policy.begin(now, worker, busy);  // an idle period starts
//! if decision.spins() { spin for decision.window(), then policy.spun(now, spun_ns) }
//! ... park if nothing turned up ...
//! policy.end(decision, spun, d);                    // work found d ns after the period began
//! // or, as the worker does: stamp the end when the work turns up, learn once it has run
//! let ended = policy.ended(decision, spun, at, Some(window_ns)); run(work); policy.settle(ended);
//! ```
//!
//! [`SpinPolicy`] is the only place in `idle` that decides spinning. It has two forms:
//! *fixed* (`Builder::spin`: always the same window) and *adaptive* (the default,
//! `Builder::spin_adaptive(min, max)`), which learns from every idle period of every worker of
//! its runtime. Both obey a CPU budget and the lost-core hold. The policy takes time as an
//! input (nanoseconds since the runtime started, [`Nanos`]), so its decisions can be tested by
//! feeding it synthetic gaps; only `SpinPolicy::now` and [`SpinWindow`] read a clock.
//!
//! # What it learns from
//!
//! Every idle period ends with work found `d` after it began, spinning or parked: `d` is the
//! gap until the next piece of work plus, when the worker had parked, the wake-up (20-40 µs
//! on a VM whose idle vCPU halts, a few µs on bare metal). A period in which the worker was
//! refused a spinner slot (`max_spinners`) teaches nothing: it neither spun nor chose to park.
//! The worker also says, when the period begins, which worker it is and whether the runtime
//! is *busy* (another worker awake, or work queued): that only matters to probes (below).
//!
//! # The parts
//!
//! Each part is a type in its own file, with private state, its own documentation and tests,
//! and none aware of the others. Each earns its place in the ablation matrix
//! (`docs/design.md`, "The spin policy's parts"): a layout that fails without it.
//!
//! * `window.rs` (`Window`): how long to spin. It grows just past the gaps it meets, shrinks
//!   on spins that expire for gaps past `max`, and must pay for itself: every 16 spinning
//!   periods, spinning must have caught enough work for its CPU time, or the window drops to
//!   `min` and may not grow for a while (long memoryless gaps do not buy spinning).
//! * `mode.rs` (`Mode`): whether to spin at all. The mode (spinning or parking) is checked by
//!   probes, periods that do the opposite, weighed by a sequential test.
//! * `probe.rs` (`Schedule`): when to probe, and who; it also counts idle periods and probes
//!   and keeps the arrival interval for the quiet-moment rule.
//! * `contend.rs` (`Contention`): whether another thread takes a large share of a spinner's
//!   CPU, which holds parking.
//! * `budget.rs` (`Budget`): the user's CPU budget (`Builder::spin_budget`), over a sliding
//!   second.
//! * `estimate.rs` (`Median`): the running median the parts keep of their samples.
//! * `ablate.rs`: test-only switches that turn a part off, for the ablation matrix.
//!
//! `tests.rs` simulates the whole policy against synthetic worlds.
//!
//! # An idle period, step by step
//!
//! [`SpinPolicy::begin`] numbers the period. A window of zero, a spent budget or a contention
//! hold parks at once, and ends any probe run of this worker. Otherwise a fixed policy spins,
//! and an adaptive one follows the mode, unless the period is a probe: the next period of
//! this worker's run, or the first of a run that is due (see "When to probe").
//!
//! [`SpinPolicy::end`] learns from `d`, in this order: the period counts as a probe and may
//! end its run; the schedule takes the arrival interval; the window learns from `d` and the
//! pay-for-itself rule from the spin; a period that followed the mode feeds its arm, and a
//! run's last probe period weighs its bit in the test, where a flip or a confirmation
//! restarts the test and sets the probe rate.
//!
//! The worker calls it late: when work turns up it only stamps the time ([`SpinPolicy::ended`],
//! one clock read), runs the work, and then [`SpinPolicy::settle`]s the period, which charges
//! the spin and calls `end` with the stamped `d`. So the learning (a dozen updates of shared
//! statistics) is not between a request's arrival and its handler. A worker settles before its
//! next period begins, so the policy still sees each worker's periods end before the next.
//!
//! # Does spinning pay?
//!
//! Spinning is meant to make the next piece of work start sooner, but it need not (a client
//! on the same machine may be kept off its CPU by the spinner). So the policy has a *mode*,
//! spinning or parking, and keeps checking it with *probes*: idle periods in which it does the
//! opposite (when spinning, it parks at once; when parking, it spins its window), whose `d` is
//! compared with that of the mode until a sequential test decides (`mode.rs`). A probe is
//! judged on `d` alone, the latency the probed choice gave the next piece of work; the CPU a
//! spin burns is bounded by the other rules (pay for itself, the budget, the lost-core hold).
//!
//! # Clients on our own CPUs
//!
//! A client on the same machine and on the same CPUs (a benchmark on a laptop, a sidecar) is
//! the one case where what the server can time misleads it: a spinner answers it by waking it
//! on the other CPU (a costly wake-up on a VM, in the client's round trip but not in `d`),
//! where a parked server is woken on the client's CPU and answers it there cheaply, its own
//! wake-up in `d`. On a 2-vCPU AMD guest at 100 µs gaps, `d` was 22 µs longer parked (158
//! against 136 µs) while the client's round trip was 2 µs shorter, at a twelfth of the CPU.
//!
//! So the reactor says it: [`SpinPolicy::clients_colocated`] (from `Driver::clients_colocated`,
//! asked at the start of each idle period) is true while every accepted TCP connection's
//! client sends from one of this process's CPUs over a local address (`net/src/peers.rs`).
//! Then the CPUs count as shared, park-probe runs are longer (the scheduler needs a few parked
//! periods in a row to place the client next to the server), and a spinning period costs
//! its `d` plus a quarter plus an 8 µs tie in the probes' comparison (`mode.rs`). The probes
//! still decide: at 100 µs gaps parking wins (158 µs against 136 + 34 + 8), while requests
//! back to back, where spinning answers tens of µs sooner, keep spinning. A change either way
//! restarts the test. A fixed window ignores all of it.
//!
//! # When to probe
//!
//! The probe schedule (`probe.rs`) makes runs due at a rate that follows the evidence: fast
//! at first, whenever the evidence turns, the mode flips or the clients move, slower each
//! time the test confirms the mode (one run per 1024 periods at the slowest, so a settled
//! server parks on purpose about twice per thousand requests).
//!
//! A park probe is pointless, or harmful, at a busy moment, so a due run waits for a quiet
//! one: no other worker awake (it would catch the work, and the probe would measure
//! nothing), nothing queued (the worker's `busy` says both), and requests not arriving faster
//! than a wake-up takes (the median arrival interval at least the penalty of parking,
//! `park_median − spin_median` capped at 50 µs, or 30 µs until that is known: `Mode::penalty`):
//! there a parked worker wakes to a queue, and the probe measures queueing while it delays
//! several requests. Only one worker probes at a time: the one that claims the run. Spin
//! probes (in parking mode) need no quiet moment: they only make the worker look for work
//! longer. No probes run while the window is zero (both choices are then the same).
//!
//! # Spinning itself
//!
//! A spin window (`spinning.rs`) scans the queues and polls the reactor, yields the core every
//! 32nd iteration, and reports an iteration that took over 50 µs as a *suspicion* that the
//! spinner lost its core. Unless another worker of the runtime is awake, the policy weighs it
//! (`contend.rs`): only a confirmed loss that brings the share other threads take from the
//! spinners to a quarter holds parking for a while (`Kind::Contended`, fixed windows
//! included). Without the hold, a spinner off its CPU held the wake-up of whatever arrived
//! meanwhile (a 1.7 ms p99 beside a CPU-bound neighbour, against 17 µs with it); anything less
//! (a kernel thread, a sidecar that takes 5 %) delays the requests it delays, and the window
//! spins on.
//!
//! # Cost
//!
//! The state is a few dozen atomics per runtime, spread over the parts, read and written with
//! relaxed loads and stores: every one is a statistic or a hint, and nothing else is ordered
//! by it. Two workers that update the same estimate at once may lose one sample, which a
//! statistic can afford; each part says what a race costs it. Nothing allocates, and the
//! decision and the learning make no syscall (a suspected lost core reads the thread's rusage
//! once).

mod ablate;
mod budget;
mod contend;
mod estimate;
mod mode;
mod probe;
#[cfg(test)]
mod tests;
mod window;

pub(crate) use super::spinning::SpinWindow;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use ablate::{off, Part};
use budget::Budget;
use contend::Contention;
use mode::{Mode, Outcome};
use probe::{Schedule, RUN, RUN_SHARED};
use window::Window;

/// Nanoseconds since the runtime started: the policy's clock.
pub(crate) type Nanos = u64;

/// What the policy decided at the start of an idle period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decision {
    window: u32,
    kind: Kind,
    /// When the period began, and which worker it is.
    began: Nanos,
    worker: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Spin (the current mode, or a fixed window).
    Spin,
    /// Spin, as a probe while parking is the mode: a period of the run (all but the last are
    /// a warm-up).
    SpinProbe(Run),
    /// Park at once: a probe while spinning is the mode, a period of the run.
    ParkProbe(Run),
    /// Park at once: parking is the mode (spinning does not pay).
    ParkMode,
    /// Park at once: the CPU budget is spent.
    Budget,
    /// Park at once: the window is zero.
    Zero,
    /// Park at once: a spinner lost its core lately (`contend.rs`).
    Contended,
}

impl Decision {
    /// A decision of `kind` for the period beginning at `began` on `worker`; it keeps the
    /// window (ns) only if it spins.
    fn new(kind: Kind, window: u32, began: Nanos, worker: usize) -> Self {
        let decision = Self {
            window,
            kind,
            began,
            worker: worker as u16,
        };
        if decision.spins() {
            decision
        } else {
            Self {
                window: 0,
                ..decision
            }
        }
    }

    /// Whether to spin (then for [`Decision::window`]) before parking.
    pub(crate) fn spins(self) -> bool {
        matches!(self.kind, Kind::Spin | Kind::SpinProbe(_))
    }

    /// How long to spin; zero when the decision is to park.
    pub(crate) fn window(self) -> Duration {
        Duration::from_nanos(self.window as u64)
    }

    /// The policy chose to park at once (a probe, parking mode, the budget, or no window).
    pub(crate) fn parks_by_choice(self) -> bool {
        !self.spins()
    }

    /// Its place in its probe run, if this period is a probe.
    fn probe(self) -> Option<Run> {
        match self.kind {
            Kind::SpinProbe(r) | Kind::ParkProbe(r) => Some(r),
            _ => None,
        }
    }
}

/// An idle period that found work, as it stood then: what [`SpinPolicy::settle`] learns from
/// once that work has run. The stamps are taken when the work turns up; the learning (shared
/// statistics) waits, so that it does not stand between a request's arrival and its handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended {
    decision: Decision,
    /// The period's first spin window ran (the worker got a spinner slot).
    spun: bool,
    /// When the work turned up.
    at: Nanos,
    /// The spin window that caught the work, and how long it had spun: still to be charged.
    window: Option<Nanos>,
}

/// A probe period's place in its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    /// Its position (0: the period that claimed the run).
    pos: u8,
    /// Whether it is the run's last period, the one recorded.
    last: bool,
}

/// The spin decision, in one place; see the module documentation. The parts' state is all
/// statistics and hints, accessed `Relaxed` (see "Cost").
#[derive(Debug)]
pub(crate) struct SpinPolicy {
    /// Whether the policy learns (else: a fixed window, within the budget).
    adaptive: bool,
    window: Window,
    budget: Budget,
    mode: Mode,
    schedule: Schedule,
    contention: Contention,
    /// Every accepted connection's client runs on our CPUs (the driver says so): see
    /// "Clients on our own CPUs".
    colocated: AtomicBool,
    /// Where the policy's clock starts.
    clock: Instant,
}

/// What the parts of a policy decided so far, counted where each decides, so that a change
/// of behaviour in a long run can be laid at one part's door (`Runtime::metrics()`; a lost
/// core's hold is `SpinPolicy::lost_cores`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Decided {
    /// The sequential test flipped the mode to parking (`mode.rs`).
    pub(crate) flips_to_park: u64,
    /// ... or back to spinning.
    pub(crate) flips_to_spin: u64,
    /// A block of spinning periods did not pay for itself: the window dropped to its minimum
    /// (`window.rs`).
    pub(crate) window_drops: u64,
    /// Idle periods parked because the CPU budget was spent (`budget.rs`).
    pub(crate) budget_parks: u64,
}

/// Nanoseconds as a `u32` window (saturating at about 4 s).
fn ns32(d: Duration) -> u32 {
    d.as_nanos().min(u32::MAX as u128) as u32
}

impl SpinPolicy {
    /// Always spin for `window` (zero: never spin), within `budget` cores.
    pub(crate) fn fixed(window: Duration, budget: f64) -> Self {
        let w = ns32(window);
        Self::new(false, w, w, w, budget)
    }

    /// Learn the window within `min..=max`, starting from `initial`, within `budget` cores.
    pub(crate) fn adaptive(min: Duration, max: Duration, initial: Duration, budget: f64) -> Self {
        let (min, max) = (ns32(min), ns32(max).max(ns32(min)));
        let initial = ns32(initial).clamp(min, max);
        Self::new(true, min, max, initial, budget)
    }

    fn new(adaptive: bool, min: u32, max: u32, window: u32, budget: f64) -> Self {
        Self {
            adaptive,
            window: Window::new(min, max, window),
            budget: Budget::new(budget),
            mode: Mode::new(),
            schedule: Schedule::new(),
            contention: Contention::new(),
            colocated: AtomicBool::new(false),
            clock: Instant::now(),
        }
    }

    /// The policy's clock now.
    pub(crate) fn now(&self) -> Nanos {
        self.at(Instant::now())
    }

    /// The policy's clock at `t` (a reading the caller already took).
    pub(crate) fn at(&self, t: Instant) -> Nanos {
        t.saturating_duration_since(self.clock).as_nanos() as Nanos
    }

    /// The current window.
    pub(crate) fn window(&self) -> Duration {
        Duration::from_nanos(self.window.current() as u64)
    }

    /// Whether the adaptive policy currently parks at once because spinning does not pay.
    pub(crate) fn parking(&self) -> bool {
        self.mode.parking()
    }

    /// Spin time over the last second or so (2^30 ns).
    pub(crate) fn recent_spin(&self, now: Nanos) -> Duration {
        Duration::from_nanos(self.budget.recent(now))
    }

    /// Probe periods run so far (0 for a fixed window).
    pub(crate) fn probes(&self) -> u64 {
        self.schedule.probes_run()
    }

    /// Idle periods per probe run now (0 for a fixed window).
    pub(crate) fn probe_period(&self) -> u32 {
        if self.adaptive {
            self.schedule.every()
        } else {
            0
        }
    }

    /// How long the current mode has held at `now`: since the last flip, or since the start.
    pub(crate) fn since_flip(&self, now: Nanos) -> Duration {
        self.mode.since_flip(now)
    }

    /// Whether this runtime's CPUs count as shared: the clients of every accepted connection
    /// run on them (the driver says so; see "Clients on our own CPUs").
    pub(crate) fn cpus_shared(&self) -> bool {
        self.colocated.load(Relaxed)
    }

    /// The driver says whether the clients of every connection it accepted run on this
    /// runtime's CPUs (`Driver::clients_colocated`); the worker tells the policy at the start
    /// of each idle period. A fixed window ignores it.
    pub(crate) fn clients_colocated(&self, yes: bool) {
        if self.adaptive && !off(Part::Colocated) && self.colocated.load(Relaxed) != yes {
            self.colocated.store(yes, Relaxed);
            // What a spinning period costs in the probes' comparison changed: the evidence
            // so far no longer applies. Look again, quickly, from the period about to begin.
            self.mode.restart_test();
            self.schedule.faster(self.schedule.periods_begun());
        }
    }

    /// The decision for an idle period starting `now` on `worker`; `busy`: another worker is
    /// awake, or work is queued (a park probe would not measure this worker's wake-up).
    pub(crate) fn begin(&self, now: Nanos, worker: usize, busy: bool) -> Decision {
        let window = self.window.current();
        let decide = |kind| Decision::new(kind, window, now, worker);
        let n = self.number_period();
        if let Some(kind) = self.forced_park(window, now) {
            if self.adaptive {
                // A probe run in progress on this worker is over: the choice is not ours.
                self.schedule.release(worker);
            }
            return decide(kind);
        }
        if !self.adaptive || off(Part::Mode) {
            return decide(Kind::Spin);
        }
        let parking = self.mode.parking();
        decide(match (parking, self.probe(n, worker, busy, parking)) {
            (false, None) => Kind::Spin,
            (false, Some(r)) => Kind::ParkProbe(r),
            (true, None) => Kind::ParkMode,
            (true, Some(r)) => Kind::SpinProbe(r),
        })
    }

    /// The number of the idle period beginning now (0 for a fixed window). Every period
    /// counts, spinning or not: the probe schedule and the pay-for-itself hold are measured
    /// in periods.
    fn number_period(&self) -> u32 {
        if !self.adaptive {
            return 0;
        }
        self.schedule.begin_period()
    }

    /// Why a period beginning `now` with `window` may not spin at all, if it may not.
    fn forced_park(&self, window: u32, now: Nanos) -> Option<Kind> {
        if window == 0 {
            Some(Kind::Zero)
        } else if self.budget.exceeded(now) && !off(Part::Budget) {
            Some(Kind::Budget)
        } else if self.contended(now) {
            Some(Kind::Contended)
        } else {
            None
        }
    }

    /// A spin iteration ending at `now` took `ns`, over `PREEMPTED` (its window says so:
    /// [`SpinWindow::suspicion`]): a suspicion, confirmed by the thread's own
    /// count of involuntary switches. Returns whether parking now holds (`contend.rs`): then
    /// the window ends.
    pub(crate) fn lost_core(&self, now: Nanos, ns: Nanos) -> bool {
        self.lost_time(now, ns, contend::preempted())
    }

    /// [`SpinPolicy::lost_core`] with the confirmation given (for tests).
    fn lost_time(&self, now: Nanos, ns: Nanos, confirmed: bool) -> bool {
        self.contention.lost(now, ns, confirmed) && !off(Part::Contend)
    }

    /// Whether a lost core holds parking at `now`: then a parker drives the reactor if
    /// nobody does and nobody spins (`contend.rs`).
    pub(crate) fn contended(&self, now: Nanos) -> bool {
        self.contention.holds(now) && !off(Part::Contend)
    }

    /// Spinners that lost their core to a neighbour that takes a large share of it, so far
    /// (each held parking).
    pub(crate) fn lost_cores(&self) -> u64 {
        self.contention.losses()
    }

    /// What each part decided so far (see [`Decided`]).
    pub(crate) fn decided(&self) -> Decided {
        let (to_spin, to_park) = self.mode.flips();
        Decided {
            flips_to_park: to_park,
            flips_to_spin: to_spin,
            window_drops: self.window.drops(),
            budget_parks: self.budget.denied(),
        }
    }

    /// Whether period `n`, beginning on `worker`, is a probe (the opposite of the mode,
    /// `parking` or not), and its place in its run: the next period of this worker's run, or
    /// the first of a run that is due. Every period of a park-probe run needs a quiet moment.
    fn probe(&self, n: u32, worker: usize, busy: bool, parking: bool) -> Option<Run> {
        // With colocated clients, park-probe runs are longer (`probe.rs`).
        let len = if !parking && self.cpus_shared() {
            RUN_SHARED
        } else {
            RUN
        };
        let allowed = || parking || self.quiet(busy);
        match self.schedule.continue_run(worker) {
            Some((pos, last)) if allowed() => Some(Run {
                pos: pos as u8,
                last,
            }),
            Some(_) => {
                self.schedule.release(worker);
                None
            }
            None if self.schedule.due(n) && allowed() && self.schedule.claim(n, worker, len) => {
                Some(Run {
                    pos: 0,
                    last: false,
                })
            }
            None => None,
        }
    }

    /// Whether a park probe may run now: nothing else going on, and requests not arriving
    /// faster than parking's penalty.
    fn quiet(&self, busy: bool) -> bool {
        if off(Part::Quiet) {
            return true;
        }
        if busy {
            return false;
        }
        let interval = self.schedule.interval();
        interval == 0 || interval >= self.mode.penalty()
    }

    /// A spin window that began in this period took `spun` ns, ending `now`: charge it.
    pub(crate) fn spun(&self, now: Nanos, spun: Nanos) {
        self.budget.charge(now, spun);
        self.contention.spun(spun);
    }

    /// The idle period that `decision` began ended with work found `d` ns after it began.
    /// `spun`: its first spin window ran (the worker got a spinner slot).
    pub(crate) fn end(&self, decision: Decision, spun: bool, d: Nanos) {
        if !self.adaptive {
            return;
        }
        self.end_probe(decision, spun);
        if decision.spins() && !spun {
            // Refused a spinner slot: it neither spun nor chose to park.
            return;
        }
        let now = decision.began + d;
        self.schedule.ended(now);
        let n = self.schedule.periods_begun();
        let d = d.min(u32::MAX as u64) as u32;
        self.window.ended(spun.then_some(decision.window), d, n);
        self.learn_mode(decision.kind, d, now, n);
    }

    /// A probe period ended: count it, and end its run after the run's last period, or when
    /// a spin probe was refused a spinner slot.
    fn end_probe(&self, decision: Decision, spun: bool) {
        if let Some(run) = decision.probe() {
            self.schedule.probe_ran();
            if run.last || (decision.spins() && !spun) {
                self.schedule.release(decision.worker as usize);
            }
        }
    }

    /// A period of `kind` found work `d` ns after it began, ending `now` (at period `n`): a
    /// period that followed the mode feeds its arm; a run's last probe period (the one
    /// recorded) weighs its bit in the test.
    fn learn_mode(&self, kind: Kind, d: u32, now: Nanos, n: u32) {
        match kind {
            Kind::Spin | Kind::ParkMode => self.mode.in_mode(kind == Kind::ParkMode, d),
            Kind::ParkProbe(Run { last: true, .. }) | Kind::SpinProbe(Run { last: true, .. }) => {
                let parked = matches!(kind, Kind::ParkProbe(_));
                if let Some(cheaper) = self.mode.probe(parked, d, self.cpus_shared()) {
                    self.weigh(cheaper, parked, now, n);
                }
            }
            _ => {}
        }
    }

    /// A recorded probe, `cheaper` or not than the mode (the probed choice is parking:
    /// `toward_parking`): one step of the sequential test, and what the schedule makes of
    /// its outcome.
    fn weigh(&self, cheaper: bool, toward_parking: bool, now: Nanos, n: u32) {
        match self.mode.weigh(cheaper, toward_parking, now) {
            // A flip, or evidence turning against the mode: gather the next quickly.
            Outcome::Flipped | Outcome::Turning => self.schedule.faster(n),
            Outcome::Confirmed => self.schedule.slower(),
            Outcome::Undecided => {}
        }
    }

    /// The period `decision` began found work at `at`, `spun` as for [`SpinPolicy::end`];
    /// `window`: the spin window that caught it had spun this long (not yet charged).
    pub(crate) fn ended(
        &self,
        decision: Decision,
        spun: bool,
        at: Nanos,
        window: Option<Nanos>,
    ) -> Ended {
        Ended {
            decision,
            spun,
            at,
            window,
        }
    }

    /// Does for `e` what [`SpinPolicy::spun`] and [`SpinPolicy::end`] would have done when its
    /// work turned up. Returns the spin it charged, ns.
    pub(crate) fn settle(&self, e: Ended) -> Nanos {
        if let Some(ns) = e.window {
            self.spun(e.at, ns);
        }
        self.end(e.decision, e.spun, e.at.saturating_sub(e.decision.began));
        e.window.unwrap_or(0)
    }

    /// Starts one spin window of `decision`'s length.
    pub(crate) fn start(&self, decision: Decision) -> SpinWindow {
        contend::arm();
        SpinWindow::new(decision.window())
    }
}
