//! The benchmark's load shapes, their names (what `--only` matches) and how long each runs.
//!
//! ```text
//! for m in mode::main(false, None) { println!("{} ~{:?}", m.name(), m.estimate()); }
//! ```
//!
//! Closed loop: `sync T=n` (n threads, one request in flight each), `async CxD` (C
//! connections, up to D in flight each) and `gap X` (one client, a pause of X between a reply
//! and the next request). Open loop: `poisson X` (Poisson arrivals with mean inter-arrival X
//! over several connections). `poll gap X` is the gap mode with a client that busy-polls its
//! socket (`--only floor`, see `floorbench.rs`). `--only neighbour` runs gap modes (50 us,
//! 200 us, 1 ms) beside a CPU-bound neighbour process on the server CPUs (`neighbour.rs`).

use std::time::Duration;

/// One benchmark mode.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    Sync {
        threads: usize,
        dur: Duration,
    },
    Async {
        conns: usize,
        depth: usize,
        dur: Duration,
    },
    Gap {
        gap: Duration,
        count: usize,
    },
    Poisson {
        mean: Duration,
        conns: usize,
        dur: Duration,
    },
    /// The gap mode with a busy-polling client (`poll_client.rs`).
    PollGap {
        gap: Duration,
        count: usize,
    },
}

/// Connections the poisson mode spreads its requests over.
const POISSON_CONNS: usize = 4;

impl Mode {
    pub fn name(&self) -> String {
        match *self {
            Mode::Sync { threads, .. } => format!("sync T={threads}"),
            Mode::Async { conns, depth, .. } => format!("async {conns}x{depth}"),
            Mode::Gap { gap, .. } => format!("gap {}", fmt_dur(gap)),
            Mode::Poisson { mean, .. } => format!("poisson {}", fmt_dur(mean)),
            Mode::PollGap { gap, .. } => format!("poll gap {}", fmt_dur(gap)),
        }
    }

    pub fn gap(&self) -> Option<Duration> {
        match *self {
            Mode::Gap { gap, .. } | Mode::PollGap { gap, .. } => Some(gap),
            _ => None,
        }
    }

    pub fn is_closed_loop_throughput(&self) -> bool {
        matches!(self, Mode::Sync { .. } | Mode::Async { .. })
    }

    pub fn is_poisson(&self) -> bool {
        matches!(self, Mode::Poisson { .. })
    }

    /// Threads the load generator runs this mode with.
    pub fn client_threads(&self) -> usize {
        match *self {
            Mode::Sync { threads, .. } => threads,
            Mode::Async { conns, .. } => conns,
            Mode::Gap { .. } | Mode::PollGap { .. } | Mode::Poisson { .. } => 1,
        }
    }

    /// About how long one run of this mode takes.
    pub fn estimate(&self) -> Duration {
        match *self {
            Mode::Sync { dur, .. } | Mode::Async { dur, .. } => dur,
            Mode::Gap { gap, count } | Mode::PollGap { gap, count } => {
                (gap + Duration::from_micros(40)) * count as u32
            }
            Mode::Poisson { dur, .. } => dur + Duration::from_millis(5),
        }
    }
}

/// `0`, `20us`, `1ms`.
pub fn fmt_dur(d: Duration) -> String {
    let us = d.as_micros();
    if us == 0 {
        "0".into()
    } else if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// The gaps of the gap mode.
pub const GAPS_US: [u64; 9] = [0, 20, 50, 100, 200, 500, 1_000, 5_000, 10_000];

/// One gap mode, with as many requests as fit its time budget: `budget` (`--gap-secs`), else
/// 600 ms (100 ms in `--quick`); at least 30 requests (20 in `--quick`).
pub fn gap(us: u64, quick: bool, budget: Option<Duration>) -> Mode {
    let (gap, count) = gap_count(us, quick, budget);
    Mode::Gap { gap, count }
}

/// The gap of `us` microseconds and how many requests fit the budget (see [`gap`]).
fn gap_count(us: u64, quick: bool, budget: Option<Duration>) -> (Duration, usize) {
    let (default, min) = if quick {
        (Duration::from_millis(100), 20)
    } else {
        (Duration::from_millis(600), 30)
    };
    let budget = budget.unwrap_or(default);
    let gap = Duration::from_micros(us);
    let per = gap + Duration::from_micros(40);
    // The cap bounds the latency samples kept per round (8 bytes each).
    let count = (budget.as_nanos() / per.as_nanos()).clamp(min, 1_000_000) as usize;
    (gap, count)
}

/// The gaps of `--only floor`: the issue's 0, 50 and 200 us, and 500 us.
pub const FLOOR_GAPS_US: [u64; 4] = [0, 50, 200, 500];

/// The modes of `--only floor`: [`gap`]'s request counts, with the busy-polling client.
pub fn floor(quick: bool, budget: Option<Duration>) -> Vec<Mode> {
    FLOOR_GAPS_US
        .iter()
        .map(|&us| {
            let (gap, count) = gap_count(us, quick, budget);
            Mode::PollGap { gap, count }
        })
        .collect()
}

/// The gaps of `--only neighbour`: below, around and past the adaptive spin window.
pub const NEIGHBOUR_GAPS_US: [u64; 3] = [50, 200, 1_000];

/// The modes of `--only neighbour`: [`gap`] at [`NEIGHBOUR_GAPS_US`] (the runner reads the
/// neighbour's work around each; see `neighbour.rs`).
pub fn neighbour(quick: bool, budget: Option<Duration>) -> Vec<Mode> {
    NEIGHBOUR_GAPS_US
        .iter()
        .map(|&us| gap(us, quick, budget))
        .collect()
}

/// Whether `--only` names `what` (a mode that runs only when named: `floor`, `sweep`,
/// `neighbour`...), ignoring case and surrounding blanks.
pub fn named(only: &[String], what: &str) -> bool {
    only.iter().any(|o| o.trim().eq_ignore_ascii_case(what))
}

/// The closed-loop throughput modes, `sync T=1`, `sync T=4` and `async 4x16`.
pub fn throughput(quick: bool) -> Vec<Mode> {
    let dur = if quick {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(1)
    };
    vec![
        Mode::Sync { threads: 1, dur },
        Mode::Sync { threads: 4, dur },
        Mode::Async {
            conns: 4,
            depth: 16,
            dur,
        },
    ]
}

/// The modes of a full (or `--quick`) run: throughput, then every gap (each lasting
/// `gap_budget` if given; see [`gap`]).
pub fn main(quick: bool, gap_budget: Option<Duration>) -> Vec<Mode> {
    let mut m = throughput(quick);
    m.extend(GAPS_US.iter().map(|&us| gap(us, quick, gap_budget)));
    m
}

/// The open-loop modes: mean inter-arrival 20 us, 200 us and 2 ms.
pub fn poisson(quick: bool) -> Vec<Mode> {
    let dur = if quick {
        Duration::from_millis(500)
    } else {
        Duration::from_secs(2)
    };
    [20u64, 200, 2_000]
        .iter()
        .map(|&us| Mode::Poisson {
            mean: Duration::from_micros(us),
            conns: POISSON_CONNS,
            dur,
        })
        .collect()
}
