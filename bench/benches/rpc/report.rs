//! What the RPC benchmark measured, as Markdown tables (also what it prints), JSON and an
//! SVG chart: one table set per layout, every figure as `median (min-max)` over rounds.
//!
//! ```text
//! let mut report = Report::new(settings);
//! report.add(&plan, &runs); // one table set per plan: remote first, then colocated
//! print!("{}", report.markdown());
//! ```
//!
//! Ratios are spinpark/tokio, computed per round (the two were measured back to back) and
//! then summarised; the verdict column reads those paired ratios (see `stats.rs`). A plan run
//! beside a CPU-bound neighbour (`--only neighbour`) adds the neighbour's work beside each
//! runtime to its gap table.

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::mode::{fmt_dur, Mode};
use crate::runner::Plan;
use crate::sample::{Sample, FIELDS};
use crate::stats::{paired_ratios, verdict, Better, Spread};
use spinpark_bench::plot::{self, Panel, Series};

/// One mode's samples, `[server][round]`, for spinpark and tokio.
struct Row {
    mode: Mode,
    runs: [Vec<Sample>; 2],
}

impl Row {
    fn spread(&self, i: usize, f: fn(&Sample) -> f64) -> Spread {
        Spread::of(self.runs[i].iter().map(f))
    }

    fn ratio(&self, f: fn(&Sample) -> f64) -> Vec<f64> {
        let v = |i: usize| self.runs[i].iter().map(f).collect::<Vec<f64>>();
        paired_ratios(&v(0), &v(1))
    }

    fn ratio_cell(&self, f: fn(&Sample) -> f64) -> String {
        Spread::of(self.ratio(f)).show_ratio()
    }

    fn verdict(&self, name: &str, f: fn(&Sample) -> f64, better: Better) -> String {
        format!("{name} {}", verdict(&self.ratio(f), better).word())
    }

    /// Whether any round ran beside a neighbour (`neighbour.rs`).
    fn has_neighbour(&self) -> bool {
        self.runs
            .iter()
            .flatten()
            .any(|s| s.neighbour_units_per_sec.is_finite())
    }

    /// Whether most of a server's rounds were client-bound.
    fn client_bound(&self, i: usize) -> bool {
        let n = self.runs[i].iter().filter(|s| s.client_bound).count();
        n * 2 > self.runs[i].len()
    }

    fn median(&self, i: usize, f: fn(&Sample) -> f64) -> f64 {
        self.spread(i, f).median
    }
}

/// The results of one plan.
struct Table {
    title: String,
    layout: String,
    rounds: usize,
    labels: [String; 2],
    rows: Vec<Row>,
}

/// Every table of a run, plus extra Markdown sections (the kv mode's) and extra JSON tables
/// (the floor mode's).
pub struct Report {
    tables: Vec<Table>,
    extra: Vec<String>,
    extra_json: Vec<serde_json::Value>,
    machine: String,
    settings: String,
}

impl Report {
    pub fn new(settings: String) -> Report {
        Report {
            tables: Vec::new(),
            extra: Vec::new(),
            extra_json: Vec::new(),
            machine: machine(),
            settings,
        }
    }

    /// Adds the tables of `plan` (its first two servers: spinpark, then tokio), from
    /// `runs[mode][server][round]`.
    pub fn add(&mut self, plan: &Plan, runs: &[Vec<Vec<Sample>>]) {
        let rows = plan
            .modes
            .iter()
            .zip(runs)
            .map(|(m, r)| Row {
                mode: *m,
                runs: [r[0].clone(), r[1].clone()],
            })
            .collect();
        self.tables.push(Table {
            title: plan.title.clone(),
            layout: plan.layout.describe(),
            rounds: plan.rounds,
            labels: [plan.specs[0].label(), plan.specs[1].label()],
            rows,
        });
    }

    /// Adds a Markdown section printed after the tables.
    pub fn add_section(&mut self, markdown: String) {
        self.extra.push(markdown);
    }

    /// Adds a table to `results.json`'s `tables`, after the echo tables (see
    /// [`sample_json`] for the figures' shape).
    pub fn add_json_table(&mut self, table: serde_json::Value) {
        self.extra_json.push(table);
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.extra.is_empty()
    }

    /// Whether this report has every table a full run makes (what `--docs` may publish).
    pub fn has_tables(&self) -> bool {
        !self.tables.is_empty()
    }

    /// Every table, as Markdown.
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        writeln!(o, "Machine: {}. {}.", self.machine, self.settings).unwrap();
        for t in &self.tables {
            writeln!(
                o,
                "\n**{}** ({}; {} round{}; median (min-max) over rounds):\n",
                t.title,
                t.layout,
                t.rounds,
                if t.rounds == 1 { "" } else { "s" }
            )
            .unwrap();
            closed_loop(&mut o, t);
            gaps(&mut o, t);
            open_loop(&mut o, t);
        }
        for e in &self.extra {
            writeln!(o, "\n{e}").unwrap();
        }
        o
    }

    /// The headline: the first table's modes (the remote layout with 2 workers in a full
    /// run), one line each with requests/s, p50 and context switches per request of both
    /// runtimes and the spinpark/tokio ratios (median (min-max) of the per-round ratios).
    /// The README shows this; `docs/bench.md` has every table.
    pub fn headline(&self) -> String {
        let mut o = String::new();
        let Some(t) = self.tables.first() else {
            return o;
        };
        let [a, b] = &t.labels;
        writeln!(
            o,
            "Machine: {}. {}. **{}** ({}; {} round{}; median (min-max) over rounds):\n",
            self.machine,
            self.settings,
            t.title,
            t.layout,
            t.rounds,
            if t.rounds == 1 { "" } else { "s" }
        )
        .unwrap();
        writeln!(o, "| mode | {a} Reqs/sec | {b} Reqs/sec | ratio | {a} p50 (us) | {b} p50 (us) | ratio | Ctx Sw. per req ({a} / {b}) |").unwrap();
        writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|").unwrap();
        for r in &t.rows {
            writeln!(
                o,
                "| {} | {:.0} | {:.0} | {} | {:.1} | {:.1} | **{}** | {:.3} / {:.3} |",
                r.mode.name(),
                r.median(0, |s| s.reqs_per_sec),
                r.median(1, |s| s.reqs_per_sec),
                r.ratio_cell(|s| s.reqs_per_sec),
                r.median(0, |s| s.p50),
                r.median(1, |s| s.p50),
                r.ratio_cell(|s| s.p50),
                r.median(0, |s| s.cs),
                r.median(1, |s| s.cs),
            )
            .unwrap();
        }
        o
    }

    /// Every figure's median, min and max per table, mode and runtime, as JSON (3
    /// decimals; a figure that is not finite is `null`).
    pub fn json(&self) -> String {
        use serde_json::{json, Map, Value};
        let mut tables: Vec<Value> = self
            .tables
            .iter()
            .map(|t| {
                let modes: Vec<Value> = t
                    .rows
                    .iter()
                    .map(|row| {
                        let mut m = Map::new();
                        m.insert("mode".into(), json!(row.mode.name()));
                        for (i, label) in t.labels.iter().enumerate() {
                            m.insert(label.clone(), sample_json(&row.runs[i]));
                        }
                        Value::Object(m)
                    })
                    .collect();
                json!({
                    "title": t.title,
                    "layout": t.layout,
                    "rounds": t.rounds,
                    "modes": modes,
                })
            })
            .collect();
        tables.extend(self.extra_json.iter().cloned());
        let doc = json!({
            "machine": self.machine,
            "settings": self.settings,
            "tables": tables,
        });
        let mut out = serde_json::to_string_pretty(&doc).expect("a JSON value serialises");
        out.push('\n');
        out
    }

    /// Per table, a row of two panels: p50 (solid) and p99 (dashed) latency against the gap
    /// for both runtimes, and context switches per request for every mode; the machine and
    /// settings under them.
    pub fn svg(&self) -> String {
        let panels: Vec<Panel> = self.tables.iter().flat_map(chart_panels).collect();
        plot::svg(&panels, 2, &format!("{} | {}", self.machine, self.settings))
    }
}

/// sync and async rows: throughput, CPU, context switches, cores and latency.
fn closed_loop(o: &mut String, t: &Table) {
    let rows: Vec<&Row> = t
        .rows
        .iter()
        .filter(|r| r.mode.is_closed_loop_throughput())
        .collect();
    if rows.is_empty() {
        return;
    }
    writeln!(o, "| mode | runtime | Reqs/sec | User CPU per req (us) | Sys CPU per req (us) | Ctx Sw. per req | server cores | client cores | p50 (us) | p99 (us) | verdict |").unwrap();
    writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|").unwrap();
    for r in rows {
        for (i, label) in t.labels.iter().enumerate() {
            let bound = if r.client_bound(i) {
                ", **client-bound**"
            } else {
                ""
            };
            writeln!(
                o,
                "| {} | {label}{bound} | {} | {} | {} | {} | {} | {} | {} | {} | |",
                r.mode.name(),
                r.spread(i, |s| s.reqs_per_sec).show(0),
                r.spread(i, |s| s.user_us).show(1),
                r.spread(i, |s| s.sys_us).show(1),
                r.spread(i, |s| s.cs).show(3),
                r.spread(i, |s| s.server_cores).show(2),
                r.spread(i, |s| s.client_cores).show(2),
                r.spread(i, |s| s.p50).show(1),
                r.spread(i, |s| s.p99).show(1),
            )
            .unwrap();
        }
        writeln!(
            o,
            "| {} | **ratio** | **{}** | {} | {} | {} | {} | {} | **{}** | {} | {}, {} |",
            r.mode.name(),
            r.ratio_cell(|s| s.reqs_per_sec),
            r.ratio_cell(|s| s.user_us),
            r.ratio_cell(|s| s.sys_us),
            r.ratio_cell(|s| s.cs),
            r.ratio_cell(|s| s.server_cores),
            r.ratio_cell(|s| s.client_cores),
            r.ratio_cell(|s| s.p50),
            r.ratio_cell(|s| s.p99),
            r.verdict("req/s", |s| s.reqs_per_sec, Better::Higher),
            r.verdict("p50", |s| s.p50, Better::Lower),
        )
        .unwrap();
    }
}

/// One client with a gap between a reply and the next request: latency against the gap;
/// beside a neighbour, also the neighbour's work during each runtime's runs.
fn gaps(o: &mut String, t: &Table) {
    let rows: Vec<&Row> = t.rows.iter().filter(|r| r.mode.gap().is_some()).collect();
    if rows.is_empty() {
        return;
    }
    let [a, b] = &t.labels;
    let neighbour = rows.iter().any(|r| r.has_neighbour());
    writeln!(
        o,
        "\nOne client, 100-byte requests spaced by a gap (latency in microseconds):\n"
    )
    .unwrap();
    if neighbour {
        writeln!(
            o,
            "Beside the servers, a CPU-bound neighbour process runs one busy thread per server CPU; its work is in millions of units per second (a unit is {} xorshift steps), read over each run, with the spinpark/tokio ratio per round.\n",
            crate::neighbour::UNIT_STEPS
        )
        .unwrap();
    }
    let (head, rule) = if neighbour {
        (
            format!(" {a} neighbour (M units/s) | {b} neighbour (M units/s) | neighbour ratio |"),
            "---:|---:|---:|",
        )
    } else {
        (String::new(), "")
    };
    writeln!(o, "| gap (achieved us) | {a} p50 | {b} p50 | p50 ratio | verdict | {a} p99 | {b} p99 | p99 ratio | {a} Ctx Sw./req | {b} Ctx Sw./req | {a} CPU/req (us) | {b} CPU/req (us) |{head}").unwrap();
    writeln!(
        o,
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|{rule}"
    )
    .unwrap();
    for r in rows {
        let achieved = Spread::of(r.runs.iter().flatten().map(|s| s.achieved_gap_us));
        let work = |s: &Sample| s.neighbour_units_per_sec / 1e6;
        let extra = if neighbour {
            format!(
                " {} | {} | **{}** |",
                r.spread(0, work).show(3),
                r.spread(1, work).show(3),
                r.ratio_cell(work),
            )
        } else {
            String::new()
        };
        writeln!(
            o,
            "| {} ({:.0}) | {} | {} | **{}** | {} | {} | {} | {} | {} | {} | {} | {} |{extra}",
            fmt_dur(r.mode.gap().unwrap()),
            achieved.median,
            r.spread(0, |s| s.p50).show(1),
            r.spread(1, |s| s.p50).show(1),
            r.ratio_cell(|s| s.p50),
            verdict(&r.ratio(|s| s.p50), Better::Lower).word(),
            r.spread(0, |s| s.p99).show(1),
            r.spread(1, |s| s.p99).show(1),
            r.ratio_cell(|s| s.p99),
            r.spread(0, |s| s.cs).show(2),
            r.spread(1, |s| s.cs).show(2),
            r.spread(0, Sample::server_cpu_us).show(1),
            r.spread(1, Sample::server_cpu_us).show(1),
        )
        .unwrap();
    }
}

/// Poisson arrivals: latency from the scheduled send time, and the rate achieved.
fn open_loop(o: &mut String, t: &Table) {
    let rows: Vec<&Row> = t.rows.iter().filter(|r| r.mode.is_poisson()).collect();
    if rows.is_empty() {
        return;
    }
    writeln!(
        o,
        "\nOpen loop: Poisson arrivals over 4 connections, latency from the scheduled send time (us; p99.9 where a run has at least 10k samples):\n"
    )
    .unwrap();
    writeln!(o, "| mean gap | runtime | achieved req/s | p50 | p99 | p99.9 | server CPU/req (us) | Ctx Sw./req | server cores | client cores | verdict |").unwrap();
    writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|").unwrap();
    for r in rows {
        let name = r.mode.name();
        let mean = name.trim_start_matches("poisson ");
        for (i, label) in t.labels.iter().enumerate() {
            writeln!(
                o,
                "| {mean} | {label} | {} | {} | {} | {} | {} | {} | {} | {} | |",
                r.spread(i, |s| s.reqs_per_sec).show(0),
                r.spread(i, |s| s.p50).show(1),
                r.spread(i, |s| s.p99).show(1),
                r.spread(i, |s| s.p999).show(1),
                r.spread(i, Sample::server_cpu_us).show(1),
                r.spread(i, |s| s.cs).show(3),
                r.spread(i, |s| s.server_cores).show(2),
                r.spread(i, |s| s.client_cores).show(2),
            )
            .unwrap();
        }
        writeln!(
            o,
            "| {mean} | **ratio** | {} | **{}** | **{}** | {} | {} | {} | {} | {} | {}, {} |",
            r.ratio_cell(|s| s.reqs_per_sec),
            r.ratio_cell(|s| s.p50),
            r.ratio_cell(|s| s.p99),
            r.ratio_cell(|s| s.p999),
            r.ratio_cell(Sample::server_cpu_us),
            r.ratio_cell(|s| s.cs),
            r.ratio_cell(|s| s.server_cores),
            r.ratio_cell(|s| s.client_cores),
            r.verdict("p50", |s| s.p50, Better::Lower),
            r.verdict("p99", |s| s.p99, Better::Lower),
        )
        .unwrap();
    }
}

/// One row of the chart: latency against the gap (left), context switches per mode (right).
fn chart_panels(t: &Table) -> [Panel; 2] {
    const COLORS: [RGBColor; 2] = [plot::SPINPARK, plot::TOKIO];
    let gaps: Vec<&Row> = t.rows.iter().filter(|r| r.mode.gap().is_some()).collect();
    let mut latency = Vec::new();
    for (ri, rt) in t.labels.iter().enumerate() {
        for (name, f, dashed) in [
            ("p50", (|s: &Sample| s.p50) as fn(&Sample) -> f64, false),
            ("p99", |s: &Sample| s.p99, true),
        ] {
            latency.push(Series {
                name: format!("{rt} {name}"),
                color: COLORS[ri],
                dashed,
                points: gaps
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (i as f64, r.median(ri, f)))
                    .collect(),
            });
        }
    }
    let cs = t
        .labels
        .iter()
        .enumerate()
        .map(|(ri, rt)| Series {
            name: rt.clone(),
            color: COLORS[ri],
            dashed: false,
            points: t
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| (i as f64, r.median(ri, |s| s.cs)))
                .collect(),
        })
        .collect();
    [
        Panel {
            title: format!("{}: round-trip latency vs gap (us, log scale)", t.title),
            x_label: "gap".into(),
            y_label: "latency (us)".into(),
            y_log: true,
            series: latency,
            x_names: gaps
                .iter()
                .map(|r| fmt_dur(r.mode.gap().unwrap()))
                .collect(),
            ..Panel::default()
        },
        Panel {
            title: "Server context switches per request".into(),
            x_label: "mode".into(),
            y_label: "context switches per request".into(),
            series: cs,
            x_names: t.rows.iter().map(|r| r.mode.name()).collect(),
            ..Panel::default()
        },
    ]
}

/// Every figure of one server's rounds, by [`FIELDS`] name: `[median, min, max]`.
pub fn sample_json(rounds: &[Sample]) -> serde_json::Value {
    serde_json::Value::Object(
        FIELDS
            .iter()
            .map(|(name, f)| {
                (
                    name.to_string(),
                    spread_json(Spread::of(rounds.iter().map(f))),
                )
            })
            .collect(),
    )
}

/// `[median, min, max]` with 3 decimals; a figure that is not finite is `null`.
pub fn spread_json(s: Spread) -> serde_json::Value {
    let num = |v: f64| {
        if v.is_finite() {
            serde_json::json!((v * 1000.0).round() / 1000.0)
        } else {
            serde_json::Value::Null
        }
    };
    serde_json::json!([num(s.median), num(s.min), num(s.max)])
}

pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A one-line description of this machine.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    format!("{cores} vCPU {cpu}, Linux {kernel}")
}
