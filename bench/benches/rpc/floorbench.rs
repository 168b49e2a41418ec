//! `--only floor`: spinpark and tokio against the floor server (`floor.rs`, one thread that
//! only busy-polls its sockets), one busy-polling client, remote layout.
//!
//! ```text
//! cargo bench --bench rpc -- --only floor --rounds 7
//! let plan = floorbench::plan(7, false, None, None).unwrap(); // None: fewer than 2 CPUs
//! let results = Results::new(&plan, &runner::run_alone(&plan, &mut progress));
//! print!("{}", results.markdown());
//! ```
//!
//! The question (an open issue): with one client that polls, is spinpark's p50 within 1.05x
//! of a server that does nothing but poll, at gaps of 0, 50 and 200 us (and 500 us)? The
//! servers are spinpark and tokio with 1 and 2 workers (spinpark with its default adaptive
//! spin unless `--spin` says otherwise) and the floor server, all pinned to the remote
//! layout's server CPUs (CPU 1 on 2 CPUs), the client on the others (CPU 0). The client is
//! `load::poll_gap`: its socket is nonblocking and it spins on `read` until the reply is in,
//! and every gap ends precisely. Each server runs alone (the floor server would take a CPU
//! from any server beside it): in every round the servers take turns in a rotating order,
//! each a fresh process that runs every gap and stops. Figures are the median (min-max) over
//! rounds; the ratios to the floor are computed per round (the floor ran in the same round)
//! and then summarised.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::mode::{self, fmt_dur, Mode};
use crate::pin::Layout;
use crate::report::{sample_json, spread_json};
use crate::runner::Plan;
use crate::sample::Sample;
use crate::server::{Spec, Spin};
use crate::stats::{paired_ratios, Spread};

/// The issue's goal: spinpark's p50 within this factor of the floor's.
pub const GOAL: f64 = 1.05;

/// The plan: spinpark 1w and 2w, tokio 1w and 2w, and the floor server, over
/// [`mode::floor`]'s gaps; `None` without a remote layout (fewer than 2 CPUs).
pub fn plan(
    rounds: usize,
    quick: bool,
    gap_budget: Option<Duration>,
    spin: Option<Spin>,
) -> Option<Plan> {
    let layout = Layout::remote()?;
    let specs = vec![
        Spec::new("spinpark", 1).spin(spin),
        Spec::new("spinpark", 2).spin(spin),
        Spec::new("tokio", 1),
        Spec::new("tokio", 2),
        Spec::new("floor", 1),
    ];
    Some(Plan {
        title: format!(
            "floor: {} layout, one busy-polling client, each server alone",
            layout.name()
        ),
        layout,
        specs,
        modes: mode::floor(quick, gap_budget),
        rounds,
        // Every server is a fresh process each round (see `runner::run_alone`).
        restart: true,
        fresh_per_mode: false,
        neighbour: false,
    })
}

/// What `--only floor` measured: `runs[mode][server][round]`, the floor server last.
pub struct Results {
    title: String,
    layout: String,
    rounds: usize,
    labels: Vec<String>,
    modes: Vec<Mode>,
    runs: Vec<Vec<Vec<Sample>>>,
    floor: usize,
}

impl Results {
    pub fn new(plan: &Plan, runs: &[Vec<Vec<Sample>>]) -> Results {
        Results {
            title: plan.title.clone(),
            layout: plan.layout.describe(),
            rounds: plan.rounds,
            labels: plan.specs.iter().map(Spec::label_with_workers).collect(),
            modes: plan.modes.clone(),
            runs: runs.to_vec(),
            floor: plan
                .specs
                .iter()
                .position(|s| s.runtime == "floor")
                .expect("the plan has the floor server"),
        }
    }

    /// One figure of one server at one mode, over rounds.
    fn spread(&self, mi: usize, si: usize, f: fn(&Sample) -> f64) -> Spread {
        Spread::of(self.runs[mi][si].iter().map(f))
    }

    /// A server's figure over the floor's, per round.
    fn ratios(&self, mi: usize, si: usize, f: fn(&Sample) -> f64) -> Vec<f64> {
        let v = |i: usize| self.runs[mi][i].iter().map(f).collect::<Vec<f64>>();
        paired_ratios(&v(si), &v(self.floor))
    }

    /// The table, as Markdown.
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        writeln!(
            o,
            "**{}** ({}; {} round{}, each server a fresh process per round; median (min-max) over rounds):\n",
            self.title,
            self.layout,
            self.rounds,
            if self.rounds == 1 { "" } else { "s" }
        )
        .unwrap();
        writeln!(o, "One client, 100-byte requests spaced by a gap, the client spinning on a nonblocking socket; latency in microseconds, ratios to the floor server per round. Goal: p50 within {GOAL:.2}x of the floor.\n").unwrap();
        writeln!(o, "| gap (achieved us) | server | p50 | p99 | p50 / floor | p99 / floor | p50 within {GOAL:.2}x | Ctx Sw./req | server CPU/req (us) |").unwrap();
        writeln!(o, "|---|---|---:|---:|---:|---:|---|---:|---:|").unwrap();
        for (mi, m) in self.modes.iter().enumerate() {
            let achieved = Spread::of(self.runs[mi].iter().flatten().map(|s| s.achieved_gap_us));
            let gap = format!(
                "{} ({:.0})",
                fmt_dur(m.gap().unwrap_or_default()),
                achieved.median
            );
            for (si, label) in self.labels.iter().enumerate() {
                let (p50r, p99r, goal) = if si == self.floor {
                    ("-".to_string(), "-".to_string(), "-")
                } else {
                    let r = self.ratios(mi, si, |s| s.p50);
                    (
                        format!("**{}**", Spread::of(r.iter().copied()).show_ratio()),
                        Spread::of(self.ratios(mi, si, |s| s.p99)).show_ratio(),
                        meets_goal(&r),
                    )
                };
                writeln!(
                    o,
                    "| {gap} | {label} | {} | {} | {p50r} | {p99r} | {goal} | {} | {} |",
                    self.spread(mi, si, |s| s.p50).show(1),
                    self.spread(mi, si, |s| s.p99).show(1),
                    self.spread(mi, si, |s| s.cs).show(3),
                    self.spread(mi, si, Sample::server_cpu_us).show(1),
                )
                .unwrap();
            }
        }
        o
    }

    /// The table for `results.json`: the echo tables' shape (title, layout, rounds, and per
    /// mode every server's figures), plus per mode `p50_over_floor` and `p99_over_floor`,
    /// `[median, min, max]` of the per-round ratios for every server but the floor.
    pub fn json(&self) -> Value {
        let modes: Vec<Value> = self
            .modes
            .iter()
            .enumerate()
            .map(|(mi, m)| {
                let mut row = Map::new();
                row.insert("mode".into(), json!(m.name()));
                for (si, label) in self.labels.iter().enumerate() {
                    row.insert(label.clone(), sample_json(&self.runs[mi][si]));
                }
                for (key, f) in [
                    ("p50_over_floor", (|s: &Sample| s.p50) as fn(&Sample) -> f64),
                    ("p99_over_floor", |s: &Sample| s.p99),
                ] {
                    let ratios: Map<String, Value> = self
                        .labels
                        .iter()
                        .enumerate()
                        .filter(|(si, _)| *si != self.floor)
                        .map(|(si, label)| {
                            (
                                label.clone(),
                                spread_json(Spread::of(self.ratios(mi, si, f))),
                            )
                        })
                        .collect();
                    row.insert(key.into(), Value::Object(ratios));
                }
                Value::Object(row)
            })
            .collect();
        json!({
            "title": self.title,
            "layout": self.layout,
            "rounds": self.rounds,
            "modes": modes,
        })
    }
}

/// `yes` when every round's ratio is within [`GOAL`], `median` when only the median is,
/// else `no`.
pub fn meets_goal(ratios: &[f64]) -> &'static str {
    let s = Spread::of(ratios.iter().copied());
    if !s.median.is_finite() {
        "-"
    } else if s.max <= GOAL {
        "yes"
    } else if s.median <= GOAL {
        "median"
    } else {
        "no"
    }
}
