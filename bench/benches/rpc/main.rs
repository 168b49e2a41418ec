//! The RPC benchmark: the same echo server on spinpark and on tokio, side by side, in two
//! placements of server and client.
//!
//! ```text
//! cargo bench --bench rpc                      # sync, async, gap; both layouts (about 4 minutes)
//! cargo bench --bench rpc -- --quick           # remote layout only, short runs, one open-loop round (about a minute)
//! cargo bench --bench rpc -- --docs            # also refresh docs/bench.md, docs/bench.svg, README's headline
//! cargo bench --bench rpc -- --layout remote --only "sync T=1,gap 50us" --rounds 5 --spin 100us
//! cargo bench --bench rpc -- --only "gap 300us" --spin adaptive   # the default policy, named
//! cargo bench --bench rpc -- --only poisson    # open-loop arrivals
//! cargo bench --bench rpc -- --only openloop   # latency against offered load, to past saturation
//! cargo bench --bench rpc -- --only sweep --windows 0,25us,100us,250us,1ms,adaptive [--docs]
//! cargo bench --bench rpc -- --only floor --rounds 7   # against a server that only busy-polls
//! cargo bench --bench rpc -- --only deadline   # per-request timeouts, sync T=4 and async
//! cargo bench --bench rpc -- --only neighbour  # beside a CPU-bound process on the server CPUs
//! cargo bench --bench rpc -- --only policy     # park-only, spin-only and adaptive, per window
//! cargo bench --bench rpc -- --only policy --runs 5 --windows 3 --secs 4   # the same, said
//! cargo bench --bench rpc -- --only pipelined  # async 4x16 on spinpark, tokio, monoio, glommio, compio
//! cargo bench --bench rpc -- --only kv         # kv_server vs redis-server under redis-benchmark
//! cargo bench --bench rpc -- --only http       # examples/http_server vs hyper+tokio, with wrk
//! cargo bench --bench rpc --features tokio-compat -- --only compat   # see rpc/compat.rs
//! cargo bench --bench rpc -- --only downstream  # a downstream HTTP call per request, see rpc/downstream.rs
//! cargo bench --bench rpc -- --help            # every flag
//! ```
//!
//! Each server is its own process (this binary, re-executed with `--serve`), with the same
//! worker count (2 by default); this process is the one load generator they share. Modes
//! follow the experiments spinpark answers: a database's rpc-bench (sync: T client threads with
//! one request in flight each; async: C connections with up to D requests in flight, batched),
//! printing Reqs/sec, User and Sys CPU per request, context switches per request and the cores
//! each side used; a storage system's "waking up worker threads" test (gap: one client whose
//! requests are spaced by a pause); and open-loop Poisson arrivals. `--only floor` measures both
//! runtimes against the latency floor, a server thread that only busy-polls its sockets;
//! `--only neighbour` measures latency beside a CPU-bound neighbour process on the server CPUs
//! and the work that neighbour gets done beside each runtime (`rpc/neighbour.rs`);
//! `--only pipelined` puts spinpark beside tokio and the io_uring runtimes monoio, glommio and
//! compio (echo servers in `bench/peers`, a crate outside the workspace that the mode builds on
//! demand) on the async load, with system calls per request from `perf` (`rpc/pipelined.rs`).
//!
//! Layouts (`--layout remote|colocated|both`; `both` by default, `remote` with `--quick`):
//! *remote* pins the servers to one CPU set and the load generator to a disjoint one, as if the
//! client were on another host, and runs with 2 workers and with one worker per server CPU;
//! *colocated* leaves placement to the scheduler and restarts both servers every round, for at
//! least 7 rounds. Runs alternate between the runtimes in every round; tables show the median
//! and the min-max over rounds, and spinpark/tokio ratios computed per round with a verdict.

use examples_common::{echo_proto, kv};

use spinpark_bench::workspace_root;

mod clock;
#[cfg(feature = "tokio-compat")]
mod compat;
mod deadline;
mod downstream;
mod floor;
mod floorbench;
mod http;
mod kvbench;
mod load;
mod mode;
mod neighbour;
mod openloop;
mod peers;
mod pin;
mod pipelined;
mod poisson;
mod policy;
mod poll_client;
mod report;
mod rotation;
mod runner;
mod sample;
mod server;
mod stats;
mod sweep;
mod syscalls;

use std::path::PathBuf;
use std::time::Duration;

use mode::Mode;
use pin::Layout;
use runner::{Plan, Progress};
use server::{Spec, Spin};

/// Which layouts to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Layouts {
    Remote,
    Colocated,
    Both,
}

/// The command line (`cargo bench --bench rpc -- --help`).
#[derive(Debug, clap::Parser)]
#[command(
    name = "rpc",
    bin_name = "cargo bench --bench rpc --",
    about = "The RPC benchmark: the same echo server on spinpark and on tokio, side by side",
    after_help = "Examples: --quick (about a minute); --only openloop; --only \"sync T=1,gap 50us\" --rounds 5 \
                  --spin 100us; --only sweep --windows 0,25us,adaptive; --only kv; \
                  --only neighbour --rounds 5; --only pipelined; --only http --rounds 1 --duration 1"
)]
struct Cli {
    /// Short runs, remote layout only, one round of the open-loop sweep (about a minute)
    #[arg(long)]
    quick: bool,
    /// Also refresh docs/bench.md's tables, docs/bench.svg and the README's headline (a run without
    /// --only)
    #[arg(long)]
    docs: bool,
    /// Every request under an idle timeout and a deadline
    #[arg(long)]
    deadline: bool,
    /// Rounds per layout [default: 3; 5 for floor and pipelined; the colocated layout runs at
    /// least 7]
    #[arg(long, value_name = "N", value_parser = positive)]
    rounds: Option<usize>,
    /// Server worker threads [default: 2; 1 for http; one per server CPU for the sweep]
    #[arg(long, value_name = "N", value_parser = positive)]
    workers: Option<usize>,
    /// spinpark's spin window: a duration (0, 25us, 1ms) or adaptive [default: adaptive]
    #[arg(long, value_name = "DURATION", value_parser = Spin::parse)]
    spin: Option<Spin>,
    /// Which layouts to run [default: both; remote with --quick]
    #[arg(long, value_enum)]
    layout: Option<Layouts>,
    /// Run only the modes whose name contains one of these, comma-separated; poisson,
    /// openloop (latency against offered load, 2 % to past saturation, 5 rounds), sweep, floor, neighbour (gaps beside a CPU-bound process on the server CPUs), deadline,
    /// pipelined (async 4x16 against tokio, monoio, glommio and compio), twowrite (one client,
    /// replies in two writes), kv, http, compat and
    /// downstream (a downstream HTTP call per request) run only when named
    #[arg(long, value_name = "MODES", value_delimiter = ',')]
    only: Vec<String>,
    /// The sweep's spin windows, comma-separated (0, 25us, adaptive, ...); for --only policy,
    /// the number of consecutive windows each server runs [default: 3]
    #[arg(long, value_name = "WINDOWS", value_delimiter = ',')]
    windows: Option<Vec<String>>,
    /// policy: seconds per window [default: 4; 1 with --quick; 10 for policy long]
    #[arg(long, value_name = "SECS", value_parser = gap_secs)]
    secs: Option<Duration>,
    /// policy: runs per row, each server a fresh process every run [default: 5; 1 with
    /// --quick or for policy long]
    #[arg(long, value_name = "N", value_parser = positive)]
    runs: Option<usize>,
    /// policy: parts of the adaptive spin policy to switch off, one more server per part in
    /// every row (window, pay, budget, mode, sprt, schedule, contend, colocated, quiet, or
    /// all)
    #[arg(long, value_name = "PARTS", value_delimiter = ',')]
    ablate: Vec<String>,
    /// http: seconds per wrk run [default: 5; 2 with --quick]
    #[arg(long, value_name = "SECS")]
    duration: Option<u64>,
    /// Seconds each gap mode runs, e.g. 2 or 0.5 (as many requests as fit) [default: 0.6;
    /// 0.1 with --quick]
    #[arg(long, value_name = "SECS", value_parser = gap_secs)]
    gap_secs: Option<Duration>,
    /// http: the wrk connection counts, comma-separated
    #[arg(
        long,
        value_name = "N,N",
        value_delimiter = ',',
        default_value = "1,32"
    )]
    conns: Vec<usize>,
    /// pipelined: the io_uring peers binary (bench/peers) to use instead of building it
    #[arg(long, value_name = "PATH")]
    peers: Option<PathBuf>,
    /// Run one server process (how the bench starts its servers)
    #[arg(long, value_name = "SERVER", hide = true)]
    serve: Option<String>,
    /// Passed by `cargo bench`
    #[arg(long, hide = true)]
    bench: bool,
    /// A name filter, passed by `cargo bench NAME` (ignored)
    #[arg(hide = true)]
    filter: Vec<String>,
}

fn positive(s: &str) -> Result<usize, String> {
    examples_common::args::positive(s)
}

fn gap_secs(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 3600.0 => Ok(Duration::from_secs_f64(x)),
        _ => Err(format!("{s:?} is not a number of seconds in (0, 3600]")),
    }
}

#[derive(Debug)]
struct Options {
    quick: bool,
    docs: bool,
    /// Rounds per layout (colocated runs at least [`COLOCATED_ROUNDS`]).
    rounds: usize,
    /// `--rounds` as given, for modes with a default of their own (floor).
    rounds_given: Option<usize>,
    workers: usize,
    /// Whether `--workers` was given (the sweep otherwise runs one worker per server CPU).
    workers_given: bool,
    spin: Option<Spin>,
    layouts: Option<Layouts>,
    /// Run only the modes whose name contains one of these (comma-separated `--only`); also
    /// `poisson`, `sweep`, `floor`, `neighbour`, `deadline` and `kv`, which only run when
    /// named.
    only: Vec<String>,
    windows: Option<Vec<Spin>>,
    deadline: bool,
    /// How long each gap mode runs (`--gap-secs`), if not the default.
    gap_budget: Option<Duration>,
    /// `--only pipelined`'s peers binary (`--peers`), if given instead of building it.
    peers: Option<PathBuf>,
}

/// The colocated layout's placement is a fresh draw every round: take enough of them.
const COLOCATED_ROUNDS: usize = 7;

/// Rounds per layout unless `--rounds` says otherwise.
const DEFAULT_ROUNDS: usize = 3;

/// `--only floor`'s rounds unless `--rounds` says otherwise.
const FLOOR_ROUNDS: usize = 5;

/// The spin windows the sweep tries unless `--windows` says otherwise (`adaptive`: the
/// adaptive policy, spinpark's default).
const DEFAULT_WINDOWS: &str = "0,25us,100us,250us,1ms,adaptive";

fn usage_error(msg: String) -> ! {
    eprintln!("rpc bench: {msg}");
    std::process::exit(2)
}

fn main() {
    use clap::Parser;
    let cli = Cli::parse();
    let only: Vec<String> = cli
        .only
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if http::requested(&only) {
        return http::run(&http::Options {
            rounds: cli.rounds.unwrap_or(DEFAULT_ROUNDS),
            duration: cli.duration.unwrap_or(if cli.quick { 2 } else { 5 }),
            workers: cli.workers.unwrap_or(1),
            spin: cli.spin.map(Spin::arg),
            conns: cli.conns,
        });
    }
    let policy = policy::requested(&only);
    let windows = match (&cli.windows, &policy) {
        (None, _) | (Some(_), Some(_)) => None,
        (Some(w), None) => match w.iter().map(|s| Spin::parse(s)).collect() {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("--windows: {e}");
                std::process::exit(2);
            }
        },
    };
    if let Some((long, filter)) = policy {
        let count = match cli.windows.as_deref() {
            None => None,
            Some([n]) => match positive(n) {
                Ok(n) => Some(n),
                Err(e) => {
                    eprintln!("--windows with --only policy takes one count: {e}");
                    std::process::exit(2);
                }
            },
            Some(_) => {
                eprintln!("--windows with --only policy takes one count, not a list");
                std::process::exit(2);
            }
        };
        if cli.serve.is_none() {
            return policy::run(policy::Options {
                quick: cli.quick,
                windows: count.or(cli.rounds),
                secs: cli.secs.or(cli.gap_secs),
                runs: cli.runs,
                long,
                filter,
                ablate: cli.ablate.clone(),
            });
        }
    }
    let opts = Options {
        quick: cli.quick,
        docs: cli.docs,
        rounds: cli.rounds.unwrap_or(DEFAULT_ROUNDS),
        rounds_given: cli.rounds,
        workers: cli.workers.unwrap_or(2),
        workers_given: cli.workers.is_some(),
        spin: cli.spin,
        layouts: cli.layout,
        only,
        windows,
        deadline: cli.deadline,
        gap_budget: cli.gap_secs,
        peers: cli.peers,
    };
    if let Some(rt) = cli.serve {
        if rt == "neighbour" {
            neighbour::serve();
        }
        if rt == "policy" {
            let window = opts.spin.and_then(|s| match s {
                Spin::Fixed(d) => Some(d),
                Spin::Adaptive => None,
            });
            policy::serve(opts.workers, window);
        }
        let runtime = match rt.as_str() {
            "spinpark" => "spinpark",
            "spinpark-split" => "spinpark-split",
            "spinpark-autoflush" => "spinpark-autoflush",
            "spinpark-quarter" => "spinpark-quarter",
            "tokio" => "tokio",
            "tokio-split" => "tokio-split",
            "tokio-batched" => "tokio-batched",
            "kv" => "kv",
            "floor" => "floor",
            other if downstream::SERVERS.contains(&other) => downstream::SERVERS
                .into_iter()
                .find(|s| *s == other)
                .expect("just checked"),
            #[cfg(feature = "tokio-compat")]
            other if compat::SERVERS.contains(&other) => compat::SERVERS
                .into_iter()
                .find(|s| *s == other)
                .expect("just checked"),
            other => usage_error(format!("--serve: unknown server {other:?}")),
        };
        let spec = Spec::new(runtime, opts.workers)
            .spin(opts.spin)
            .deadline(opts.deadline);
        return server::serve(&spec);
    }
    if downstream::requested(&opts.only) {
        let md = downstream::run(&opts);
        print!("\n{md}");
        let path = out_dir().join("downstream.md");
        std::fs::write(&path, &md).unwrap();
        println!("\nwrote {}", path.display());
        return;
    }
    if opts.only.iter().any(|o| o.starts_with("compat")) {
        // The tokio-compat rows (`rpc/compat.rs`) need the feature.
        #[cfg(feature = "tokio-compat")]
        return compat::run(&opts);
        #[cfg(not(feature = "tokio-compat"))]
        {
            eprintln!("--only compat needs the feature: cargo bench --bench rpc --features tokio-compat -- --only compat");
            std::process::exit(2);
        }
    }
    run(&opts);
}

/// The layouts this run covers, remote first.
fn layouts(opts: &Options) -> Vec<Layout> {
    let which = opts.layouts.unwrap_or(if opts.quick {
        Layouts::Remote
    } else {
        Layouts::Both
    });
    let mut out = Vec::new();
    if which != Layouts::Colocated {
        match Layout::remote() {
            Some(l) => out.push(l),
            None => eprintln!("only one CPU: no remote layout, running colocated only"),
        }
    }
    if which != Layouts::Remote || out.is_empty() {
        out.push(Layout::colocated());
    }
    out
}

/// The worker counts a layout is reported with: `--workers`, and in the remote layout also
/// one per server CPU.
fn worker_counts(opts: &Options, layout: &Layout) -> Vec<usize> {
    let mut w = vec![opts.workers];
    if layout.is_remote() && layout.server_cpus().len() != opts.workers {
        w.push(layout.server_cpus().len());
    }
    w
}

fn plan(opts: &Options, layout: &Layout, workers: usize, modes: Vec<Mode>, note: &str) -> Plan {
    let colocated = !layout.is_remote();
    Plan {
        title: format!(
            "{} layout, {workers} worker{}{note}",
            layout.name(),
            if workers == 1 { "" } else { "s" }
        ),
        layout: layout.clone(),
        specs: vec![
            Spec::new("spinpark", workers)
                .spin(opts.spin)
                .deadline(opts.deadline || !note.is_empty()),
            Spec::new("tokio", workers).deadline(opts.deadline || !note.is_empty()),
        ],
        modes,
        rounds: if colocated {
            opts.rounds.max(COLOCATED_ROUNDS)
        } else {
            opts.rounds
        },
        restart: colocated,
        fresh_per_mode: false,
        neighbour: false,
    }
}

/// `--only twowrite`: one client at 100 and 300 us gaps, replies in two writes (a 4-byte
/// length prefix, then the body) against the same server writing one, and against tokio
/// writing two.
fn twowrite_plans(opts: &Options, layout: &Layout, workers: usize) -> Vec<Plan> {
    let modes = vec![
        mode::gap(100, opts.quick, opts.gap_budget),
        mode::gap(300, opts.quick, opts.gap_budget),
    ];
    let pair = |a: &'static str, b: &'static str, what: &str| {
        let mut p = plan(opts, layout, workers, modes.clone(), "");
        p.title = format!("{}, {what}", p.title);
        p.specs = vec![
            Spec::new(a, workers).spin(opts.spin),
            Spec::new(b, workers).spin(opts.spin),
        ];
        p
    };
    vec![
        pair(
            "spinpark-split",
            "spinpark",
            "replies in two writes against one",
        ),
        pair("spinpark-split", "tokio-split", "replies in two writes"),
    ]
}

fn wants(opts: &Options, what: &str) -> bool {
    mode::named(&opts.only, what)
}

fn run(opts: &Options) {
    // The echo modes this run measures.
    let mut candidates = mode::main(opts.quick, opts.gap_budget);
    if !opts.only.is_empty() {
        candidates.extend(mode::poisson(opts.quick));
        candidates.retain(|m| {
            let name = m.name();
            opts.only
                .iter()
                .any(|o| name == *o || name.contains(o.as_str()))
        });
    }
    let deadline = wants(opts, "deadline");
    let sweep = wants(opts, "sweep") || opts.windows.is_some();
    let kv = wants(opts, "kv");
    let floor = wants(opts, "floor");
    let with_neighbour = wants(opts, "neighbour") || wants(opts, "neighbor");
    let pipelined = wants(opts, "pipelined");
    let twowrite = wants(opts, "twowrite");
    // A plain --quick run shows a short version of the sweep too.
    let openloop = wants(opts, "openloop") || (opts.quick && opts.only.is_empty());
    let openloop_opts = openloop.then(|| openloop::Options {
        rounds: opts.rounds_given.unwrap_or(if opts.quick {
            1
        } else {
            openloop::DEFAULT_ROUNDS
        }),
        quick: opts.quick,
        spin: opts.spin,
        layout: Layout::remote(),
        machine: report::machine(),
    });
    if candidates.is_empty()
        && !openloop
        && !twowrite
        && !deadline
        && !sweep
        && !kv
        && !floor
        && !with_neighbour
        && !pipelined
    {
        let names: Vec<String> = mode::main(false, None)
            .iter()
            .chain(&mode::poisson(false))
            .map(Mode::name)
            .collect();
        usage_error(format!(
            "--only {:?} matches no mode; modes: {}, and openloop, deadline, sweep, floor, neighbour, pipelined, twowrite, kv",
            opts.only.join(","),
            names.join(", ")
        ));
    }
    // The echo tables' layouts (the other plans pick their own).
    let layouts = if candidates.is_empty() && !deadline && !twowrite {
        Vec::new()
    } else {
        layouts(opts)
    };
    let mut plans = Vec::new();
    for layout in &layouts {
        for workers in worker_counts(opts, layout) {
            if !candidates.is_empty() {
                plans.push(plan(opts, layout, workers, candidates.clone(), ""));
            }
            if twowrite && layout.is_remote() {
                plans.extend(twowrite_plans(opts, layout, workers));
            }
            if deadline {
                let modes = mode::throughput(opts.quick)
                    .into_iter()
                    .filter(|m| m.name() != "sync T=1")
                    .collect();
                plans.push(plan(
                    opts,
                    layout,
                    workers,
                    modes,
                    ", per-request deadlines",
                ));
            }
        }
    }
    let windows = opts.windows.clone().unwrap_or_else(|| {
        DEFAULT_WINDOWS
            .split(',')
            .map(|w| Spin::parse(w).unwrap())
            .collect()
    });
    let sweep_plan = sweep.then(|| {
        let workers = match (opts.workers_given, Layout::remote()) {
            (false, Some(l)) => l.server_cpus().len(),
            _ => opts.workers,
        };
        sweep::plan(&windows, workers, opts.rounds, opts.quick, opts.gap_budget)
    });
    let floor_plan = floor
        .then(|| {
            let rounds = opts.rounds_given.unwrap_or(FLOOR_ROUNDS);
            let p = floorbench::plan(rounds, opts.quick, opts.gap_budget, opts.spin);
            if p.is_none() {
                eprintln!("only one CPU: no remote layout, so no floor mode");
            }
            p
        })
        .flatten();
    let neighbour_plan = with_neighbour
        .then(|| {
            let p = neighbour::plan(
                opts.workers,
                opts.rounds,
                opts.quick,
                opts.gap_budget,
                opts.spin,
                opts.deadline,
            );
            if p.is_none() {
                eprintln!("only one CPU: no remote layout, so no neighbour mode");
            }
            p
        })
        .flatten();
    let neighbour_layout = neighbour_plan.as_ref().map(|p| p.layout.clone());
    plans.extend(neighbour_plan);
    // Modes that drive the servers with an outside tool, each reporting its own section.
    // (Another such mode goes here: its own file, a `runner::External`, and a name for --only.)
    let mut external: Vec<Box<dyn runner::External>> = Vec::new();
    if pipelined {
        external.push(Box::new(pipelined::Plan::new(
            opts.rounds_given.unwrap_or(pipelined::DEFAULT_ROUNDS),
            opts.quick,
            opts.spin,
            opts.peers.clone(),
        )));
    }
    if kv {
        external.push(Box::new(kvbench::Plan::new(
            opts.workers,
            opts.rounds,
            opts.quick,
        )));
    }

    println!(
        "spinpark vs tokio RPC benchmark on {}{}",
        report::machine(),
        if opts.quick { " (--quick)" } else { "" }
    );
    // Name only the layouts this run uses.
    let mut shown: Vec<&Layout> = layouts.iter().collect();
    let kv_layout = kv.then(|| Layout::remote().unwrap_or_else(Layout::colocated));
    let pipelined_layout = pipelined.then(Layout::remote).flatten();
    let others = [
        sweep_plan.as_ref().map(|p| &p.layout),
        floor_plan.as_ref().map(|p| &p.layout),
        kv_layout.as_ref(),
        neighbour_layout.as_ref(),
        pipelined_layout.as_ref(),
    ];
    for l in others.into_iter().flatten() {
        if !shown.iter().any(|s| s.name() == l.name()) {
            shown.push(l);
        }
    }
    for l in shown {
        println!("  {} layout: {}", l.name(), l.describe());
    }
    let mut estimate: Duration = plans.iter().map(Plan::estimate).sum();
    if let Some(p) = &sweep_plan {
        estimate += p.estimate();
    }
    if let Some(p) = &floor_plan {
        estimate += p.estimate();
    }
    estimate += external.iter().map(|e| e.estimate()).sum::<Duration>();
    if let Some(o) = &openloop_opts {
        estimate += openloop::estimate(o);
    }
    let mut progress = Progress::new(estimate);

    let spin = opts.spin.unwrap_or(Spin::Adaptive);
    let runs_of = if plans
        .iter()
        .any(|p| p.modes.iter().any(Mode::is_closed_loop_throughput))
    {
        format!(
            "; sync/async runs of {}",
            mode::fmt_dur(mode::throughput(opts.quick)[0].estimate())
        )
    } else {
        String::new()
    };
    let mut report = report::Report::new(format!(
        "100-byte echo; spinpark spin {}{runs_of}",
        spin.label()
    ));
    for p in &plans {
        let runs = runner::run(p, &mut progress);
        report.add(p, &runs);
    }
    let dir = out_dir();
    if let Some(p) = &sweep_plan {
        let runs = runner::run(p, &mut progress);
        let sw = sweep::Sweep::new(p, &runs);
        print!("\n{}", sw.markdown());
        std::fs::write(dir.join("sweep.md"), sw.markdown()).unwrap();
        std::fs::write(dir.join("sweep.svg"), sw.svg()).unwrap();
        println!("\nwrote {}/sweep.md and sweep.svg", dir.display());
        if opts.docs {
            let docs = docs_dir();
            std::fs::write(docs.join("sweep.md"), sw.markdown()).unwrap();
            std::fs::write(docs.join("sweep.svg"), sw.svg()).unwrap();
            println!("refreshed docs/sweep.md and docs/sweep.svg");
        }
    }
    if let Some(p) = &floor_plan {
        let results = floorbench::Results::new(p, &runner::run_alone(p, &mut progress));
        report.add_section(results.markdown());
        report.add_json_table(results.json());
    }
    for e in &external {
        report.add_section(e.run(&mut progress));
    }
    if let Some(o) = &openloop_opts {
        match openloop::run(o, &mut progress) {
            Some(results) => {
                let md = results.markdown();
                std::fs::write(dir.join("openloop.md"), &md).unwrap();
                std::fs::write(dir.join("openloop.json"), results.json()).unwrap();
                std::fs::write(dir.join("openloop.svg"), results.svg()).unwrap();
                println!(
                    "\nwrote {}/openloop.md, openloop.json and openloop.svg",
                    dir.display()
                );
                if opts.docs {
                    let docs = docs_dir();
                    refresh_between(&docs.join("bench.md"), "openloop", &md);
                    std::fs::write(docs.join("openloop.svg"), results.svg()).unwrap();
                    println!("refreshed docs/bench.md's open-loop section and docs/openloop.svg");
                }
                report.add_section(md);
            }
            None => eprintln!("only one CPU: no remote layout, so no open-loop sweep"),
        }
    }
    progress.line("done");
    if report.is_empty() {
        return;
    }
    let md = report.markdown();
    print!("\n{md}");
    std::fs::write(dir.join("results.json"), report.json()).unwrap();
    std::fs::write(dir.join("results.md"), &md).unwrap();
    if report.has_tables() {
        std::fs::write(dir.join("chart.svg"), report.svg()).unwrap();
        println!(
            "\nwrote {}/results.json, results.md and chart.svg",
            dir.display()
        );
    } else {
        println!("\nwrote {}/results.json and results.md", dir.display());
    }
    if opts.docs && report.has_tables() {
        if opts.only.is_empty() {
            let docs = docs_dir();
            refresh_between(&docs.join("bench.md"), "bench", &md);
            std::fs::write(docs.join("bench.svg"), report.svg()).unwrap();
            refresh_between(
                &workspace_root().join("README.md"),
                "bench",
                &report.headline(),
            );
            println!("refreshed docs/bench.md's tables, docs/bench.svg and the README's headline");
        } else {
            println!("--docs refreshes docs/bench.* only from a run without --only; left as is");
        }
    }
}

/// Where results go: `target/spinpark-bench` (or under `CARGO_TARGET_DIR`).
fn out_dir() -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
        .join("spinpark-bench");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn docs_dir() -> PathBuf {
    let docs = workspace_root().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    docs
}

/// Replaces what lies between the `<!-- NAME:start ... -->` and `<!-- NAME:end -->` markers
/// of `path` (`bench`: the README's headline, `docs/bench.md`'s tables; `openloop`: its
/// open-loop section) with `tables`, keeping the prose around them; a file without the
/// markers is left as is, with a message.
fn refresh_between(path: &std::path::Path, name: &str, tables: &str) {
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("{}: cannot read it; left as is", path.display());
        return;
    };
    let (start, end) = (format!("<!-- {name}:start"), format!("<!-- {name}:end -->"));
    let (Some(a), Some(b)) = (text.find(&start), text.find(&end)) else {
        eprintln!(
            "{} has no {name}:start/{name}:end markers; left as is",
            path.display()
        );
        return;
    };
    let Some(a_end) = text[a..].find("-->").map(|i| a + i + 3) else {
        return;
    };
    let updated = format!("{}\n{tables}{}", &text[..a_end], &text[b..]);
    std::fs::write(path, updated).unwrap();
}
