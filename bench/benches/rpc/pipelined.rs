//! `--only pipelined`: spinpark against the runtimes a user would pick instead of it (tokio,
//! tokio with replies batched by hand, and the io_uring runtimes monoio, glommio and compio),
//! on the pipelined load.
//!
//! ```text
//! cargo bench --bench rpc -- --only pipelined [--rounds 5] [--peers PATH] [--quick] [--spin D]
//! ```
//!
//! What: requests per second, server CPU per request (user + sys, from the server's `STATS`)
//! and system calls per request of six echo servers with one worker each, under the async
//! load of the other tables (4 connections with 16 requests of 100 bytes in flight each), and
//! spinpark's requests per second over each other runtime's, per round.
//!
//! How: the remote layout (servers on the server CPUs, this load generator on the client
//! CPUs, as `pin.rs` places them). spinpark (`--spin adaptive` unless `--spin` says otherwise)
//! and tokio (as written plainly, and with replies batched by hand: `tokio-batched`) are this
//! binary's own servers (`server.rs`); monoio, glommio and compio are the
//! peers binary (`peers.rs`, built on demand). In every round each server in turn, in an order
//! that rotates from round to round (`rotation.rs`), is started, checked with one echo,
//! measured for the async run's length and stopped, so none shares its CPU with another and
//! every round starts all of them afresh. System calls are `perf stat -e raw_syscalls:sys_enter
//! -p PID`, switched on and off around the load (`syscalls.rs`); without a working perf that
//! column says n/a and the rest goes on. A peer that cannot be built or started (no io_uring),
//! or that fails during a run, is skipped with the reason; the others still run.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::echo_proto::Client;
use crate::load::{self, PAYLOAD};
use crate::pin::{self, Layout};
use crate::rotation;
use crate::runner::{External, Progress};
use crate::sample::{Caps, Sample};
use crate::server::{Server, Spec, Spin, Usage};
use crate::stats::{paired_ratios, verdict, Better, Spread};
use crate::syscalls::Syscalls;
use crate::{mode, peers};

/// Rounds unless `--rounds` says otherwise.
pub const DEFAULT_ROUNDS: usize = 5;
/// The async load: connections, and requests in flight on each.
const CONNS: usize = 4;
const DEPTH: usize = 16;
/// Lets a fresh server settle (and perf attach) before the load starts.
const SETTLE: Duration = Duration::from_millis(50);
/// About what starting, checking and stopping a server costs.
const START: Duration = Duration::from_millis(60);
/// How long the first echo may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The mode's settings.
#[derive(Debug)]
pub struct Plan {
    rounds: usize,
    dur: Duration,
    spin: Spin,
    peers: Option<PathBuf>,
}

impl Plan {
    /// `rounds` rounds of async runs as long as the other tables' (`--quick`: shorter), with
    /// spinpark's `spin` policy (adaptive by default) and the peers binary `peers` if given.
    pub fn new(rounds: usize, quick: bool, spin: Option<Spin>, peers: Option<PathBuf>) -> Plan {
        Plan {
            rounds,
            dur: mode::throughput(quick)[0].estimate(),
            spin: spin.unwrap_or(Spin::Adaptive),
            peers,
        }
    }

    /// spinpark first (the ratios' numerator), then tokio and the peers.
    fn servers(&self) -> Vec<Contender> {
        let mut v = vec![
            Contender::Own(Spec::new("spinpark", 1).spin(Some(self.spin))),
            Contender::Own(Spec::new("spinpark-autoflush", 1).spin(Some(self.spin))),
            Contender::Own(Spec::new("tokio", 1)),
            Contender::Own(Spec::new("tokio-batched", 1)),
        ];
        v.extend(peers::RUNTIMES.map(Contender::Peer));
        v
    }
}

/// One server of the table.
enum Contender {
    /// One of this binary's servers.
    Own(Spec),
    /// A server of the peers binary.
    Peer(&'static str),
}

impl Contender {
    fn label(&self) -> String {
        match self {
            Contender::Own(spec) => spec.label(),
            Contender::Peer(name) => name.to_string(),
        }
    }
}

/// What one run measured: the sample, system calls per request (or why not), and the data
/// segments the server sent per request (as the client's sockets received them).
struct Run {
    sample: Sample,
    syscalls: Result<f64, String>,
    segments: f64,
}

/// A server's rounds, and why it stopped being run, if it did.
#[derive(Default)]
struct Row {
    /// One per round, `None` where it did not run.
    runs: Vec<Option<Run>>,
    skipped: Option<String>,
}

impl Row {
    fn spread(&self, f: impl Fn(&Run) -> f64) -> Spread {
        Spread::of(self.runs.iter().flatten().map(f))
    }

    /// Requests per second per round, NaN where it did not run.
    fn per_round(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(|r| r.as_ref().map_or(f64::NAN, |r| r.sample.reqs_per_sec))
            .collect()
    }
}

impl External for Plan {
    fn estimate(&self) -> Duration {
        (self.dur + SETTLE + START) * (self.rounds * self.servers().len()) as u32
    }

    fn run(&self, progress: &mut Progress) -> String {
        let Some(layout) = Layout::remote() else {
            return "**pipelined**: skipped (only one CPU, so no remote layout).".into();
        };
        pin::pin_current(layout.client_cpus()).expect("pin the load generator");
        let servers = self.servers();
        let mut rows: Vec<Row> = servers.iter().map(|_| Row::default()).collect();
        let exe = peers::binary(self.peers.as_deref(), progress);
        if let Err(reason) = &exe {
            progress.line(&format!("pipelined: {reason}"));
            for (row, s) in rows.iter_mut().zip(&servers) {
                if matches!(s, Contender::Peer(_)) {
                    row.skipped = Some(reason.clone());
                }
            }
        }
        let caps = Caps {
            server: 1,
            client: CONNS.min(layout.client_cpus().len()),
        };
        for round in 0..self.rounds {
            let mut figures = Vec::new();
            for si in rotation::order(round, servers.len()) {
                let row = &mut rows[si];
                if row.skipped.is_some() {
                    row.runs.push(None);
                    continue;
                }
                let cmd = match (&servers[si], &exe) {
                    (Contender::Own(spec), _) => Server::command(spec),
                    (Contender::Peer(name), Ok(exe)) => peers::command(exe, name),
                    (Contender::Peer(_), Err(_)) => unreachable!("skipped above"),
                };
                match self.once(cmd, &layout, caps) {
                    Ok(run) => {
                        figures.push(format!(
                            "{} {:.1}k req/s",
                            servers[si].label(),
                            run.sample.reqs_per_sec / 1000.0
                        ));
                        row.runs.push(Some(run));
                    }
                    Err(reason) => {
                        figures.push(format!("{} skipped", servers[si].label()));
                        row.runs.push(None);
                        row.skipped = Some(match round {
                            0 => reason,
                            _ => format!("from round {}: {reason}", round + 1),
                        });
                    }
                }
            }
            progress.line(&format!(
                "pipelined round {}/{}: {}",
                round + 1,
                self.rounds,
                figures.join(", ")
            ));
        }
        self.markdown(&layout, &servers, &rows)
    }
}

impl Plan {
    /// Starts a server from `cmd` on the server CPUs, checks it echoes, measures it once and
    /// stops it; an error says why it could not be measured.
    fn once(&self, cmd: Command, layout: &Layout, caps: Caps) -> Result<Run, String> {
        let mut server =
            Server::launch(cmd, layout.server_cpus()).map_err(|e| format!("did not start: {e}"))?;
        let measured = probe(server.addr)
            .map_err(|e| format!("did not echo: {e}"))
            .and_then(|()| {
                // The load generator panics on a server that misbehaves: that server is
                // skipped, not the whole bench.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    measure(&mut server, self.dur, caps)
                }))
                .map_err(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                    format!("failed during the run: {}", msg.unwrap_or_default())
                })
            });
        server.stop();
        measured
    }

    fn markdown(&self, layout: &Layout, servers: &[Contender], rows: &[Row]) -> String {
        let mut o = String::new();
        writeln!(
            o,
            "**pipelined: async {CONNS}x{DEPTH}, remote layout, 1 worker per server** ({}; {} round{} of {} per server, each server restarted every round in a rotating order; median (min-max) over rounds):\n",
            layout.describe(),
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
            mode::fmt_dur(self.dur),
        )
        .unwrap();
        writeln!(o, "| runtime | Reqs/sec | server CPU per req (us, user+sys) | syscalls per req | segments per req | p50 (us) | p99 (us) | spinpark / it, Reqs/sec | verdict |").unwrap();
        writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|---|").unwrap();
        let spinpark = rows[0].per_round();
        let mut perf_errors: Vec<String> = Vec::new();
        let mut notes = Vec::new();
        for (i, (s, row)) in servers.iter().zip(rows).enumerate() {
            let label = s.label();
            if row.runs.iter().all(Option::is_none) {
                let why = row.skipped.as_deref().unwrap_or("no run");
                writeln!(o, "| {label} | skipped: {why} | | | | | | | |").unwrap();
                continue;
            }
            if let Some(why) = &row.skipped {
                notes.push(format!("{label} skipped {why}"));
            }
            let calls = row.spread(|r| r.syscalls.clone().unwrap_or(f64::NAN));
            for r in row.runs.iter().flatten() {
                if let Err(e) = &r.syscalls {
                    if !perf_errors.contains(e) {
                        perf_errors.push(e.clone());
                    }
                }
            }
            let (ratio, word) = if i == 0 {
                (String::new(), String::new())
            } else {
                let ratios = paired_ratios(&spinpark, &row.per_round());
                let ratios: Vec<f64> = ratios.into_iter().filter(|r| r.is_finite()).collect();
                (
                    format!("**{}**", Spread::of(ratios.iter().copied()).show_ratio()),
                    format!("spinpark {}", verdict(&ratios, Better::Higher).word()),
                )
            };
            writeln!(
                o,
                "| {label} | {} | {} | {} | {} | {} | {} | {ratio} | {word} |",
                row.spread(|r| r.sample.reqs_per_sec).show(0),
                row.spread(|r| r.sample.server_cpu_us()).show(2),
                if calls.median.is_finite() {
                    calls.show(2)
                } else {
                    "n/a".into()
                },
                row.spread(|r| r.segments).show(3),
                row.spread(|r| r.sample.p50).show(1),
                row.spread(|r| r.sample.p99).show(1),
            )
            .unwrap();
        }
        writeln!(
            o,
            "\nsyscalls per req: the server process's `{}` events (every thread) between the start and the end of the load, over its requests; an `io_uring_enter` is one, whatever it submits.",
            crate::syscalls::EVENT
        )
        .unwrap();
        writeln!(
            o,
            "\nsegments per req: the data segments the server sent, as the load generator's sockets received them (`TCP_INFO`'s `tcpi_data_segs_in`, summed over its connections), over the requests answered."
        )
        .unwrap();
        if !perf_errors.is_empty() {
            writeln!(
                o,
                "\nsyscalls: n/a (perf not available)\n\nperf: {}",
                perf_errors.join("; ")
            )
            .unwrap();
        }
        // The opt-in buffer against the hand-batched tokio server it stands in for.
        let find = |name: &str| {
            servers
                .iter()
                .position(|s| matches!(s, Contender::Own(spec) if spec.runtime == name))
        };
        if let (Some(a), Some(b)) = (find("spinpark-autoflush"), find("tokio-batched")) {
            let ratios: Vec<f64> = paired_ratios(&rows[a].per_round(), &rows[b].per_round())
                .into_iter()
                .filter(|r| r.is_finite())
                .collect();
            if !ratios.is_empty() {
                writeln!(
                    o,
                    "\nspinpark-autoflush / tokio-batched, Reqs/sec: **{}** (the plain handler on `spinpark::io::AutoFlush` against tokio with replies batched by hand; paired by round)",
                    Spread::of(ratios.iter().copied()).show_ratio()
                )
                .unwrap();
            }
        }
        for n in notes {
            writeln!(o, "\n{n}").unwrap();
        }
        o
    }
}

/// One echo of a 100-byte request, within [`PROBE_TIMEOUT`].
fn probe(addr: SocketAddr) -> Result<(), String> {
    let mut c = Client::connect(addr).map_err(|e| format!("connect: {e}"))?;
    c.stream()
        .set_read_timeout(Some(PROBE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let req = load::request();
    let reply = c.call(&req).map_err(|e| format!("round trip: {e}"))?;
    match reply == &req[4..] && reply.len() == PAYLOAD {
        true => Ok(()),
        false => Err(format!(
            "a {}-byte reply that is not the request",
            reply.len()
        )),
    }
}

/// One async run against `server`, with its CPU from `STATS` and its system calls from perf
/// switched on right before the load and off right after it.
fn measure(server: &mut Server, dur: Duration, caps: Caps) -> Run {
    let perf = Syscalls::attach(server.pid());
    std::thread::sleep(SETTLE);
    let s0 = server.usage();
    let c0 = Usage::now();
    let perf = perf.and_then(|mut p| p.enable().map(|()| p));
    let r = load::pipelined(server.addr, CONNS, DEPTH, dur);
    let perf = perf.and_then(|mut p| p.disable().map(|()| p));
    let c = Usage::now().since(c0);
    let s = server.usage().since(s0);
    let calls = perf.and_then(Syscalls::finish);
    let per_req = |n: u64| n as f64 / r.requests.max(1) as f64;
    Run {
        sample: Sample::new(&r, s, c, caps),
        syscalls: calls.map(per_req),
        segments: r.segments_in.map_or(f64::NAN, per_req),
    }
}
