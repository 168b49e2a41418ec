//! What the RPC benchmark measured, reduced to medians, as text, Markdown, JSON and an SVG
//! chart.

use std::fmt::Write as _;
use std::time::Duration;

use crate::load::LoadResult;
use crate::server::Usage;
use crate::RUNTIMES;

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
}

impl Mode {
    pub fn name(&self) -> String {
        match *self {
            Mode::Sync { threads, .. } => format!("sync T={threads}"),
            Mode::Async { conns, depth, .. } => format!("async {conns}x{depth}"),
            Mode::Gap { gap, .. } => format!("gap {}", fmt_gap(gap)),
        }
    }

    fn gap(&self) -> Option<Duration> {
        match *self {
            Mode::Gap { gap, .. } => Some(gap),
            _ => None,
        }
    }
}

fn fmt_gap(d: Duration) -> String {
    let us = d.as_micros();
    if us == 0 {
        "0".into()
    } else if us % 1000 == 0 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// One run of one mode on one runtime. Times per request in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub reqs_per_sec: f64,
    pub user_us: f64,
    pub sys_us: f64,
    pub cs: f64,
    pub client_cpu_us: f64,
    pub mean: f64,
    pub min: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub achieved_gap_us: f64,
}

/// A named field of a [`Sample`].
type Field = (&'static str, fn(&Sample) -> f64);

const FIELDS: [Field; 14] = [
    ("reqs_per_sec", |s| s.reqs_per_sec),
    ("server_user_us_per_req", |s| s.user_us),
    ("server_sys_us_per_req", |s| s.sys_us),
    ("server_ctx_switches_per_req", |s| s.cs),
    ("client_cpu_us_per_req", |s| s.client_cpu_us),
    ("latency_mean_us", |s| s.mean),
    ("latency_min_us", |s| s.min),
    ("latency_p25_us", |s| s.p25),
    ("latency_p50_us", |s| s.p50),
    ("latency_p75_us", |s| s.p75),
    ("latency_p90_us", |s| s.p90),
    ("latency_p99_us", |s| s.p99),
    ("latency_max_us", |s| s.max),
    ("achieved_gap_us", |s| s.achieved_gap_us),
];

impl Sample {
    pub fn new(r: &LoadResult, server: Usage, client: Usage) -> Sample {
        let n = r.requests.max(1) as f64;
        let q = |p: f64| r.latency.value_at_quantile(p) as f64 / 1000.0;
        Sample {
            reqs_per_sec: r.requests as f64 / r.elapsed.as_secs_f64(),
            user_us: server.user_us as f64 / n,
            sys_us: server.sys_us as f64 / n,
            cs: (server.vol_cs + server.invol_cs) as f64 / n,
            client_cpu_us: (client.user_us + client.sys_us) as f64 / n,
            mean: r.latency.mean() / 1000.0,
            min: r.latency.min() as f64 / 1000.0,
            p25: q(0.25),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p99: q(0.99),
            max: r.latency.max() as f64 / 1000.0,
            achieved_gap_us: r.achieved_gap.map_or(0.0, |g| g.as_secs_f64() * 1e6),
        }
    }

    /// The field-by-field median of several runs.
    fn median(runs: &[Sample]) -> Sample {
        let m = |f: fn(&Sample) -> f64| {
            let mut v: Vec<f64> = runs.iter().map(f).collect();
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let k = v.len();
            if k % 2 == 1 {
                v[k / 2]
            } else {
                (v[k / 2 - 1] + v[k / 2]) / 2.0
            }
        };
        Sample {
            reqs_per_sec: m(|s| s.reqs_per_sec),
            user_us: m(|s| s.user_us),
            sys_us: m(|s| s.sys_us),
            cs: m(|s| s.cs),
            client_cpu_us: m(|s| s.client_cpu_us),
            mean: m(|s| s.mean),
            min: m(|s| s.min),
            p25: m(|s| s.p25),
            p50: m(|s| s.p50),
            p75: m(|s| s.p75),
            p90: m(|s| s.p90),
            p99: m(|s| s.p99),
            max: m(|s| s.max),
            achieved_gap_us: m(|s| s.achieved_gap_us),
        }
    }
}

/// Medians per mode and runtime.
pub struct Report {
    rows: Vec<(Mode, [Sample; 2])>,
    machine: String,
    settings: String,
}

impl Report {
    pub fn new(
        modes: &[Mode],
        results: &[[Vec<Sample>; 2]],
        workers: usize,
        quick: bool,
        rounds: usize,
    ) -> Report {
        let rows = modes
            .iter()
            .zip(results)
            .map(|(m, r)| (*m, [Sample::median(&r[0]), Sample::median(&r[1])]))
            .collect();
        Report {
            rows,
            machine: machine(),
            settings: format!(
                "{workers} workers per runtime, {rounds} alternating rounds{}, medians; 100-byte echo; spinpark spin window {:?}",
                if quick { " (--quick)" } else { "" },
                spinpark::DEFAULT_SPIN
            ),
        }
    }

    fn ratio(a: f64, b: f64) -> String {
        if b > 0.0 {
            format!("{:.2}x", a / b)
        } else {
            "-".into()
        }
    }

    /// The tables as plain text (what `cargo bench` prints).
    pub fn text(&self) -> String {
        let mut o = String::new();
        writeln!(o, "\nspinpark vs tokio RPC benchmark: {}", self.settings).unwrap();
        writeln!(o, "machine: {}\n", self.machine).unwrap();
        writeln!(
            o,
            "{:<14} {:<9} {:>10} {:>10} {:>10} {:>9} {:>10} | {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}",
            "mode", "runtime", "Reqs/sec", "User/req", "Sys/req", "CtxSw/req", "Client/req", "mean", "min", "p25", "p50", "p75", "p90", "p99", "max"
        )
        .unwrap();
        for (mode, s) in &self.rows {
            for (i, rt) in RUNTIMES.iter().enumerate() {
                let x = &s[i];
                writeln!(
                    o,
                    "{:<14} {:<9} {:>10.0} {:>8.1}us {:>8.1}us {:>9.3} {:>8.1}us | {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>8.1} {:>8.1}",
                    if i == 0 { mode.name() } else { String::new() },
                    rt,
                    x.reqs_per_sec,
                    x.user_us,
                    x.sys_us,
                    x.cs,
                    x.client_cpu_us,
                    x.mean,
                    x.min,
                    x.p25,
                    x.p50,
                    x.p75,
                    x.p90,
                    x.p99,
                    x.max
                )
                .unwrap();
            }
            let (a, b) = (&s[0], &s[1]);
            let mut extra = String::new();
            if let Some(g) = mode.gap() {
                if !g.is_zero() {
                    extra = format!(
                        "  (gap achieved: spinpark {:.0}us, tokio {:.0}us)",
                        a.achieved_gap_us, b.achieved_gap_us
                    );
                }
            }
            writeln!(
                o,
                "{:<14} {:<9} {:>10} {:>10} {:>10} {:>9} {:>10} | {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}{}",
                "",
                "ratio",
                Self::ratio(a.reqs_per_sec, b.reqs_per_sec),
                Self::ratio(a.user_us, b.user_us),
                Self::ratio(a.sys_us, b.sys_us),
                Self::ratio(a.cs, b.cs),
                Self::ratio(a.client_cpu_us, b.client_cpu_us),
                Self::ratio(a.mean, b.mean),
                Self::ratio(a.min, b.min),
                Self::ratio(a.p25, b.p25),
                Self::ratio(a.p50, b.p50),
                Self::ratio(a.p75, b.p75),
                Self::ratio(a.p90, b.p90),
                Self::ratio(a.p99, b.p99),
                Self::ratio(a.max, b.max),
                extra
            )
            .unwrap();
        }
        o
    }

    /// Two Markdown tables, one per reference experiment.
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        writeln!(o, "Machine: {}. {}.\n", self.machine, self.settings).unwrap();
        writeln!(o, "| mode | runtime | Reqs/sec | User CPU per req | Sys CPU per req | Ctx Sw. per req | client CPU per req | p50 | p99 |").unwrap();
        writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|").unwrap();
        for (mode, s) in self.rows.iter().filter(|(m, _)| m.gap().is_none()) {
            for (i, rt) in RUNTIMES.iter().enumerate() {
                let x = &s[i];
                writeln!(
                    o,
                    "| {} | {rt} | {:.0} | {:.1} us | {:.1} us | {:.3} | {:.1} us | {:.1} us | {:.1} us |",
                    mode.name(), x.reqs_per_sec, x.user_us, x.sys_us, x.cs, x.client_cpu_us, x.p50, x.p99
                )
                .unwrap();
            }
            let (a, b) = (&s[0], &s[1]);
            writeln!(
                o,
                "| {} | **spinpark/tokio** | **{}** | {} | {} | {} | {} | **{}** | {} |",
                mode.name(),
                Self::ratio(a.reqs_per_sec, b.reqs_per_sec),
                Self::ratio(a.user_us, b.user_us),
                Self::ratio(a.sys_us, b.sys_us),
                Self::ratio(a.cs, b.cs),
                Self::ratio(a.client_cpu_us, b.client_cpu_us),
                Self::ratio(a.p50, b.p50),
                Self::ratio(a.p99, b.p99),
            )
            .unwrap();
        }
        writeln!(
            o,
            "\nOne client, 100-byte requests spaced by a gap (latency in microseconds):\n"
        )
        .unwrap();
        writeln!(o, "| gap (achieved) | spinpark p50 | tokio p50 | p50 ratio | spinpark p99 | tokio p99 | spinpark Ctx Sw./req | tokio Ctx Sw./req | spinpark CPU/req | tokio CPU/req |").unwrap();
        writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
        for (mode, s) in self.rows.iter().filter(|(m, _)| m.gap().is_some()) {
            let (a, b) = (&s[0], &s[1]);
            writeln!(
                o,
                "| {} ({:.0} us) | {:.1} | {:.1} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.1} us | {:.1} us |",
                fmt_gap(mode.gap().unwrap()),
                (a.achieved_gap_us + b.achieved_gap_us) / 2.0,
                a.p50,
                b.p50,
                Self::ratio(a.p50, b.p50),
                a.p99,
                b.p99,
                a.cs,
                b.cs,
                a.user_us + a.sys_us,
                b.user_us + b.sys_us
            )
            .unwrap();
        }
        o
    }

    /// Every median, as JSON.
    pub fn json(&self) -> String {
        let mut o = String::new();
        write!(
            o,
            "{{\n  \"machine\": {:?},\n  \"settings\": {:?},\n  \"modes\": [\n",
            self.machine, self.settings
        )
        .unwrap();
        for (k, (mode, s)) in self.rows.iter().enumerate() {
            write!(o, "    {{\"mode\": {:?}", mode.name()).unwrap();
            for (i, rt) in RUNTIMES.iter().enumerate() {
                write!(o, ", {rt:?}: {{").unwrap();
                for (j, (name, f)) in FIELDS.iter().enumerate() {
                    let v = f(&s[i]);
                    let v = if v.is_finite() { v } else { 0.0 };
                    write!(o, "{}\"{name}\": {v:.3}", if j > 0 { ", " } else { "" }).unwrap();
                }
                o.push('}');
            }
            writeln!(o, "}}{}", if k + 1 < self.rows.len() { "," } else { "" }).unwrap();
        }
        o.push_str("  ]\n}\n");
        o
    }

    /// p50 and p99 latency against the gap for both runtimes, beside context switches per
    /// request for every mode.
    pub fn svg(&self) -> String {
        const W: f64 = 1100.0;
        const H: f64 = 440.0;
        let colors = ["#d9480f", "#1c7ed6"];
        let mut o = String::new();
        writeln!(o, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#).unwrap();
        writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#).unwrap();
        // Left: latency vs gap, log-scale y.
        let gaps: Vec<&(Mode, [Sample; 2])> = self
            .rows
            .iter()
            .filter(|(m, _)| m.gap().is_some())
            .collect();
        let (x0, y0, pw, ph) = (70.0, 50.0, 520.0, 320.0);
        let ymax = gaps
            .iter()
            .flat_map(|(_, s)| [s[0].p99, s[1].p99])
            .fold(10.0f64, f64::max)
            * 1.3;
        let ymin = gaps
            .iter()
            .flat_map(|(_, s)| [s[0].p50, s[1].p50])
            .fold(f64::MAX, f64::min)
            .max(1.0)
            * 0.7;
        let ly = |v: f64| y0 + ph - (v.max(ymin).ln() - ymin.ln()) / (ymax.ln() - ymin.ln()) * ph;
        let lx = |i: usize| x0 + i as f64 * pw / (gaps.len().max(2) - 1) as f64;
        writeln!(o, r#"<text x="{}" y="25" font-size="15" font-weight="bold">Round-trip latency vs gap between requests (us, log scale)</text>"#, x0).unwrap();
        writeln!(
            o,
            r##"<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##
        )
        .unwrap();
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
        for (i, (m, _)) in gaps.iter().enumerate() {
            writeln!(
                o,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                lx(i),
                y0 + ph + 18.0,
                fmt_gap(m.gap().unwrap())
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
        for (ri, rt) in RUNTIMES.iter().enumerate() {
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
                    .map(|(i, (_, s))| format!("{:.1},{:.1}", lx(i), ly(f(&s[ri]))))
                    .collect();
                writeln!(o, r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2.5" stroke-dasharray="{dash}"/>"#, pts.join(" "), colors[ri]).unwrap();
                let ly_ = y0 + 14.0 + (ri * 2 + pi) as f64 * 16.0;
                writeln!(o, r#"<line x1="{}" x2="{}" y1="{ly_}" y2="{ly_}" stroke="{}" stroke-width="2.5" stroke-dasharray="{dash}"/><text x="{}" y="{}">{rt} {label}</text>"#, x0 + 10.0, x0 + 35.0, colors[ri], x0 + 40.0, ly_ + 4.0).unwrap();
            }
        }
        // Right: context switches per request, per mode.
        let (bx, by, bw, bh) = (680.0, 50.0, 390.0, 320.0);
        writeln!(o, r#"<text x="{bx}" y="25" font-size="15" font-weight="bold">Server context switches per request</text>"#).unwrap();
        let cmax = self
            .rows
            .iter()
            .flat_map(|(_, s)| [s[0].cs, s[1].cs])
            .fold(0.1f64, f64::max)
            * 1.1;
        let n = self.rows.len() as f64;
        let slot = bh / n;
        for (i, (m, s)) in self.rows.iter().enumerate() {
            let y = by + i as f64 * slot;
            writeln!(
                o,
                r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
                bx + 85.0,
                y + slot * 0.6,
                m.name()
            )
            .unwrap();
            for ri in 0..2 {
                let w = s[ri].cs / cmax * (bw - 150.0);
                let yy = y + 2.0 + ri as f64 * (slot - 4.0) / 2.0;
                writeln!(o, r#"<rect x="{}" y="{yy:.1}" width="{w:.1}" height="{:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" font-size="10">{:.2}</text>"#, bx + 90.0, (slot - 4.0) / 2.0 - 1.0, colors[ri], bx + 93.0 + w, yy + (slot - 4.0) / 2.0 - 2.0, s[ri].cs).unwrap();
            }
        }
        writeln!(
            o,
            r##"<text x="{x0}" y="{}" fill="#555">{}</text>"##,
            H - 20.0,
            xml_escape(&format!("{} | {}", self.machine, self.settings))
        )
        .unwrap();
        o.push_str("</svg>\n");
        o
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A one-line description of this machine.
fn machine() -> String {
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
