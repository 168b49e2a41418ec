//! Whether the runtime's CPUs are shared with another busy process (a client on the same
//! machine, a sidecar, a batch job), from what the kernel accounts anyway.
//!
//! ```text
//! let share = Share::new();             // reads the runtime's CPU set once
//! share.poll(now);                      // at most every SAMPLE_EVERY: /proc/stat + getrusage
//! if share.is_shared(now) { /* spinning takes CPU time from somebody else */ }
//! ```
//!
//! The *foreign load* is the CPU time the CPUs this process may run on spent running threads
//! (user, nice and system time in `/proc/stat`, for the CPUs in `sched_getaffinity`) minus
//! the CPU time of this process (`getrusage(RUSAGE_SELF)`), per second of wall time: the
//! cores that *other* threads used on our CPUs. Interrupt time (irq, softirq) is left out:
//! most of it on a server's CPU is the server's own traffic (a reply sent over loopback is
//! received, and its client woken, in the sender's softirq, which the kernel accounts to the
//! CPU, not to the process), and it competes with a parked worker as much as with a spinner. `/proc/stat` counts in ticks (10 ms), so a
//! sample spans [`SAMPLE_EVERY`] (about a quarter of a second) to keep the rounding below a
//! twentieth of a core per CPU. One worker takes each sample (a compare-and-swap on the due
//! time) at the start of an idle period, which costs it some 20 µs four times a second. A
//! sample that spans more than two intervals (the runtime had no idle period meanwhile: it
//! slept through whatever ran, so nothing competed with a spinner) is not counted.
//!
//! The CPUs count as shared from the second sample in a row at or above [`THRESHOLD`] (0.08
//! cores: a client on the same machine that sends a request every 100 µs uses about a tenth
//! of a core, a sidecar that takes 5 % of a CPU stays below; one busy sample alone is a burst,
//! such as the process's own start or a short job), and stay shared for [`HOLD`] after the
//! last such pair: a client that shares the machine comes and goes with its load
//! (a client that sends one request per 500 µs uses a few hundredths of a core, too little to
//! tell from rounding), so the signal keeps what it saw while it was busier.
//!
//! What was measured on the 2-vCPU VM this was first tuned on (the `rpc` bench, samples of
//! 200 ms, interrupt time still counted): with the client pinned to another CPU (the remote
//! layout) the foreign load was −0.05 to 0.08 cores while the spinpark server ran; with client and server unpinned (colocated) it
//! was 0.23-0.26 back to back, 0.12-0.30 with 20 µs between requests, about 0.1 at 100 µs and
//! 0.02-0.09 at 500 µs. Signals from the spinner's own thread did not separate the two: its
//! run-queue delay (`/proc/thread-self/schedstat`), its involuntary context switches and
//! `sched_yield` calls that gave the CPU away were all non-zero in only 0.01-0.3 % of spin
//! windows in both layouts, because the scheduler keeps a colocated client on the *other*
//! CPU while the server spins.
//!
//! What the policy does with it (`spin.rs`): it starts fast probing, lengthens park-probe
//! runs and gives ties between probes to parking (`mode.rs`), and never flips the mode or
//! holds it on this signal alone. (A neighbour busy on the spinner's own CPU is caught
//! sooner and surely by the spinner's lost core: `contend.rs`.) The CPUs counted are the
//! ones this process may run on: a server pinned to CPU 1 (`taskset -c 1`) does not see a
//! client busy on CPU 0.
//!
//! Without `/proc` (or on other systems), nothing is sampled and the CPUs never count as
//! shared: the policy then behaves as if it had them to itself.

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use super::Nanos;

/// How often the foreign load is sampled: 2^28 ns, about a quarter of a second.
pub(super) const SAMPLE_EVERY: Nanos = 1 << 28;
/// The foreign load, in thousandths of a core, from which the CPUs count as shared.
pub(super) const THRESHOLD: u32 = 80;
/// How long the CPUs count as shared after the last pair of busy samples: 2^33 ns, about 8.6 s.
pub(super) const HOLD: Nanos = 1 << 33;

/// The shared-CPU signal; see the module documentation.
#[derive(Debug)]
pub(super) struct Share {
    /// The CPUs this process may run on (empty: sampling is off).
    cpus: Vec<usize>,
    /// Nanoseconds per `/proc/stat` tick.
    tick_ns: u64,
    /// When the next sample is due (policy time).
    next: AtomicU64,
    /// The previous sample: busy ticks of our CPUs, our CPU time (µs), when (policy time; 0:
    /// none yet).
    prev_busy: AtomicU64,
    prev_self: AtomicU64,
    prev_at: AtomicU64,
    /// The CPUs count as shared until then (policy time; 0: not shared).
    until: AtomicU64,
    /// The previous sample was at or above the threshold.
    busy_before: AtomicBool,
}

impl Share {
    /// The signal for this process's CPUs, sampled from `/proc`.
    pub(super) fn new() -> Self {
        let mut s = Self::disabled();
        // SAFETY: sysconf takes no pointers.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if hz > 0 && std::path::Path::new("/proc/stat").exists() {
            s.cpus = allowed_cpus();
            s.tick_ns = 1_000_000_000 / hz as u64;
        }
        s
    }

    /// A signal that never samples (for fixed windows, and for tests, which feed
    /// [`Share::observe`] themselves).
    pub(super) fn disabled() -> Self {
        Self {
            cpus: Vec::new(),
            tick_ns: 0,
            next: AtomicU64::new(0),
            prev_busy: AtomicU64::new(0),
            prev_self: AtomicU64::new(0),
            prev_at: AtomicU64::new(0),
            until: AtomicU64::new(0),
            busy_before: AtomicBool::new(false),
        }
    }

    /// Samples the foreign load if a sample is due at `now` and no other worker is taking it.
    /// Returns whether the CPUs just started counting as shared.
    pub(super) fn poll(&self, now: Nanos) -> bool {
        if self.cpus.is_empty() {
            return false;
        }
        let due = self.next.load(Relaxed);
        if now < due
            || self
                .next
                .compare_exchange(due, now + SAMPLE_EVERY, Relaxed, Relaxed)
                .is_err()
        {
            return false;
        }
        let (Some(busy), Some(mine)) = (busy_ticks(&self.cpus), own_cpu_us()) else {
            return false;
        };
        let (pb, ps, pa) = (
            self.prev_busy.swap(busy, Relaxed),
            self.prev_self.swap(mine, Relaxed),
            self.prev_at.swap(now, Relaxed),
        );
        // A sample must span about one interval: a longer one means this runtime had no idle
        // period for a while (it slept through somebody else's load, which did not compete
        // with any spinning), and only starts the next sample.
        if pa == 0 || now <= pa || now - pa > 2 * SAMPLE_EVERY {
            return false;
        }
        let busy_ns = busy.saturating_sub(pb).saturating_mul(self.tick_ns);
        let mine_ns = mine.saturating_sub(ps).saturating_mul(1_000);
        let milli = busy_ns.saturating_sub(mine_ns).saturating_mul(1_000) / (now - pa);
        self.observe(now, milli.min(u32::MAX as u64) as u32)
    }

    /// One sample: other threads used `milli` thousandths of a core on our CPUs up to `now`.
    /// Returns whether the CPUs just started counting as shared.
    pub(super) fn observe(&self, now: Nanos, milli: u32) -> bool {
        let busy = milli >= THRESHOLD;
        if !self.busy_before.swap(busy, Relaxed) || !busy {
            return false;
        }
        let was = self.is_shared(now);
        self.until.store(now + HOLD, Relaxed);
        !was
    }

    /// Whether the CPUs count as shared at `now`.
    pub(super) fn is_shared(&self, now: Nanos) -> bool {
        now < self.until.load(Relaxed)
    }
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bit set (all-zero is empty), and sched_getaffinity writes
    // at most size_of::<cpu_set_t>() bytes into it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        set
    };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads one bit of the set, and `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Busy ticks (user, nice, system: threads, not interrupts) of `cpus`, from `/proc/stat`.
fn busy_ticks(cpus: &[usize]) -> Option<u64> {
    let file = std::fs::File::open("/proc/stat").ok()?;
    let mut total = 0;
    // The per-CPU lines come first ("cpu", then "cpu0", "cpu1", ...); stop after them.
    for line in BufReader::with_capacity(4096, file).lines() {
        let line = line.ok()?;
        let Some(rest) = line.strip_prefix("cpu") else {
            break;
        };
        total += parse_busy(rest, cpus).unwrap_or(0);
    }
    Some(total)
}

/// The busy ticks of one `/proc/stat` line after its `cpu` prefix, if it is one of `cpus`.
fn parse_busy(rest: &str, cpus: &[usize]) -> Option<u64> {
    let mut fields = rest.split_ascii_whitespace();
    let cpu: usize = fields.next()?.parse().ok()?;
    if !cpus.contains(&cpu) {
        return None;
    }
    let mut v = [0u64; 3];
    for x in &mut v {
        *x = fields.next()?.parse().ok()?;
    }
    // user nice system (then idle iowait irq softirq steal ...)
    Some(v[0] + v[1] + v[2])
}

/// This process's CPU time (user + system) in µs.
fn own_cpu_us() -> Option<u64> {
    // SAFETY: rusage is plain old data (all-zero is valid), and getrusage fills the valid
    // struct on our stack.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) != 0 {
            return None;
        }
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Some(us(ru.ru_utime) + us(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_sample_then_a_hold() {
        let s = Share::disabled();
        let t = SAMPLE_EVERY;
        assert!(
            !s.observe(t, 50),
            "a twentieth of a core is a light sidecar, or rounding"
        );
        assert!(!s.is_shared(t));
        assert!(!s.observe(2 * t, 100), "one busy sample is a burst");
        assert!(!s.observe(3 * t, 50), "and it ended");
        assert!(!s.observe(4 * t, 400));
        assert!(!s.is_shared(4 * t));
        assert!(s.observe(5 * t, 100), "two in a row: shared");
        assert!(!s.observe(5 * t, 300), "already shared");
        // A quiet client keeps the CPUs shared for the hold.
        for k in 6..40 {
            s.observe(k * t, 20);
        }
        assert!(s.is_shared(5 * t + HOLD - 1));
        assert!(!s.is_shared(5 * t + HOLD));
    }

    /// A sample across a long sleep of the runtime is not counted.
    #[test]
    fn samples_across_a_long_sleep_are_not_counted() {
        let s = Share::new();
        if s.cpus.is_empty() {
            return; // no /proc here
        }
        s.poll(SAMPLE_EVERY);
        // Pretend the baseline was taken long ago, with a far smaller busy count: counted,
        // the sample would read as hundreds of cores of foreign load.
        s.prev_busy.store(0, Relaxed);
        s.prev_self.store(0, Relaxed);
        let late = SAMPLE_EVERY + 2 * SAMPLE_EVERY + 1;
        assert!(!s.poll(late));
        assert!(!s.is_shared(late));
        assert_eq!(s.prev_at.load(Relaxed), late, "it starts the next sample");
    }

    #[test]
    fn proc_stat_lines_parse() {
        let cpus = [1, 3];
        // Interrupt time (the 2 and 3 after iowait) is not counted.
        assert_eq!(parse_busy("1 10 1 20 500 7 2 3 0 0 0", &cpus), Some(31));
        assert_eq!(parse_busy("0 10 1 20 500 7 2 3 0 0 0", &cpus), None);
        // The all-CPU line has no number.
        assert_eq!(parse_busy("  10 1 20 500 7 2 3 0 0 0", &cpus), None);
        assert_eq!(
            parse_busy("3 10 1", &cpus),
            None,
            "a short line is not counted"
        );
    }

    #[test]
    fn sampling_reads_this_machine() {
        let s = Share::new();
        if s.cpus.is_empty() {
            return; // no /proc here
        }
        assert!(busy_ticks(&s.cpus).is_some());
        assert!(own_cpu_us().is_some());
        assert!(!s.poll(1), "the first sample only sets the baseline");
        assert!(s.prev_at.load(Relaxed) == 1);
        assert!(!s.poll(2), "not due again yet");
        assert_eq!(s.prev_at.load(Relaxed), 1);
    }
}
