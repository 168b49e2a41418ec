//! The spin-window sweep: one spinpark server per window, and tokio, over the gap and poisson
//! modes, reduced to a Pareto table and chart of latency against server CPU per request.
//!
//! ```text
//! let plan = sweep::plan(&[Spin::Fixed(Duration::ZERO), Spin::Adaptive], 2, 3, false);
//! let runs = runner::run(&plan, &mut progress);
//! std::fs::write("docs/sweep.md", Sweep::new(&plan, &runs).markdown())?;
//! ```
//!
//! Every server runs in the remote layout (the client on its own CPUs), so a window's cost
//! and benefit are the server's, with one worker per server CPU unless `--workers` says
//! otherwise (a spinning worker that shares its CPU with a busy one only delays it). Each regime (a gap, or a Poisson rate) gives one curve: its
//! points are the fixed windows, at (server CPU per request, p50) and (.., p99); the adaptive
//! policy is a filled square and tokio an open circle. A point is on the Pareto front when no
//! other server is both cheaper and faster in that regime.
//!
//! Every server is restarted before every mode, so the adaptive policy starts each regime
//! from its defaults (as a fresh server would) and is judged on what it learns within the
//! mode; it prints what it learned on stderr as it stops. Run time (printed at the start):
//! per server and round, 6 gap modes of ~0.6 s and 3 poisson modes of 2 s, plus a restart per
//! mode; with the 7 default servers (5 windows, adaptive, tokio) about 70 s per round, 3.5 min
//! for 3 rounds (`--quick`: about 1 min).

use std::fmt::Write as _;
use std::time::Duration;

use crate::mode::{self, fmt_dur, Mode};
use crate::pin::Layout;
use crate::report::xml_escape;
use crate::runner::Plan;
use crate::sample::Sample;
use crate::server::{Spec, Spin};
use crate::stats::Spread;

/// The gaps the sweep covers: below, at and just past the default window, a little over the
/// adaptive maximum, and far past it.
const GAPS_US: [u64; 6] = [20, 100, 300, 600, 2_000, 10_000];

/// The plan: a spinpark server per window (fixed, or `adaptive`), then tokio; gap and
/// poisson modes.
pub fn plan(
    windows: &[Spin],
    workers: usize,
    rounds: usize,
    quick: bool,
    gap_budget: Option<Duration>,
) -> Plan {
    let layout = Layout::remote().unwrap_or_else(Layout::colocated);
    let mut specs: Vec<Spec> = windows
        .iter()
        .map(|w| Spec::new("spinpark", workers).spin(Some(*w)))
        .collect();
    specs.push(Spec::new("tokio", workers));
    let mut modes: Vec<Mode> = GAPS_US
        .iter()
        .map(|&us| mode::gap(us, quick, gap_budget))
        .collect();
    modes.extend(mode::poisson(quick));
    Plan {
        title: format!(
            "spin-window sweep, {} layout, {workers} worker{}",
            layout.name(),
            if workers == 1 { "" } else { "s" }
        ),
        restart: !layout.is_remote(),
        fresh_per_mode: true,
        neighbour: false,
        layout,
        specs,
        modes,
        rounds,
    }
}

/// Medians per regime and server.
struct Point {
    label: String,
    cpu: f64,
    p50: f64,
    p99: f64,
    cs: f64,
}

/// The sweep's results.
pub struct Sweep {
    title: String,
    layout: String,
    rounds: usize,
    /// Per regime (mode): its name and one point per server, tokio last.
    regimes: Vec<(String, Vec<Point>)>,
}

impl Sweep {
    pub fn new(plan: &Plan, runs: &[Vec<Vec<Sample>>]) -> Sweep {
        let med = |v: &[Sample], f: fn(&Sample) -> f64| Spread::of(v.iter().map(f)).median;
        let regimes = plan
            .modes
            .iter()
            .zip(runs)
            .map(|(m, per_server)| {
                let points = plan
                    .specs
                    .iter()
                    .zip(per_server)
                    .map(|(spec, v)| Point {
                        label: match spec.spin {
                            Some(Spin::Fixed(w)) => format!("spin {}", fmt_dur(w)),
                            Some(Spin::Adaptive) => "adaptive".into(),
                            None => spec.runtime.to_string(),
                        },
                        cpu: med(v, Sample::server_cpu_us),
                        p50: med(v, |s| s.p50),
                        p99: med(v, |s| s.p99),
                        cs: med(v, |s| s.cs),
                    })
                    .collect();
                (m.name(), points)
            })
            .collect();
        Sweep {
            title: plan.title.clone(),
            layout: plan.layout.describe(),
            rounds: plan.rounds,
            regimes,
        }
    }

    /// One table: every regime and server, with Pareto marks.
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        writeln!(
            o,
            "**{}** ({}; {} rounds, medians). Pareto: not beaten on both server CPU per request and that percentile by another server in the same regime.\n",
            self.title, self.layout, self.rounds
        )
        .unwrap();
        writeln!(o, "| regime | server | server CPU/req (us) | p50 (us) | p99 (us) | Ctx Sw./req | Pareto |").unwrap();
        writeln!(o, "|---|---|---:|---:|---:|---:|---|").unwrap();
        for (regime, points) in &self.regimes {
            for (i, p) in points.iter().enumerate() {
                let front: Vec<&str> = [
                    ("p50", (|p: &Point| p.p50) as fn(&Point) -> f64),
                    ("p99", |p: &Point| p.p99),
                ]
                .iter()
                .filter(|(_, f)| pareto(points, i, *f))
                .map(|(n, _)| *n)
                .collect();
                writeln!(
                    o,
                    "| {regime} | {} | {:.1} | {:.1} | {:.1} | {:.2} | {} |",
                    p.label,
                    p.cpu,
                    p.p50,
                    p.p99,
                    p.cs,
                    front.join(", ")
                )
                .unwrap();
            }
        }
        o
    }

    /// Two panels, p50 and p99 against server CPU per request (both log scales): one curve per
    /// regime through the fixed windows, the adaptive policy as a filled square, tokio as an
    /// open circle.
    pub fn svg(&self) -> String {
        const W: f64 = 1100.0;
        const H: f64 = 500.0;
        let colors = [
            "#d9480f", "#1c7ed6", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c", "#495057",
        ];
        let all = || self.regimes.iter().flat_map(|(_, p)| p.iter());
        let (xmin, xmax) = bounds(all().map(|p| p.cpu));
        let (ymin, ymax) = bounds(all().flat_map(|p| [p.p50, p.p99]));
        let mut o = String::new();
        writeln!(o, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#).unwrap();
        writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#).unwrap();
        for (pi, (name, f)) in [
            ("p50", (|p: &Point| p.p50) as fn(&Point) -> f64),
            ("p99", |p| p.p99),
        ]
        .iter()
        .enumerate()
        {
            let (x0, y0, pw, ph) = (70.0 + pi as f64 * 520.0, 50.0, 420.0, 320.0);
            let lx = |v: f64| x0 + (v.max(xmin).ln() - xmin.ln()) / (xmax.ln() - xmin.ln()) * pw;
            let ly =
                |v: f64| y0 + ph - (v.max(ymin).ln() - ymin.ln()) / (ymax.ln() - ymin.ln()) * ph;
            writeln!(o, r#"<text x="{x0}" y="25" font-size="15" font-weight="bold">{name} latency (us) vs server CPU per request (us)</text>"#).unwrap();
            writeln!(o, r##"<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##).unwrap();
            for v in ticks(ymin, ymax) {
                let y = ly(v);
                writeln!(o, r##"<line x1="{x0}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{v}</text>"##, x0 + pw, x0 - 5.0, y + 4.0).unwrap();
            }
            for v in ticks(xmin, xmax) {
                let x = lx(v);
                writeln!(o, r##"<line x1="{x:.1}" x2="{x:.1}" y1="{y0}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{v}</text>"##, y0 + ph, y0 + ph + 16.0).unwrap();
            }
            for (ri, (regime, points)) in self.regimes.iter().enumerate() {
                let c = colors[ri % colors.len()];
                let (tokio, servers) = points.split_last().unwrap();
                let (adaptive, windows): (Vec<&Point>, Vec<&Point>) =
                    servers.iter().partition(|p| p.label == "adaptive");
                let pts: Vec<String> = windows
                    .iter()
                    .map(|p| format!("{:.1},{:.1}", lx(p.cpu), ly(f(p))))
                    .collect();
                writeln!(
                    o,
                    r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
                    pts.join(" ")
                )
                .unwrap();
                for p in windows {
                    writeln!(o, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{} {}</title></circle>"#, lx(p.cpu), ly(f(p)), xml_escape(regime), xml_escape(&p.label)).unwrap();
                }
                for p in adaptive {
                    writeln!(o, r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="{c}"><title>{} adaptive</title></rect>"#, lx(p.cpu) - 4.0, ly(f(p)) - 4.0, xml_escape(regime)).unwrap();
                }
                writeln!(o, r#"<circle cx="{:.1}" cy="{:.1}" r="5" fill="none" stroke="{c}" stroke-width="2"><title>{} tokio</title></circle>"#, lx(tokio.cpu), ly(f(tokio)), xml_escape(regime)).unwrap();
                if pi == 0 {
                    let (x, y) = (70.0 + ri as f64 * 140.0, y0 + ph + 45.0);
                    writeln!(o, r#"<line x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="{c}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#, x + 20.0, x + 25.0, y + 4.0, xml_escape(regime)).unwrap();
                }
            }
        }
        let first = self.regimes.first().map(|(_, p)| p);
        let order: Vec<&str> = first
            .map(|p| p.iter().map(|p| p.label.as_str()).collect())
            .unwrap_or_default();
        writeln!(o, r##"<text x="70" y="{}" fill="#555">Each curve: one regime through the fixed spinpark windows ({}); filled square: adaptive; open circle: tokio.</text>"##, H - 60.0, xml_escape(&order.join(", "))).unwrap();
        writeln!(
            o,
            r##"<text x="70" y="{}" fill="#555">{}</text>"##,
            H - 40.0,
            xml_escape(&format!("{} ({})", self.title, self.layout))
        )
        .unwrap();
        o.push_str("</svg>\n");
        o
    }
}

/// Whether no other point of `points` is at most as costly and at most as slow (by `f`), and
/// strictly better in one of the two.
fn pareto(points: &[Point], i: usize, f: fn(&Point) -> f64) -> bool {
    let p = &points[i];
    !points
        .iter()
        .enumerate()
        .any(|(j, q)| j != i && q.cpu <= p.cpu && f(q) <= f(p) && (q.cpu < p.cpu || f(q) < f(p)))
}

/// A log axis's range around `values`.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::MAX, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if hi <= 0.0 {
        return (1.0, 10.0);
    }
    (lo * 0.7, (hi * 1.3).max(lo * 2.0))
}

/// 1-2-5 ticks within `lo..=hi`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = 10f64.powi(lo.log10().floor() as i32);
    while t <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = t * m;
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
        t *= 10.0;
    }
    out
}
