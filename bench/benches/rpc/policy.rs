//! `--only policy`: the spin policy against the two policies a user can configure instead,
//! on the layouts where the right answer differs, over consecutive windows of several runs.
//!
//! ```text
//! cargo bench --bench rpc -- --only policy                  # 5 runs of 3 windows of 4 s per server
//! cargo bench --bench rpc -- --only policy --quick          # 1 run of 3 windows of 1 s
//! cargo bench --bench rpc -- --only policy --runs 2 --windows 6 --secs 10
//! cargo bench --bench rpc -- --only "policy long"           # only the long row: 1 run, 6 x 10 s
//! cargo bench --bench rpc -- --only "policy long" --windows 10 --secs 30   # 5 minutes
//! cargo bench --bench rpc -- --only "policy colocated"      # only the rows whose name has it
//! ```
//!
//! The question: does the default (adaptive) policy stay within 1.15x of the better of "always
//! park" (`spin(0)`) and "always spin" (a fixed 2 ms window) in *every* window, on each
//! layout, over minutes and over runs? A flip that comes after some seconds in some runs only
//! shows in a long look, so each row runs `--runs` times (5 by default), every server a fresh
//! process each run, alone on the machine (the others are stopped), serving one client on one
//! connection for `--windows` consecutive windows (3) of `--secs` seconds (4; `--rounds` and
//! `--gap-secs` are the old names and still work). The verdict is per window: adaptive's p50
//! within [`GOAL`] of the better policy's median window, or adaptive made the better policy's
//! choice there (context switches per request within 0.1 of its median); the worst window of
//! all runs is reported, with how many windows missed. Per window: p50 and p99 of the round
//! trip, the server's CPU and context switches per request, and what the spinpark servers say
//! about their policy (`--serve policy` answers `STATS` with its rusage and its spin metrics):
//! spin windows that lost their core to a neighbour (`spin_lost_cores`), whether the CPUs count
//! as shared (the clients are colocated), whether a lost core holds parking, whether the mode
//! is parking, and what each part of the policy decided *during the window*
//! (`Runtime::metrics()`): flips of the mode to parking and back, window drops by the
//! pay-for-itself rule, periods parked by the budget. A window whose latency jumped can be laid
//! at one part's door, or shown to be the host (the floor server, where a row has one, runs in
//! the same runs).
//!
//! `--ablate PARTS` adds, to every row with an adaptive server, one adaptive server per part
//! with that part switched off (`SPINPARK_SPIN_ABLATE`, spinpark's `spin-ablation` feature),
//! run alternating with the others, and prints an ablation table: does any row need the part?
//!
//! Rows (on 2 CPUs: "remote" pins the server to CPU 1 and the client to CPU 0):
//! * remote, 1 worker, blocking client, 500 µs gaps;
//! * remote, 2 workers, busy-polling client (`poll_client.rs`), 200 µs and 500 µs gaps, with
//!   the floor server (`floor.rs`: one thread that only busy-polls) as the reference;
//! * remote, 2 workers, blocking client, 100 µs gaps, with a light neighbour on the server
//!   CPU (a thread of this process that wakes every 1 ms and runs 50 µs: 5 % of a CPU);
//! * remote, 2 workers, blocking client, 50 µs gaps, beside a CPU-bound neighbour process on
//!   the server CPU (`neighbour.rs`);
//! * colocated (nothing pinned), 2 workers, blocking client, 100 µs gaps.
//!
//! `--only "policy long"` runs only the remote, 2-worker, polling 200 µs row, adaptive and
//! the floor, for 6 windows of 10 s unless `--rounds`/`--gap-secs` say otherwise.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::clock::{set_fine_timer_slack, wait_until};
use crate::echo_proto::{serve_futures_io, Client, DEFAULT_MAX_FRAME};
use crate::load::{histogram, request, PAYLOAD};
use crate::neighbour::Neighbour;
use crate::pin::{self, Layout};
use crate::poll_client::PollClient;
use crate::server::Usage;

/// The goal: every adaptive window's p50 within this factor of the better fixed policy's
/// median window (or that policy's choice made: [`SAME_CHOICE`]).
pub const GOAL: f64 = 1.15;

/// A window made the better policy's choice when its context switches per request are within
/// this of that policy's median window's.
const SAME_CHOICE: f64 = 0.1;

/// The fixed window "always spin" is configured with.
const SPIN_WINDOW: Duration = Duration::from_millis(2);

/// What a row asks of the command line: windows and their length.
#[derive(Debug, Clone)]
pub struct Options {
    pub quick: bool,
    pub windows: Option<usize>,
    pub secs: Option<Duration>,
    /// Runs per row, every server fresh each run.
    pub runs: Option<usize>,
    /// Only the 60 s row.
    pub long: bool,
    /// Only the rows whose name contains this (`--only "policy colocated"`).
    pub filter: Option<String>,
    /// Parts of the adaptive policy to switch off, one server each beside the others
    /// (`--ablate mode,contend`; `all` for every part in [`PARTS`]).
    pub ablate: Vec<String>,
}

/// The parts of the adaptive policy a server can run without (`SPINPARK_SPIN_ABLATE`, with
/// spinpark's `spin-ablation` feature; `executor/src/idle/spin/ablate.rs` says what "off"
/// means for each).
pub const PARTS: [&str; 9] = [
    "window",
    "pay",
    "budget",
    "mode",
    "sprt",
    "schedule",
    "contend",
    "colocated",
    "quiet",
];

/// The `--ablate` list as indices into [`PARTS`], or the first unknown name.
pub fn parse_ablate(names: &[String]) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if n.eq_ignore_ascii_case("all") {
            out.extend(0..PARTS.len());
            continue;
        }
        match PARTS.iter().position(|p| p.eq_ignore_ascii_case(n)) {
            Some(i) => out.push(i),
            None => return Err(format!("no part {n:?} (parts: {})", PARTS.join(", "))),
        }
    }
    out.dedup();
    Ok(out)
}

/// What `--only` asks of this mode: nothing (`None`), every row (`policy`), the 60 s row
/// (`policy long`), or the rows whose name contains the words after `policy`.
pub fn requested(only: &[String]) -> Option<(bool, Option<String>)> {
    only.iter().find_map(|o| {
        let o = o.trim();
        let (head, rest) = o.split_once(' ').unwrap_or((o, ""));
        if !head.eq_ignore_ascii_case("policy") {
            return None;
        }
        let rest = rest.trim();
        Some(match rest {
            "" => (false, None),
            r if r.eq_ignore_ascii_case("long") => (true, None),
            r => (false, Some(r.to_ascii_lowercase())),
        })
    })
}

/// A server variant: spinpark with a policy, or the floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Park,
    Spin,
    Adaptive,
    Floor,
    /// Adaptive, with the part `PARTS[i]` switched off.
    Without(usize),
}

impl Variant {
    fn label(self) -> String {
        match self {
            Variant::Park => "park (spin 0)".into(),
            Variant::Spin => "spin (fixed 2ms)".into(),
            Variant::Adaptive => "adaptive".into(),
            Variant::Floor => "floor (busy-poll)".into(),
            Variant::Without(i) => format!("adaptive without {}", PARTS[i]),
        }
    }

    /// The `SPINPARK_SPIN_ABLATE` value its server runs with.
    fn ablate(self) -> &'static str {
        match self {
            Variant::Without(i) => PARTS[i],
            _ => "",
        }
    }

    fn args(self, workers: usize) -> Vec<String> {
        let spin = match self {
            Variant::Park => "0ns".to_string(),
            Variant::Spin => format!("{}ns", SPIN_WINDOW.as_nanos()),
            Variant::Adaptive | Variant::Without(_) => "adaptive".to_string(),
            Variant::Floor => return vec!["--serve".into(), "floor".into()],
        };
        [
            "--serve",
            "policy",
            "--workers",
            &workers.to_string(),
            "--spin",
            &spin,
        ]
        .map(String::from)
        .to_vec()
    }
}

/// One row: a layout, a client, a gap, workers, maybe a light neighbour.
#[derive(Debug, Clone)]
struct Row {
    name: String,
    layout: Layout,
    workers: usize,
    polling: bool,
    gap: Duration,
    light_neighbour: bool,
    /// A CPU-bound neighbour process on the server CPUs (`neighbour.rs`).
    busy_neighbour: bool,
    variants: Vec<Variant>,
}

fn rows(long: bool) -> Vec<Row> {
    let Some(remote) = Layout::remote() else {
        eprintln!("only one CPU: no remote layout, so only the colocated row");
        return vec![colocated_row()];
    };
    let us = Duration::from_micros;
    let all = vec![Variant::Park, Variant::Spin, Variant::Adaptive];
    let with_floor = vec![
        Variant::Park,
        Variant::Spin,
        Variant::Adaptive,
        Variant::Floor,
    ];
    let row = |name: &str, workers, polling, gap, light, variants: &Vec<Variant>| Row {
        name: name.to_string(),
        layout: remote.clone(),
        workers,
        polling,
        gap,
        light_neighbour: light,
        busy_neighbour: false,
        variants: variants.clone(),
    };
    if long {
        return vec![row(
            "remote 2w, polling client, 200us",
            2,
            true,
            us(200),
            false,
            &vec![Variant::Adaptive, Variant::Floor],
        )];
    }
    vec![
        row(
            "remote 1w, blocking client, 500us",
            1,
            false,
            us(500),
            false,
            &all,
        ),
        row(
            "remote 2w, polling client, 200us",
            2,
            true,
            us(200),
            false,
            &with_floor,
        ),
        row(
            "remote 2w, polling client, 500us",
            2,
            true,
            us(500),
            false,
            &with_floor,
        ),
        row(
            "remote 2w, blocking client, light neighbour (5%) on the server CPU, 100us",
            2,
            false,
            us(100),
            true,
            &all,
        ),
        Row {
            busy_neighbour: true,
            ..row(
                "remote 2w, blocking client, CPU-bound neighbour on the server CPU, 50us",
                2,
                false,
                us(50),
                false,
                &all,
            )
        },
        colocated_row(),
    ]
}

fn colocated_row() -> Row {
    Row {
        name: "colocated 2w, blocking client, 100us".into(),
        layout: Layout::colocated(),
        workers: 2,
        polling: false,
        gap: Duration::from_micros(100),
        light_neighbour: false,
        busy_neighbour: false,
        variants: vec![Variant::Park, Variant::Spin, Variant::Adaptive],
    }
}

/// What a `--serve policy` server says about its spin policy (nothing for the floor).
#[derive(Debug, Clone, Copy, Default)]
struct SpinState {
    lost_cores: u64,
    shared: bool,
    contended: bool,
    parking: bool,
    /// What the parts decided so far: flips to parking, flips to spinning, window drops,
    /// budget parks.
    decided: [u64; 4],
    /// Probe periods run so far: the evidence a flip was decided on.
    probes: u64,
}

impl SpinState {
    /// What the parts decided between `before` and this, as `to-park/to-spin/drops/budget`,
    /// with the lost cores; `-` for nothing.
    fn during(&self, before: &SpinState) -> String {
        let d: Vec<u64> = (0..4)
            .map(|i| self.decided[i].saturating_sub(before.decided[i]))
            .collect();
        let lost = self.lost_cores.saturating_sub(before.lost_cores);
        if d.iter().all(|&x| x == 0) && lost == 0 {
            return "-".into();
        }
        let names = ["P", "S", "drop", "budget"];
        let mut parts: Vec<String> = d
            .iter()
            .zip(names)
            .filter(|(&x, _)| x > 0)
            .map(|(x, n)| format!("{n}{x}"))
            .collect();
        if lost > 0 {
            parts.push(format!("lost{lost}"));
        }
        if d[0] + d[1] > 0 {
            // A flip: the probes it was decided on (recorded ones are one in 2-4 of them).
            let probes = self.probes.saturating_sub(before.probes);
            parts.push(format!("({probes} probe periods)"));
        }
        parts.join(" ")
    }
}

/// One window of one server.
#[derive(Debug, Clone)]
struct Window {
    p50: f64,
    p99: f64,
    cpu_us: f64,
    cs: f64,
    requests: u64,
    spin: Option<SpinState>,
    /// What the policy's parts decided during the window.
    decided: String,
}

/// A server process speaking `server.rs`'s protocol, whose `STATS` line may carry the spin
/// metrics after the rusage figures.
struct Proc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    addr: SocketAddr,
}

impl Proc {
    fn start(args: &[String], ablate: &str, cpus: &[usize]) -> Proc {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(args)
            .env("SPINPARK_SPIN_ABLATE", ablate)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = pin::spawn_on(cpus, &mut cmd).expect("start a server");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the server's port");
        let port: u16 = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the server said {line:?} instead of its port"));
        Proc {
            child,
            stdin,
            stdout,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    fn stats(&mut self) -> (Usage, Option<SpinState>) {
        writeln!(self.stdin, "STATS").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let usage = Usage::parse(&line).unwrap_or_else(|| panic!("bad stats line {line:?}"));
        let extra: Vec<u64> = line
            .split_whitespace()
            .skip(5)
            .filter_map(|x| x.parse().ok())
            .collect();
        let spin = (extra.len() == 9).then(|| SpinState {
            lost_cores: extra[0],
            shared: extra[1] != 0,
            contended: extra[2] != 0,
            parking: extra[3] != 0,
            decided: [extra[4], extra[5], extra[6], extra[7]],
            probes: extra[8],
        });
        (usage, spin)
    }

    fn stop(self) {
        drop(self.stdin);
        let mut child = self.child;
        let _ = child.wait();
    }
}

/// The client of a row, on one connection for the whole run.
enum Conn {
    Blocking(Client),
    Polling(PollClient),
}

impl Conn {
    fn call(&mut self, req: &[u8]) {
        let got = match self {
            Conn::Blocking(c) => c.call(req).expect("round trip").len(),
            Conn::Polling(c) => c.call(req).expect("round trip").len(),
        };
        assert_eq!(got, PAYLOAD, "the server answered with a wrong frame");
    }
}

/// A thread of this process on `cpu` that wakes every millisecond and runs for 50 µs (5 % of
/// a CPU), until dropped.
struct LightNeighbour {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LightNeighbour {
    fn start(cpu: usize) -> LightNeighbour {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("light-neighbour".into())
            .spawn(move || {
                pin::pin_current(&[cpu]).expect("pin the light neighbour");
                set_fine_timer_slack();
                let mut next = Instant::now();
                let mut x = 1u64;
                while !flag.load(Ordering::Relaxed) {
                    next += Duration::from_millis(1);
                    let busy_until = Instant::now() + Duration::from_micros(50);
                    while Instant::now() < busy_until {
                        x = std::hint::black_box(x ^ (x << 13) ^ (x >> 7));
                    }
                    wait_until(next, false);
                }
            })
            .expect("the light neighbour");
        LightNeighbour {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for LightNeighbour {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

/// Runs one server of `row` for `windows` windows of `secs`.
fn run_variant(row: &Row, v: Variant, windows: usize, secs: Duration) -> Vec<Window> {
    pin::pin_current(row.layout.client_cpus()).expect("pin the load generator");
    let _neighbour = row
        .light_neighbour
        .then(|| LightNeighbour::start(row.layout.server_cpus()[0]));
    let busy = row
        .busy_neighbour
        .then(|| Neighbour::start(row.layout.server_cpus()));
    let mut server = Proc::start(&v.args(row.workers), v.ablate(), row.layout.server_cpus());
    set_fine_timer_slack();
    let mut conn = if row.polling {
        Conn::Polling(
            PollClient::connect(server.addr)
                .expect("connect")
                .max_frame(PAYLOAD),
        )
    } else {
        Conn::Blocking(Client::connect(server.addr).expect("connect"))
    };
    let req = request();
    let spin_gaps = row.layout.is_remote();
    for _ in 0..10 {
        conn.call(&req);
    }
    let mut out = Vec::with_capacity(windows);
    for _ in 0..windows {
        let (u0, s0) = server.stats();
        let mut h: Histogram<u64> = histogram();
        let end = Instant::now() + secs;
        let mut n = 0u64;
        while Instant::now() < end {
            wait_until(Instant::now() + row.gap, spin_gaps);
            let t = Instant::now();
            conn.call(&req);
            h.record(t.elapsed().as_nanos() as u64).ok();
            n += 1;
        }
        let (u1, spin) = server.stats();
        let u = u1.since(u0);
        let per = n.max(1) as f64;
        out.push(Window {
            p50: h.value_at_quantile(0.5) as f64 / 1000.0,
            p99: h.value_at_quantile(0.99) as f64 / 1000.0,
            cpu_us: (u.user_us + u.sys_us) as f64 / per,
            cs: (u.vol_cs + u.invol_cs) as f64 / per,
            requests: n,
            decided: match (spin, s0) {
                (Some(s), Some(s0)) => s.during(&s0),
                _ => "-".into(),
            },
            spin,
        });
    }
    drop(conn);
    server.stop();
    if let Some(n) = busy {
        n.stop();
    }
    out
}

/// Runs the policy rows and prints (and writes) their tables.
pub fn run(opts: Options) {
    let windows = opts.windows.unwrap_or(if opts.long { 6 } else { 3 });
    let secs = opts.secs.unwrap_or(Duration::from_secs(if opts.long {
        10
    } else if opts.quick {
        1
    } else {
        4
    }));
    let runs = opts
        .runs
        .unwrap_or(if opts.long || opts.quick { 1 } else { 5 });
    let ablate = parse_ablate(&opts.ablate).unwrap_or_else(|e| {
        eprintln!("--ablate: {e}");
        std::process::exit(2);
    });
    let mut rows = rows(opts.long);
    for row in &mut rows {
        if row.variants.contains(&Variant::Adaptive) {
            row.variants
                .extend(ablate.iter().map(|&i| Variant::Without(i)));
        }
    }
    if let Some(f) = &opts.filter {
        rows.retain(|r| r.name.to_ascii_lowercase().contains(f.as_str()));
        if rows.is_empty() {
            eprintln!("--only \"policy {f}\": no row's name contains {f:?}");
            std::process::exit(2);
        }
    }
    let servers: usize = rows.iter().map(|r| r.variants.len()).sum::<usize>() * runs;
    eprintln!(
        "policy: {} rows, {servers} server runs, {windows} windows of {:.1} s each: about {:.0} s",
        rows.len(),
        secs.as_secs_f64(),
        (servers * windows) as f64 * secs.as_secs_f64() * 1.05
    );
    let mut md = String::new();
    writeln!(
        md,
        "**Spin policy** ({} on {}; each server a fresh process every run, alone; one client on \
         one connection; {runs} run{} of {windows} consecutive windows of {:.1} s per server, the \
         servers of a row in an order that rotates from run to run; latency in µs, CPU in µs per \
         request):\n",
        crate::report::machine(),
        rows.iter()
            .map(|r| r.layout.describe())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join("; "),
        if runs == 1 { "" } else { "s" },
        secs.as_secs_f64()
    )
    .unwrap();
    writeln!(md, "| row | server | run | p50 per window | p99 per window | CPU/req | ctx sw/req | lost cores, shared, contended, parking (at each window's end) | decided during each window |").unwrap();
    writeln!(md, "|---|---|---:|---|---|---|---|---|---|").unwrap();
    let mut verdicts = String::new();
    let mut ablation: Vec<(String, Vec<(Variant, String)>)> = Vec::new();
    for row in &rows {
        let mut results: Vec<(Variant, Vec<Vec<Window>>)> =
            row.variants.iter().map(|&v| (v, Vec::new())).collect();
        for run in 0..runs {
            for i in crate::rotation::order(run, row.variants.len()) {
                let v = row.variants[i];
                let w = run_variant(row, v, windows, secs);
                eprintln!(
                    "{} / {} / run {}: p50 {}; decided {}",
                    row.name,
                    v.label(),
                    run + 1,
                    join(&w, |x| format!("{:.1}", x.p50)),
                    join(&w, |x| x.decided.clone())
                );
                results[i].1.push(w);
            }
        }
        for (v, all) in &results {
            for (run, w) in all.iter().enumerate() {
                writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    row.name,
                    v.label(),
                    run + 1,
                    join(w, |x| format!("{:.1}", x.p50)),
                    join(w, |x| format!("{:.0}", x.p99)),
                    join(w, |x| format!("{:.1}", x.cpu_us)),
                    join(w, |x| format!("{:.2}", x.cs)),
                    join(w, |x| match x.spin {
                        Some(s) => format!(
                            "{},{},{},{}",
                            s.lost_cores,
                            yn(s.shared),
                            yn(s.contended),
                            if s.parking { "P" } else { "S" }
                        ),
                        None => "-".into(),
                    }),
                    join(w, |x| x.decided.clone()),
                )
                .unwrap();
            }
        }
        verdicts.push_str(&verdict(row, &results, Variant::Adaptive));
        let mut cells = vec![(Variant::Adaptive, cell(&results, Variant::Adaptive))];
        for &(v, _) in &results {
            if let Variant::Without(_) = v {
                verdicts.push_str(&verdict(row, &results, v));
                cells.push((v, cell(&results, v)));
            }
        }
        ablation.push((row.name.clone(), cells));
    }
    if !ablate.is_empty() {
        verdicts.push_str(&ablation_table(&ablation));
    }
    md.push_str("\n*decided*: what the adaptive policy's parts decided in the window: P (flips of the mode to parking), S (back to spinning), drop (the pay-for-itself rule dropped the window to its minimum), budget (periods parked by the CPU budget), lost (a lost core held parking), and with a flip the probe periods run in the window (the evidence it was decided on); - for nothing.\n\n");
    md.push_str(&verdicts);
    print!("\n{md}");
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| spinpark_bench::workspace_root().join("target"))
        .join("spinpark-bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("policy.md"), &md).unwrap();
    println!("\nwrote {}/policy.md", dir.display());
}

fn yn(b: bool) -> &'static str {
    if b {
        "y"
    } else {
        "n"
    }
}

fn join(w: &[Window], f: impl Fn(&Window) -> String) -> String {
    w.iter().map(f).collect::<Vec<_>>().join(" / ")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Every window of every run of `v`, if the row ran it.
fn windows_of(results: &[(Variant, Vec<Vec<Window>>)], v: Variant) -> Option<Vec<&Window>> {
    results
        .iter()
        .find(|r| r.0 == v)
        .map(|r| r.1.iter().flatten().collect())
}

/// One cell of the ablation table: `v`'s worst window against the better fixed policy's
/// median window, with how many windows missed (past [`GOAL`] and not on that policy's
/// choice) and the flips to parking; `-` where the row has no fixed policies.
fn cell(results: &[(Variant, Vec<Vec<Window>>)], v: Variant) -> String {
    let Some(j) = windows_of(results, v).and_then(|w| judge(results, &w)) else {
        return "-".into();
    };
    format!(
        "{:.2}x{} cpu {:.1}x",
        j.worst / j.better,
        if j.missed == 0 {
            String::new()
        } else {
            format!(" **{} missed**", j.missed)
        },
        j.cpu_vs_park
    )
}

/// A server's windows judged against the better of park-only and spin-only.
struct Judged {
    /// Its worst window's p50.
    worst: f64,
    /// The better fixed policy, its median window's p50, and its median context switches
    /// per request.
    which: &'static str,
    better: f64,
    cs: f64,
    /// Windows past [`GOAL`] that did not make that policy's choice ([`SAME_CHOICE`]).
    missed: usize,
    /// Its median CPU per request against park-only's.
    cpu_vs_park: f64,
}

/// Judges `w` (a server's windows) against the row's fixed policies; `None` if the row has
/// none.
fn judge(results: &[(Variant, Vec<Vec<Window>>)], w: &[&Window]) -> Option<Judged> {
    let park = windows_of(results, Variant::Park)?;
    let spin = windows_of(results, Variant::Spin)?;
    let med = |w: &[&Window], f: fn(&Window) -> f64| median(w.iter().map(|x| f(x)).collect());
    let (pk, sp) = (med(&park, |x| x.p50), med(&spin, |x| x.p50));
    let (better, which, chosen) = if pk <= sp {
        (pk, "park", &park)
    } else {
        (sp, "spin", &spin)
    };
    let cs = med(chosen, |x| x.cs);
    Some(Judged {
        worst: w.iter().map(|x| x.p50).fold(0.0, f64::max),
        which,
        better,
        cs,
        missed: w
            .iter()
            .filter(|x| x.p50 > GOAL * better && (x.cs - cs).abs() > SAME_CHOICE)
            .count(),
        cpu_vs_park: med(w, |x| x.cpu_us) / med(&park, |x| x.cpu_us),
    })
}

/// The ablation table: a line per server variant, a column per row.
fn ablation_table(rows: &[(String, Vec<(Variant, String)>)]) -> String {
    let mut o = String::from(
        "\n**Ablation** (each cell: the server's worst window against the better fixed policy's \
         median window, windows that missed the goal, and its median CPU per request against \
         park-only's):\n\n| server |",
    );
    for (name, _) in rows {
        write!(o, " {name} |").unwrap();
    }
    o.push_str("\n|---|");
    o.push_str(&"---|".repeat(rows.len()));
    o.push('\n');
    let variants: Vec<Variant> = rows
        .first()
        .map(|r| r.1.iter().map(|c| c.0).collect())
        .unwrap_or_default();
    for v in variants {
        write!(o, "| {} |", v.label()).unwrap();
        for (_, cells) in rows {
            let c = cells.iter().find(|c| c.0 == v).map_or("-", |c| &c.1);
            write!(o, " {c} |").unwrap();
        }
        o.push('\n');
    }
    o
}

/// The row's verdict over every window of every run: adaptive's windows against the better
/// of park and spin (its median window), each within [`GOAL`] or on that policy's choice
/// ([`SAME_CHOICE`]); its CPU against park's where park is the better; and against the floor
/// where there is one.
fn verdict(row: &Row, results: &[(Variant, Vec<Vec<Window>>)], judged: Variant) -> String {
    let get = |v: Variant| windows_of(results, v);
    let med = |w: &[&Window], f: fn(&Window) -> f64| median(w.iter().map(|x| f(x)).collect());
    let Some(adaptive) = get(judged) else {
        return String::new();
    };
    let worst = adaptive.iter().map(|x| x.p50).fold(0.0, f64::max);
    let mut o = format!(
        "* {}: {}'s worst window of {} p50 {worst:.1} µs",
        row.name,
        judged.label(),
        adaptive.len()
    );
    if let Some(Judged {
        which,
        better,
        cs,
        missed,
        cpu_vs_park,
        ..
    }) = judge(results, &adaptive)
    {
        write!(
            o,
            ", {:.2}x the better ({which}, median window {better:.1} µs at {cs:.2} context \
             switches per request); windows past {GOAL}x that did not make its choice: {missed} \
             of {}: {}",
            worst / better,
            adaptive.len(),
            if missed == 0 { "met" } else { "missed" }
        )
        .unwrap();
        if which == "park" {
            write!(
                o,
                "; CPU/req {cpu_vs_park:.2}x park's ({})",
                if cpu_vs_park <= 2.0 { "met" } else { "missed" }
            )
            .unwrap();
        }
    }
    if let Some(floor) = get(Variant::Floor) {
        let f = med(&floor, |x| x.p50);
        let m = med(&adaptive, |x| x.p50);
        write!(
            o,
            "; against the floor ({f:.1} µs): median window {:.2}x, worst {:.2}x",
            m / f,
            worst / f
        )
        .unwrap();
    }
    let flips: u64 = adaptive
        .iter()
        .filter_map(|w| w.spin)
        .map(|s| s.decided[0])
        .max()
        .unwrap_or(0);
    let reqs: u64 = adaptive.iter().map(|w| w.requests).sum();
    writeln!(
        o,
        " (the most flips to parking in one run: {flips}; {reqs} requests)"
    )
    .unwrap();
    o
}

/// Runs a spinpark echo server in this process (`--serve policy`): as `--serve spinpark`,
/// but its `STATS` line also carries the spin metrics (lost cores, shared, contended,
/// parking, and what the policy's parts decided so far), until stdin closes.
pub fn serve(workers: usize, window: Option<Duration>) -> ! {
    let mut b = spinpark::Builder::new().worker_threads(workers);
    if let Some(w) = window {
        b = b.spin(w);
    }
    let rt = b.build().expect("spinpark runtime");
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    rt.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            stream.set_nodelay(true).ok();
            spinpark::spawn(async move {
                if let Err(e) = serve_futures_io(stream, DEFAULT_MAX_FRAME).await {
                    eprintln!("policy server: closing a connection: {e}");
                }
            });
        }
    });
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim() == "STATS" {
            let u = Usage::now();
            let m = rt.metrics();
            println!(
                "STATS {} {} {} {} {} {} {} {} {} {} {} {} {}",
                u.user_us,
                u.sys_us,
                u.vol_cs,
                u.invol_cs,
                m.spin_lost_cores(),
                m.spin_cpus_shared() as u8,
                m.spin_contended() as u8,
                m.spin_parking() as u8,
                m.spin_flips_to_park(),
                m.spin_flips_to_spin(),
                m.spin_window_drops(),
                m.spin_budget_parks(),
                m.spin_probes()
            );
            io::stdout().flush().ok();
        }
    }
    std::process::exit(0);
}
