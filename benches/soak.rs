//! The soak test: mixed hostile and ordinary load against the examples' echo server and
//! key-value server for a long time, watching their memory, descriptors and latency.
//!
//! ```text
//! cargo bench --bench soak                   # 10 minutes (the verdict the issue asks for)
//! cargo bench --bench soak -- --minutes 30
//! cargo bench --bench soak -- --seconds 40   # a smoke run: a sample every 8 s instead of every minute
//! ```
//!
//! Not part of `cargo bench` by default runs of the other benches, nor of CI: it runs only when
//! named. Each server runs in its own process (this binary re-executed with `--serve echo` or
//! `--serve kv`, running the examples' own serving code: `echo_proto::serve_futures_io` with
//! the example's accept loop, and `kv::serve`) on 2 workers. This process is the load:
//!
//! * churn: connect and close, send a whole request and hang up, reset (RST) in the middle of
//!   a frame, send an oversized frame or a malformed RESP request (the server must close that
//!   connection only);
//! * pipelines: batches of 32 requests in one write (with some 256 KiB values), every reply
//!   checked;
//! * slow clients: 20 connections per server that send their requests one byte at a time;
//! * a probe: one well-behaved client per server, a request every millisecond, timed.
//!
//! Every sample interval (a minute) it prints each server's RSS and open descriptors (from
//! `/proc/PID`, read every second; the interval's median, so that one request in flight at
//! the moment of reading does not decide) and the probe's p99. Verdict: pass if, for each server, RSS and descriptors at
//! the last sample are within 10% of the second sample (the first is warm-up), no load thread
//! saw an error it did not provoke, and every line the servers logged is one the load
//! provoked (a reset, a connection closed mid-frame, an oversized frame, a protocol error).

use examples_common::echo_proto::{self, frame};
use examples_common::log_limit::LogLimit;
use examples_common::resp::{encode_command, parse_reply, Reply};

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SERVERS: [&str; 2] = ["echo", "kv"];
const SLOW_CLIENTS: usize = 20;
/// The servers' frame limit in this test: small, so that oversized frames are cheap to send.
const ECHO_MAX: usize = 1 << 20;

/// The command line (`cargo bench --bench soak -- --help`).
#[derive(clap::Parser)]
#[command(
    name = "soak",
    bin_name = "cargo bench --bench soak --",
    about = "Hostile and ordinary load against the examples' echo and kv servers, watching \
             their memory, descriptors and latency"
)]
struct Cli {
    /// How long to run, in minutes (a sample every minute)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        conflicts_with = "seconds"
    )]
    minutes: u64,
    /// How long to run, in seconds, for a smoke run (five samples)
    #[arg(long, value_name = "N")]
    seconds: Option<u64>,
    /// Run one server process (how the soak starts its servers)
    #[arg(long, value_name = "SERVER", hide = true, value_parser = ["echo", "kv"])]
    serve: Option<String>,
    /// Passed by `cargo bench`
    #[arg(long, hide = true)]
    bench: bool,
    /// A name filter, passed by `cargo bench NAME` (ignored)
    #[arg(hide = true)]
    filter: Vec<String>,
}

fn main() {
    use clap::Parser;
    let cli = Cli::parse();
    if let Some(which) = &cli.serve {
        return serve(which);
    }
    let (total, interval) = match cli.seconds {
        Some(secs) => {
            let total = Duration::from_secs(secs);
            let interval = (total / 5).clamp(Duration::from_secs(1), Duration::from_secs(60));
            (total, interval)
        }
        None => (
            Duration::from_secs(60 * cli.minutes),
            Duration::from_secs(60),
        ),
    };
    std::process::exit(if soak(total, interval) { 0 } else { 1 });
}

// ---------------------------------------------------------------------------------------------
// The servers.

fn serve(which: &str) {
    let rt = spinpark::Builder::new()
        .worker_threads(2)
        .build()
        .expect("runtime");
    rt.block_on(async {
        let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("PORT {}", listener.local_addr().unwrap().port());
        io::stdout().flush().ok();
        match which {
            "kv" => {
                let e = examples_common::kv::serve(listener, examples_common::kv::Store::new());
                e.await.expect("kv accept loop");
            }
            _ => echo_accept_loop(listener).await,
        }
    });
}

/// `examples/echo_server.rs`'s accept loop.
async fn echo_accept_loop(listener: spinpark::net::TcpListener) {
    static CONN_ERRORS: LogLimit = LogLimit::new(10);
    loop {
        let (stream, peer) = listener.accept().await.expect("echo accept loop");
        stream.set_nodelay(true).ok();
        spinpark::spawn(async move {
            if let Err(e) = echo_proto::serve_futures_io(stream, ECHO_MAX).await {
                CONN_ERRORS.log(format_args!("closing connection from {peer}: {e}"));
            }
        });
    }
}

struct Server {
    name: &'static str,
    child: Child,
    addr: SocketAddr,
    /// Lines on its stderr that the load did not provoke.
    unexpected: Arc<Mutex<Vec<String>>>,
    logged: Arc<AtomicU64>,
}

fn start(name: &'static str) -> Server {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--serve", name])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a server process");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{name} server said {line:?}"));
    let unexpected = Arc::new(Mutex::new(Vec::new()));
    let logged = Arc::new(AtomicU64::new(0));
    let (u, l) = (unexpected.clone(), logged.clone());
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            l.fetch_add(1, Relaxed);
            if !provoked(&line) {
                u.lock().unwrap().push(line);
            }
        }
    });
    Server {
        name,
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        unexpected,
        logged,
    }
}

/// A server log line about something the load does on purpose.
fn provoked(line: &str) -> bool {
    [
        "reset by peer",
        "into a frame",
        "exceeds the",
        "Protocol error",
        "similar lines suppressed",
        "Broken pipe",
    ]
    .iter()
    .any(|p| line.contains(p))
}

/// Resident memory in KiB and open descriptors of process `pid`.
fn usage(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (rss, fds)
}

// ---------------------------------------------------------------------------------------------
// The load.

/// Errors the load did not provoke, with the first few messages.
#[derive(Default)]
struct Errors {
    count: AtomicU64,
    first: Mutex<Vec<String>>,
}

impl Errors {
    fn note(&self, what: &str, e: impl std::fmt::Display) {
        if self.count.fetch_add(1, Relaxed) < 10 {
            self.first.lock().unwrap().push(format!("{what}: {e}"));
        }
    }
}

/// A small xorshift generator: the load needs variety, not quality.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.set_write_timeout(Some(Duration::from_secs(30)))?;
    Ok(s)
}

/// Closes with a reset (SO_LINGER 0) instead of a FIN.
fn reset(s: TcpStream) {
    let lin = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: passes a valid linger struct on our stack and its size, for an open socket.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&lin as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(s);
}

/// A request for `server` and the reply it must get, from a bounded key space.
fn request(server: &str, rng: &mut Rng, big: bool) -> (Vec<u8>, Option<Vec<u8>>) {
    let size = if big {
        256 << 10
    } else {
        rng.below(2048) as usize
    };
    let payload: Vec<u8> = (0..size).map(|i| (i as u64 ^ rng.0) as u8).collect();
    if server == "echo" {
        let f = frame(&payload);
        return (f.clone(), Some(f));
    }
    let key = format!("key:{}", rng.below(if big { 4 } else { 1000 }));
    match rng.below(3) {
        0 => (
            encode_command([&b"SET"[..], key.as_bytes(), &payload]),
            Some(b"+OK\r\n".to_vec()),
        ),
        1 => (encode_command(["GET", key.as_str()]), None),
        _ => (encode_command(["EXISTS", key.as_str()]), None),
    }
}

/// Reads one reply (an echo frame or a RESP reply) and checks it against `want`.
fn read_reply(
    server: &str,
    s: &mut TcpStream,
    buf: &mut Vec<u8>,
    want: &Option<Vec<u8>>,
) -> io::Result<()> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let got = loop {
        let complete = if server == "echo" {
            (buf.len() >= 4)
                .then(|| 4 + u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize)
                .filter(|&n| buf.len() >= n)
        } else {
            match parse_reply(buf) {
                Ok(Some((Reply::Error(e), _))) => return Err(bad(format!("error reply {e}"))),
                Ok(Some((_, n))) => Some(n),
                Ok(None) => None,
                Err(e) => return Err(bad(e.to_string())),
            }
        };
        if let Some(n) = complete {
            break buf.drain(..n).collect::<Vec<u8>>();
        }
        let mut chunk = [0u8; 64 << 10];
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(bad("the server closed the connection".into()));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    match want {
        Some(w) if *w != got => Err(bad(format!("wrong reply ({} bytes)", got.len()))),
        _ => Ok(()),
    }
}

/// Connect/close churn, with resets mid-frame and bad input.
fn churn(server: &'static str, addr: SocketAddr, stop: &AtomicBool, errors: &Errors, seed: u64) {
    let mut rng = Rng(seed);
    while !stop.load(Relaxed) {
        let mut s = match connect(addr) {
            Ok(s) => s,
            Err(e) => {
                errors.note("churn connect", e);
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        let (req, want) = request(server, &mut rng, false);
        let r: io::Result<()> = match rng.below(4) {
            // A whole request, its reply, and a normal close.
            0 => s
                .write_all(&req)
                .and_then(|_| read_reply(server, &mut s, &mut Vec::new(), &want)),
            // Part of a request, then a reset.
            1 => {
                let cut = 1 + rng.below(req.len() as u64 - 1) as usize;
                let _ = s.write_all(&req[..cut]);
                reset(s);
                Ok(())
            }
            // Bad input: the server answers (kv) and closes this connection.
            2 => {
                let bad = if server == "echo" {
                    ((ECHO_MAX + 1) as u32).to_be_bytes().to_vec()
                } else {
                    b"*1\r\n$-5\r\n".to_vec()
                };
                let _ = s.write_all(&bad);
                let mut sink = Vec::new();
                match s.read_to_end(&mut sink) {
                    Ok(_) => Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(()),
                    Err(e) => Err(e),
                }
            }
            // Connect and hang up.
            _ => Ok(()),
        };
        if let Err(e) = r {
            errors.note("churn", e);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Batches of 32 requests in one write; every reply checked.
fn pipelines(
    server: &'static str,
    addr: SocketAddr,
    stop: &AtomicBool,
    errors: &Errors,
    seed: u64,
) {
    let mut rng = Rng(seed);
    let mut conn = None;
    while !stop.load(Relaxed) {
        let s = match &mut conn {
            Some(s) => s,
            None => match connect(addr) {
                Ok(s) => conn.insert(s),
                Err(e) => {
                    errors.note("pipeline connect", e);
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            },
        };
        let batch: Vec<_> = (0..32)
            .map(|_| {
                let big = rng.below(200) == 0;
                request(server, &mut rng, big)
            })
            .collect();
        let wire: Vec<u8> = batch.iter().flat_map(|(r, _)| r.clone()).collect();
        let mut buf = Vec::new();
        let r = s.write_all(&wire).and_then(|_| {
            batch
                .iter()
                .try_for_each(|(_, w)| read_reply(server, s, &mut buf, w))
        });
        if let Err(e) = r {
            errors.note("pipeline", e);
            conn = None;
        }
        if rng.below(50) == 0 {
            conn = None; // a fresh connection now and then
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Connections that send their requests one byte at a time.
fn slow_clients(
    server: &'static str,
    addr: SocketAddr,
    stop: &AtomicBool,
    errors: &Errors,
    seed: u64,
) {
    let mut rng = Rng(seed);
    /// A connection, its request, how much of it is sent, and the reply it must get.
    type SlowConn = (TcpStream, Vec<u8>, usize, Option<Vec<u8>>);
    let mut conns: Vec<Option<SlowConn>> = (0..SLOW_CLIENTS).map(|_| None).collect();
    while !stop.load(Relaxed) {
        for c in conns.iter_mut() {
            if c.is_none() {
                match connect(addr) {
                    Ok(s) => {
                        // Short requests: an echo frame of up to 16 bytes, or a kv GET.
                        let (req, want) = if server == "echo" {
                            let n = rng.below(17) as usize;
                            let f = frame(&rng.below(u64::MAX).to_le_bytes().repeat(2)[..n]);
                            (f.clone(), Some(f))
                        } else {
                            (encode_command(["GET", "slow"]), None)
                        };
                        *c = Some((s, req, 0, want));
                    }
                    Err(e) => errors.note("slow connect", e),
                }
            }
            let Some((s, req, sent, want)) = c else {
                continue;
            };
            let r = s.write_all(&req[*sent..*sent + 1]).and_then(|_| {
                *sent += 1;
                if *sent == req.len() {
                    read_reply(server, s, &mut Vec::new(), want)?;
                    *sent = 0;
                }
                Ok(())
            });
            if let Err(e) = r {
                errors.note("slow client", e);
                *c = None;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One request a millisecond on one connection; its latencies in microseconds.
fn probe(
    server: &'static str,
    addr: SocketAddr,
    stop: &AtomicBool,
    errors: &Errors,
    lat: &Mutex<Vec<u64>>,
) {
    let mut rng = Rng(7);
    let mut conn: Option<TcpStream> = None;
    while !stop.load(Relaxed) {
        std::thread::sleep(Duration::from_millis(1));
        let s = match &mut conn {
            Some(s) => s,
            None => match connect(addr) {
                Ok(s) => conn.insert(s),
                Err(e) => {
                    errors.note("probe connect", e);
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            },
        };
        let (req, want) = if server == "echo" {
            let f = frame(&rng.below(u64::MAX).to_le_bytes());
            (f.clone(), Some(f))
        } else {
            (encode_command(["PING"]), Some(b"+PONG\r\n".to_vec()))
        };
        let t = Instant::now();
        match s
            .write_all(&req)
            .and_then(|_| read_reply(server, s, &mut Vec::new(), &want))
        {
            Ok(()) => lat.lock().unwrap().push(t.elapsed().as_micros() as u64),
            Err(e) => {
                errors.note("probe", e);
                conn = None;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The run.

struct Sample {
    rss_kib: u64,
    fds: usize,
    p99_us: u64,
    probes: usize,
}

fn soak(total: Duration, interval: Duration) -> bool {
    let servers: Vec<Server> = SERVERS.iter().map(|&n| start(n)).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(Errors::default());
    let mut latencies = Vec::new();
    let mut threads = Vec::new();
    for (i, srv) in servers.iter().enumerate() {
        let lat = Arc::new(Mutex::new(Vec::new()));
        latencies.push(lat.clone());
        let (name, addr) = (srv.name, srv.addr);
        type Load = fn(&'static str, SocketAddr, &AtomicBool, &Errors, u64);
        let loads: [Load; 4] = [churn, churn, pipelines, slow_clients];
        for (j, load) in loads.into_iter().enumerate() {
            let (stop, errors) = (stop.clone(), errors.clone());
            let seed = 0x9E37_79B9_7F4A_7C15 ^ ((i * 16 + j) as u64 + 1);
            threads.push(std::thread::spawn(move || {
                load(name, addr, &stop, &errors, seed)
            }));
        }
        let (stop, errors) = (stop.clone(), errors.clone());
        threads.push(std::thread::spawn(move || {
            probe(name, addr, &stop, &errors, &lat)
        }));
    }
    println!(
        "soak: {:?} of churn, pipelines, slow clients and resets against {}; a sample every {:?}",
        total,
        SERVERS.join(" and "),
        interval
    );
    println!(
        "{:>6}  {:<5} {:>10} {:>5} {:>9} {:>7}",
        "time", "server", "RSS MiB", "fds", "p99 ms", "probes"
    );
    let mut samples: Vec<Vec<Sample>> = servers.iter().map(|_| Vec::new()).collect();
    let start = Instant::now();
    let mut next = interval;
    let mut readings: Vec<Vec<(u64, usize)>> = servers.iter().map(|_| Vec::new()).collect();
    while next <= total {
        while start.elapsed() < next {
            for (k, srv) in servers.iter().enumerate() {
                readings[k].push(usage(srv.child.id()));
            }
            std::thread::sleep(
                next.saturating_sub(start.elapsed())
                    .min(Duration::from_secs(1)),
            );
        }
        for (k, srv) in servers.iter().enumerate() {
            let r = std::mem::take(&mut readings[k]);
            let median = |mut v: Vec<u64>| {
                v.sort_unstable();
                v.get(v.len() / 2).copied().unwrap_or(0)
            };
            let rss_kib = median(r.iter().map(|x| x.0).collect());
            let fds = median(r.iter().map(|x| x.1 as u64).collect()) as usize;
            let mut lat = std::mem::take(&mut *latencies[k].lock().unwrap());
            lat.sort_unstable();
            let p99_us = lat
                .get(lat.len().saturating_sub(1) * 99 / 100)
                .copied()
                .unwrap_or(0);
            println!(
                "{:>5}s  {:<5} {:>10.1} {:>5} {:>9.3} {:>7}",
                next.as_secs(),
                srv.name,
                rss_kib as f64 / 1024.0,
                fds,
                p99_us as f64 / 1000.0,
                lat.len()
            );
            samples[k].push(Sample {
                rss_kib,
                fds,
                p99_us,
                probes: lat.len(),
            });
        }
        next += interval;
    }
    stop.store(true, Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    verdict(servers, &samples, &errors)
}

fn verdict(mut servers: Vec<Server>, samples: &[Vec<Sample>], errors: &Errors) -> bool {
    let mut pass = true;
    let within = |a: f64, b: f64| (a - b).abs() <= 0.10 * b;
    for (srv, s) in servers.iter_mut().zip(samples) {
        if let Ok(Some(status)) = srv.child.try_wait() {
            println!("FAIL {}: the server exited ({status})", srv.name);
            pass = false;
        }
        let (Some(second), Some(last)) = (s.get(1), s.last()) else {
            println!("FAIL {}: fewer than two samples", srv.name);
            pass = false;
            continue;
        };
        let ok_rss = within(last.rss_kib as f64, second.rss_kib as f64);
        let ok_fds = within(last.fds as f64, second.fds as f64);
        println!(
            "{} {}: RSS {:.1} -> {:.1} MiB, fds {} -> {} (second sample -> last), last p99 {:.3} ms over {} probes; {} log lines",
            if ok_rss && ok_fds { "ok  " } else { "FAIL" },
            srv.name,
            second.rss_kib as f64 / 1024.0,
            last.rss_kib as f64 / 1024.0,
            second.fds,
            last.fds,
            last.p99_us as f64 / 1000.0,
            last.probes,
            srv.logged.load(Relaxed),
        );
        pass &= ok_rss && ok_fds;
        let unexpected = srv.unexpected.lock().unwrap();
        if !unexpected.is_empty() {
            println!(
                "FAIL {}: {} unexpected log lines, first: {:?}",
                srv.name,
                unexpected.len(),
                &unexpected[..unexpected.len().min(5)]
            );
            pass = false;
        }
        if s.iter().any(|x| x.probes == 0) {
            println!(
                "FAIL {}: an interval without a single probe answered",
                srv.name
            );
            pass = false;
        }
    }
    let n = errors.count.load(Relaxed);
    if n > 0 {
        println!(
            "FAIL: {n} errors the load did not provoke, first: {:?}",
            errors.first.lock().unwrap()
        );
        pass = false;
    }
    for srv in &mut servers {
        let _ = srv.child.kill();
        let _ = srv.child.wait();
    }
    println!("soak verdict: {}", if pass { "PASS" } else { "FAIL" });
    pass
}
