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

use crate::mode::{fmt_dur, Mode};
use crate::runner::Plan;
use crate::sample::{Sample, FIELDS};
use crate::stats::{paired_ratios, verdict, Better, Spread};

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

    /// Per table: p50 and p99 latency against the gap for both runtimes, beside context
    /// switches per request for every mode.
    pub fn svg(&self) -> String {
        const W: f64 = 1100.0;
        const ROW: f64 = 420.0;
        let h = ROW * self.tables.len().max(1) as f64 + 40.0;
        let mut o = String::new();
        writeln!(o, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" font-family="sans-serif" font-size="12">"#).unwrap();
        writeln!(o, r#"<rect width="{W}" height="{h}" fill="white"/>"#).unwrap();
        for (ti, t) in self.tables.iter().enumerate() {
            svg_table(&mut o, t, ti as f64 * ROW);
        }
        writeln!(
            o,
            r##"<text x="70" y="{}" fill="#555">{}</text>"##,
            h - 15.0,
            xml_escape(&format!("{} | {}", self.machine, self.settings))
        )
        .unwrap();
        o.push_str("</svg>\n");
        o
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
fn svg_table(o: &mut String, t: &Table, top: f64) {
    let colors = ["#d9480f", "#1c7ed6"];
    let gaps: Vec<&Row> = t.rows.iter().filter(|r| r.mode.gap().is_some()).collect();
    let (x0, y0, pw, ph) = (70.0, top + 50.0, 520.0, 320.0);
    writeln!(
        o,
        r#"<text x="{x0}" y="{}" font-size="15" font-weight="bold">{}: round-trip latency vs gap (us, log scale)</text>"#,
        top + 25.0,
        xml_escape(&t.title)
    )
    .unwrap();
    writeln!(
        o,
        r##"<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##
    )
    .unwrap();
    if !gaps.is_empty() {
        let ymax = gaps
            .iter()
            .flat_map(|r| [r.median(0, |s| s.p99), r.median(1, |s| s.p99)])
            .fold(10.0f64, f64::max)
            * 1.3;
        let ymin = gaps
            .iter()
            .flat_map(|r| [r.median(0, |s| s.p50), r.median(1, |s| s.p50)])
            .fold(f64::MAX, f64::min)
            .max(1.0)
            * 0.7;
        let ly = |v: f64| y0 + ph - (v.max(ymin).ln() - ymin.ln()) / (ymax.ln() - ymin.ln()) * ph;
        let lx = |i: usize| x0 + i as f64 * pw / (gaps.len().max(2) - 1) as f64;
        let mut tick = 1.0;
        while tick < ymax {
            for m in [1.0, 2.0, 5.0] {
                let v = tick * m;
                if v >= ymin && v <= ymax {
                    let y = ly(v);
                    writeln!(o, r##"<line x1="{x0}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{v}</text>"##, x0 + pw, x0 - 5.0, y + 4.0).unwrap();
                }
            }
            tick *= 10.0;
        }
        for (i, r) in gaps.iter().enumerate() {
            writeln!(
                o,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                lx(i),
                y0 + ph + 18.0,
                fmt_dur(r.mode.gap().unwrap())
            )
            .unwrap();
        }
        writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">gap</text>"#,
            x0 + pw / 2.0,
            y0 + ph + 36.0
        )
        .unwrap();
        for (ri, rt) in t.labels.iter().enumerate() {
            for (pi, (label, f, dash)) in [
                ("p50", (|s: &Sample| s.p50) as fn(&Sample) -> f64, ""),
                ("p99", |s: &Sample| s.p99, "6,4"),
            ]
            .iter()
            .enumerate()
            {
                let pts: Vec<String> = gaps
                    .iter()
                    .enumerate()
                    .map(|(i, r)| format!("{:.1},{:.1}", lx(i), ly(r.median(ri, *f))))
                    .collect();
                writeln!(o, r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2.5" stroke-dasharray="{dash}"/>"#, pts.join(" "), colors[ri]).unwrap();
                let ly_ = y0 + 14.0 + (ri * 2 + pi) as f64 * 16.0;
                writeln!(o, r#"<line x1="{}" x2="{}" y1="{ly_}" y2="{ly_}" stroke="{}" stroke-width="2.5" stroke-dasharray="{dash}"/><text x="{}" y="{}">{} {label}</text>"#, x0 + 10.0, x0 + 35.0, colors[ri], x0 + 40.0, ly_ + 4.0, xml_escape(rt)).unwrap();
            }
        }
    }
    // Right: context switches per request, per mode.
    let (bx, by, bw, bh) = (680.0, top + 50.0, 390.0, 320.0);
    writeln!(
        o,
        r#"<text x="{bx}" y="{}" font-size="15" font-weight="bold">Server context switches per request</text>"#,
        top + 25.0
    )
    .unwrap();
    let cmax = t
        .rows
        .iter()
        .flat_map(|r| [r.median(0, |s| s.cs), r.median(1, |s| s.cs)])
        .fold(0.1f64, f64::max)
        * 1.1;
    let slot = bh / t.rows.len().max(1) as f64;
    for (i, r) in t.rows.iter().enumerate() {
        let y = by + i as f64 * slot;
        writeln!(
            o,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            bx + 85.0,
            y + slot * 0.6,
            r.mode.name()
        )
        .unwrap();
        for (ri, color) in colors.iter().enumerate() {
            let cs = r.median(ri, |s| s.cs);
            let w = cs / cmax * (bw - 150.0);
            let yy = y + 2.0 + ri as f64 * (slot - 4.0) / 2.0;
            writeln!(o, r#"<rect x="{}" y="{yy:.1}" width="{w:.1}" height="{:.1}" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="10">{cs:.2}</text>"#, bx + 90.0, (slot - 4.0) / 2.0 - 1.0, bx + 93.0 + w, yy + (slot - 4.0) / 2.0 - 2.0).unwrap();
        }
    }
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
