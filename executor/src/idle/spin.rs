//! The spin policy: whether, and for how long, an idle worker spins before it parks.
//!
//! ```text
//! let decision = policy.begin(now);            // an idle period starts
//! if decision.spins() { spin for decision.window(), then policy.spun(now, spun_ns) }
//! ... park if nothing turned up ...
//! policy.end(decision, spun, d);               // work found d ns after the period began
//! ```
//!
//! [`SpinPolicy`] is the only place in `idle` that decides spinning. It has two forms:
//! *fixed* (`Builder::spin`: always the same window) and *adaptive* (the default,
//! `Builder::spin_adaptive(min, max)`), which learns from every idle period of every worker of
//! its runtime. Both obey a CPU budget. The policy takes time as an input (nanoseconds since
//! the runtime started, [`Nanos`]), so its decisions can be tested by feeding it synthetic
//! gaps; only `SpinPolicy::now` and [`SpinWindow`] read the clock.
//!
//! # What it learns from
//!
//! Every idle period ends with work found `d` after it began, spinning or parked: `d` is the
//! gap until the next piece of work plus, when the worker had parked, the wake-up (20-40 µs
//! on a VM whose idle vCPU halts, a few µs on bare metal). A period in which the worker was
//! refused a spinner slot (`max_spinners`) teaches nothing: it neither spun nor chose to park.
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
//! * A gap covered by the window changes nothing: spinning stopped when the work came.
//!
//! # Does spinning pay?
//!
//! Spinning is meant to make the next piece of work start sooner, but it need not: with a
//! local client in a closed loop, a spinner holds a CPU the client could use, and the
//! client's next request comes *later* than if the server had parked. So the policy runs a
//! small experiment all the time. In a run of 8 consecutive idle periods out of every 128 (at
//! a position within each block chosen by a hash of the block number, so a periodic workload
//! cannot alias with it) it does the opposite of its current mode: when spinning, it parks at
//! once (*park probes*); when parking, it spins its current window (*spin probes*). Probes are
//! 1 in 16 periods, so they cannot dominate a p99; none run while the window is zero (both
//! choices are then the same). They come in runs because the effect to detect is not
//! instantaneous: with a local client, what parking gains is that the server's thread gets
//! woken next to the client (the scheduler's wake-affine placement) so that the next reply
//! wakes the client on the same CPU; the first parked period still pays for the placement the
//! spinning left behind. So the first 2 periods of a run are a warm-up and only the other 6
//! are recorded.
//!
//! The two arms each keep a running *median* estimate of `d` (`spin_median`, `park_median`),
//! updated with the frugal streaming rule: each sample moves the estimate towards itself by
//! at most a 32nd of the estimate (and never past the sample). A sample ten times too large,
//! from a preemption or a page fault, moves it by 3 % like any other sample above it, and the
//! estimate converges to the median of the samples, which is what p50 is judged on. The
//! current mode's arm gets 15 samples per probe and is stable; an arm without samples starts
//! from the other arm's estimate ("no difference" until shown otherwise), so an outlier
//! first probe cannot set it far off.
//!
//! Comparing two noisy medians directly flips on noise: with exponential gaps of mean
//! 200 µs, each estimate wanders by tens of microseconds, as much as the wake-up that is the
//! real difference. So the decision is a *median test* over the last 32 probes: each probe
//! records one bit, whether its `d` fell below the current mode's median. If the probed
//! choice makes no difference, each bit is a coin flip; if it is worse (parking, with a
//! remote client: one wake-up longer), the bits are mostly 0. The mode flips only when,
//! after at least 32 probes since the last flip:
//!
//! * spinning → parking: at least 26 of the last 32 park probes came in below the spin
//!   median (a fair coin does that with probability 3·10⁻⁴, a coin biased the wrong way far
//!   less), *and* the park median sits below the spin median by more than an eighth of it
//!   (an effect worth acting on, not a statistically real but tiny one);
//! * parking → spinning: at least 20 of the last 32 spin probes came in below the park
//!   median, and the spin median is below the park median by more than an eighth. The bar is
//!   lower on the way back: parking wrongly, with a remote client, costs every request a
//!   wake-up, so once spinning is clearly faster again it should return soon; the way into
//!   parking is the one a noisy workload must not take by accident.
//!
//! One noisy sample is one bit of 32 and moves a median by 3 %: it cannot flip the mode. The
//! 32 bits come from at least 6 runs, several hundred periods apart, so a burst of bad luck
//! inside one run (6 bits) cannot flip it either; the bits of one run are not independent,
//! which is why the thresholds are set well above what a fair coin reaches. With a client on
//! the same machine (parking's `d` several times shorter), nearly every recorded park probe
//! comes in below, and the flip happens after 6 runs, about 700 idle periods.
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
//! The state is a handful of atomics per runtime (window, two medians, mode and history, a
//! period counter, three for the budget), read and written with relaxed loads and stores: two
//! workers that update the same estimate at once may lose one sample, which a statistic can
//! afford. Nothing allocates.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Nanoseconds since the runtime started: the policy's clock.
pub(crate) type Nanos = u64;

/// Probes come in runs of `PROBE_RUN` consecutive idle periods, one run per `PROBE_BLOCK`
/// periods (so 1 in 16), of which the first `PROBE_WARMUP` are not recorded.
const PROBE_BLOCK: u32 = 128;
const PROBE_RUN: u32 = 8;
const PROBE_WARMUP: u32 = 2;
/// The smallest window a grow step reaches from zero.
const GROW_FLOOR: u32 = 16_000;
/// Spins that expired for gaps past `max` this many times in a row halve the window.
const KEEP_EXPIRING: u32 = 4;
/// A shrinking window below this becomes `min`.
const SHRINK_FLOOR: u32 = 4_000;
/// The budget's sliding window: 2^30 ns, about a second.
const BUDGET_SHIFT: u32 = 30;
const BUDGET_SPAN: u64 = 1 << BUDGET_SHIFT;

/// `state`: bits 0-31, whether each of the last 32 probes came in below the current mode's
/// median (bit 0 the latest); bits 32-39, probes since the last flip (at most 32); bit 40,
/// parking mode.
const HISTORY: u64 = 0xffff_ffff;
const PROBES_ONE: u64 = 1 << 32;
const PROBES: u64 = 0xff << 32;
const PARKING: u64 = 1 << 40;
/// Probes in the history, and how many must favour the probed choice to flip.
const WINDOW_PROBES: u64 = 32;
const TO_PARKING: u32 = 26;
const TO_SPINNING: u32 = 20;

/// What the policy decided at the start of an idle period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decision {
    window: u32,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Spin (the current mode, or a fixed window).
    Spin,
    /// Spin, as a probe while parking is the mode (`true`: recorded, past the warm-up).
    SpinProbe(bool),
    /// Park at once: a probe while spinning is the mode (`true`: recorded).
    ParkProbe(bool),
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
    /// Running medians of `d`, ns, when spinning and when parking at once (0: no sample).
    spin_median: AtomicU32,
    park_median: AtomicU32,
    /// The mode and the probe history; see `HISTORY`.
    state: AtomicU64,
    /// Idle periods begun, for the probe schedule.
    periods: AtomicU32,
    /// Consecutive periods whose spin expired for a gap past `max`.
    expiring: AtomicU32,
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

impl SpinPolicy {
    /// Always spin for `window` (zero: never spin), within `budget` cores.
    pub(crate) fn fixed(window: Duration, budget: f64) -> Self {
        let w = ns32(window);
        Self::new(false, w, w, w, budget)
    }

    /// Learn the window within `min..=max`, starting from `initial`, within `budget` cores.
    pub(crate) fn adaptive(min: Duration, max: Duration, initial: Duration, budget: f64) -> Self {
        let (min, max) = (ns32(min), ns32(max).max(ns32(min)));
        Self::new(true, min, max, ns32(initial).clamp(min, max), budget)
    }

    fn new(adaptive: bool, min: u32, max: u32, window: u32, budget: f64) -> Self {
        Self {
            adaptive,
            min,
            max,
            window: AtomicU32::new(window),
            spin_median: AtomicU32::new(0),
            park_median: AtomicU32::new(0),
            state: AtomicU64::new(0),
            periods: AtomicU32::new(0),
            expiring: AtomicU32::new(0),
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
        self.state.load(Relaxed) & PARKING != 0
    }

    /// Spin time over the last second or so (2^30 ns).
    pub(crate) fn recent_spin(&self, now: Nanos) -> Duration {
        Duration::from_nanos(self.recent(now))
    }

    /// The decision for an idle period starting `now`.
    pub(crate) fn begin(&self, now: Nanos) -> Decision {
        let window = self.window.load(Relaxed);
        let decide = |kind| Decision { window, kind };
        let park = |kind| Decision { window: 0, kind };
        if window == 0 {
            return park(Kind::Zero);
        }
        // A little slack: a window is charged when it ends, to the bucket it ends in, so one
        // spinner spinning all the time may read as slightly over one core.
        if self.recent(now) > self.budget + (BUDGET_SPAN >> 5) {
            return park(Kind::Budget);
        }
        if !self.adaptive {
            return decide(Kind::Spin);
        }
        let n = self.periods.fetch_add(1, Relaxed);
        let into_run = (n % PROBE_BLOCK).wrapping_sub(probe_start(n / PROBE_BLOCK));
        let record = into_run >= PROBE_WARMUP;
        match (self.parking(), into_run < PROBE_RUN) {
            (false, false) => decide(Kind::Spin),
            (false, true) => park(Kind::ParkProbe(record)),
            (true, false) => park(Kind::ParkMode),
            (true, true) => decide(Kind::SpinProbe(record)),
        }
    }

    /// A spin window that began in this period took `spun` ns, ending `now`: charge it.
    pub(crate) fn spun(&self, now: Nanos, spun: Nanos) {
        self.roll(now);
        self.spent.fetch_add(spun, Relaxed);
    }

    /// The idle period that `decision` began ended with work found `d` ns after it began.
    /// `spun`: its first spin window ran (the worker got a spinner slot).
    pub(crate) fn end(&self, decision: Decision, spun: bool, d: Nanos) {
        if !self.adaptive || (decision.spins() && !spun) {
            return;
        }
        let d = d.min(u32::MAX as u64) as u32;
        self.learn_window(spun, d);
        let (spin, park) = (&self.spin_median, &self.park_median);
        // The current mode's arm starts from its first sample; a probe counts only once that
        // arm has one, and its own arm starts from it.
        let probe = |probed: &AtomicU32, current: &AtomicU32, spin: bool| {
            let median = current.load(Relaxed);
            if median != 0 {
                nudge(probed, d, median);
                self.weigh(spin, d < median);
            }
        };
        match decision.kind {
            Kind::Spin => nudge(spin, d, 0),
            Kind::ParkMode => nudge(park, d, 0),
            Kind::ParkProbe(true) => probe(park, spin, false),
            Kind::SpinProbe(true) => probe(spin, park, true),
            Kind::ParkProbe(false) | Kind::SpinProbe(false) | Kind::Budget | Kind::Zero => {}
        }
    }

    fn learn_window(&self, spun: bool, d: u32) {
        let w = self.window.load(Relaxed);
        let long = d > self.max && spun;
        let streak = if long {
            self.expiring.fetch_add(1, Relaxed)
        } else {
            self.expiring.store(0, Relaxed);
            0
        };
        let new = if d > w && d <= self.max {
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
            if s < SHRINK_FLOOR {
                self.min
            } else {
                s
            }
        } else {
            return;
        };
        self.window.store(new.clamp(self.min, self.max), Relaxed);
    }

    /// After a probe of `spin` (spinning, or parking at once) whose `d` was `below` the
    /// current mode's median: record it, and flip the mode on enough evidence.
    fn weigh(&self, spin: bool, below: bool) {
        let state = self.state.load(Relaxed);
        let history = ((state & HISTORY) << 1 | below as u64) & HISTORY;
        let probes = ((state & PROBES) + PROBES_ONE).min(WINDOW_PROBES * PROBES_ONE);
        let mut next = (state & PARKING) | probes | history;
        let (s, p) = (
            self.spin_median.load(Relaxed),
            self.park_median.load(Relaxed),
        );
        let (probed, current) = if spin { (s, p) } else { (p, s) };
        let needed = if spin { TO_SPINNING } else { TO_PARKING };
        if probes == WINDOW_PROBES * PROBES_ONE
            && history.count_ones() >= needed
            && probed.saturating_add(current / 8) < current
        {
            next = (state & PARKING) ^ PARKING;
        }
        self.state.store(next, Relaxed);
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

/// Where, within block `block` of `PROBE_BLOCK` periods, the probe run starts.
fn probe_start(block: u32) -> u32 {
    // A multiplicative hash (Knuth's), top bits: spreads consecutive blocks.
    (block.wrapping_mul(0x9e37_79b9) >> (32 - PROBE_BLOCK.trailing_zeros()))
        % (PROBE_BLOCK - PROBE_RUN + 1)
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
    //! nothing is timed: the assertions are about decisions.
    use super::*;

    const US: u64 = 1_000;
    /// What waking a parked worker costs on the VM this was tuned on (a halted vCPU).
    const WAKE: u64 = 30 * US;

    fn policy() -> SpinPolicy {
        SpinPolicy::adaptive(
            Duration::ZERO,
            Duration::from_millis(1),
            Duration::from_micros(250),
            1.0,
        )
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

    /// Runs `n` periods; `world(spins)` gives (gap until work, cost of a wake-up) for a
    /// period that spins or parks at once. Counts only the last `count` periods.
    fn run(
        p: &SpinPolicy,
        now: &mut Nanos,
        n: usize,
        count: usize,
        mut world: impl FnMut(bool) -> (u64, u64),
    ) -> Tally {
        let mut t = Tally::default();
        for i in 0..n {
            let dec = p.begin(*now);
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

    #[test]
    fn steady_50us_gaps_are_caught_spinning() {
        let (p, mut now) = (policy(), 0);
        let t = run(&p, &mut now, 5_000, 1_000, |_| (50 * US, WAKE));
        assert!(!p.parking());
        assert!(p.window() >= Duration::from_micros(50));
        // Everything but the park probes (1 in 16) is caught by the spinner.
        assert!(t.found_spinning >= 930, "{t:?}");
        assert!(t.parked <= 1_000 / 16 + 1, "{t:?}");
        assert_eq!(t.expired, 0, "{t:?}");
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
        assert!(t.found_spinning >= 930, "{t:?}");
        assert!(!p.parking());
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

    /// A client on the same machine in a closed loop: while the server spins, the client's
    /// next request comes later (the spinner holds a CPU the client wants) and is caught
    /// spinning after 40 us; when the server parks, it comes after 5 us and the wake-up is a
    /// same-CPU one (2 us). Parking gives the shorter idle-to-work time: stop spinning.
    #[test]
    fn colocated_client_stops_the_spinning() {
        let (p, mut now) = (policy(), 0);
        let mut world = |spins: bool| {
            if spins {
                (40 * US, WAKE)
            } else {
                (5 * US, 2 * US)
            }
        };
        let mut settled = None;
        for i in 0..400 {
            run(&p, &mut now, 16, 1, &mut world);
            if p.parking() {
                settled = Some((i + 1) * 16);
                break;
            }
        }
        let settled = settled.expect("never stopped spinning");
        // 32 recorded probes: at least 6 runs of 6 (a run per 128 periods, 2 of its 8 a
        // warm-up), so more than 5 blocks.
        assert!(
            settled > 5 * 128,
            "flipped on too little evidence: {settled} periods"
        );
        assert!(settled <= 8 * 128, "took {settled} periods");
        let t = run(&p, &mut now, 5_000, 1_600, &mut world);
        assert!(p.parking(), "{t:?}");
        // Only the spin probes spin: at most 1 in 16.
        assert!(t.parked >= 1_600 - 1_600 / 16 - 1, "{t:?}");
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

    /// And when the client moves to another machine, the spin probes bring spinning back.
    #[test]
    fn spinning_comes_back_when_it_pays_again() {
        let (p, mut now) = (policy(), 0);
        run(&p, &mut now, 3_000, 1, |s| {
            if s {
                (40 * US, WAKE)
            } else {
                (5 * US, 2 * US)
            }
        });
        assert!(p.parking());
        run(&p, &mut now, 5_000, 1, |_| (20 * US, WAKE));
        assert!(!p.parking(), "a remote client: spinning saves a wake-up");
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

    #[test]
    fn probes_are_one_in_sixteen_in_runs_at_spread_positions() {
        let p = policy();
        let mut probes = Vec::new();
        for i in 0..PROBE_BLOCK * 64 {
            if !p.begin(0).spins() {
                probes.push(i);
            }
        }
        assert_eq!(probes.len() as u32, PROBE_BLOCK * 64 / 16, "1 in 16");
        let starts: std::collections::HashSet<_> = probes
            .iter()
            .filter(|&&i| i == 0 || !probes.contains(&(i - 1)))
            .map(|i| i % PROBE_BLOCK)
            .collect();
        assert!(
            starts.len() >= 32,
            "runs start at few positions: {starts:?}"
        );
    }

    /// A local client whose benefit from parking shows only from the second parked period
    /// in a row on (the first still pays for the placement spinning left behind): single
    /// probes would never see it; runs of probes do.
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

    #[test]
    fn the_budget_parks_workers_once_spent() {
        let p = SpinPolicy::fixed(Duration::from_micros(100), 0.25);
        let mut now = 0;
        let mut spun = 0;
        // Two spinners' worth of spinning requested, back to back, for 4 seconds.
        while now < 4 * BUDGET_SPAN {
            for _ in 0..2 {
                if p.begin(now).spins() {
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
            assert!(p.begin(now).spins(), "one spinner throttled at {now}");
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
        let zero = SpinPolicy::fixed(Duration::ZERO, 1.0);
        assert!(!zero.begin(0).spins());
    }
}
