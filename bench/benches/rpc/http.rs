//! The rpc bench's HTTP rows (`cargo bench --bench rpc -- --only http`): `examples/http_server`
//! on spinpark against the same server on hyper + tokio, loaded by `wrk`.
//!
//! ```text
//! cargo bench --bench rpc -- --only http                      # 3 rounds of 5 s per run
//! cargo bench --bench rpc -- --only http --rounds 1 --duration 1   # a smoke run
//! ```
//!
//! Options: `--rounds N` (3), `--duration SECS` per wrk run (5; `--quick` makes it 2),
//! `--workers N` server worker threads (1: the server has one CPU), `--spin D` (spinpark's
//! spin window, e.g. `50us`), `--conns 1,32` (the wrk connection counts).
//!
//! How: the example is built with `cargo build --release --features hyper --example
//! http_server` and started twice, `--runtime spinpark` and `--runtime tokio`, each pinned to
//! CPU 1, while `wrk -t1 -cN --latency` runs pinned to CPU 0 (`sched_setaffinity` in the
//! child before exec). Runs alternate between the runtimes, the first runtime swapping every
//! round. Per run: wrk's req/s and p50/p99, and the server's context switches (voluntary and
//! involuntary, summed over `/proc/PID/task/*/status`) and CPU (utime + stime from
//! `/proc/PID/stat`) divided by the requests wrk counted. Medians over the rounds.
//! Without `wrk` on the PATH the mode prints how to get it and does nothing else.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::stats::{paired_ratios, verdict, Better, Spread};

const RUNTIMES: [&str; 2] = ["spinpark", "tokio"];
const SERVER_CPU: usize = 1;
const CLIENT_CPU: usize = 0;
const _: () = assert!(SERVER_CPU > CLIENT_CPU);

/// Whether `--only` asks for the HTTP rows (possibly among others).
pub fn requested(only: &[String]) -> bool {
    only.iter().any(|m| m == "http")
}

/// The HTTP rows' settings, from the bench's command line (`rpc.rs`).
pub struct Options {
    pub rounds: usize,
    /// Seconds per wrk run.
    pub duration: u64,
    pub workers: usize,
    /// `--spin` as given, passed on to the servers.
    pub spin: Option<String>,
    pub conns: Vec<usize>,
}

/// Runs the HTTP rows, or explains why not.
pub fn run(opts: &Options) {
    let Some(wrk) = find_on_path("wrk") else {
        println!(
            "http: skipped: `wrk` is not on the PATH (install it, e.g. `apt-get install wrk`, \
             and run `cargo bench --bench rpc -- --only http` again)"
        );
        return;
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SERVER_CPU is the higher of the two CPU numbers.
    let pin = cpus > SERVER_CPU;
    if !pin {
        println!("http: only {cpus} CPU: server and wrk are not pinned apart");
    }
    let server_bin = build_example();
    let mut samples: Vec<[Vec<Sample>; 2]> =
        opts.conns.iter().map(|_| Default::default()).collect();
    for round in 0..opts.rounds {
        for (ci, &conns) in opts.conns.iter().enumerate() {
            let order = if (round + ci) % 2 == 0 {
                [0, 1]
            } else {
                [1, 0]
            };
            for ri in order {
                eprintln!(
                    "[round {}/{}] {:<8} wrk -c{conns} for {} s",
                    round + 1,
                    opts.rounds,
                    RUNTIMES[ri],
                    opts.duration
                );
                let s = measure(&server_bin, &wrk, RUNTIMES[ri], conns, opts, pin);
                samples[ci][ri].push(s);
            }
        }
    }
    println!(
        "\nHTTP: examples/http_server (GET /, {} server worker{}, server on CPU {SERVER_CPU}, \
         wrk -t1 on CPU {CLIENT_CPU}{}), {} alternating rounds of {} s.\n",
        opts.workers,
        if opts.workers == 1 { "" } else { "s" },
        if pin { "" } else { ", NOT pinned" },
        opts.rounds,
        opts.duration
    );
    println!(
        "Each figure: median (min-max) over the rounds; the ratio row pairs the two runtimes' \
         runs of each round.\n"
    );
    println!(
        "| wrk conns | runtime | req/s | p50 (us) | p99 (us) | server ctx sw. per req | server CPU per req (us) |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|");
    type Figure = fn(&Sample) -> f64;
    let figures: [(Figure, usize, Better); 5] = [
        (|s| s.rps, 0, Better::Higher),
        (|s| s.p50_us, 1, Better::Lower),
        (|s| s.p99_us, 1, Better::Lower),
        (|s| s.cs_per_req, 3, Better::Lower),
        (|s| s.cpu_us_per_req, 2, Better::Lower),
    ];
    for (ci, &conns) in opts.conns.iter().enumerate() {
        for (ri, runs) in samples[ci].iter().enumerate() {
            let cells: Vec<String> = figures
                .iter()
                .map(|&(f, prec, _)| Spread::of(runs.iter().map(f)).show(prec))
                .collect();
            println!("| {conns} | {} | {} |", RUNTIMES[ri], cells.join(" | "));
        }
        let (a, b) = (&samples[ci][0], &samples[ci][1]);
        let cells: Vec<String> = figures
            .iter()
            .map(|&(f, _, better)| {
                let x: Vec<f64> = a.iter().map(f).collect();
                let y: Vec<f64> = b.iter().map(f).collect();
                let ratios = paired_ratios(&x, &y);
                format!(
                    "{} {}",
                    Spread::of(ratios.iter().copied()).show_ratio(),
                    verdict(&ratios, better).word()
                )
            })
            .collect();
        println!("| {conns} | **spinpark/tokio** | {} |", cells.join(" | "));
    }
}

/// One wrk run's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    cs_per_req: f64,
    cpu_us_per_req: f64,
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Builds `examples/http_server` (release, `hyper` feature) next to this bench binary.
fn build_example() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("http: cargo build --release --features hyper --example http_server");
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--features",
            "hyper",
            "--example",
            "http_server",
        ])
        .current_dir(spinpark_bench::workspace_root())
        .status()
        .expect("run cargo build");
    assert!(status.success(), "building examples/http_server failed");
    // This binary is target/<profile>/deps/rpc-HASH; the example is target/release/examples.
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).expect("bench binary under target/");
    let bin = target.join("release/examples/http_server");
    assert!(bin.is_file(), "{} was not built", bin.display());
    bin
}

/// Pins the child process to `cpu` before it runs.
fn pinned(cmd: &mut Command, cpu: usize, pin: bool) -> &mut Command {
    if pin {
        // SAFETY: the closure runs in the forked child before exec and only calls
        // sched_setaffinity on a cpu_set_t on its stack (async-signal-safe, no allocation).
        unsafe {
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    cmd
}

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(bin: &Path, runtime: &str, opts: &Options, pin: bool) -> Server {
        let mut cmd = Command::new(bin);
        cmd.args(["--addr", "127.0.0.1:0", "--runtime", runtime])
            .args(["--workers", &opts.workers.to_string()]);
        if let Some(spin) = &opts.spin {
            cmd.args(["--spin", spin]);
        }
        let mut child = pinned(&mut cmd, SERVER_CPU, pin)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start examples/http_server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("http_server said {line:?}"))
            .parse()
            .unwrap();
        Server { child, addr }
    }

    /// (context switches, CPU microseconds) of the whole process so far.
    fn usage(&self) -> (u64, f64) {
        let pid = self.child.id();
        let mut cs = 0;
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
            let status =
                std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
            for l in status.lines() {
                if let Some(v) = l
                    .strip_prefix("voluntary_ctxt_switches:")
                    .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
                {
                    cs += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
        // SAFETY: sysconf takes no pointers.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        (cs, ticks / hz * 1e6)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One wrk run against a fresh server.
fn measure(
    bin: &Path,
    wrk: &Path,
    runtime: &str,
    conns: usize,
    opts: &Options,
    pin: bool,
) -> Sample {
    let server = Server::start(bin, runtime, opts, pin);
    // Let the server settle into its idle state.
    std::thread::sleep(Duration::from_millis(200));
    let (cs0, cpu0) = server.usage();
    let out = pinned(&mut Command::new(wrk), CLIENT_CPU, pin)
        .args([
            "-t1",
            &format!("-c{conns}"),
            &format!("-d{}s", opts.duration),
            "--latency",
        ])
        .arg(format!("http://{}/", server.addr))
        .output()
        .expect("run wrk");
    let (cs1, cpu1) = server.usage();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "wrk failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = WrkOutput::parse(&text).unwrap_or_else(|| panic!("cannot read wrk's output:\n{text}"));
    let reqs = w.requests.max(1) as f64;
    Sample {
        rps: w.rps,
        p50_us: w.p50_us,
        p99_us: w.p99_us,
        cs_per_req: (cs1 - cs0) as f64 / reqs,
        cpu_us_per_req: (cpu1 - cpu0) / reqs,
    }
}

/// What we read from `wrk --latency`.
struct WrkOutput {
    requests: u64,
    rps: f64,
    p50_us: f64,
    p99_us: f64,
}

impl WrkOutput {
    fn parse(text: &str) -> Option<WrkOutput> {
        let mut requests = None;
        let mut rps = None;
        let (mut p50, mut p99) = (None, None);
        for line in text.lines().map(str::trim) {
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("Requests/sec:"), Some(v), _) => rps = v.parse().ok(),
                (Some("50%"), Some(v), _) => p50 = duration_us(v),
                (Some("99%"), Some(v), _) => p99 = duration_us(v),
                (Some(n), Some("requests"), Some("in")) => requests = n.parse().ok(),
                _ => {}
            }
        }
        Some(WrkOutput {
            requests: requests?,
            rps: rps?,
            p50_us: p50?,
            p99_us: p99?,
        })
    }
}

/// wrk's durations: `28.00us`, `1.54ms`, `2.01s`.
fn duration_us(v: &str) -> Option<f64> {
    let at = v.find(|c: char| c.is_ascii_alphabetic())?;
    let n: f64 = v[..at].parse().ok()?;
    match &v[at..] {
        "us" => Some(n),
        "ms" => Some(n * 1e3),
        "s" => Some(n * 1e6),
        "m" => Some(n * 60e6),
        _ => None,
    }
}
