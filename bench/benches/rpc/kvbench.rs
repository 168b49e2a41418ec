//! The kv mode: the kv example's server against `redis-server`, both under `redis-benchmark`.
//!
//! ```text
//! let plan = kvbench::Plan::new(2, 3, false);
//! let markdown = plan.run(&mut progress); // or a line saying why it was skipped
//! ```
//!
//! Runs in the remote layout (servers on the server CPUs, `redis-benchmark` on the client's):
//! GET and SET with 100-byte values, with 1 and with 50 clients, alternating the servers every
//! round. Each server's CPU time and context switches come from `/proc` (all its threads), so
//! both are measured the same way. When `redis-server` or `redis-benchmark` is not on the
//! PATH the mode prints why and is skipped.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::pin::{self, Layout};
use crate::runner::{External, Progress};
use crate::server::{Server, Spec, Usage};
use crate::stats::{paired_ratios, verdict, Better, Spread};

const TESTS: [&str; 2] = ["set", "get"];
const CLIENTS: [usize; 2] = [1, 50];

/// What one `redis-benchmark` run measured.
#[derive(Debug, Clone, Copy)]
struct Run {
    rps: f64,
    p50_us: f64,
    cpu_us: f64,
    cs: f64,
}

/// The kv mode's settings.
#[derive(Debug)]
pub struct Plan {
    workers: usize,
    rounds: usize,
    quick: bool,
    layout: Layout,
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

impl Plan {
    pub fn new(workers: usize, rounds: usize, quick: bool) -> Plan {
        Plan {
            workers,
            rounds,
            quick,
            layout: Layout::remote().unwrap_or_else(Layout::colocated),
        }
    }

    fn requests(&self, clients: usize) -> usize {
        match (self.quick, clients) {
            (true, 1) => 5_000,
            (true, _) => 20_000,
            (false, 1) => 40_000,
            (false, _) => 200_000,
        }
    }

    fn tools(&self) -> Option<(PathBuf, PathBuf)> {
        Some((on_path("redis-server")?, on_path("redis-benchmark")?))
    }
}

impl External for Plan {
    fn estimate(&self) -> Duration {
        if self.tools().is_none() {
            return Duration::ZERO;
        }
        // At least 10k req/s with 1 client and 40k with 50 (a loaded 2-vCPU VM), plus start-up,
        // on each of 2 servers and 2 tests.
        let per_round = Duration::from_secs_f64(
            self.requests(1) as f64 / 10_000.0 + self.requests(50) as f64 / 40_000.0 + 0.2,
        ) * 4;
        per_round * self.rounds as u32 + Duration::from_secs(1)
    }

    /// Runs the mode; returns its Markdown section (or the reason it was skipped).
    fn run(&self, progress: &mut Progress) -> String {
        let Some((redis_server, redis_benchmark)) = self.tools() else {
            let msg = "kv mode skipped: it needs both `redis-server` and `redis-benchmark` on the PATH (e.g. `apt-get install redis-server`)".to_string();
            progress.line(&msg);
            return msg;
        };
        pin::pin_current(self.layout.client_cpus()).expect("pin the load generator");
        let kv = Server::start(&Spec::new("kv", self.workers), self.layout.server_cpus());
        let kv_pid = kv.pid();
        let redis = Redis::start(&redis_server, self.layout.server_cpus());
        let addrs = [kv.addr, redis.addr];
        let pids = [kv_pid, redis.child.id()];
        // runs[test][clients][server][round]
        let mut runs = vec![vec![[Vec::new(), Vec::new()]; CLIENTS.len()]; TESTS.len()];
        for round in 0..self.rounds {
            for (ti, test) in TESTS.iter().enumerate() {
                for (ci, &clients) in CLIENTS.iter().enumerate() {
                    let mut line = Vec::new();
                    for k in 0..2 {
                        let si = (k + round + ti + ci) % 2;
                        std::thread::sleep(Duration::from_millis(20));
                        let before = proc_usage(pids[si]);
                        let (rps, p50_us) = benchmark(
                            &redis_benchmark,
                            addrs[si],
                            test,
                            clients,
                            self.requests(clients),
                        );
                        let used = proc_usage(pids[si]).since(before);
                        let n = self.requests(clients) as f64;
                        let run = Run {
                            rps,
                            p50_us,
                            cpu_us: (used.user_us + used.sys_us) as f64 / n,
                            cs: (used.vol_cs + used.invol_cs) as f64 / n,
                        };
                        line.push(format!(
                            "{} {:.1}k req/s p50 {:.0}us",
                            ["kv_server", "redis-server"][si],
                            rps / 1000.0,
                            p50_us
                        ));
                        runs[ti][ci][si].push(run);
                    }
                    progress.line(&format!(
                        "kv round {}/{} {} c={clients}: {}",
                        round + 1,
                        self.rounds,
                        test.to_uppercase(),
                        line.join(", ")
                    ));
                }
            }
        }
        kv.stop();
        redis.stop();
        self.markdown(&runs)
    }
}

impl Plan {
    fn markdown(&self, runs: &[Vec<[Vec<Run>; 2]>]) -> String {
        let mut o = String::new();
        writeln!(
            o,
            "**kv: kv_server ({} workers) vs redis-server under redis-benchmark** ({}; 100-byte values; {} rounds, median (min-max); CPU and context switches per request from /proc):\n",
            self.workers,
            self.layout.describe(),
            self.rounds
        )
        .unwrap();
        writeln!(o, "| test | clients | server | req/s | p50 (us) | server CPU/req (us) | Ctx Sw./req | verdict |").unwrap();
        writeln!(o, "|---|---:|---|---:|---:|---:|---:|---|").unwrap();
        for (ti, test) in TESTS.iter().enumerate() {
            for (ci, clients) in CLIENTS.iter().enumerate() {
                let r = &runs[ti][ci];
                let col = |si: usize, f: fn(&Run) -> f64| r[si].iter().map(f).collect::<Vec<_>>();
                let sp = |si: usize, f: fn(&Run) -> f64| Spread::of(col(si, f));
                for (si, name) in ["kv_server", "redis-server"].iter().enumerate() {
                    writeln!(
                        o,
                        "| {} | {clients} | {name} | {} | {} | {} | {} | |",
                        test.to_uppercase(),
                        sp(si, |r| r.rps).show(0),
                        sp(si, |r| r.p50_us).show(0),
                        sp(si, |r| r.cpu_us).show(1),
                        sp(si, |r| r.cs).show(2),
                    )
                    .unwrap();
                }
                let ratio = |f: fn(&Run) -> f64| paired_ratios(&col(0, f), &col(1, f));
                writeln!(
                    o,
                    "| {} | {clients} | **ratio** | **{}** | **{}** | {} | {} | req/s {}, p50 {} |",
                    test.to_uppercase(),
                    Spread::of(ratio(|r| r.rps)).show_ratio(),
                    Spread::of(ratio(|r| r.p50_us)).show_ratio(),
                    Spread::of(ratio(|r| r.cpu_us)).show_ratio(),
                    Spread::of(ratio(|r| r.cs)).show_ratio(),
                    verdict(&ratio(|r| r.rps), Better::Higher).word(),
                    verdict(&ratio(|r| r.p50_us), Better::Lower).word(),
                )
                .unwrap();
            }
        }
        o
    }
}

/// A `redis-server` without persistence on a free local port.
struct Redis {
    child: Child,
    addr: SocketAddr,
}

impl Redis {
    fn start(path: &PathBuf, cpus: &[usize]) -> Redis {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("find a free port")
            .port();
        let mut cmd = Command::new(path);
        cmd.args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let child = pin::spawn_on(cpus, &mut cmd).expect("start redis-server");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on {addr} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Redis { child, addr }
    }

    fn stop(self) {}
}

/// Also when the run panics: a stray redis-server would hold its port and a CPU.
impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `redis-benchmark` run; returns requests/s and p50 in microseconds.
fn benchmark(path: &PathBuf, addr: SocketAddr, test: &str, clients: usize, n: usize) -> (f64, f64) {
    let out = Command::new(path)
        .args(["-h", "127.0.0.1", "-p", &addr.port().to_string()])
        .args(["-t", test, "-d", "100", "-r", "100000", "--csv"])
        .args(["-c", &clients.to_string(), "-n", &n.to_string()])
        .output()
        .expect("run redis-benchmark");
    // Its stderr is only a warning that kv_server's CONFIG GET answers nothing, unless it failed.
    assert!(
        out.status.success(),
        "redis-benchmark failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    parse_csv(&text).unwrap_or_else(|| panic!("unexpected redis-benchmark output: {text:?}"))
}

/// Reads `rps` and `p50_latency_ms` from redis-benchmark's CSV (p50 is NaN in old versions
/// that only print `rps`).
fn parse_csv(text: &str) -> Option<(f64, f64)> {
    let mut lines = text.lines().filter(|l| l.starts_with('"'));
    let fields = |l: &str| -> Vec<String> {
        l.split(',')
            .map(|f| f.trim_matches('"').to_string())
            .collect()
    };
    let header = fields(lines.next()?);
    let row = fields(lines.next()?);
    let col = |name: &str| -> Option<f64> {
        let i = header.iter().position(|h| h == name)?;
        row.get(i)?.parse().ok()
    };
    Some((
        col("rps")?,
        col("p50_latency_ms").map_or(f64::NAN, |ms| ms * 1000.0),
    ))
}

/// A process's CPU time (all threads) and context switches (summed over its threads), from
/// `/proc`.
fn proc_usage(pid: u32) -> Usage {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may contain spaces) start at the state, field 3.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let (utime, stime) = (
        f.get(11).copied().unwrap_or(0),
        f.get(12).copied().unwrap_or(0),
    );
    let (mut vol, mut invol) = (0, 0);
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            for l in status.lines() {
                let v = || {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|x| x.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                if l.starts_with("voluntary_ctxt_switches") {
                    vol += v();
                } else if l.starts_with("nonvoluntary_ctxt_switches") {
                    invol += v();
                }
            }
        }
    }
    Usage {
        user_us: utime * 1_000_000 / ticks,
        sys_us: stime * 1_000_000 / ticks,
        vol_cs: vol,
        invol_cs: invol,
    }
}
