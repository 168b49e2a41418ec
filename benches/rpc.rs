//! The RPC benchmark: the same echo server on spinpark and on tokio, side by side.
//!
//! ```text
//! cargo bench --bench rpc               # about 3 minutes
//! cargo bench --bench rpc -- --quick    # under 45 seconds
//! cargo bench --bench rpc -- --docs     # also refresh docs/bench.md and docs/bench.svg
//! cargo bench --bench rpc -- --only "sync T=1,gap 50us" --rounds 5 --spin 100us
//! cargo bench --bench rpc --features tokio-compat -- --only compat   # see rpc/compat.rs
//! ```
//!
//! Each runtime serves from its own process (this binary, re-executed with `--serve`), with
//! the same worker count (2 by default); this process is the one load generator both share.
//! Modes follow the two experiments spinpark answers: a database's rpc-bench (sync: T client
//! threads with one request in flight each; async: C connections with D requests in flight),
//! printing Reqs/sec, User and Sys CPU per request and context switches per request; and a
//! storage system's "waking up worker threads" test (gap: one client whose requests are spaced
//! by a pause), printing latency against the gap. Runs alternate between the runtimes, repeat
//! for several rounds, and report medians and the spinpark/tokio ratio.

use examples_common::echo_proto;
#[cfg(feature = "tokio-compat")]
#[path = "rpc/compat.rs"]
mod compat;
#[path = "rpc/load.rs"]
mod load;
#[path = "rpc/report.rs"]
mod report;
#[path = "rpc/server.rs"]
mod server;

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use report::{Mode, Sample};
use server::Usage;

pub const RUNTIMES: [&str; 2] = ["spinpark", "tokio"];

struct Options {
    quick: bool,
    docs: bool,
    rounds: usize,
    workers: usize,
    spin: Option<Duration>,
    /// Run only the modes whose name contains one of these (comma-separated `--only`).
    only: Vec<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Options {
        quick: false,
        docs: false,
        rounds: 3,
        workers: 2,
        spin: None,
        only: Vec::new(),
    };
    let mut serve = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => opts.quick = true,
            "--docs" => opts.docs = true,
            "--rounds" => opts.rounds = it.next().unwrap().parse().unwrap(),
            "--workers" => opts.workers = it.next().unwrap().parse().unwrap(),
            "--spin" => {
                opts.spin = Some(examples_common::duration::parse(it.next().unwrap()).unwrap())
            }
            "--serve" => serve = Some(it.next().unwrap().clone()),
            "--only" => opts.only = it.next().unwrap().split(',').map(str::to_string).collect(),
            // Passed by `cargo bench`; anything else is a filter we do not support.
            _ => {}
        }
    }
    if let Some(rt) = serve {
        return server::serve(&rt, opts.workers, opts.spin);
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

/// A server process and its control pipe.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    addr: SocketAddr,
}

impl Server {
    fn start(runtime: &str, opts: &Options) -> Server {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--serve", runtime, "--workers", &opts.workers.to_string()]);
        if let Some(s) = opts.spin {
            cmd.args(["--spin", &format!("{}ns", s.as_nanos())]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start server");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let port: u16 = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("{runtime} server said {line:?}"))
            .parse()
            .unwrap();
        Server {
            child,
            stdin,
            stdout,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    fn usage(&mut self) -> Usage {
        writeln!(self.stdin, "STATS").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        Usage::parse(&line).unwrap_or_else(|| panic!("bad stats line {line:?}"))
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// The modes, in the order they run, with how long each runs.
fn modes(quick: bool) -> Vec<Mode> {
    let dur = if quick {
        Duration::from_millis(600)
    } else {
        Duration::from_secs(3)
    };
    let gap_budget = if quick {
        Duration::from_millis(250)
    } else {
        Duration::from_millis(1500)
    };
    let mut m = vec![
        Mode::Sync { threads: 1, dur },
        Mode::Sync { threads: 4, dur },
        Mode::Async {
            conns: 4,
            depth: 16,
            dur,
        },
    ];
    for us in [0u64, 20, 50, 100, 200, 500, 1_000, 5_000, 10_000] {
        let gap = Duration::from_micros(us);
        // Enough samples for percentiles, within the time budget.
        let per = gap + Duration::from_micros(60);
        let count = (gap_budget.as_nanos() / per.as_nanos()).clamp(30, 20_000) as usize;
        m.push(Mode::Gap { gap, count });
    }
    m
}

fn measure(server: &mut Server, mode: &Mode) -> Sample {
    // Let the server's workers settle into the idle state the mode starts from.
    std::thread::sleep(Duration::from_millis(20));
    let s0 = server.usage();
    let c0 = Usage::now();
    let r = match *mode {
        Mode::Sync { threads, dur } => load::sync(server.addr, threads, dur),
        Mode::Async { conns, depth, dur } => load::pipelined(server.addr, conns, depth, dur),
        Mode::Gap { gap, count } => load::gap(server.addr, gap, count),
    };
    let c = Usage::now().since(c0);
    let s = server.usage().since(s0);
    Sample::new(&r, s, c)
}

fn run(opts: &Options) {
    let mut modes = modes(opts.quick);
    if !opts.only.is_empty() {
        modes.retain(|m| {
            opts.only
                .iter()
                .any(|o| m.name() == *o || m.name().contains(o.as_str()))
        });
    }
    let started = Instant::now();
    let mut servers: Vec<Server> = RUNTIMES.iter().map(|rt| Server::start(rt, opts)).collect();
    let mut results: Vec<[Vec<Sample>; 2]> =
        modes.iter().map(|_| [Vec::new(), Vec::new()]).collect();
    for round in 0..opts.rounds {
        for (mi, mode) in modes.iter().enumerate() {
            // Alternate which runtime goes first, so drift on the machine hits both alike.
            let order = if (round + mi) % 2 == 0 {
                [0, 1]
            } else {
                [1, 0]
            };
            for ri in order {
                eprint!(
                    "\r\x1b[2K[round {}/{}] {:<8} {:<14} ({:.0?} elapsed)",
                    round + 1,
                    opts.rounds,
                    RUNTIMES[ri],
                    mode.name(),
                    started.elapsed()
                );
                let sample = measure(&mut servers[ri], mode);
                results[mi][ri].push(sample);
            }
        }
    }
    eprintln!("\r\x1b[2Kdone in {:.0?}", started.elapsed());
    for s in servers {
        s.stop();
    }
    let report = report::Report::new(&modes, &results, opts.workers, opts.quick, opts.rounds);
    print!("{}", report.text());
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("spinpark-bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("results.json"), report.json()).unwrap();
    std::fs::write(dir.join("results.md"), report.markdown()).unwrap();
    std::fs::write(dir.join("chart.svg"), report.svg()).unwrap();
    println!(
        "\nwrote {}/results.json, results.md and chart.svg",
        dir.display()
    );
    if opts.docs {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("bench.md"), report.markdown()).unwrap();
        std::fs::write(docs.join("bench.svg"), report.svg()).unwrap();
        refresh_readme(&report.markdown());
        println!("refreshed docs/bench.md, docs/bench.svg and the README's table");
    }
}

/// Replaces the README's benchmark table (between its `bench:start` and `bench:end` markers).
fn refresh_readme(table: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let Ok(readme) = std::fs::read_to_string(&path) else {
        return;
    };
    let (Some(a), Some(b)) = (
        readme.find("<!-- bench:start"),
        readme.find("<!-- bench:end -->"),
    ) else {
        eprintln!("README.md has no bench:start/bench:end markers; left as is");
        return;
    };
    let Some(a_end) = readme[a..].find("-->").map(|i| a + i + 3) else {
        return;
    };
    let updated = format!("{}\n{table}{}", &readme[..a_end], &readme[b..]);
    std::fs::write(&path, updated).unwrap();
}
