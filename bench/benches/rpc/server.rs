//! The benchmark's servers: the same echo handler on spinpark and on tokio (and the kv
//! server, and the busy-polling floor server of `floor.rs`), each run in its own process
//! (the bench binary re-executes itself with `--serve RUNTIME --workers N [--spin D]
//! [--deadline]`).
//!
//! ```text
//! let spec = Spec::new("spinpark", 2).spin(Some(Spin::Fixed(Duration::from_micros(25))));
//! let mut server = Server::start(&spec, layout.server_cpus());
//! let before = server.usage(); /* load server.addr */ let used = server.usage().since(before);
//! server.stop();
//! ```
//!
//! The server prints `PORT n` once it listens, then answers `STATS` lines on stdin with its
//! own resource usage (all threads, from `getrusage(RUSAGE_SELF)`), and exits at end of input.
//! The spin policy is set per process with `--spin` (a fixed window such as `25us`, or
//! `adaptive`), so one run can compare several. An adaptive server says on stderr, when it
//! stops, what its policy learned (window, spin time, how idle periods ended).

use std::io::{self, BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use crate::echo_proto::{serve_futures_io, serve_futures_io_split, FrameReader, DEFAULT_MAX_FRAME};
use crate::{deadline, pin};

/// spinpark's spin policy for a server: a fixed window, or the adaptive policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spin {
    Fixed(Duration),
    Adaptive,
}

impl Spin {
    /// `adaptive`, or a duration (`0`, `25us`, `1ms`).
    pub fn parse(text: &str) -> Result<Spin, String> {
        if text == "adaptive" {
            return Ok(Spin::Adaptive);
        }
        examples_common::duration::parse(text)
            .map(Spin::Fixed)
            .map_err(|e| format!("{e} (or `adaptive`)"))
    }

    /// `25us`, `adaptive`.
    pub fn label(self) -> String {
        match self {
            Spin::Fixed(d) => crate::mode::fmt_dur(d),
            Spin::Adaptive => "adaptive".into(),
        }
    }

    /// The flag value that names it to a server process.
    pub fn arg(self) -> String {
        match self {
            Spin::Fixed(d) => format!("{}ns", d.as_nanos()),
            Spin::Adaptive => "adaptive".into(),
        }
    }
}

/// What server process to start.
#[derive(Debug, Clone)]
pub struct Spec {
    /// `spinpark`, `tokio`, `kv` (the kv example's server, on spinpark) or `floor` (one
    /// thread busy-polling its sockets, `floor.rs`; its worker count is ignored).
    pub runtime: &'static str,
    pub workers: usize,
    /// spinpark's spin policy; `None` is the runtime's default (adaptive).
    pub spin: Option<Spin>,
    /// Every request runs under an idle timeout and a deadline (see `deadline.rs`).
    pub deadline: bool,
}

impl Spec {
    pub fn new(runtime: &'static str, workers: usize) -> Spec {
        Spec {
            runtime,
            workers,
            spin: None,
            deadline: false,
        }
    }

    pub fn spin(mut self, spin: Option<Spin>) -> Spec {
        if !matches!(
            self.runtime,
            "tokio" | "tokio-batched" | "tokio-split" | "floor"
        ) {
            self.spin = spin;
        }
        self
    }

    pub fn deadline(mut self, on: bool) -> Spec {
        self.deadline = on;
        self
    }

    /// The name tables use: the runtime, with its spin window when one was set.
    pub fn label(&self) -> String {
        match self.spin {
            Some(s) => format!("{} spin={}", self.runtime, s.label()),
            None => self.runtime.to_string(),
        }
    }

    /// [`Spec::label`] with the worker count (`spinpark 2w`), for tables that show one
    /// runtime with several; the floor server has no workers to count.
    pub fn label_with_workers(&self) -> String {
        match self.runtime {
            "floor" => self.label(),
            _ => format!("{} {}w", self.label(), self.workers),
        }
    }

    fn args(&self) -> Vec<String> {
        let mut a = vec![
            "--serve".to_string(),
            self.runtime.to_string(),
            "--workers".to_string(),
            self.workers.to_string(),
        ];
        if let Some(s) = self.spin {
            a.push("--spin".into());
            a.push(s.arg());
        }
        if self.deadline {
            a.push("--deadline".into());
        }
        a
    }
}

/// A server process and its control pipe.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pub addr: SocketAddr,
}

impl Server {
    /// Starts the server of `spec` with all its threads on `cpus`.
    pub fn start(spec: &Spec, cpus: &[usize]) -> Server {
        Server::launch(Server::command(spec), cpus)
            .unwrap_or_else(|e| panic!("{} server: {e}", spec.label()))
    }

    /// The command that runs the server of `spec`: this binary, re-executed with `--serve`.
    pub fn command(spec: &Spec) -> Command {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(spec.args());
        cmd
    }

    /// Starts `cmd`, a server that speaks this module's protocol (the io_uring peers of
    /// `bench/peers` too), with all its threads on `cpus`. The error says why it did not
    /// start: it could not be run, it printed `ERROR reason` instead of its port, or it ended
    /// before saying anything.
    pub fn launch(mut cmd: Command, cpus: &[usize]) -> Result<Server, String> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = pin::spawn_on(cpus, &mut cmd).map_err(|e| format!("cannot run it: {e}"))?;
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).ok();
        let port = line.trim().strip_prefix("PORT ").map(str::parse::<u16>);
        let Some(Ok(port)) = port else {
            drop(stdin);
            let status = child.wait();
            return Err(match line.trim().strip_prefix("ERROR ") {
                Some(reason) => reason.to_string(),
                None if line.is_empty() => format!(
                    "it ended before saying its port ({})",
                    status.map_or_else(|e| e.to_string(), |s| s.to_string())
                ),
                None => format!("it said {line:?} instead of its port"),
            });
        };
        Ok(Server {
            child,
            stdin,
            stdout,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn usage(&mut self) -> Usage {
        writeln!(self.stdin, "STATS").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        Usage::parse(&line).unwrap_or_else(|| panic!("bad stats line {line:?}"))
    }

    /// The server's counters (`name=value`; empty for a server that keeps none).
    pub fn metrics(&mut self) -> Vec<(String, u64)> {
        writeln!(self.stdin, "METRICS").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim()
            .strip_prefix("METRICS")
            .unwrap_or_else(|| panic!("bad metrics line {line:?}"))
            .split_whitespace()
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), v.parse().ok()?))
            })
            .collect()
    }

    pub fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// What a server reports about itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub user_us: u64,
    pub sys_us: u64,
    pub vol_cs: u64,
    pub invol_cs: u64,
}

impl Usage {
    pub fn now() -> Usage {
        // SAFETY: rusage is plain old data (all-zero is valid), and getrusage fills the valid
        // struct on our stack.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut ru);
            ru
        };
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Usage {
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
            vol_cs: ru.ru_nvcsw as u64,
            invol_cs: ru.ru_nivcsw as u64,
        }
    }

    pub fn since(self, before: Usage) -> Usage {
        Usage {
            user_us: self.user_us - before.user_us,
            sys_us: self.sys_us - before.sys_us,
            vol_cs: self.vol_cs - before.vol_cs,
            invol_cs: self.invol_cs - before.invol_cs,
        }
    }

    pub fn parse(line: &str) -> Option<Usage> {
        let mut it = line.split_whitespace();
        if it.next()? != "STATS" {
            return None;
        }
        let mut n = || it.next()?.parse().ok();
        Some(Usage {
            user_us: n()?,
            sys_us: n()?,
            vol_cs: n()?,
            invol_cs: n()?,
        })
    }
}

/// Answers `STATS` on stdin until it closes, then exits the process.
pub fn control_loop() -> ! {
    control_loop_then(String::new, || {})
}

/// [`control_loop`], also answering `METRICS` with `metrics()` (`name=value` pairs separated
/// by blanks; nothing for a server without any), and calling `at_exit` when stdin closes.
fn control_loop_then(metrics: impl Fn() -> String, at_exit: impl FnOnce()) -> ! {
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        match line.trim() {
            "STATS" => {
                let u = Usage::now();
                println!(
                    "STATS {} {} {} {}",
                    u.user_us, u.sys_us, u.vol_cs, u.invol_cs
                );
            }
            "METRICS" => println!("METRICS {}", metrics()),
            _ => continue,
        }
        io::stdout().flush().ok();
    }
    at_exit();
    std::process::exit(0);
}

/// A spinpark server's counters for `METRICS`, summed over its workers: what its idle
/// workers did (`openloop.rs` shows them beside the rounds whose tail was long).
fn spin_counters(rt: &spinpark::Runtime) -> String {
    let m = rt.metrics();
    let t = m.total();
    format!(
        "probes={} parked_by_choice={} spins_found={} spins_expired={} parks={} lost_cores={} \
         window_drops={} budget_parks={} flips={} watchdog_wakes={} wakes={} steals={} \
         long_polls={}",
        m.spin_probes(),
        t.parked_by_choice(),
        t.spins_found_work(),
        t.spins_expired(),
        t.parks(),
        m.spin_lost_cores(),
        m.spin_window_drops(),
        m.spin_budget_parks(),
        m.spin_flips_to_park() + m.spin_flips_to_spin(),
        m.watchdog_wakes(),
        m.wakes(),
        t.steals(),
        t.long_polls(),
    )
}

/// What an adaptive server's spin policy learned, for stderr when it stops.
fn spin_summary(rt: &spinpark::Runtime) -> String {
    let m = rt.metrics();
    let t = m.total();
    format!(
        "spinpark adaptive server: window {:?}, {} found while spinning, {} expired, {} parked \
         by choice, spun {:.1} ms in all, {} for {:.0} ms, {} probes (now 1 run per {} \
         periods), CPUs {}, {} lost cores",
        m.spin_window(),
        t.spins_found_work(),
        t.spins_expired(),
        t.parked_by_choice(),
        t.spin_nanos() as f64 / 1e6,
        if m.spin_parking() {
            "parking (spinning did not pay)"
        } else {
            "spinning"
        },
        m.spin_since_flip().as_secs_f64() * 1e3,
        m.spin_probes(),
        m.spin_probe_period(),
        if m.spin_cpus_shared() {
            "shared"
        } else {
            "not shared"
        },
        m.spin_lost_cores()
    )
}

/// Runs the server `spec` describes in this process, until stdin closes.
pub fn serve(spec: &Spec) {
    match spec.runtime {
        "spinpark" => serve_spinpark(spec.workers, spec.spin, Handler::of(spec.deadline)),
        "spinpark-quarter" => serve_spinpark(spec.workers, spec.spin, Handler::Quarter),
        "spinpark-split" => serve_spinpark(spec.workers, spec.spin, Handler::Split),
        "spinpark-autoflush" => serve_spinpark(spec.workers, spec.spin, Handler::AutoFlush),
        "tokio" => serve_tokio(spec.workers, spec.deadline),
        "tokio-split" => serve_tokio_with(spec.workers, "tokio-split", |stream| {
            serve_tokio_conn(stream, DEFAULT_MAX_FRAME, true)
        }),
        "tokio-batched" => serve_tokio_batched(spec.workers),
        "kv" => serve_kv(spec.workers, spec.spin),
        "floor" => serve_floor(),
        // Before the compat arm: "downstream:compat" also contains "compat".
        d if d.starts_with("downstream:") => crate::downstream::serve(d, spec.spin),
        #[cfg(feature = "tokio-compat")]
        compat if compat.contains("compat") => crate::compat::serve(compat, spec.spin),
        other => panic!("unknown runtime {other}"),
    }
}

fn spinpark_runtime(workers: usize, spin: Option<Spin>) -> spinpark::Runtime {
    spinpark_runtime_with(spinpark::Builder::new(), workers, spin)
}

fn spinpark_runtime_with(
    b: spinpark::Builder,
    workers: usize,
    spin: Option<Spin>,
) -> spinpark::Runtime {
    let mut b = b.worker_threads(workers);
    // `Spin::Adaptive` is the runtime's default policy.
    if let Some(Spin::Fixed(s)) = spin {
        b = b.spin(s);
    }
    b.build().expect("spinpark runtime")
}

fn listen_spinpark(rt: &spinpark::Runtime) -> spinpark::net::TcpListener {
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    listener
}

/// The kv example's server (the same module `examples/kv_server.rs` runs).
fn serve_kv(workers: usize, spin: Option<Spin>) {
    let rt = spinpark_runtime(workers, spin);
    let listener = listen_spinpark(&rt);
    rt.spawn(async move {
        if let Err(e) = crate::kv::serve(listener, crate::kv::Store::new()).await {
            eprintln!("kv server: {e}");
        }
    });
    control_loop();
}

/// How a spinpark server's connections are served.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Handler {
    /// `serve_futures_io`: one `write_all` a reply.
    Plain,
    /// The same under a per-request deadline (`deadline.rs`).
    Deadline,
    /// Each reply in two writes: its 4-byte length prefix, then its body.
    Split,
    /// `serve_futures_io` on the stream wrapped in `spinpark::io::AutoFlush`.
    AutoFlush,
    /// `serve_futures_io`, on a runtime whose spinning may use a quarter of a core
    /// (`Builder::spin_budget(0.25)`).
    Quarter,
}

impl Handler {
    fn of(deadline: bool) -> Handler {
        if deadline {
            Handler::Deadline
        } else {
            Handler::Plain
        }
    }
}

fn serve_spinpark(workers: usize, spin: Option<Spin>, handler: Handler) {
    let builder = match handler {
        Handler::Quarter => spinpark::Builder::new().spin_budget(0.25),
        _ => spinpark::Builder::new(),
    };
    let rt = spinpark_runtime_with(builder, workers, spin);
    let listener = listen_spinpark(&rt);
    rt.spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("spinpark server: accept: {e}");
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            spinpark::spawn(async move {
                let served = match handler {
                    Handler::Plain | Handler::Quarter => {
                        serve_futures_io(stream, DEFAULT_MAX_FRAME).await
                    }
                    Handler::Deadline => deadline::serve_spinpark(stream, DEFAULT_MAX_FRAME).await,
                    Handler::Split => serve_futures_io_split(stream, DEFAULT_MAX_FRAME).await,
                    Handler::AutoFlush => {
                        let stream = spinpark::io::AutoFlush::new(stream);
                        serve_futures_io(stream, DEFAULT_MAX_FRAME).await
                    }
                };
                if let Err(e) = served {
                    eprintln!("spinpark server: closing a connection: {e}");
                }
            });
        }
    });
    let counters = || spin_counters(&rt);
    if spin == Some(Spin::Adaptive) {
        control_loop_then(counters, || eprintln!("{}", spin_summary(&rt)))
    }
    control_loop_then(counters, || {});
}

/// The floor server (`floor.rs`): its busy-polling thread, and this one on stdin.
fn serve_floor() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let mut floor = crate::floor::Floor::new(listener, DEFAULT_MAX_FRAME).expect("floor server");
    std::thread::Builder::new()
        .name("floor".into())
        .spawn(move || floor.run(&std::sync::atomic::AtomicBool::new(false)))
        .expect("the floor server's thread");
    println!("PORT {port}");
    io::stdout().flush().ok();
    control_loop();
}

fn serve_tokio(workers: usize, with_deadline: bool) {
    serve_tokio_with(workers, "tokio", move |stream| async move {
        if with_deadline {
            deadline::serve_tokio(stream, DEFAULT_MAX_FRAME).await
        } else {
            serve_tokio_conn(stream, DEFAULT_MAX_FRAME, false).await
        }
    })
}

/// tokio with replies batched by hand, as careful tokio users write pipelined servers: the
/// same echo, but each reply is appended to a buffer that is written once the reader's buffer
/// holds no further request (one `write` per batch the client sent).
fn serve_tokio_batched(workers: usize) {
    serve_tokio_with(workers, "tokio-batched", |stream| {
        serve_tokio_batched_conn(stream, DEFAULT_MAX_FRAME)
    })
}

/// A tokio server with `workers` workers whose connections `handler` serves, each in a task
/// of its own, until stdin closes; `name` labels its errors.
fn serve_tokio_with<F, Fut>(workers: usize, name: &'static str, handler: F)
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = io::Result<u64>> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    rt.spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{name} server: accept: {e}");
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            let served = handler(stream);
            tokio::spawn(async move {
                if let Err(e) = served.await {
                    eprintln!("{name} server: closing a connection: {e}");
                }
            });
        }
    });
    control_loop();
}

async fn serve_tokio_batched_conn(stream: tokio::net::TcpStream, max: usize) -> io::Result<u64> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    let mut frames = FrameReader::new(max);
    let mut out = Vec::with_capacity(16 * 1024);
    let mut served = 0;
    loop {
        let n = stream.read(frames.spare()).await?;
        if n == 0 {
            return match frames.is_empty() {
                true => Ok(served),
                false => Err(frames.eof_error()),
            };
        }
        if frames.filled(n)? {
            out.extend_from_slice(frames.frame());
            frames.consume();
            served += 1;
        }
        // No further request is buffered: the batch is done, its replies go in one write.
        if stream.buffer().is_empty() && !out.is_empty() {
            stream.get_mut().write_all(&out).await?;
            out.clear();
        }
    }
}

/// The same handler as `serve_futures_io` (`split`: `serve_futures_io_split`), written against
/// tokio's I/O traits.
async fn serve_tokio_conn(
    stream: tokio::net::TcpStream,
    max: usize,
    split: bool,
) -> io::Result<u64> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    let mut frames = FrameReader::new(max);
    let mut served = 0;
    loop {
        let n = stream.read(frames.spare()).await?;
        if n == 0 {
            return match frames.is_empty() {
                true => Ok(served),
                false => Err(frames.eof_error()),
            };
        }
        if frames.filled(n)? {
            let frame = frames.frame();
            let (first, rest) = frame.split_at(if split { 4 } else { frame.len() });
            stream.get_mut().write_all(first).await?;
            if !rest.is_empty() {
                stream.get_mut().write_all(rest).await?;
            }
            frames.consume();
            served += 1;
        }
    }
}
