//! `--only downstream`: a front server whose handler makes one downstream HTTP call per
//! request, on spinpark's own sockets (`spinpark::hyper::Connector`, the `hyper-client`
//! feature), against the same app on tokio and on spinpark through `tokio-compat`.
//!
//! ```text
//! cargo bench --bench rpc -- --only downstream [--quick] [--rounds 3]
//! ```
//!
//! The app: the echo protocol's front server (one worker); per request it GETs `/` from a
//! downstream HTTP/1.1 service through one pooled hyper-util `Client` (`TCP_NODELAY`), reads the
//! 100-byte body, then echoes the request. Three fronts, each its own process:
//!
//! * `spinpark`: `spinpark::hyper::client_builder().build(Connector::new())`, the downstream
//!   socket on spinpark's reactor;
//! * `spinpark+compat`: spinpark with `Builder::tokio_compat()`, the client hyper-util's own
//!   (`TokioExecutor`, `HttpConnector`), so the downstream socket is driven by the compat
//!   runtime's tokio thread (what a tokio-bound client costs today);
//! * `tokio`: the same hyper-util client on a one-worker tokio runtime.
//!
//! Remote layout: the front server on the server CPU set (CPU 1 on 2 CPUs), the load generator
//! on the client set (CPU 0), and the downstream (hyper on a current-thread tokio runtime, one
//! process shared by the three fronts) on the client set too, like a service on another host.
//! Loads: `sync T=1` (one request in flight) and `sync T=16` (saturation: 16 in flight). Per
//! run: req/s, p50/p99 latency, and the front process's CPU and context switches (all its
//! threads, from /proc) per request. Runs alternate between the fronts, the order rotating
//! every round; tables show the median (min-max) over rounds and per-round ratios to tokio.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::Uri;

use crate::echo_proto::{payload_len, DEFAULT_MAX_FRAME};
use crate::sample::{Caps, Sample};
use crate::server::{Server, Spec, Usage};
use crate::stats::{paired_ratios, verdict, Better, Spread};
use crate::{load, pin, Options};

/// The fronts, by `--serve` name, and their labels in the tables (tokio last: the baseline).
pub const SERVERS: [&str; 4] = [
    "downstream:spinpark",
    "downstream:compat",
    "downstream:tokio",
    "downstream:service",
];
const LABELS: [&str; 3] = ["spinpark", "spinpark+compat", "tokio"];
const TOKIO: usize = 2;

/// The loads: client threads with one request in flight each.
const LOADS: [usize; 2] = [1, 16];

/// The environment variable that tells a front where the downstream listens.
const DOWNSTREAM_ENV: &str = "SPINPARK_BENCH_DOWNSTREAM";

/// The downstream's answer body.
const BODY: [u8; 100] = [b'd'; 100];

/// Whether `--only` names this mode.
pub fn requested(only: &[String]) -> bool {
    only.iter().any(|o| o == "downstream")
}

/// The load-generator side: starts the downstream and the fronts, runs the rounds, prints.
pub fn run(opts: &Options) -> String {
    let dur = if opts.quick {
        Duration::from_millis(600)
    } else {
        Duration::from_secs(3)
    };
    let (server_cpus, client_cpus) = match pin::Layout::remote() {
        Some(pin::Layout::Remote { server, client }) => (server, client),
        _ => {
            eprintln!("downstream: fewer than 2 CPUs, not pinning");
            (pin::allowed(), pin::allowed())
        }
    };
    if let Err(e) = pin::pin_current(&client_cpus) {
        eprintln!("downstream: pinning the load generator: {e}");
    }
    let service = Server::start(&Spec::new(SERVERS[3], 1), &client_cpus);
    std::env::set_var(DOWNSTREAM_ENV, service.addr.to_string());
    let mut fronts: Vec<Server> = (0..LABELS.len())
        .map(|i| Server::start(&Spec::new(SERVERS[i], 1).spin(opts.spin), &server_cpus))
        .collect();
    // samples[load][front]
    let mut samples: Vec<Vec<Vec<Sample>>> = LOADS.iter().map(|_| vec![Vec::new(); 3]).collect();
    for round in 0..opts.rounds {
        for (li, &threads) in LOADS.iter().enumerate() {
            for k in 0..LABELS.len() {
                let fi = (k + round + li) % LABELS.len();
                eprint!(
                    "\r\x1b[2K[round {}/{}] {:<16} sync T={threads}",
                    round + 1,
                    opts.rounds,
                    LABELS[fi]
                );
                let front = &mut fronts[fi];
                std::thread::sleep(Duration::from_millis(20));
                let s0 = front.usage();
                let c0 = Usage::now();
                let r = load::sync(front.addr, threads, dur);
                let c = Usage::now().since(c0);
                let s = front.usage().since(s0);
                let caps = Caps {
                    server: server_cpus.len(),
                    client: client_cpus.len(),
                };
                samples[li][fi].push(Sample::new(&r, s, c, caps));
            }
        }
    }
    eprintln!();
    for f in fronts {
        f.stop();
    }
    service.stop();
    markdown(opts.rounds, dur, &server_cpus, &client_cpus, &samples)
}

fn markdown(
    rounds: usize,
    dur: Duration,
    server_cpus: &[usize],
    client_cpus: &[usize],
    samples: &[Vec<Vec<Sample>>],
) -> String {
    let mut md = format!(
        "**downstream: one downstream HTTP call per request** (front server, 1 worker, on CPU \
         {server_cpus:?}; load generator and the downstream service on CPU {client_cpus:?}; \
         {rounds} alternating rounds of {dur:?}; median (min-max) over rounds, ratios to tokio \
         paired per round):\n\n"
    );
    md.push_str("| load | front | req/s | p50 (us) | p99 (us) | front CPU per req (us) | front ctx sw. per req |\n");
    md.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    type Figure = fn(&Sample) -> f64;
    let figures: [(Figure, usize, Better); 5] = [
        (|s| s.reqs_per_sec, 0, Better::Higher),
        (|s| s.p50, 1, Better::Lower),
        (|s| s.p99, 1, Better::Lower),
        (|s| s.server_cpu_us(), 1, Better::Lower),
        (|s| s.cs, 2, Better::Lower),
    ];
    for (li, &threads) in LOADS.iter().enumerate() {
        for (fi, runs) in samples[li].iter().enumerate() {
            let cells: Vec<String> = figures
                .iter()
                .map(|&(f, prec, _)| Spread::of(runs.iter().map(f)).show(prec))
                .collect();
            md.push_str(&format!(
                "| sync T={threads} | {} | {} |\n",
                LABELS[fi],
                cells.join(" | ")
            ));
        }
        for fi in 0..TOKIO {
            let cells: Vec<String> = figures
                .iter()
                .map(|&(f, _, better)| {
                    let x: Vec<f64> = samples[li][fi].iter().map(f).collect();
                    let y: Vec<f64> = samples[li][TOKIO].iter().map(f).collect();
                    let ratios = paired_ratios(&x, &y);
                    format!(
                        "{} {}",
                        Spread::of(ratios.iter().copied()).show_ratio(),
                        verdict(&ratios, better).word()
                    )
                })
                .collect();
            md.push_str(&format!(
                "| sync T={threads} | **{}/tokio** | {} |\n",
                LABELS[fi],
                cells.join(" | ")
            ));
        }
    }
    md
}

/// The server side, `--serve downstream:FRONT` (or `downstream:service`).
pub fn serve(name: &str, spin: Option<crate::server::Spin>) {
    if name == SERVERS[3] {
        return serve_service();
    }
    let addr: SocketAddr = std::env::var(DOWNSTREAM_ENV)
        .ok()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("{DOWNSTREAM_ENV} does not hold the downstream's address"));
    let uri: Uri = format!("http://{addr}/").parse().unwrap();
    match name {
        "downstream:spinpark" => serve_spinpark(false, uri, spin),
        "downstream:compat" => serve_spinpark(true, uri, spin),
        "downstream:tokio" => serve_tokio(uri),
        other => panic!("unknown downstream front {other:?}"),
    }
}

/// One downstream call: what a front's handler awaits per request.
type Call = Arc<dyn Fn() -> BoxFuture<'static, io::Result<()>> + Send + Sync>;

/// A GET through `client`, its 100-byte body read.
async fn get<C>(
    client: hyper_util::client::legacy::Client<C, Empty<Bytes>>,
    uri: Uri,
) -> io::Result<()>
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    let err = |e: &dyn std::fmt::Display| io::Error::other(format!("downstream: {e}"));
    let response = client.get(uri).await.map_err(|e| err(&e))?;
    let body = response.into_body().collect().await.map_err(|e| err(&e))?;
    if body.to_bytes().len() != BODY.len() {
        return Err(io::Error::other("downstream: a short body"));
    }
    Ok(())
}

/// hyper-util's client on tokio's executor and sockets.
fn tokio_client() -> hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Empty<Bytes>,
> {
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.set_nodelay(true);
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build(http)
}

fn serve_spinpark(compat: bool, uri: Uri, spin: Option<crate::server::Spin>) {
    let mut b = spinpark::Builder::new().worker_threads(1);
    if compat {
        b = b.tokio_compat();
    }
    if let Some(crate::server::Spin::Fixed(s)) = spin {
        b = b.spin(s);
    }
    let rt = b.build().expect("spinpark runtime");
    let call: Call = if compat {
        let client = tokio_client();
        Arc::new(move || Box::pin(get(client.clone(), uri.clone())))
    } else {
        let client = spinpark::hyper::client_builder().build(spinpark::hyper::Connector::new());
        Arc::new(move || Box::pin(get(client.clone(), uri.clone())))
    };
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    rt.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).ok();
            let call = call.clone();
            spinpark::spawn(async move {
                if let Err(e) = spinpark_conn(stream, call).await {
                    eprintln!("downstream front: closing a connection: {e}");
                }
            });
        }
    });
    crate::server::control_loop()
}

async fn spinpark_conn(stream: spinpark::net::TcpStream, call: Call) -> io::Result<()> {
    use futures_util::io::{AsyncReadExt, AsyncWriteExt, BufReader};
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
        call().await?;
        stream.get_mut().write_all(&frame).await?;
    }
}

fn serve_tokio(uri: Uri) {
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
        let client = tokio_client();
        let call: Call = Arc::new(move || Box::pin(get(client.clone(), uri.clone())));
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).ok();
            let call = call.clone();
            tokio::spawn(async move {
                if let Err(e) = tokio_conn(stream, call).await {
                    eprintln!("downstream front (tokio): closing a connection: {e}");
                }
            });
        }
    });
    crate::server::control_loop()
}

async fn tokio_conn(stream: tokio::net::TcpStream, call: Call) -> io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
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
        call().await?;
        stream.get_mut().write_all(&frame).await?;
    }
}

/// The downstream service: hyper (HTTP/1.1) on a current-thread tokio runtime, answering
/// every request with [`BODY`].
fn serve_service() {
    use http_body_util::Full;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    let rt = tokio::runtime::Builder::new_current_thread()
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
                let svc = service_fn(|_| async {
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                        Bytes::from_static(&BODY),
                    )))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    // The control loop blocks this thread; the current-thread runtime needs a thread of its own.
    std::thread::spawn(move || rt.block_on(std::future::pending::<()>()));
    crate::server::control_loop()
}
