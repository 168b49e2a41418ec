//! Running a plan: servers started in a layout, modes measured in alternating rounds, one
//! progress line per mode and round.
//!
//! ```text
//! let plan = Plan { title, layout, specs: vec![spinpark, tokio], modes, rounds: 3, restart: false, .. };
//! let mut progress = Progress::new(estimate(&[&plan]));
//! let runs = run(&plan, &mut progress); // runs[mode][server][round]
//! ```
//!
//! The load generator (this process's main thread, and the threads it spawns) is pinned to
//! the layout's client CPUs, each server process to its server CPUs. Within a round, the
//! servers take turns on each mode, in an order that rotates from mode to mode and round to
//! round, so that drift on the machine hits them alike. With `restart`, every server is
//! restarted before each round (the colocated layout, whose placement is a fresh draw); with
//! `fresh_per_mode`, before each mode (the sweep: an adaptive spin policy starts every mode
//! from its defaults instead of from what the previous mode taught it). [`run_alone`] runs one
//! server process at a time instead (`--only floor`, whose floor server spins on its CPU all
//! the time it lives). With `neighbour`, a CPU-bound neighbour process (`neighbour.rs`) runs
//! on the server CPUs from before the servers start until the plan ends, and every sample
//! records the work it did during the measurement (`--only neighbour`).

use std::time::{Duration, Instant};

use crate::load;
use crate::mode::Mode;
use crate::neighbour::Neighbour;
use crate::pin::{self, Layout};
use crate::poisson;
use crate::sample::{Caps, Sample};
use crate::server::{Server, Spec, Usage};

/// Lets the server's workers settle into the idle state a mode starts from.
pub const SETTLE: Duration = Duration::from_millis(20);
/// About what starting (or restarting) a server process costs.
const START: Duration = Duration::from_millis(30);

/// Servers, a layout and modes, run for some rounds.
#[derive(Debug)]
pub struct Plan {
    /// Names the table: `remote, 2 workers`.
    pub title: String,
    pub layout: Layout,
    pub specs: Vec<Spec>,
    pub modes: Vec<Mode>,
    pub rounds: usize,
    pub restart: bool,
    /// Restart every server before each mode, too.
    pub fresh_per_mode: bool,
    /// Run a CPU-bound neighbour process on the server CPUs, and record its work rate.
    pub neighbour: bool,
}

impl Plan {
    pub fn estimate(&self) -> Duration {
        let per_round: Duration = self.modes.iter().map(|m| m.estimate() + SETTLE).sum();
        let starts = if self.fresh_per_mode {
            self.rounds * self.modes.len()
        } else if self.restart {
            self.rounds
        } else {
            1
        };
        (per_round * self.rounds as u32 + START * starts as u32) * self.specs.len() as u32
    }
}

/// A mode that drives servers with an outside tool (kv: `redis-benchmark`) and reports its
/// own Markdown section instead of echo tables.
pub trait External {
    /// About how long [`External::run`] takes (zero when it will be skipped).
    fn estimate(&self) -> Duration;
    /// Runs the mode; returns its section (or a line saying why it was skipped).
    fn run(&self, progress: &mut Progress) -> String;
}

/// Elapsed time against the estimate, for the progress lines.
#[derive(Debug)]
pub struct Progress {
    started: Instant,
    estimate: Duration,
}

impl Progress {
    pub fn new(estimate: Duration) -> Progress {
        eprintln!("estimated duration: {}", fmt_secs(estimate));
        Progress {
            started: Instant::now(),
            estimate,
        }
    }

    pub fn line(&self, what: &str) {
        eprintln!(
            "[{:>5} of ~{}] {what}",
            fmt_secs(self.started.elapsed()),
            fmt_secs(self.estimate)
        );
    }
}

/// `2m05s`, `40s`.
pub fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Runs `plan`; returns the samples as `[mode][server][round]`.
pub fn run(plan: &Plan, progress: &mut Progress) -> Vec<Vec<Vec<Sample>>> {
    pin::pin_current(plan.layout.client_cpus()).expect("pin the load generator");
    let mut neighbour = start_neighbour(plan);
    let start_all = || -> Vec<Server> {
        plan.specs
            .iter()
            .map(|s| Server::start(s, plan.layout.server_cpus()))
            .collect()
    };
    let mut servers = start_all();
    let n = servers.len();
    let mut out = vec![vec![Vec::with_capacity(plan.rounds); n]; plan.modes.len()];
    for round in 0..plan.rounds {
        if plan.restart && round > 0 {
            servers.into_iter().for_each(Server::stop);
            servers = start_all();
        }
        for (mi, mode) in plan.modes.iter().enumerate() {
            if plan.fresh_per_mode && (round, mi) != (0, 0) {
                servers.into_iter().for_each(Server::stop);
                servers = start_all();
            }
            let mut summary = Vec::new();
            for k in 0..n {
                let si = (k + round + mi) % n;
                let sample = measure(
                    &mut servers[si],
                    mode,
                    plan,
                    &plan.specs[si],
                    neighbour.as_mut(),
                );
                summary.push((si, sample));
                out[mi][si].push(sample);
            }
            summary.sort_by_key(|(si, _)| *si);
            let figures: Vec<String> = summary
                .iter()
                .map(|(si, s)| {
                    format!(
                        "{} {:.1}k req/s p50 {:.1}us{}",
                        plan.specs[*si].label(),
                        s.reqs_per_sec / 1000.0,
                        s.p50,
                        fmt_neighbour(s)
                    )
                })
                .collect();
            progress.line(&format!(
                "{} round {}/{} {}: {}",
                plan.title,
                round + 1,
                plan.rounds,
                mode.name(),
                figures.join(", ")
            ));
        }
    }
    servers.into_iter().for_each(Server::stop);
    if let Some(n) = neighbour {
        n.stop();
    }
    out
}

/// Runs `plan` one server at a time: in every round each server in turn (in an order that
/// rotates from round to round) is started, measured on every mode and stopped before the
/// next one starts, so no server shares the CPUs with another; `restart` and
/// `fresh_per_mode` do not apply (a `neighbour` does). Returns the samples as
/// `[mode][server][round]`.
pub fn run_alone(plan: &Plan, progress: &mut Progress) -> Vec<Vec<Vec<Sample>>> {
    pin::pin_current(plan.layout.client_cpus()).expect("pin the load generator");
    let mut neighbour = start_neighbour(plan);
    let n = plan.specs.len();
    let mut out = vec![vec![Vec::with_capacity(plan.rounds); n]; plan.modes.len()];
    for round in 0..plan.rounds {
        for k in 0..n {
            let si = (k + round) % n;
            let spec = &plan.specs[si];
            let mut server = Server::start(spec, plan.layout.server_cpus());
            let mut figures = Vec::new();
            for (mi, mode) in plan.modes.iter().enumerate() {
                let sample = measure(&mut server, mode, plan, spec, neighbour.as_mut());
                figures.push(format!(
                    "{} p50 {:.1}us{}",
                    mode.name(),
                    sample.p50,
                    fmt_neighbour(&sample)
                ));
                out[mi][si].push(sample);
            }
            server.stop();
            progress.line(&format!(
                "{} round {}/{} {}: {}",
                plan.title,
                round + 1,
                plan.rounds,
                spec.label_with_workers(),
                figures.join(", ")
            ));
        }
    }
    if let Some(n) = neighbour {
        n.stop();
    }
    out
}

/// The plan's neighbour, if it has one, started on its server CPUs.
fn start_neighbour(plan: &Plan) -> Option<Neighbour> {
    plan.neighbour
        .then(|| Neighbour::start(plan.layout.server_cpus()))
}

/// ` neighbour 0.52M units/s` for a progress line, or nothing without a neighbour.
fn fmt_neighbour(s: &Sample) -> String {
    if s.neighbour_units_per_sec.is_finite() {
        format!(" neighbour {:.3}M units/s", s.neighbour_units_per_sec / 1e6)
    } else {
        String::new()
    }
}

/// One run of `mode` against `server`; with a `neighbour`, its count is read right before
/// and right after the load, and the sample records its rate over that interval.
fn measure(
    server: &mut Server,
    mode: &Mode,
    plan: &Plan,
    spec: &Spec,
    mut neighbour: Option<&mut Neighbour>,
) -> Sample {
    std::thread::sleep(SETTLE);
    let spin = plan.layout.is_remote();
    let s0 = server.usage();
    let c0 = Usage::now();
    let n0 = neighbour.as_deref_mut().map(Neighbour::count);
    let r = match *mode {
        Mode::Sync { threads, dur } => load::sync(server.addr, threads, dur),
        Mode::Async { conns, depth, dur } => load::pipelined(server.addr, conns, depth, dur),
        Mode::Gap { gap, count } => load::gap(server.addr, gap, count, spin),
        Mode::Poisson { mean, conns, dur } => poisson::run(server.addr, conns, mean, dur, spin),
        Mode::PollGap { gap, count } => load::poll_gap(server.addr, gap, count),
    };
    let n1 = neighbour.map(Neighbour::count);
    let c = Usage::now().since(c0);
    let s = server.usage().since(s0);
    let caps = Caps {
        server: spec.workers.min(plan.layout.server_cpus().len()),
        client: mode.client_threads().min(plan.layout.client_cpus().len()),
    };
    let mut sample = Sample::new(&r, s, c, caps);
    if let (Some(before), Some(after)) = (n0, n1) {
        sample.neighbour_units_per_sec = after.rate_since(before);
    }
    sample
}
