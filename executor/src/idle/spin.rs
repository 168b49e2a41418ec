//! The spin policy: whether, and for how long, an idle worker spins before it parks.
//!
//! ```text
//! let decision = policy.begin(now, worker, busy);  // an idle period starts
//! if decision.spins() { spin for decision.window(), then policy.spun(now, spun_ns) }
//! ... park if nothing turned up ...
//! policy.end(decision, spun, d);                    // work found d ns after the period began
//! ```
//!
//! [`SpinPolicy`] is the only place in `idle` that decides spinning. It has two forms:
//! *fixed* (`Builder::spin`: always the same window) and *adaptive* (the default,
//! `Builder::spin_adaptive(min, max)`), which learns from every idle period of every worker of
//! its runtime. Both obey a CPU budget. The policy takes time as an input (nanoseconds since
//! the runtime started, [`Nanos`]), so its decisions can be tested by feeding it synthetic
//! gaps; only `SpinPolicy::now`, [`SpinWindow`] and the shared-CPU sampler (`share.rs`, four
//! reads of `/proc/stat` a second) look at the outside world. Three files beside this one
//! hold one idea each: `probe.rs` (when to probe, and who), `sprt.rs` (the sequential test
//! that decides a flip, with the derivation of its thresholds) and `share.rs` (whether other
//! processes use our CPUs).
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
//! # The window
//!
//! * **Grow** when a gap lands just past the window: `window < d <= max`. The window jumps
//!   to cover it with a quarter to spare, but at most doubles per period (at least to 16 µs
//!   from zero), as the Linux guest haltpoll governor does; so steady 300 µs gaps take a few
//!   periods to be covered, and one odd gap cannot make the window jump to `max`.
//! * **Shrink** when a spin expired for a gap beyond `max` (`d > max`: spinning could not
//!   have caught it): by an eighth for each of the first four such periods in a row, by half
//!   for each one after that (spins that *keep* expiring), to `min` once below 4 µs. Steady
//!   multi-millisecond gaps take the window from 250 µs to nothing in 14 periods (about 1 ms
//!   of spinning in all); with a bimodal mix (50 µs and 5 ms) it shrinks on the long gaps
//!   until a short one misses, grows back just past it, and so hovers around the short mode.
//! * **Pay for itself**: every 16 spinning periods, the spin time they took is compared with
//!   what they caught. More than `max` of spinning per piece of work caught means the gaps
//!   are memoryless and long (with exponential gaps of mean `μ`, any window spins `μ` per
//!   catch: Poisson arrivals with a 2 ms mean spent 373 µs of CPU per request against tokio's
//!   50 before this rule). The window then drops to `min` and may not grow for 256 periods,
//!   twice as long after each failure in a row (up to 8192); a block that passes resets that.
//!   The bar is `max` per catch *plus one* `max`, so a small window on its way up to gaps it
//!   has not caught yet does not fail. Steady gaps below `max` spin at most `max` per catch,
//!   so they never trip it.
//! * A gap covered by the window changes nothing: spinning stopped when the work came.
//!
//! # Does spinning pay?
//!
//! Spinning is meant to make the next piece of work start sooner, but it need not. The policy
//! has a *mode*, spinning or parking, and keeps checking it with *probes*: idle periods in
//! which it does the opposite (when spinning, it parks at once; when parking, it spins its
//! window).
//!
//! What a probe is judged on is `d` alone: the latency the probed choice gave the next piece
//! of work. The CPU time a spin burns is not added to it, not even when other processes use
//! our CPUs (`share.rs`): that would let the shared-CPU signal flip the mode by itself, and a
//! remote client (its load on other CPUs, or any busy neighbour on ours) would be parked for,
//! every request paying a wake-up, as long as the neighbour stays. CPU spent spinning is
//! bounded by the other rules (pay for itself, the budget, losing the core ends a window).
//! The signal only makes the policy look harder: it starts fast probing at once and makes park
//! probe runs longer (see "When to probe"), because a client on the same machine gains from
//! parking only once the scheduler has placed it next to the server, a few parked periods in a
//! row.
//!
//! A recorded probe gives one bit: whether its `d`, plus a sixteenth, came in below the `d`
//! of the latest period in the current mode (just before the probe run, so a slow drift of
//! the load moves both alike). If the probed choice made no difference, the two would be
//! draws from one distribution and the bit a fair coin, whatever that distribution's shape;
//! the margin tilts it towards 0. (A running median would not do: with gaps of 50 µs and 5 ms
//! in equal parts, any value between the two is a median of `d`, the estimate wanders
//! between them, and a park probe on a short gap beats it half the time although parking
//! never helps.) With a remote client and Poisson gaps of mean 200 µs, a park probe beats the
//! period before it 4 times in 10; with steady gaps, never. The bits feed Wald's sequential
//! probability ratio test (`sprt.rs`): 16 bits in a row in favour of parking flip the mode
//! into parking, 12 the other way back, and three against (or more, when bits in favour are
//! mixed in) *confirm* the mode. The error rates are chosen there: about 10⁻⁴ per test of a
//! wrong flip into parking when the two choices are equal, far less when parking is worse.
//!
//! Each arm also keeps a running median of `d` (`spin_median`, `park_median`, the frugal
//! streaming rule: each sample moves the estimate towards itself by at most a 32nd of it);
//! their difference is what parking costs, for the quiet-moment rule below.
//!
//! # When to probe
//!
//! Probes come in runs of 2 idle periods of one worker; the first is a warm-up that is not
//! recorded (it pays for the transition from the other mode). While the CPUs count as shared,
//! park-probe runs are 4 periods, of which only the last is recorded: with a client on the
//! same machine, what parking gains comes from the scheduler's wake-affine placement, which
//! the first parked periods after spinning have not reached yet. One bit per run keeps the
//! bits close to independent (`sprt.rs`). The rate follows the evidence
//! (`probe.rs`): a run about every 8 idle periods at first; each confirmation halves the
//! rate, down to one run per 1024 periods, so a settled server parks on purpose about twice
//! per thousand requests (the fixed one-in-16 rate of issue 12 cost 0.06 context switches
//! per request). The rate snaps back to the fastest, and the test restarts, when the evidence
//! turns (the test is halfway to a flip), after a flip, and when the *regime* changes: a
//! slow average of `d` (over the periods that follow the mode) or of the time between two
//! idle periods ending (runtime-wide: the arrival interval) doubles or halves, the window
//! moves eightfold (counting anything under 16 µs as 16 µs), or the CPUs start or stop
//! counting as shared. (Averages, not medians: see `level`.)
//!
//! A park probe is pointless, or harmful, at a busy moment, so a due run waits for a quiet
//! one: no other worker awake (it would catch the work, and the probe would measure
//! nothing), nothing queued (the worker's `busy` says both), and requests not arriving faster
//! than a wake-up takes (the median arrival interval at least the penalty of parking,
//! `park_median − spin_median` capped at 50 µs, or 30 µs until that is known): there a parked
//! worker wakes to a queue, and the probe measures queueing while it delays several requests.
//! Only one worker probes at a time: the one that claims the run (`probe.rs`).
//!
//! Spin probes (in parking mode) need no quiet moment: they only make the worker look for
//! work longer. They run with shared CPUs too, so that parking never holds on the signal
//! alone: a remote client parked for by mistake gets spinning back within a few hundred
//! periods. (The previous draft of this policy held parking while the CPUs counted as shared,
//! and added the spin to a period's cost there; with any busy neighbour on the server's CPU,
//! that parked a remote client for good.)
//!
//! No probes run while the window is zero (both choices are then the same).
//!
//! # The CPU budget
//!
//! Every spin window is charged, by its wall time, to a sliding window of about a second
//! (two buckets of 2^30 ns; the estimate is the current bucket plus the previous one scaled
//! by the part of it still inside the last second). When the estimate exceeds the budget
//! (`Builder::spin_budget`, in cores; by default one core, but never more than
//! `max_spinners` nor the CPUs the process may use), workers park at once. The check is made
//! when a window starts, so a window may overrun the budget by at most its own length, and
//! the estimate is allowed 3 % of slack (one spinner that never stops must not read as more
//! than the one core it is).
//!
//! # Spinning itself
//!
//! Each spin iteration scans the queues and polls the reactor; every 32nd iteration yields
//! the core (`sched_yield`) so a client thread that shares it is not starved. If an iteration
//! took more than 50 µs, the spinner lost its core to another thread (the yield ran somebody,
//! or it was preempted). The core is wanted, so the window ends and the spinner parks. That
//! makes spinning self-limiting when the machine is busy.
//!
//! # Cost
//!
//! The state is a few dozen atomics per runtime (window, medians, mode and test, the probe
//! schedule, the pay-for-itself block, the budget), read and written with relaxed loads and
//! stores: two workers that update the same estimate at once may lose one sample, which a
//! statistic can afford. Nothing allocates on an idle period, except the shared-CPU sample
//! that one worker takes four times a second (a read of `/proc/stat`, some 20 µs).

#[cfg(test)]
mod golden;
mod probe;
mod share;
mod sprt;

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use probe::{Schedule, RUN, RUN_SHARED};
use share::Share;
use sprt::Verdict;

/// Nanoseconds since the runtime started: the policy's clock.
pub(crate) type Nanos = u64;

/// The smallest window a grow step reaches from zero.
const GROW_FLOOR: u32 = 16_000;
/// Spins that expired for gaps past `max` this many times in a row halve the window.
const KEEP_EXPIRING: u32 = 4;
/// A shrinking window below this becomes `min`.
const SHRINK_FLOOR: u32 = 4_000;
/// Spinning periods per pay-for-itself check, and how long (in idle periods) a failed check
/// stops the window from growing: at first, and at most.
const THRIFT_BLOCK: u32 = 16;
const FRUGAL_FIRST: u32 = 256;
const FRUGAL_MAX: u32 = 8_192;
/// What parking is assumed to add to `d` before a park probe has measured it (a wake-up on
/// a VM whose idle vCPU halts).
const WAKE_PRIOR: u32 = 30_000;
/// The most parking is taken to add to `d` when deciding whether arrivals are too fast for a
/// park probe: the medians it is measured from can be stale (the park median only moves on
/// park probes), and a wake-up takes tens of microseconds, not hundreds.
const WAKE_CAP: u32 = 50_000;
/// The budget's sliding window: 2^30 ns, about a second.
const BUDGET_SHIFT: u32 = 30;
const BUDGET_SPAN: u64 = 1 << BUDGET_SHIFT;

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
}

impl Decision {
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

/// A probe period's place in its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    /// Its position (0: the period that claimed the run).
    pos: u8,
    /// Whether it is the run's last period, the one recorded.
    last: bool,
}

/// The spin decision, in one place; see the module documentation. Every atomic here is a
/// statistic or a hint and is accessed `Relaxed` (see "Cost"): nothing else is ordered by it.
#[derive(Debug)]
pub(crate) struct SpinPolicy {
    adaptive: bool,
    min: u32,
    max: u32,
    /// The current window, ns.
    window: AtomicU32,
    /// Running medians, ns (0: no sample): `d` when spinning and when parking at once, and
    /// the time between two idle periods ending.
    spin_median: AtomicU32,
    park_median: AtomicU32,
    interval: AtomicU32,
    /// The latest period in spinning mode and in parking mode (`d`), ns (0: none yet): what a
    /// probe is compared with.
    last_spin: AtomicU32,
    last_park: AtomicU32,
    /// When the last idle period ended.
    last_end: AtomicU64,
    /// The mode, and the sequential test's log-likelihood ratio (thousandths; `sprt.rs`).
    parking: AtomicBool,
    llr: AtomicI32,
    /// When the mode last flipped, and probe periods run.
    flipped_at: AtomicU64,
    probes: AtomicU64,
    schedule: Schedule,
    /// Slow averages for the regime rule: `d` of the periods that follow the mode, and the
    /// time between two idle periods ending (see `level`).
    level: AtomicU32,
    level_interval: AtomicU32,
    /// The regime the test last started in: those averages, the window, and whether the CPUs
    /// counted as shared.
    ref_level: AtomicU32,
    ref_interval: AtomicU32,
    ref_window: AtomicU32,
    ref_shared: AtomicBool,
    share: Share,
    /// Idle periods begun, for the probe schedule.
    periods: AtomicU32,
    /// Consecutive periods whose spin expired for a gap past `max`.
    expiring: AtomicU32,
    /// The pay-for-itself block: spin time and catches of the spinning periods counted so
    /// far; until when the window may not grow, and for how long the next failure stops it.
    thrift_spent: AtomicU64,
    thrift_caught: AtomicU32,
    thrift_count: AtomicU32,
    frugal_until: AtomicU32,
    frugal_for: AtomicU32,
    /// The budget: ns of spinning allowed per `BUDGET_SPAN`, and what was spent.
    budget: u64,
    bucket: AtomicU64,
    spent: AtomicU64,
    spent_before: AtomicU64,
    clock: Instant,
}

/// Nanoseconds as a `u32` window (saturating at about 4 s).
fn ns32(d: Duration) -> u32 {
    d.as_nanos().min(u32::MAX as u128) as u32
}

/// Whether `a` is at or past `b` on the wrapping period counter.
fn reached(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) < 1 << 31
}

impl SpinPolicy {
    /// Always spin for `window` (zero: never spin), within `budget` cores.
    pub(crate) fn fixed(window: Duration, budget: f64) -> Self {
        let w = ns32(window);
        Self::new(false, w, w, w, budget, Share::disabled())
    }

    /// Learn the window within `min..=max`, starting from `initial`, within `budget` cores.
    pub(crate) fn adaptive(min: Duration, max: Duration, initial: Duration, budget: f64) -> Self {
        let (min, max) = (ns32(min), ns32(max).max(ns32(min)));
        let initial = ns32(initial).clamp(min, max);
        Self::new(true, min, max, initial, budget, Share::new())
    }

    fn new(adaptive: bool, min: u32, max: u32, window: u32, budget: f64, share: Share) -> Self {
        Self {
            adaptive,
            min,
            max,
            window: AtomicU32::new(window),
            spin_median: AtomicU32::new(0),
            park_median: AtomicU32::new(0),
            last_spin: AtomicU32::new(0),
            last_park: AtomicU32::new(0),
            interval: AtomicU32::new(0),
            last_end: AtomicU64::new(0),
            parking: AtomicBool::new(false),
            llr: AtomicI32::new(0),
            flipped_at: AtomicU64::new(0),
            probes: AtomicU64::new(0),
            schedule: Schedule::new(),
            level: AtomicU32::new(0),
            level_interval: AtomicU32::new(0),
            ref_level: AtomicU32::new(0),
            ref_interval: AtomicU32::new(0),
            ref_window: AtomicU32::new(window),
            ref_shared: AtomicBool::new(false),
            share,
            periods: AtomicU32::new(0),
            expiring: AtomicU32::new(0),
            thrift_spent: AtomicU64::new(0),
            thrift_caught: AtomicU32::new(0),
            thrift_count: AtomicU32::new(0),
            frugal_until: AtomicU32::new(0),
            frugal_for: AtomicU32::new(FRUGAL_FIRST),
            budget: (budget.max(0.0) * BUDGET_SPAN as f64) as u64,
            bucket: AtomicU64::new(0),
            spent: AtomicU64::new(0),
            spent_before: AtomicU64::new(0),
            clock: Instant::now(),
        }
    }

    /// The policy's clock now.
    pub(crate) fn now(&self) -> Nanos {
        self.clock.elapsed().as_nanos() as Nanos
    }

    /// The current window.
    pub(crate) fn window(&self) -> Duration {
        // Relaxed: a statistic, and a slightly stale window is as good as the current one.
        Duration::from_nanos(self.window.load(Relaxed) as u64)
    }

    /// Whether the adaptive policy currently parks at once because spinning does not pay.
    pub(crate) fn parking(&self) -> bool {
        self.parking.load(Relaxed)
    }

    /// Spin time over the last second or so (2^30 ns).
    pub(crate) fn recent_spin(&self, now: Nanos) -> Duration {
        Duration::from_nanos(self.recent(now))
    }

    /// Probe periods run so far (0 for a fixed window).
    pub(crate) fn probes(&self) -> u64 {
        self.probes.load(Relaxed)
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
        Duration::from_nanos(now.saturating_sub(self.flipped_at.load(Relaxed)))
    }

    /// Whether other processes' load on this runtime's CPUs counts as sharing them at `now`.
    pub(crate) fn cpus_shared(&self, now: Nanos) -> bool {
        self.share.is_shared(now)
    }

    /// The decision for an idle period starting `now` on `worker`; `busy`: another worker is
    /// awake, or work is queued (a park probe would not measure this worker's wake-up).
    pub(crate) fn begin(&self, now: Nanos, worker: usize, busy: bool) -> Decision {
        let window = self.window.load(Relaxed);
        let decide = |kind| Decision {
            window,
            kind,
            began: now,
            worker: worker as u16,
        };
        let park = |kind| Decision {
            window: 0,
            ..decide(kind)
        };
        // Every period counts, spinning or not: the schedule and the pay-for-itself hold are
        // measured in periods (a hold counted in spinning periods would never end at zero).
        let n = if self.adaptive {
            let n = self.periods.fetch_add(1, Relaxed);
            if self.share.poll(now) {
                self.schedule.faster(n);
            }
            n
        } else {
            0
        };
        let no_spin = if window == 0 {
            Some(Kind::Zero)
        // A little slack: a window is charged when it ends, to the bucket it ends in, so one
        // spinner spinning all the time may read as slightly over one core.
        } else if self.recent(now) > self.budget + (BUDGET_SPAN >> 5) {
            Some(Kind::Budget)
        } else {
            None
        };
        if let Some(kind) = no_spin {
            if self.adaptive {
                // A probe run in progress on this worker is over: the choice is not ours.
                self.schedule.release(worker);
            }
            return park(kind);
        }
        if !self.adaptive {
            return decide(Kind::Spin);
        }
        let parking = self.parking();
        // A park probe needs a quiet moment, every period of its run; with shared CPUs, its
        // runs are longer (see "When to probe").
        let len = if !parking && self.share.is_shared(now) {
            RUN_SHARED
        } else {
            RUN
        };
        let probe = match self.schedule.continue_run(worker) {
            Some((pos, last)) if parking || self.quiet(busy) => Some(Run {
                pos: pos as u8,
                last,
            }),
            Some(_) => {
                self.schedule.release(worker);
                None
            }
            None if self.schedule.due(n)
                && (parking || self.quiet(busy))
                && self.schedule.claim(n, worker, len) =>
            {
                Some(Run {
                    pos: 0,
                    last: false,
                })
            }
            None => None,
        };
        match (parking, probe) {
            (false, None) => decide(Kind::Spin),
            (false, Some(r)) => park(Kind::ParkProbe(r)),
            (true, None) => park(Kind::ParkMode),
            (true, Some(r)) => decide(Kind::SpinProbe(r)),
        }
    }

    /// Whether a park probe may run now: nothing else going on, and requests not arriving
    /// faster than parking's penalty.
    fn quiet(&self, busy: bool) -> bool {
        if busy {
            return false;
        }
        let interval = self.interval.load(Relaxed);
        let (s, p) = (
            self.spin_median.load(Relaxed),
            self.park_median.load(Relaxed),
        );
        let penalty = if s != 0 && p != 0 {
            p.saturating_sub(s).min(WAKE_CAP)
        } else {
            WAKE_PRIOR
        };
        interval == 0 || interval >= penalty
    }

    /// A spin window that began in this period took `spun` ns, ending `now`: charge it.
    pub(crate) fn spun(&self, now: Nanos, spun: Nanos) {
        self.roll(now);
        self.spent.fetch_add(spun, Relaxed);
    }

    /// The idle period that `decision` began ended with work found `d` ns after it began.
    /// `spun`: its first spin window ran (the worker got a spinner slot).
    pub(crate) fn end(&self, decision: Decision, spun: bool, d: Nanos) {
        if !self.adaptive {
            return;
        }
        let worker = decision.worker as usize;
        if let Some(run) = decision.probe() {
            self.probes.fetch_add(1, Relaxed);
            // The run's last period, or a spin probe refused a spinner slot: the run is over.
            if run.last || (decision.spins() && !spun) {
                self.schedule.release(worker);
            }
        }
        if decision.spins() && !spun {
            return;
        }
        let now = decision.began + d;
        let last = self.last_end.swap(now, Relaxed);
        if last != 0 && now > last {
            let between = (now - last).min(u32::MAX as u64) as u32;
            nudge(&self.interval, between, 0);
            level(&self.level_interval, between);
        }
        let n = self.periods.load(Relaxed);
        let d = d.min(u32::MAX as u64) as u32;
        self.learn_window(spun, d, n);
        // The first window's spin: all of `d` when it caught the work, the window otherwise.
        let s = if spun { d.min(decision.window) } else { 0 };
        if spun {
            self.thrift(s, d <= decision.window, n);
        }
        let shared = self.share.is_shared(now);
        let (spin, park) = (&self.spin_median, &self.park_median);
        match decision.kind {
            Kind::Spin => {
                nudge(spin, d, 0);
                level(&self.level, d);
                self.last_spin.store(d.max(1), Relaxed);
            }
            Kind::ParkMode => {
                nudge(park, d, 0);
                level(&self.level, d);
                self.last_park.store(d.max(1), Relaxed);
            }
            // A probe counts only once the current mode has a period to compare it with; its
            // own arm's median starts from the current one's.
            Kind::ParkProbe(Run { last: true, .. }) => {
                let spun_before = self.last_spin.load(Relaxed);
                if spun_before != 0 {
                    nudge(park, d, spin.load(Relaxed));
                    self.weigh(cheaper(d, spun_before), true, now, n);
                }
            }
            Kind::SpinProbe(Run { last: true, .. }) => {
                let parked_before = self.last_park.load(Relaxed);
                if parked_before != 0 {
                    nudge(spin, d, park.load(Relaxed));
                    self.weigh(cheaper(d, parked_before), false, now, n);
                }
            }
            _ => {}
        }
        self.check_regime(shared, n);
    }

    /// A recorded probe, `cheaper` or not than the current mode (the probed choice is
    /// parking: `toward_parking`): one step of the sequential test.
    fn weigh(&self, cheaper: bool, toward_parking: bool, now: Nanos, n: u32) {
        let (llr, verdict) = sprt::step(self.llr.load(Relaxed), cheaper, toward_parking);
        self.llr.store(llr, Relaxed);
        match verdict {
            Verdict::Flip => {
                self.parking.store(toward_parking, Relaxed);
                self.flipped_at.store(now, Relaxed);
                self.schedule.faster(n);
                self.set_regime(self.share.is_shared(now));
            }
            Verdict::Confirm => {
                self.schedule.slower();
                self.set_regime(self.share.is_shared(now));
            }
            Verdict::Continue if llr > sprt::flip_at(toward_parking) / 2 => {
                // The evidence turns against the current mode: gather it quickly.
                self.schedule.faster(n);
            }
            Verdict::Continue => {}
        }
    }

    /// Remembers the regime the test (re)starts in.
    fn set_regime(&self, shared: bool) {
        self.ref_level.store(self.level.load(Relaxed), Relaxed);
        self.ref_interval
            .store(self.level_interval.load(Relaxed), Relaxed);
        self.ref_window.store(self.window.load(Relaxed), Relaxed);
        self.ref_shared.store(shared, Relaxed);
    }

    /// If the regime moved away from the one the test started in, restart the test and probe
    /// at the fastest rate (see "When to probe").
    fn check_regime(&self, shared: bool, n: u32) {
        let (d, rd) = (
            self.level.load(Relaxed) as u64,
            self.ref_level.load(Relaxed) as u64,
        );
        if rd == 0 {
            if d != 0 {
                self.set_regime(shared);
            }
            return;
        }
        let (i, ri) = (
            self.level_interval.load(Relaxed) as u64,
            self.ref_interval.load(Relaxed) as u64,
        );
        let floor = GROW_FLOOR as u64;
        let (w, rw) = (
            (self.window.load(Relaxed) as u64).max(floor),
            (self.ref_window.load(Relaxed) as u64).max(floor),
        );
        let moved = d > 2 * rd
            || 2 * d < rd
            || (ri != 0 && (i > 2 * ri || 2 * i < ri))
            || w > 8 * rw
            || 8 * w < rw
            || shared != self.ref_shared.load(Relaxed);
        if moved {
            self.llr.store(0, Relaxed);
            self.schedule.faster(n);
            self.set_regime(shared);
        }
    }

    fn learn_window(&self, spun: bool, d: u32, n: u32) {
        let w = self.window.load(Relaxed);
        let long = d > self.max && spun;
        let streak = if long {
            self.expiring.fetch_add(1, Relaxed)
        } else {
            self.expiring.store(0, Relaxed);
            0
        };
        let new = if d > w && d <= self.max {
            if !reached(n, self.frugal_until.load(Relaxed)) {
                // Spinning did not pay for itself lately: no growing for now.
                return;
            }
            // Just past the window: cover it with a quarter to spare, at most doubling.
            let cover = d.saturating_add(d / 4);
            cover.min(w.saturating_mul(2).max(GROW_FLOOR)).min(self.max)
        } else if long {
            // Spun for a gap no window could catch; again and again: faster.
            let s = if streak < KEEP_EXPIRING {
                w - w / 8
            } else {
                w / 2
            };
            self.shrunk(s)
        } else {
            return;
        };
        self.window.store(new.clamp(self.min, self.max), Relaxed);
    }

    /// A shrink step's result: `min` once below the floor.
    fn shrunk(&self, w: u32) -> u32 {
        if w < SHRINK_FLOOR {
            self.min
        } else {
            w.max(self.min)
        }
    }

    /// The pay-for-itself rule (see "The window"): a spinning period at period `n` spun `s`
    /// ns and `caught` its work or not.
    fn thrift(&self, s: u32, caught: bool, n: u32) {
        self.thrift_spent.fetch_add(s as u64, Relaxed);
        self.thrift_caught.fetch_add(caught as u32, Relaxed);
        if self.thrift_count.fetch_add(1, Relaxed) + 1 < THRIFT_BLOCK {
            return;
        }
        self.thrift_count.store(0, Relaxed);
        let spent = self.thrift_spent.swap(0, Relaxed);
        let caught = self.thrift_caught.swap(0, Relaxed) as u64;
        // Plus one: a small window that caught nothing yet spent little (it is on its way up
        // to the gaps it will catch) is not a failure.
        if spent > self.max as u64 * (caught + 1) {
            self.window.store(self.min, Relaxed);
            let wait = self.frugal_for.load(Relaxed);
            self.frugal_until.store(n.wrapping_add(wait), Relaxed);
            self.frugal_for.store((wait * 2).min(FRUGAL_MAX), Relaxed);
        } else {
            self.frugal_for.store(FRUGAL_FIRST, Relaxed);
        }
    }

    /// Starts the current bucket of the budget at `now`, retiring the one before.
    fn roll(&self, now: Nanos) {
        let b = now >> BUDGET_SHIFT;
        let cur = self.bucket.load(Relaxed);
        if b > cur
            && self
                .bucket
                .compare_exchange(cur, b, Relaxed, Relaxed)
                .is_ok()
        {
            // The winner of the CAS retires the bucket. A charge racing with it may land in
            // either bucket: the budget is an estimate.
            let spent = self.spent.swap(0, Relaxed);
            let before = if b == cur + 1 { spent } else { 0 };
            self.spent_before.store(before, Relaxed);
        }
    }

    /// Spin time (ns) in the last `BUDGET_SPAN` before `now`, estimated.
    fn recent(&self, now: Nanos) -> u64 {
        self.roll(now);
        let into = now & (BUDGET_SPAN - 1);
        let before = self.spent_before.load(Relaxed) as u128 * (BUDGET_SPAN - into) as u128;
        self.spent.load(Relaxed) + (before >> BUDGET_SHIFT) as u64
    }

    /// Starts one spin window of `decision`'s length.
    pub(crate) fn start(&self, decision: Decision) -> SpinWindow {
        let now = Instant::now();
        let w = decision.window();
        SpinWindow {
            deadline: (!w.is_zero()).then(|| now + w),
            started: now,
            last: now,
            iterations: 0,
        }
    }
}

/// Whether a probe that cost `x` beats the current mode's latest period, which cost `y`, by
/// a sixteenth.
fn cheaper(x: u32, y: u32) -> bool {
    (x as u64 + x as u64 / 16) < y as u64
}

/// A slow average for the regime rule: moves `m` a 64th of the way to `x`, with `x` capped
/// at four times `m` (one preemption must not read as a new regime; a real change takes a
/// few dozen periods to double it). Unlike a median, it does not wander when the samples
/// have two modes far apart (50 µs and 5 ms gaps: every value between them is a median).
fn level(m: &AtomicU32, x: u32) {
    let cur = m.load(Relaxed) as i64;
    let new = if cur == 0 {
        x as i64
    } else {
        let x = (x as i64).min(4 * cur);
        cur + (x - cur) / 64
    };
    m.store(new.clamp(1, u32::MAX as i64) as u32, Relaxed);
}

/// The frugal streaming median step: move `m` towards `x` by at most `m / 32`. An estimate
/// without samples starts from `prior` (for a probe's arm, the other arm's estimate: "no
/// difference" until shown otherwise), or, if that is 0, from `x`.
fn nudge(m: &AtomicU32, x: u32, prior: u32) {
    let mut cur = m.load(Relaxed);
    if cur == 0 {
        cur = prior;
        if cur == 0 {
            m.store(x.max(1), Relaxed);
            return;
        }
    }
    let step = (cur / 32).max(1);
    let new = if x > cur {
        cur.saturating_add(step).min(x)
    } else {
        cur.saturating_sub(step).max(x).max(1)
    };
    m.store(new, Relaxed);
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

/// One spin window in progress; see the module documentation.
#[derive(Debug)]
pub(crate) struct SpinWindow {
    deadline: Option<Instant>,
    started: Instant,
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

    /// How long this window has spun so far.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

#[cfg(test)]
mod tests {
    //! The adaptive policy as a pure state machine: synthetic idle periods, synthetic time.
    //! Each period: the policy decides; the simulated world says when work turns up (the gap,
    //! which may depend on the decision, as with a client sharing the machine) and what a
    //! wake-up from parking costs; the policy is told what happened. No clock is read and
    //! nothing is timed: the assertions are about decisions. (The shared-CPU signal is fed
    //! by hand: these policies never read `/proc`.)
    use super::*;

    const US: u64 = 1_000;
    /// What waking a parked worker costs on the VM this was tuned on (a halted vCPU).
    const WAKE: u64 = 30 * US;

    fn policy() -> SpinPolicy {
        SpinPolicy::new(true, 0, 1_000_000, 250_000, 1.0, Share::disabled())
    }

    /// Marks the CPUs shared (two busy samples) at `now`, as `share.rs` would.
    fn share_cpus(p: &SpinPolicy, now: Nanos) {
        p.share.observe(now, 300);
        p.share.observe(now, 300);
        assert!(p.cpus_shared(now));
    }

    /// A client on the same machine, as `world` for [`run`]: after a spin the work comes
    /// 40 µs later and costs a wake-up anyway (the spinner kept the client off its CPU);
    /// after a park it comes 5 µs later, for a 2 µs wake-up.
    fn colocated(spins: bool) -> (u64, u64) {
        if spins {
            (40 * US, WAKE)
        } else {
            (5 * US, 2 * US)
        }
    }

    /// What the simulation saw, over the periods it counts.
    #[derive(Debug, Default)]
    struct Tally {
        periods: u64,
        found_spinning: u64,
        expired: u64,
        parked: u64,
        spin_ns: u64,
        d_ns: u64,
    }

    /// A tiny deterministic generator (xorshift), for random gaps without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// Uniform in [0, 1).
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        /// Exponential with this mean.
        fn exp(&mut self, mean: u64) -> u64 {
            (-(1.0 - self.unit()).ln() * mean as f64) as u64
        }
    }

    /// Runs `n` periods of worker 0, none of them busy; `world(spins)` gives (gap until work,
    /// cost of a wake-up) for a period that spins or parks at once. Counts only the last
    /// `count` periods.
    fn run(
        p: &SpinPolicy,
        now: &mut Nanos,
        n: usize,
        count: usize,
        world: impl FnMut(bool) -> (u64, u64),
    ) -> Tally {
        run_busy(p, now, n, count, |_| false, world)
    }

    /// [`run`], with `busy(i)` saying whether period `i` begins while the runtime is busy.
    fn run_busy(
        p: &SpinPolicy,
        now: &mut Nanos,
        n: usize,
        count: usize,
        mut busy: impl FnMut(usize) -> bool,
        mut world: impl FnMut(bool) -> (u64, u64),
    ) -> Tally {
        let mut t = Tally::default();
        for i in 0..n {
            let dec = p.begin(*now, 0, busy(i));
            let (gap, wake) = world(dec.spins());
            let w = dec.window().as_nanos() as u64;
            let counted = i >= n - count;
            let (d, spun_ns) = if dec.spins() && gap <= w {
                t.found_spinning += counted as u64;
                (gap, gap)
            } else if dec.spins() {
                t.expired += counted as u64;
                (gap + wake, w)
            } else {
                t.parked += counted as u64;
                (gap + wake, 0)
            };
            if dec.spins() {
                p.spun(*now + spun_ns, spun_ns);
            }
            p.end(dec, true, d);
            if counted {
                t.periods += 1;
                t.spin_ns += spun_ns;
                t.d_ns += d;
            }
            // The work itself takes 10 us.
            *now += d + 10 * US;
        }
        t
    }

    /// Periods until the policy parks (runs `world` in steps of 4), or `None` within `limit`.
    fn periods_to_park(
        p: &SpinPolicy,
        now: &mut Nanos,
        limit: usize,
        mut world: impl FnMut(bool) -> (u64, u64),
    ) -> Option<usize> {
        (1..=limit / 4).find_map(|i| {
            run(p, now, 4, 1, &mut world);
            p.parking().then_some(i * 4)
        })
    }

    #[test]
    fn steady_50us_gaps_are_caught_spinning() {
        let (p, mut now) = (policy(), 0);
        let t = run(&p, &mut now, 5_000, 1_000, |_| (50 * US, WAKE));
        assert!(!p.parking());
        assert!(p.window() >= Duration::from_micros(50));
        // Every park probe said "spinning is faster": the rate is down to a run per several
        // hundred periods, so nearly everything is caught by the spinner.
        assert!(t.found_spinning >= 990, "{t:?}");
        assert!(t.parked <= 10, "{t:?}");
        assert_eq!(t.expired, 0, "{t:?}");
    }

    /// The steady state's probe rate: one run (2 parks) per 1024 periods, so a remote client
    /// that always finds the spinner pays about 0.002 context switches per request.
    #[test]
    fn the_steady_state_probes_once_per_1024_periods() {
        let (p, mut now) = (policy(), 0);
        run(&p, &mut now, 20_000, 1, |_| (50 * US, WAKE));
        assert_eq!(p.probe_period(), probe::SLOWEST);
        let before = p.probes();
        let t = run(&p, &mut now, 100_000, 100_000, |_| (50 * US, WAKE));
        let runs = (p.probes() - before) / RUN as u64;
        // 100 000 / 1024 = 98 runs on average (spacings of 512..1536 periods).
        assert!((80..=120).contains(&runs), "{runs} runs");
        assert_eq!(t.parked, p.probes() - before, "only probes park");
        assert!(t.parked as f64 / t.periods as f64 <= 0.0025, "{t:?}");
    }

    #[test]
    fn steady_300us_gaps_grow_the_window_past_them() {
        let (p, mut now) = (policy(), 0);
        // The window starts at 250 us, just short of the gap: it must grow within a few
        // periods (counting from the first).
        let first = run(&p, &mut now, 40, 40, |_| (300 * US, WAKE));
        assert!(first.expired <= 2, "settles in a few periods: {first:?}");
        let t = run(&p, &mut now, 5_000, 1_000, |_| (300 * US, WAKE));
        let w = p.window();
        assert!(
            w >= Duration::from_micros(300) && w <= Duration::from_millis(1),
            "{w:?}"
        );
        assert!(t.found_spinning >= 990, "{t:?}");
        assert!(!p.parking());
    }

    /// 900 us gaps cost 900 us of spinning per catch, under the maximum: the pay-for-itself
    /// rule leaves them alone.
    #[test]
    fn steady_900us_gaps_pay_for_their_spinning() {
        let (p, mut now) = (policy(), 0);
        let t = run(&p, &mut now, 5_000, 1_000, |_| (900 * US, WAKE));
        assert!(p.window() >= Duration::from_micros(900), "{:?}", p.window());
        assert!(t.found_spinning >= 990, "{t:?}");
    }

    #[test]
    fn steady_5ms_gaps_shrink_the_window_to_nothing() {
        let (p, mut now) = (policy(), 0);
        let first = run(&p, &mut now, 14, 14, |_| (5_000 * US, WAKE));
        assert_eq!(p.window(), Duration::ZERO, "settles within 14 periods");
        // What settling cost: a few windows' worth of spinning.
        assert!(first.spin_ns <= 1_200 * US, "{first:?}");
        let t = run(&p, &mut now, 500, 100, |_| (5_000 * US, WAKE));
        assert_eq!(p.window(), Duration::ZERO);
        // No CPU burned on spinning once settled.
        assert_eq!(t.spin_ns, 0, "{t:?}");
        assert_eq!(t.parked, 100);
    }

    #[test]
    fn gaps_past_the_maximum_are_not_chased() {
        let (p, mut now) = (policy(), 0);
        run(&p, &mut now, 500, 1, |_| (2_000 * US, WAKE));
        assert_eq!(p.window(), Duration::ZERO);
    }

    /// Poisson arrivals with a 2 ms mean: 39 % of the gaps are under the 1 ms maximum, so
    /// without the pay-for-itself rule the window stays up and spins over 200 us per period
    /// (some 2 ms per request caught). With it, spinning is rare and short.
    #[test]
    fn memoryless_long_gaps_do_not_buy_their_spinning() {
        for seed in 1..=3u64 {
            let (p, mut now) = (policy(), 0);
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let t = run(&p, &mut now, 20_000, 20_000, |_| {
                (rng.exp(2_000 * US), WAKE)
            });
            let per_period = t.spin_ns / t.periods;
            assert!(
                per_period <= 80 * US,
                "seed {seed}: {per_period} ns per period"
            );
        }
        // Without the rule (no block of 16 spinning periods is ever complete): the cost it
        // saves.
        let (p, mut now) = (policy(), 0);
        let mut rng = Rng(7);
        let t = run(&p, &mut now, 2_000, 2_000, |_| {
            p.thrift_count.store(0, Relaxed);
            (rng.exp(2_000 * US), WAKE)
        });
        assert!(t.spin_ns / t.periods >= 200 * US, "{t:?}");
    }

    /// After long memoryless gaps drove the window to zero and held it there, short gaps
    /// bring it back: the hold is counted in idle periods, spinning or not.
    #[test]
    fn the_window_comes_back_after_a_pay_for_itself_hold() {
        let (p, mut now) = (policy(), 0);
        let mut rng = Rng(3);
        run(&p, &mut now, 20_000, 1, |_| (rng.exp(2_000 * US), WAKE));
        // The window at zero, and the longest hold just started.
        p.window.store(0, Relaxed);
        let n = p.periods.load(Relaxed);
        p.frugal_until.store(n.wrapping_add(FRUGAL_MAX), Relaxed);
        let t = run(&p, &mut now, 20_000, 1_000, |_| (50 * US, WAKE));
        assert!(p.window() >= Duration::from_micros(50), "{:?}", p.window());
        assert!(t.found_spinning >= 990, "{t:?}");
    }

    #[test]
    fn bimodal_gaps_keep_the_window_just_past_the_short_mode() {
        let (p, mut now) = (policy(), 0);
        let mut rng = Rng(0x5eed);
        let mut gap = |_| {
            let short = rng.next() & 1 == 0;
            (if short { 50 * US } else { 5_000 * US }, WAKE)
        };
        let t = run(&p, &mut now, 10_000, 2_000, &mut gap);
        let w = p.window();
        assert!(
            w <= Duration::from_micros(200),
            "window chases the long gaps: {w:?}"
        );
        // Most short gaps (half the periods) are caught spinning...
        assert!(t.found_spinning >= 650, "{t:?}");
        // ...and the long ones cost little spinning each: under 200 us on average.
        assert!(t.spin_ns / 2_000 < 200 * US, "{t:?}");
        assert!(!p.parking());
    }

    /// A client on the same machine in a closed loop, in a world where its requests come
    /// sooner after a park: while the server spins, the client's next request comes later
    /// (the spinner holds a CPU the client wants) and is caught spinning after 40 us; when
    /// the server parks, it comes after 5 us and the wake-up is a same-CPU one (2 us).
    /// Parking gives the shorter idle-to-work time: stop spinning, after 16 recorded probes
    /// (the sequential test's bar, `sprt.rs`) at the fastest rate, a run per ~8 periods.
    #[test]
    fn colocated_client_stops_the_spinning() {
        let (p, mut now) = (policy(), 0);
        let mut world = colocated;
        let settled = periods_to_park(&p, &mut now, 2_000, &mut world).expect("never parked");
        assert!(
            p.probes() >= 16 * RUN as u64,
            "flipped on too little evidence: {} probe periods",
            p.probes()
        );
        assert!(settled <= 16 * 12 + 16, "took {settled} periods");
        let t = run(&p, &mut now, 5_000, 1_600, &mut world);
        assert!(p.parking(), "{t:?}");
        // Spin probes say parking holds: they slow down too.
        assert!(t.parked >= 1_600 - 20, "{t:?}");
        assert!(p.since_flip(now) > Duration::ZERO);
    }

    /// The same with the client sleeping 100 us between requests and noise on everything:
    /// spinning makes `d` some 35 us longer instead of several times longer.
    #[test]
    fn colocated_client_with_gaps_and_jitter_stops_the_spinning() {
        let (p, mut now) = (policy(), 0);
        let mut rng = Rng(7);
        let t = run(&p, &mut now, 4_000, 1_000, |spins| {
            let jitter = rng.exp(20 * US);
            if spins {
                (160 * US + jitter, WAKE)
            } else {
                (100 * US + jitter, 25 * US)
            }
        });
        assert!(p.parking(), "{t:?}");
    }

    /// A client on the same machine whose benefit from parking shows only from the third
    /// parked period in a row on (the scheduler needs a few wake-ups to place the client and
    /// the server side by side): runs of 2 never see it, so without the shared-CPU signal the
    /// policy keeps spinning; with it, park-probe runs are 4 periods long, their recorded
    /// period sees the benefit, and the mode flips after 16 recorded probes. The time to flip
    /// is counted from the signal.
    #[test]
    fn the_shared_cpu_signal_lengthens_park_probes_and_the_evidence_flips() {
        let needs_three_parks = || {
            let mut parked_in_a_row = 0;
            move |spins: bool| {
                parked_in_a_row = if spins { 0 } else { parked_in_a_row + 1 };
                if spins || parked_in_a_row < 3 {
                    (56 * US, WAKE)
                } else {
                    (20 * US, 2 * US)
                }
            }
        };
        let (p, mut now) = (policy(), 0);
        let t = run(&p, &mut now, 100_000, 10_000, needs_three_parks());
        assert!(!p.parking(), "runs of 2 cannot see it: {t:?}");
        assert_eq!(
            p.probe_period(),
            probe::SLOWEST,
            "and the mode is confirmed"
        );
        share_cpus(&p, now);
        let flipped =
            periods_to_park(&p, &mut now, 2_000, needs_three_parks()).expect("never parked");
        // 16 recorded probes at a run per ~8 periods (4 of them parked), and the run that
        // was due at the slowest rate before the signal brought the next one close.
        assert!(flipped <= 16 * 12 + 16, "took {flipped} periods");
        let t = run(&p, &mut now, 5_000, 1_000, needs_three_parks());
        assert!(p.parking(), "{t:?}");
        assert!(t.parked >= 1_000 - 20, "spin probes slow down too: {t:?}");
    }

    /// The shared-CPU signal never flips the mode alone: a client whose requests come sooner
    /// after a spin than after a park (a remote client, with some other process busy on our
    /// CPU the whole time) keeps the spinning over a million idle periods, whatever its gaps.
    #[test]
    fn shared_cpus_with_a_remote_client_never_flip_in_a_million_periods() {
        for (gap, poisson) in [(20 * US, false), (300 * US, false), (200 * US, true)] {
            let (p, mut now) = (policy(), 0);
            let mut rng = Rng(0xc0ffee ^ gap);
            for _ in 0..100 {
                share_cpus(&p, now);
                run(&p, &mut now, 10_000, 1, |_| {
                    (if poisson { rng.exp(gap) } else { gap }, WAKE)
                });
                assert!(!p.parking(), "{gap} ns gaps: flipped at {now} ns");
            }
            assert!(p.probes() > 0);
        }
    }

    /// The signal never flips the mode alone: a client that sends back to back (14 us gaps
    /// when spun for, 44 us with a park) keeps the spinning, shared CPUs or not.
    #[test]
    fn shared_cpus_keep_spinning_that_pays_for_itself() {
        let (p, mut now) = (policy(), 0);
        share_cpus(&p, now);
        // The same gap either way; a park adds the wake-up.
        let world = |_| (14 * US, WAKE);
        for _ in 0..20 {
            run(&p, &mut now, 1_000, 1, world);
            assert!(!p.parking());
            // Keep the CPUs shared throughout.
            share_cpus(&p, now);
        }
    }

    /// Parking does not hold for as long as the CPUs count as shared: a remote client parked
    /// for (the mode flipped on a colocated client that then moved away) gets spinning back
    /// from the spin probes while the CPUs stay shared.
    #[test]
    fn shared_cpus_do_not_hold_parking() {
        let (p, mut now) = (policy(), 0);
        share_cpus(&p, now);
        run(&p, &mut now, 3_000, 1, colocated);
        assert!(p.parking());
        let mut back = None;
        for i in 0..100 {
            share_cpus(&p, now);
            run(&p, &mut now, 20, 1, |_| (50 * US, WAKE));
            if !p.parking() {
                back = Some(i * 20);
                break;
            }
        }
        let back = back.expect("parking held");
        // The regime rule notices the longer gaps within a few dozen periods and brings the
        // rate from the slowest back to the fastest; then 12 recorded spin probes, a run per
        // ~8 periods.
        assert!(back <= 400, "took {back} periods");
        assert!(p.cpus_shared(now));
    }

    /// And when the client moves to another machine, the spin probes bring spinning back.
    #[test]
    fn spinning_comes_back_when_it_pays_again() {
        let (p, mut now) = (policy(), 0);
        run(&p, &mut now, 3_000, 1, colocated);
        assert!(p.parking());
        let t = run(&p, &mut now, 5_000, 1_000, |_| (20 * US, WAKE));
        assert!(!p.parking(), "a remote client: spinning saves a wake-up");
        assert!(t.found_spinning >= 950, "{t:?}");
    }

    /// Open-loop arrivals from a remote client, exponential gaps: spinning and parking see
    /// the same gaps, parking adds a wake-up, so spinning must never be given up, whatever
    /// the luck of the draw (several seeds, many probes). (With a mean of 2 ms, past the
    /// maximum window, the two choices give about the same `d` and either mode is right.)
    #[test]
    fn poisson_remote_never_stops_spinning() {
        for mean in [20 * US, 200 * US] {
            for seed in 1..=4u64 {
                let (p, mut now) = (policy(), 0);
                let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                for _ in 0..40 {
                    run(&p, &mut now, 500, 1, |_| (rng.exp(mean), WAKE));
                    assert!(!p.parking(), "mean {mean} seed {seed}");
                }
            }
        }
    }

    /// A million idle periods of a stationary remote client whose park probes still beat the
    /// spin median about 4 times in 10 (Poisson gaps, mean 200 us): no flip, and the probes
    /// settle to the slowest rate.
    #[test]
    fn a_stationary_remote_trace_never_flips_in_a_million_periods() {
        let (p, mut now) = (policy(), 0);
        let mut rng = Rng(0xfeed_beef);
        for _ in 0..100 {
            run(&p, &mut now, 10_000, 1, |_| (rng.exp(200 * US), WAKE));
            assert!(!p.parking(), "flipped at {now} ns");
        }
        assert_eq!(p.since_flip(now), Duration::from_nanos(now));
        // Far fewer than the 1 in 16 of a fixed rate: on average under 1 in 150.
        assert!(p.probes() < 1_000_000 / 150, "{} probes", p.probes());
    }

    /// One park probe far shorter than anything else (a fluke) cannot flip the mode.
    #[test]
    fn one_outlier_probe_cannot_flip() {
        let (p, mut now) = (policy(), 0);
        let mut fluke = true;
        let t = run(&p, &mut now, 4_000, 4_000, |spins| {
            if !spins && std::mem::take(&mut fluke) {
                (0, 0)
            } else {
                (50 * US, WAKE)
            }
        });
        assert!(!fluke, "the fluke was drawn");
        assert!(!p.parking(), "{t:?}");
    }

    /// A local client whose benefit from parking shows only from the second parked period
    /// in a row on (the first still pays for the placement spinning left behind): single
    /// probes would never see it; runs with a warm-up do.
    #[test]
    fn colocated_benefit_that_needs_consecutive_parks_is_found() {
        let (p, mut now) = (policy(), 0);
        let mut parked_in_a_row = 0;
        let t = run(&p, &mut now, 4_000, 1_000, |spins| {
            parked_in_a_row = if spins { 0 } else { parked_in_a_row + 1 };
            if spins || parked_in_a_row < 2 {
                (40 * US, WAKE)
            } else {
                (5 * US, 2 * US)
            }
        });
        assert!(p.parking(), "{t:?}");
    }

    /// No park probe while the runtime is busy (another worker awake, work queued), however
    /// long: a due run waits for a quiet moment, and then takes it.
    #[test]
    fn busy_moments_get_no_park_probes() {
        let (p, mut now) = (policy(), 0);
        let t = run_busy(&p, &mut now, 10_000, 10_000, |_| true, |_| (50 * US, WAKE));
        assert_eq!(t.parked, 0, "{t:?}");
        assert_eq!(p.probes(), 0);
        // The first quiet period takes the overdue run.
        let t = run_busy(&p, &mut now, 2, 2, |_| false, |_| (50 * US, WAKE));
        assert_eq!(t.parked, 2, "{t:?}");
    }

    /// Requests that arrive faster than a wake-up takes (here every 20 us, against a park
    /// penalty of 30 us) get no park probes: a parked worker would wake to a queue.
    #[test]
    fn fast_arrivals_get_no_park_probes() {
        let (p, mut now) = (policy(), 0);
        // Let it learn the penalty of parking on slower arrivals first.
        run(&p, &mut now, 2_000, 1, |_| (100 * US, WAKE));
        assert!(p.probes() > 0);
        let before = p.probes();
        let t = run(&p, &mut now, 20_000, 19_000, |_| (10 * US, WAKE));
        // Perhaps a run or two while the arrival interval is being learned, then none.
        assert!(p.probes() - before <= 2 * RUN as u64, "{t:?}");
        assert!(t.parked == 0, "{t:?}");
    }

    /// Only one worker probes at a time: while one worker's run is in progress, another's
    /// idle periods follow the mode.
    #[test]
    fn one_worker_probes_at_a_time() {
        let (p, mut now) = (policy(), 0);
        // Two workers, taking turns; worker 0 is the first to find a run due.
        let mut claimed = None;
        for _ in 0..100 {
            let a = p.begin(now, 0, false);
            if a.probe().is_some() {
                claimed = Some(a);
                break;
            }
            now += 50 * US;
            p.end(a, true, 50 * US);
        }
        let a = claimed.expect("a run came due");
        assert_eq!(a.probe().map(|r| r.pos), Some(0));
        let b = p.begin(now, 1, false);
        assert_eq!(b.kind, Kind::Spin, "worker 1 while worker 0 probes");
        now += 80 * US;
        p.end(a, false, 80 * US);
        p.end(b, true, 80 * US);
        // Worker 1 again (a new run may be due), then worker 0 continues its run.
        let b = p.begin(now, 1, false);
        assert_eq!(b.kind, Kind::Spin);
        let a = p.begin(now, 0, false);
        assert_eq!(a.kind, Kind::ParkProbe(Run { pos: 1, last: true }));
        p.end(a, false, 80 * US);
        p.end(b, true, 50 * US);
        // The run is over: worker 0 spins again.
        assert_eq!(p.begin(now, 0, false).kind, Kind::Spin);
    }

    /// A change of regime (the gap moves from 50 to 300 us) brings probing back to the
    /// fastest rate, and the test then confirms the mode and slows it down again.
    #[test]
    fn a_regime_change_brings_back_fast_probing() {
        let (p, mut now) = (policy(), 0);
        run(&p, &mut now, 20_000, 1, |_| (50 * US, WAKE));
        assert_eq!(p.probe_period(), probe::SLOWEST);
        let mut fastest = false;
        for _ in 0..100 {
            run(&p, &mut now, 10, 1, |_| (300 * US, WAKE));
            fastest |= p.probe_period() == probe::FASTEST;
        }
        assert!(fastest, "never probed faster after the change");
        run(&p, &mut now, 20_000, 1, |_| (300 * US, WAKE));
        assert_eq!(p.probe_period(), probe::SLOWEST);
        assert!(!p.parking());
    }

    #[test]
    fn the_budget_parks_workers_once_spent() {
        let p = SpinPolicy::fixed(Duration::from_micros(100), 0.25);
        let mut now = 0;
        let mut spun = 0;
        // Two spinners' worth of spinning requested, back to back, for 4 seconds.
        while now < 4 * BUDGET_SPAN {
            for w in 0..2 {
                if p.begin(now, w, false).spins() {
                    p.spun(now, 100 * US);
                    spun += 100 * US;
                }
            }
            now += 100 * US;
        }
        let cores = spun as f64 / now as f64;
        assert!(
            cores > 0.2 && cores < 0.3,
            "spun {cores} cores against a budget of 0.25"
        );
        // A budget of one core does not stop one spinner that never stops.
        let p = SpinPolicy::fixed(Duration::from_micros(100), 1.0);
        let mut now = 0;
        while now < 4 * BUDGET_SPAN {
            assert!(
                p.begin(now, 0, false).spins(),
                "one spinner throttled at {now}"
            );
            now += 100 * US;
            p.spun(now, 100 * US);
        }
    }

    #[test]
    fn a_fixed_window_never_changes() {
        let p = SpinPolicy::fixed(Duration::from_micros(250), 1.0);
        let mut now = 0;
        let t = run(&p, &mut now, 1_000, 1_000, |_| (5_000 * US, WAKE));
        assert_eq!(p.window(), Duration::from_micros(250));
        assert_eq!(t.parked, 0);
        assert_eq!((p.probes(), p.probe_period()), (0, 0));
        let zero = SpinPolicy::fixed(Duration::ZERO, 1.0);
        assert!(!zero.begin(0, 0, false).spins());
    }
}
