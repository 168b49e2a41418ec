//! `--only compat`: what a tokio-bound call inside a spinpark handler costs (the `tokio-compat`
//! feature), against the same handler on tokio.
//!
//! ```text
//! cargo bench --bench rpc --features tokio-compat -- --only compat [--quick] [--rounds 3]
//! ```
//!
//! Two rows, each on spinpark with `Builder::tokio_compat()` and on tokio:
//!
//! * `compat sleep0`: the echo handler awaits one `tokio::time::sleep(Duration::ZERO)` per
//!   request (tokio rounds timer deadlines up to its 1 ms tick, so this is mostly the cost of
//!   tokio's timer wheel, on both runtimes);
//! * `compat tokio::net`: the handler makes one round trip per request through a
//!   `tokio::net::TcpStream` to a second local echo server (a blocking thread in the server
//!   process), as a handler calling a database or a cache does.
//!
//! Remote layout (`pin::Layout::remote`): the server process (one spinpark worker, plus the
//! compat runtime's one tokio thread; or one tokio worker) on one CPU set, the load generator
//! on the other (CPU 1 and CPU 0 on 2 CPUs); on a machine with fewer than 2 CPUs nothing is
//! pinned. The client is `sync T=1` (one request in
//! flight). Reported: req/s, p50 latency, and the server's context switches per request,
//! medians over the rounds.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use crate::echo_proto::{payload_len, DEFAULT_MAX_FRAME};
use crate::sample::{Caps, Sample};
use crate::server::{Server, Spec, Usage};
use crate::{load, pin, Options};

/// What the handler awaits per request, besides echoing.
#[derive(Clone, Copy, PartialEq)]
enum Extra {
    Sleep0,
    Backend,
}

impl Extra {
    fn name(self) -> &'static str {
        match self {
            Extra::Sleep0 => "compat sleep0",
            Extra::Backend => "compat tokio::net",
        }
    }

    /// The `--serve` name of this handler's server on runtime `ri` (an index into
    /// [`RUNTIMES`]).
    fn serve_name(self, ri: usize) -> &'static str {
        match (ri, self) {
            (0, Extra::Sleep0) => "spinpark-compat:sleep0",
            (0, Extra::Backend) => "spinpark-compat:backend",
            (_, Extra::Sleep0) => "tokio-compat:sleep0",
            (_, Extra::Backend) => "tokio-compat:backend",
        }
    }
}

/// Every `--serve` name [`Extra::serve_name`] gives.
pub const SERVERS: [&str; 4] = [
    "spinpark-compat:sleep0",
    "spinpark-compat:backend",
    "tokio-compat:sleep0",
    "tokio-compat:backend",
];

/// The server runtimes this mode starts (`--serve NAME`).
const RUNTIMES: [&str; 2] = ["spinpark", "tokio"];

/// The load-generator side: runs both rows and prints the table.
pub fn run(opts: &Options) {
    let dur = if opts.quick {
        Duration::from_millis(600)
    } else {
        Duration::from_secs(3)
    };
    // The remote layout: servers on one CPU set, this load generator (and the client threads
    // it starts, which inherit its affinity) on the other.
    let (server_cpus, client_cpus) = match pin::Layout::remote() {
        Some(pin::Layout::Remote { server, client }) => (server, client),
        _ => {
            eprintln!("compat: fewer than 2 CPUs, not pinning");
            (pin::allowed(), pin::allowed())
        }
    };
    if let Err(e) = pin::pin_current(&client_cpus) {
        eprintln!("compat: pinning the load generator: {e}");
    }
    let mut rows = Vec::new();
    for extra in [Extra::Sleep0, Extra::Backend] {
        let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
        let mut servers: Vec<Server> = (0..RUNTIMES.len())
            .map(|ri| {
                let spec = Spec::new(extra.serve_name(ri), 1).spin(opts.spin);
                Server::start(&spec, &server_cpus)
            })
            .collect();
        for round in 0..opts.rounds {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for ri in order {
                eprint!(
                    "\r\x1b[2K[round {}/{}] {:<8} {}",
                    round + 1,
                    opts.rounds,
                    RUNTIMES[ri],
                    extra.name()
                );
                let server = &mut servers[ri];
                std::thread::sleep(Duration::from_millis(20));
                let s0 = server.usage();
                let c0 = Usage::now();
                let r = load::sync(server.addr, 1, dur);
                let c = Usage::now().since(c0);
                let s = server.usage().since(s0);
                let caps = Caps {
                    server: 1,
                    client: 1,
                };
                samples[ri].push(Sample::new(&r, s, c, caps));
            }
        }
        eprintln!();
        for s in servers {
            s.stop();
        }
        rows.push((extra, samples));
    }
    println!("\ncompat: a tokio-bound await per request, remote layout (server CPU 1, client CPU 0), sync T=1, medians of {} rounds", opts.rounds);
    println!(
        "{:<18} {:<16} {:>10} {:>10} {:>8}",
        "mode", "runtime", "req/s", "p50 us", "cs/req"
    );
    for (extra, samples) in &rows {
        for (ri, runs) in samples.iter().enumerate() {
            let label = ["spinpark+compat", "tokio"][ri];
            println!(
                "{:<18} {:<16} {:>10.0} {:>10.1} {:>8.2}",
                extra.name(),
                label,
                median(runs, |s| s.reqs_per_sec),
                median(runs, |s| s.p50),
                median(runs, |s| s.cs)
            );
        }
    }
}

fn median(runs: &[Sample], f: fn(&Sample) -> f64) -> f64 {
    let mut v: Vec<f64> = runs.iter().map(f).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    match v.len() {
        0 => f64::NAN,
        k if k % 2 == 1 => v[k / 2],
        k => (v[k / 2 - 1] + v[k / 2]) / 2.0,
    }
}

/// The server side, `--serve spinpark-compat:EXTRA` or `--serve tokio-compat:EXTRA`.
pub fn serve(runtime: &str, spin: Option<crate::server::Spin>) {
    let (rt, extra) = runtime.split_once(':').unwrap_or((runtime, ""));
    let extra = match extra {
        "sleep0" => Extra::Sleep0,
        "backend" => Extra::Backend,
        other => panic!("unknown compat handler {other:?} in {runtime:?}"),
    };
    let backend = start_backend();
    match rt {
        "spinpark-compat" => serve_spinpark(extra, backend, spin),
        "tokio-compat" => serve_tokio(extra, backend),
        other => panic!("unknown compat runtime {other:?}"),
    }
}

/// A blocking echo server of 8-byte messages, a thread per connection: the "database".
fn start_backend() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the backend");
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            conn.set_nodelay(true).ok();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8];
                while conn.read_exact(&mut buf).is_ok() {
                    if conn.write_all(&buf).is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

/// The tokio-bound part of a request: a zero sleep, or a backend round trip.
async fn extra_await(extra: Extra, backend: &mut Option<tokio::net::TcpStream>) -> io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    match (extra, backend) {
        (Extra::Sleep0, _) => tokio::time::sleep(Duration::ZERO).await,
        (Extra::Backend, Some(b)) => {
            let mut buf = *b"request!";
            b.write_all(&buf).await?;
            b.read_exact(&mut buf).await?;
        }
        (Extra::Backend, None) => unreachable!("a backend connection is opened first"),
    }
    Ok(())
}

async fn backend_conn(extra: Extra, addr: SocketAddr) -> io::Result<Option<tokio::net::TcpStream>> {
    if extra != Extra::Backend {
        return Ok(None);
    }
    let s = tokio::net::TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    Ok(Some(s))
}

fn serve_spinpark(extra: Extra, backend: SocketAddr, spin: Option<crate::server::Spin>) {
    let mut b = spinpark::Builder::new().worker_threads(1).tokio_compat();
    // `Spin::Adaptive` is the runtime's default policy.
    if let Some(crate::server::Spin::Fixed(s)) = spin {
        b = b.spin(s);
    }
    let rt = b.build().expect("spinpark runtime with tokio-compat");
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    rt.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).ok();
            spinpark::spawn(async move {
                if let Err(e) = spinpark_conn(stream, extra, backend).await {
                    eprintln!("spinpark compat server: closing a connection: {e}");
                }
            });
        }
    });
    crate::server::control_loop()
}

async fn spinpark_conn(
    stream: spinpark::net::TcpStream,
    extra: Extra,
    backend: SocketAddr,
) -> io::Result<()> {
    use futures_util::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let mut backend = backend_conn(extra, backend).await?;
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    let mut frame = Vec::new();
    loop {
        let mut header = [0u8; 4];
        match stream.read_exact(&mut header).await {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let n = payload_len(header, DEFAULT_MAX_FRAME)?;
        frame.clear();
        frame.extend_from_slice(&header);
        frame.resize(4 + n, 0);
        stream.read_exact(&mut frame[4..]).await?;
        extra_await(extra, &mut backend).await?;
        stream.get_mut().write_all(&frame).await?;
    }
}

fn serve_tokio(extra: Extra, backend: SocketAddr) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    rt.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).ok();
            tokio::spawn(async move {
                if let Err(e) = tokio_conn(stream, extra, backend).await {
                    eprintln!("tokio compat server: closing a connection: {e}");
                }
            });
        }
    });
    crate::server::control_loop()
}

async fn tokio_conn(
    stream: tokio::net::TcpStream,
    extra: Extra,
    backend: SocketAddr,
) -> io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let mut backend = backend_conn(extra, backend).await?;
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    let mut frame = Vec::new();
    loop {
        let mut header = [0u8; 4];
        match stream.read_exact(&mut header).await {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let n = payload_len(header, DEFAULT_MAX_FRAME)?;
        frame.clear();
        frame.extend_from_slice(&header);
        frame.resize(4 + n, 0);
        stream.read_exact(&mut frame[4..]).await?;
        extra_await(extra, &mut backend).await?;
        stream.get_mut().write_all(&frame).await?;
    }
}
