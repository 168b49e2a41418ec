//! `--only openloop`: latency against offered load, from light load to past saturation, for
//! spinpark and tokio, with its table, chart and what the runtime did in the rounds whose
//! tail was long.
//!
//! ```text
//! cargo bench --bench rpc -- --only openloop              # 5 rounds, about 8 minutes
//! cargo bench --bench rpc -- --only openloop --rounds 3 --docs
//! let results = openloop::run(&openloop::Options { rounds: 5, quick: false, spin: None }, &mut progress);
//! std::fs::write("openloop.md", results.markdown())?;
//! ```
//!
//! The load is open-loop (`poisson.rs`): Poisson arrivals over [`CONNS`] connections, each
//! latency timed from the request's scheduled send time, so a server that stalls is charged
//! for every request it delays. The layout is remote (load generator on the first half of the
//! CPUs, servers on the rest), and every server is pinned to the first server CPU, in two
//! configurations: one worker, and two workers sharing that one CPU (a container whose CPU
//! quota is smaller than its worker count).
//!
//! Per configuration:
//!
//! 1. **Saturation is found, not guessed.** Both runtimes are driven at rising rates (x1.5
//!    from 10k req/s, [`CALIBRATE`] each) until neither keeps up (achieved under 90 % of
//!    offered, or p50 past 500 us); each one's last rate kept up with, refined once, is its
//!    capacity. tokio's is the sweep's 100 % (the targets are judged against it).
//! 2. **The sweep**: 1k and 5k req/s, [`FRACTIONS`] of tokio's capacity (2 % to 130 %), and
//!    15 % past spinpark's when that is higher, each run long enough for a few thousand
//!    requests. In every round each server is a fresh process, the rates go up, and at every
//!    rate the servers take turns in an order that alternates.
//! 3. Per rate and server: p50, p99 and p99.9 from the scheduled send time, achieved rate,
//!    server CPU and context switches per request, as the median and range over rounds; and
//!    spinpark/tokio ratios computed per round. A runtime's saturation point is the offered
//!    rate past which its median p99 stays over 1 ms (or its achieved rate under 95 % of
//!    offered).
//! 4. **Tails explained**: for spinpark, the counters its server keeps (probes, parks by
//!    choice, lost cores, window drops, mode flips, watchdog wakes), per thousand requests,
//!    beside the steal time of the server's CPU (`/proc/stat`) and its involuntary context
//!    switches; and every round where spinpark's p99 passed 1.2x tokio's in the same round,
//!    with what happened in it, so a host hiccup (steal, preemption) is told apart from the
//!    runtime's own doing.
//!
//! With `--quick` (and in a plain `--quick` run) one round of fewer, shorter rates shows the
//! curve in about half a minute.

use std::fmt::Write as _;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::load::histogram;
use crate::pin::{self, Layout};
use crate::poisson;
use crate::runner::{Progress, SETTLE};
use crate::sample::{Caps, Sample};
use crate::server::{Server, Spec, Spin, Usage};
use crate::stats::{paired_ratios, Spread};
use spinpark_bench::plot::{self, Panel, Series};

/// Rounds unless `--rounds` says otherwise.
pub const DEFAULT_ROUNDS: usize = 5;
/// Connections the load is spread over.
pub const CONNS: usize = 16;
/// How long each calibration step runs, per server (`--quick`: half).
const CALIBRATE: Duration = Duration::from_millis(500);
/// The sweep's rates, as fractions of the capacity found by calibration.
const FRACTIONS: [f64; 11] = [0.02, 0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 1.0, 1.15, 1.3];
/// `--quick`'s fractions.
const QUICK_FRACTIONS: [f64; 7] = [0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 1.15];
/// The p99 past which a rate counts as past saturation (the issue's definition).
const SATURATED_P99_US: f64 = 1000.0;
/// A round whose spinpark p99 passes tokio's by this much is listed with what happened.
const TAIL_RATIO: f64 = 1.2;

/// What `--only openloop` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub rounds: usize,
    pub quick: bool,
    pub spin: Option<Spin>,
    /// The remote layout (`None` with one CPU) and the machine's description, both taken
    /// when the run starts: the modes that run first pin this process to the client CPUs.
    pub layout: Option<Layout>,
    pub machine: String,
}

/// One configuration: its servers, spinpark's first and tokio's last.
struct Config {
    title: String,
    specs: Vec<Spec>,
}

/// What one run of one server at one rate measured.
#[derive(Clone)]
struct Obs {
    sample: Sample,
    /// Steal time on the server's CPU during the run, ms (`/proc/stat`, 10 ms ticks).
    steal_ms: f64,
    /// The server's involuntary context switches per request (preemptions).
    invol_cs: f64,
    /// spinpark's counters over the run (empty for tokio).
    counters: Vec<(String, u64)>,
}

/// One offered rate: per server, its observations over rounds, and its latencies over all
/// rounds.
struct Point {
    offered: f64,
    obs: Vec<Vec<Obs>>,
    pooled: Vec<Histogram<u64>>,
}

/// One configuration's sweep.
struct Sweep {
    title: String,
    labels: Vec<String>,
    capacity: f64,
    points: Vec<Point>,
}

/// The results: one sweep per configuration.
pub struct Results {
    machine: String,
    rounds: usize,
    layout: String,
    sweeps: Vec<Sweep>,
}

/// Runs the sweep of both configurations; `None` with fewer than 2 CPUs (no remote layout).
pub fn run(opts: &Options, progress: &mut Progress) -> Option<Results> {
    let layout = opts.layout.clone()?;
    let machine = opts.machine.clone();
    pin::pin_current(layout.client_cpus()).expect("pin the load generator");
    let cpu = layout.server_cpus()[0];
    let mut sweeps = Vec::new();
    for cfg in configs(opts) {
        let capacities = calibrate(&cfg, cpu, opts.quick, progress);
        // The baseline's capacity sets the sweep (the targets are judged against tokio's
        // saturation); a runtime that kept up with more gets one rate past its own, too.
        let capacity = capacities.last().copied().flatten().unwrap_or(10_000.0);
        let beyond: Vec<f64> = capacities
            .iter()
            .flatten()
            .filter(|&&c| c > capacity * 1.3)
            .map(|c| (c * 1.15).round())
            .collect();
        let rates = rates(capacity, opts.quick, &beyond);
        let n = cfg.specs.len();
        let mut points: Vec<Point> = rates
            .iter()
            .map(|&offered| Point {
                offered,
                obs: vec![Vec::new(); n],
                pooled: (0..n).map(|_| histogram()).collect(),
            })
            .collect();
        for round in 0..opts.rounds {
            let mut servers: Vec<Server> =
                cfg.specs.iter().map(|s| Server::start(s, &[cpu])).collect();
            for (pi, p) in points.iter_mut().enumerate() {
                let dur = duration(p.offered, opts.quick);
                let mut line = Vec::new();
                for k in 0..n {
                    // The order alternates from rate to rate and round to round.
                    let si = if (round + pi) % 2 == 0 { k } else { n - 1 - k };
                    let (obs, hist) = measure(&mut servers[si], p.offered, dur, cpu);
                    line.push((si, obs.sample.p50, obs.sample.p99));
                    p.pooled[si].add(&hist).expect("same bounds");
                    p.obs[si].push(obs);
                }
                line.sort_by_key(|l| l.0);
                let figures: Vec<String> = line
                    .iter()
                    .map(|&(si, p50, p99)| {
                        format!("{} p50 {p50:.0} p99 {p99:.0}us", cfg.specs[si].label())
                    })
                    .collect();
                progress.line(&format!(
                    "openloop, {}, round {}/{}, {:.1}k req/s: {}",
                    cfg.title,
                    round + 1,
                    opts.rounds,
                    p.offered / 1e3,
                    figures.join(", ")
                ));
            }
            servers.into_iter().for_each(Server::stop);
        }
        sweeps.push(Sweep {
            title: cfg.title,
            labels: cfg.specs.iter().map(Spec::label).collect(),
            capacity,
            points,
        });
    }
    Some(Results {
        machine,
        rounds: opts.rounds,
        layout: format!(
            "remote: servers pinned to CPU {cpu}, load generator pinned to CPU{} {}",
            if layout.client_cpus().len() > 1 {
                "s"
            } else {
                ""
            },
            pin::fmt_cpus(layout.client_cpus())
        ),
        sweeps,
    })
}

/// About how long [`run`] takes.
pub fn estimate(opts: &Options) -> Duration {
    // Calibration (about 14 steps of two servers, from 10k req/s to past 500k), then per
    // round and server the rates' durations at a capacity of about 100k req/s.
    let rates = rates(100_000.0, opts.quick, &[]);
    let per_server: Duration = rates
        .iter()
        .map(|&r| duration(r, opts.quick) + SETTLE)
        .sum();
    configs(opts)
        .iter()
        .map(|c| {
            calibration_step(opts.quick) * 28 + per_server * (opts.rounds * c.specs.len()) as u32
        })
        .sum()
}

fn configs(opts: &Options) -> Vec<Config> {
    let spinpark = |w| Spec::new("spinpark", w).spin(opts.spin);
    let mut one = vec![spinpark(1)];
    if !opts.quick {
        // CPU per request with spinning held to a quarter of a core.
        one.push(Spec::new("spinpark-quarter", 1).spin(opts.spin));
    }
    one.push(Spec::new("tokio", 1));
    vec![
        Config {
            title: "1 worker".into(),
            specs: one,
        },
        Config {
            title: "2 workers on one CPU".into(),
            specs: vec![spinpark(2), Spec::new("tokio", 2)],
        },
    ]
}

/// The offered rates: 1k and 5k req/s, the fractions of `capacity` (tokio's), and `beyond`
/// (just past a faster runtime's capacity), ascending, without two within 15 % of each other.
fn rates(capacity: f64, quick: bool, beyond: &[f64]) -> Vec<f64> {
    let fractions: &[f64] = if quick { &QUICK_FRACTIONS } else { &FRACTIONS };
    let mut v: Vec<f64> = fractions.iter().map(|f| (f * capacity).round()).collect();
    v.extend([1_000.0, 5_000.0]);
    v.extend(beyond);
    v.sort_by(f64::total_cmp);
    let mut out: Vec<f64> = Vec::new();
    for r in v {
        match out.last() {
            Some(&last) if r < last * 1.15 => {
                // Keep the round figure (1k, 5k), where the targets are judged.
                if r == 1_000.0 || r == 5_000.0 {
                    *out.last_mut().unwrap() = r;
                }
            }
            _ => out.push(r),
        }
    }
    out
}

/// How long to run at `rate`: a few thousand requests, within bounds.
fn duration(rate: f64, quick: bool) -> Duration {
    let (want, lo, hi) = if quick {
        (1_500.0, 0.25, 0.6)
    } else {
        (5_000.0, 0.5, 3.0)
    };
    Duration::from_secs_f64((want / rate).clamp(lo, hi))
}

/// How long one calibration step runs per server: [`CALIBRATE`], half with `--quick`.
fn calibration_step(quick: bool) -> Duration {
    if quick {
        CALIBRATE / 2
    } else {
        CALIBRATE
    }
}

/// Finds each runtime's capacity: the highest rate (x1.5 steps from 10k req/s, refined
/// once) at which it kept up (achieved at least 90 % of offered, p50 under 500 us). Returns
/// the capacities in the order of `cfg.specs`, without the budgeted spinpark's (`None`).
fn calibrate(cfg: &Config, cpu: usize, quick: bool, progress: &mut Progress) -> Vec<Option<f64>> {
    let step_for = calibration_step(quick);
    // The default runtimes only: a budgeted spinpark is not what saturation is judged on.
    let judged: Vec<usize> = (0..cfg.specs.len())
        .filter(|&i| cfg.specs[i].runtime != "spinpark-quarter")
        .collect();
    let mut servers: Vec<Server> = judged
        .iter()
        .map(|&i| Server::start(&cfg.specs[i], &[cpu]))
        .collect();
    // Per judged server: the last rate it kept up with, and whether it still does.
    let mut best = vec![0.0f64; judged.len()];
    let mut live = vec![true; judged.len()];
    let step = |rate: f64,
                servers: &mut Vec<Server>,
                best: &mut Vec<f64>,
                live: &mut Vec<bool>,
                refine: bool| {
        let mut figures = Vec::new();
        for (k, s) in servers.iter_mut().enumerate() {
            // A refinement looks between the last rate kept up with and the first not.
            if refine && !(best[k] > 0.0 && rate > best[k] && rate < best[k] * 1.5) {
                continue;
            }
            if !refine && !live[k] {
                continue;
            }
            let (o, _) = measure(s, rate, step_for, cpu);
            let ok = o.sample.reqs_per_sec >= 0.9 * rate && o.sample.p50 <= 500.0;
            if ok {
                best[k] = best[k].max(rate);
            } else if !refine {
                live[k] = false;
            }
            figures.push(format!(
                "{} {:.1}k p50 {:.0}us{}",
                cfg.specs[judged[k]].label(),
                o.sample.reqs_per_sec / 1e3,
                o.sample.p50,
                if ok { "" } else { " (saturated)" }
            ));
        }
        progress.line(&format!(
            "openloop, {}, finding saturation at {:.1}k req/s: {}",
            cfg.title,
            rate / 1e3,
            figures.join(", ")
        ));
    };
    let mut rate = 10_000.0;
    while rate < 3e6 && live.iter().any(|&l| l) {
        step(rate, &mut servers, &mut best, &mut live, false);
        rate *= 1.5;
    }
    let mut refine: Vec<f64> = best
        .iter()
        .filter(|&&b| b > 0.0)
        .map(|b| b * 1.22)
        .collect();
    refine.sort_by(f64::total_cmp);
    refine.dedup();
    for r in refine {
        step(r, &mut servers, &mut best, &mut live, true);
    }
    servers.into_iter().for_each(Server::stop);
    let mut out = vec![None; cfg.specs.len()];
    for (k, &i) in judged.iter().enumerate() {
        // One that never kept up: half the first step.
        out[i] = Some(if best[k] > 0.0 { best[k] } else { 5_000.0 });
    }
    out
}

/// One run of `server` at `rate` offered for `dur`.
fn measure(server: &mut Server, rate: f64, dur: Duration, cpu: usize) -> (Obs, Histogram<u64>) {
    std::thread::sleep(SETTLE);
    let m0 = server.metrics();
    let st0 = steal_ticks(cpu);
    let s0 = server.usage();
    let c0 = Usage::now();
    let r = poisson::run(
        server.addr,
        CONNS,
        Duration::from_secs_f64(1.0 / rate),
        dur,
        true,
    );
    let c = Usage::now().since(c0);
    let s = server.usage().since(s0);
    let st1 = steal_ticks(cpu);
    let m1 = server.metrics();
    let mut sample = Sample::new(
        &r,
        s,
        c,
        Caps {
            server: 1,
            client: 1,
        },
    );
    // p99.9 from however many requests the run had (Sample leaves it out below 10k).
    if !sample.p999.is_finite() && r.latency.len() >= 1_000 {
        sample.p999 = r.latency.value_at_quantile(0.999) as f64 / 1000.0;
    }
    let counters = m1
        .iter()
        .map(|(k, v)| {
            let before = m0.iter().find(|(k0, _)| k0 == k).map_or(0, |(_, v)| *v);
            (k.clone(), v.saturating_sub(before))
        })
        .collect();
    let obs = Obs {
        sample,
        steal_ms: (st1.saturating_sub(st0)) as f64 * 1000.0 / ticks_per_sec(),
        invol_cs: s.invol_cs as f64 / r.requests.max(1) as f64,
        counters,
    };
    (obs, r.latency)
}

/// The steal ticks of `cpu` so far (`/proc/stat`), 0 if unreadable.
fn steal_ticks(cpu: usize) -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let name = format!("cpu{cpu} ");
    stat.lines()
        .find(|l| l.starts_with(&name))
        // cpuN user nice system idle iowait irq softirq steal ...
        .and_then(|l| l.split_whitespace().nth(8))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn ticks_per_sec() -> f64 {
    // SAFETY: sysconf reads a configuration value; no pointers.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

impl Point {
    fn spread(&self, si: usize, f: impl Fn(&Obs) -> f64) -> Spread {
        Spread::of(self.obs[si].iter().map(f))
    }

    /// spinpark (server `si`) over tokio (the last server), per round.
    fn ratio(&self, si: usize, f: impl Fn(&Obs) -> f64) -> Spread {
        let t = self.obs.len() - 1;
        let a: Vec<f64> = self.obs[si].iter().map(&f).collect();
        let b: Vec<f64> = self.obs[t].iter().map(&f).collect();
        Spread::of(paired_ratios(&a, &b))
    }

    /// Server `si`'s latency quantile `q` over every round's requests together, us.
    fn pooled_us(&self, si: usize, q: f64) -> f64 {
        self.pooled[si].value_at_quantile(q) as f64 / 1000.0
    }

    fn past_saturation(&self, si: usize) -> bool {
        self.spread(si, |o| o.sample.p99).median > SATURATED_P99_US
            || self.spread(si, |o| o.sample.reqs_per_sec).median < 0.95 * self.offered
    }
}

/// A counter's value per thousand requests in one observation.
fn per_k(o: &Obs, name: &str) -> f64 {
    let v = o
        .counters
        .iter()
        .find(|(k, _)| k == name)
        .map_or(0, |(_, v)| *v);
    v as f64 * 1000.0 / o.sample.samples.max(1) as f64
}

impl Sweep {
    /// Server `si`'s saturation point: the offered rate past which its median p99 stays over
    /// 1 ms (or its achieved rate under 95 % of offered) at every higher rate, as the last rate
    /// before it and the first one past it. "Stays": one noisy rate below (a host hiccup in
    /// most rounds) does not count as saturation.
    fn saturation(&self, si: usize) -> (Option<f64>, Option<f64>) {
        let past: Vec<bool> = self.points.iter().map(|p| p.past_saturation(si)).collect();
        let first = (0..past.len())
            .find(|&i| past[i..].iter().all(|&x| x))
            .filter(|_| past.last() == Some(&true));
        match first {
            Some(i) => (
                i.checked_sub(1).map(|j| self.points[j].offered),
                Some(self.points[i].offered),
            ),
            None => (self.points.last().map(|p| p.offered), None),
        }
    }

    fn markdown(&self, o: &mut String) {
        let n = self.labels.len();
        let t = n - 1;
        writeln!(
            o,
            "\n### {}\n\ntokio's capacity found by calibration (the sweep's 100 %): {:.1}k req/s.\n",
            self.title,
            self.capacity / 1e3
        )
        .unwrap();
        writeln!(o, "| offered req/s | server | achieved req/s | p50 (us) | p99 (us) | p99.9 (us) | p99 / p99.9, all rounds' requests (us) | server CPU per req (us) | ctx sw per req | client cores |").unwrap();
        writeln!(o, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
        for p in &self.points {
            for si in 0..n {
                writeln!(
                    o,
                    "| {} | {} | {} | {} | {} | {} | {:.0} / {:.0} | {} | {} | {} |",
                    if si == 0 {
                        fmt_rate(p.offered)
                    } else {
                        String::new()
                    },
                    self.labels[si],
                    p.spread(si, |o| o.sample.reqs_per_sec).show(0),
                    p.spread(si, |o| o.sample.p50).show(1),
                    p.spread(si, |o| o.sample.p99).show(0),
                    p.spread(si, |o| o.sample.p999).show(0),
                    p.pooled_us(si, 0.99),
                    p.pooled_us(si, 0.999),
                    p.spread(si, |o| o.sample.server_cpu_us()).show(2),
                    p.spread(si, |o| o.sample.cs).show(3),
                    p.spread(si, |o| o.sample.client_cores).show(2),
                )
                .unwrap();
            }
            writeln!(
                o,
                "| | **{}/{}** | {} | **{}** | **{}** | **{}** | {:.2}x / {:.2}x | {} | | |",
                self.labels[0],
                self.labels[t],
                p.ratio(0, |o| o.sample.reqs_per_sec).show_ratio(),
                p.ratio(0, |o| o.sample.p50).show_ratio(),
                p.ratio(0, |o| o.sample.p99).show_ratio(),
                p.ratio(0, |o| o.sample.p999).show_ratio(),
                p.pooled_us(0, 0.99) / p.pooled_us(t, 0.99),
                p.pooled_us(0, 0.999) / p.pooled_us(t, 0.999),
                p.ratio(0, |o| o.sample.server_cpu_us()).show_ratio(),
            )
            .unwrap();
        }
        writeln!(o).unwrap();
        for si in 0..n {
            let (last_ok, first_past) = self.saturation(si);
            let show = |r: Option<f64>| r.map_or("-".into(), fmt_rate);
            writeln!(
                o,
                "- {} saturation (median p99 over 1 ms, or under 95 % of the offered rate kept up with, from there on): between {} and {} req/s offered",
                self.labels[si],
                show(last_ok),
                show(first_past)
            )
            .unwrap();
        }
        self.diagnostics(o);
    }

    /// What spinpark did, per rate, and the rounds whose tail was long.
    fn diagnostics(&self, o: &mut String) {
        let t = self.labels.len() - 1;
        writeln!(
            o,
            "\n{}'s counters per 1000 requests (median over rounds), the steal time of the server CPU during the run (ms, max over rounds, both servers' runs) and involuntary context switches per request:\n",
            self.labels[0]
        )
        .unwrap();
        writeln!(o, "| offered req/s | probes | parked by choice | lost cores | window drops | mode flips | watchdog wakes | wakes | steal ms | preempted per req, spinpark / tokio |").unwrap();
        writeln!(o, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|").unwrap();
        for p in &self.points {
            let c = |name: &str| p.spread(0, |o| per_k(o, name)).median;
            let steal = p
                .obs
                .iter()
                .flatten()
                .map(|o| o.steal_ms)
                .fold(0.0, f64::max);
            writeln!(
                o,
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {steal:.0} | {:.4} / {:.4} |",
                fmt_rate(p.offered),
                c("probes"),
                c("parked_by_choice"),
                c("lost_cores"),
                c("window_drops"),
                c("flips"),
                c("watchdog_wakes"),
                c("wakes"),
                p.spread(0, |o| o.invol_cs).median,
                p.spread(t, |o| o.invol_cs).median,
            )
            .unwrap();
        }
        let mut tails = Vec::new();
        for p in &self.points {
            for (round, (a, b)) in p.obs[0].iter().zip(&p.obs[t]).enumerate() {
                if a.sample.p99 > TAIL_RATIO * b.sample.p99 && !p.past_saturation(t) {
                    tails.push(format!(
                        "- {} req/s, round {}: p99 {:.0} against {:.0} us (p50 {:.0}/{:.0}); steal {:.0}/{:.0} ms; preempted {:.4}/{:.4} per req; {}",
                        fmt_rate(p.offered),
                        round + 1,
                        a.sample.p99,
                        b.sample.p99,
                        a.sample.p50,
                        b.sample.p50,
                        a.steal_ms,
                        b.steal_ms,
                        a.invol_cs,
                        b.invol_cs,
                        a.counters
                            .iter()
                            .filter(|(_, v)| *v > 0)
                            .map(|(k, v)| format!("{k} {v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        }
        if tails.is_empty() {
            writeln!(
                o,
                "\nNo round below tokio's saturation had {}'s p99 past {TAIL_RATIO}x tokio's.",
                self.labels[0]
            )
            .unwrap();
        } else {
            writeln!(
                o,
                "\nRounds below tokio's saturation where {}'s p99 passed {TAIL_RATIO}x tokio's in the same round (spinpark / tokio; spinpark's counters over the run):\n",
                self.labels[0]
            )
            .unwrap();
            for l in tails {
                writeln!(o, "{l}").unwrap();
            }
        }
    }

    /// Latency against load (log scale) and CPU per request against load.
    fn panels(&self) -> Vec<Panel> {
        let colour = |si: usize| {
            if si + 1 == self.labels.len() {
                plot::TOKIO
            } else if si == 0 {
                plot::SPINPARK
            } else {
                plotters::style::RGBColor(120, 160, 60)
            }
        };
        let curve = |si: usize, name: String, dashed: bool, f: &dyn Fn(&Obs) -> f64| Series {
            name,
            color: colour(si),
            dashed,
            points: self
                .points
                .iter()
                .map(|p| (p.offered / 1e3, p.spread(si, f).median))
                .collect(),
        };
        let mut latency = Vec::new();
        let mut cpu = Vec::new();
        for (si, label) in self.labels.iter().enumerate() {
            if si == 0 || si + 1 == self.labels.len() {
                latency.push(curve(si, format!("{label} p50"), false, &|o| o.sample.p50));
                latency.push(curve(si, format!("{label} p99"), true, &|o| o.sample.p99));
            }
            cpu.push(curve(si, label.clone(), false, &|o| {
                o.sample.server_cpu_us()
            }));
        }
        vec![
            Panel {
                title: format!("{}: latency against offered load", self.title),
                x_label: "offered load (k req/s, log scale)".into(),
                y_label: "latency (us, log scale)".into(),
                x_log: true,
                y_log: true,
                series: latency,
                x_names: Vec::new(),
            },
            Panel {
                title: format!("{}: server CPU per request", self.title),
                x_label: "offered load (k req/s, log scale)".into(),
                y_label: "server CPU per request (us, log scale)".into(),
                x_log: true,
                y_log: true,
                series: cpu,
                x_names: Vec::new(),
            },
        ]
    }

    fn json(&self) -> serde_json::Value {
        let points: Vec<serde_json::Value> = self
            .points
            .iter()
            .map(|p| {
                let servers: serde_json::Map<String, serde_json::Value> = self
                    .labels
                    .iter()
                    .enumerate()
                    .map(|(si, label)| {
                        let rounds: Vec<Sample> = p.obs[si].iter().map(|o| o.sample).collect();
                        let q = |x: f64| p.pooled_us(si, x);
                        (
                            label.clone(),
                            serde_json::json!({
                                "rounds": crate::report::sample_json(&rounds),
                                "pooled_p99_us": q(0.99),
                                "pooled_p999_us": q(0.999),
                                "steal_ms": p.obs[si].iter().map(|o| o.steal_ms).collect::<Vec<_>>(),
                                "preempted_per_req": p.obs[si].iter().map(|o| o.invol_cs).collect::<Vec<_>>(),
                            }),
                        )
                    })
                    .collect();
                serde_json::json!({ "offered_per_sec": p.offered, "servers": servers })
            })
            .collect();
        serde_json::json!({
            "config": self.title,
            "capacity_per_sec": self.capacity,
            "points": points,
        })
    }
}

impl Results {
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        writeln!(
            o,
            "## Open-loop sweep: latency against offered load\n\n{}; {}; Poisson arrivals over {CONNS} connections, latency from each request's scheduled send time; medians over {} round{} (range in brackets), ratios per round.",
            self.machine,
            self.layout,
            self.rounds,
            if self.rounds == 1 { "" } else { "s" }
        )
        .unwrap();
        for s in &self.sweeps {
            s.markdown(&mut o);
        }
        o
    }

    pub fn svg(&self) -> String {
        let panels: Vec<Panel> = self.sweeps.iter().flat_map(Sweep::panels).collect();
        plot::svg(
            &panels,
            2,
            &format!(
                "open-loop echo, {} | {} | medians over {} rounds",
                self.machine, self.layout, self.rounds
            ),
        )
    }

    pub fn json(&self) -> String {
        let doc = serde_json::json!({
            "machine": self.machine,
            "layout": self.layout,
            "rounds": self.rounds,
            "connections": CONNS,
            "sweeps": self.sweeps.iter().map(Sweep::json).collect::<Vec<_>>(),
        });
        let mut out = serde_json::to_string_pretty(&doc).expect("a JSON value serialises");
        out.push('\n');
        out
    }
}

/// `1k`, `12.5k`, `140k`.
fn fmt_rate(r: f64) -> String {
    let k = r / 1e3;
    if k >= 100.0 || (k - k.round()).abs() < 0.05 {
        format!("{:.0}k", k)
    } else {
        format!("{k:.1}k")
    }
}
