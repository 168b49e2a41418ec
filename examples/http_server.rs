//! An HTTP server on spinpark through hyper: `GET /` says hello, `POST /echo` streams the
//! request body back. HTTP/1.1 and HTTP/2 (h2c, or h2 by ALPN over TLS) on the same port.
//!
//! ```text
//! cargo run --release --features hyper --example http_server -- --addr 127.0.0.1:8080 --workers 2
//! curl http://127.0.0.1:8080/            # Hello, world!
//! curl --data-binary @file http://127.0.0.1:8080/echo
//! wrk -t1 -c1 -d5s http://127.0.0.1:8080/
//! ```
//!
//! Flags (`--help` lists them): `--addr` (default 127.0.0.1:8080), `--workers` (default: one
//! per CPU), `--spin` (how long idle workers spin, e.g. `50us`), `--axum` (serve the same
//! routes as an axum router, through the same adapter), `--tls` (HTTPS with a self-signed
//! certificate for `localhost` made at start-up: `curl -k https://localhost:8080/`), and
//! `--runtime tokio` (the same server on tokio with hyper-util's tokio adapters, which the
//! http bench compares against).
//!
//! Connection timeouts, so that idle or stalled clients cannot hold descriptors (see
//! `examples-common`'s `conn_timeouts`): `--handshake-timeout` (10 s from accept until the
//! TLS handshake is done and the protocol is known), `--header-timeout` (30 s for HTTP/1
//! request headers, and for the next request on a kept-alive connection), `--idle-timeout`
//! (60 s without a byte moving), `--h2-keep-alive` (HTTP/2 pings every 20 s, unanswered for
//! 20 s closes), and for request bodies `--body-timeout` (20 s from the request head) with
//! `--body-min-rate` (1024: every 1024 bytes received add a second), so that a body trickled
//! a byte at a time is cut after about 20 s (the HTTP/1 connection is closed, the HTTP/2
//! stream reset) while one sent at 1 KiB/s or faster takes as long as it needs.
//!
//! The routes live in `examples-common`'s `http` module, TLS in its `tls` module. The runtime
//! is built with `spinpark::Builder` rather than `#[spinpark::main]` because `--workers` is
//! read at run time. Plain and TLS connections are spawned as different tasks, so that a
//! plain connection's task is not the size of a TLS one (rustls's state is kilobytes).

use examples_common::args::{RuntimeArgs, TimeoutArgs};
use examples_common::conn_timeouts::Timeouts;
use examples_common::log_limit::LogLimit;
use examples_common::{http, tls};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, ValueEnum};

/// An HTTP/1.1 and HTTP/2 server on spinpark through hyper: `GET /` says hello, `POST /echo`
/// streams the body back.
#[derive(Parser)]
#[command(name = "http_server")]
struct Cli {
    /// Where to listen
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Serve the routes as an axum router
    #[arg(long)]
    axum: bool,
    /// HTTPS, with a self-signed certificate for localhost made at start-up (spinpark only)
    #[arg(long)]
    tls: bool,
    /// The runtime to serve on
    #[arg(long, value_enum, default_value_t = Runtime::Spinpark)]
    runtime: Runtime,
    #[command(flatten)]
    rt: RuntimeArgs,
    #[command(flatten)]
    timeouts: TimeoutArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Runtime {
    Spinpark,
    Tokio,
}

#[derive(Clone, Copy)]
struct Options {
    addr: SocketAddr,
    axum: bool,
    timeouts: Timeouts,
}

/// Connection errors (timeouts, resets, bad requests) print at most this many lines a second.
static CONN_ERRORS: LogLimit = LogLimit::new(10);

fn main() -> Result<(), http::BoxError> {
    let cli = Cli::parse();
    let opts = Options {
        addr: cli.addr,
        axum: cli.axum,
        timeouts: cli.timeouts.timeouts(),
    };
    match cli.runtime {
        Runtime::Spinpark => {
            let tls = if cli.tls {
                let (cert, key) = tls::self_signed(&["localhost", "127.0.0.1"])?;
                Some(tls::server_config(cert, key)?)
            } else {
                None
            };
            cli.rt
                .builder()
                .build()?
                .block_on(serve_spinpark(opts, tls))
        }
        Runtime::Tokio => {
            if cli.tls {
                clap::Error::raw(
                    clap::error::ErrorKind::ArgumentConflict,
                    "--tls is only supported with --runtime spinpark\n",
                )
                .exit()
            }
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            if let Some(n) = cli.rt.workers {
                builder.worker_threads(n);
            }
            builder.enable_all().build()?.block_on(serve_tokio(opts))
        }
    }
}

async fn serve_spinpark(
    opts: Options,
    tls: Option<Arc<futures_rustls::rustls::ServerConfig>>,
) -> Result<(), http::BoxError> {
    let listener = spinpark::net::TcpListener::bind(opts.addr).await?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    println!("listening on {scheme}://{}", listener.local_addr()?);
    let acceptor = tls.map(futures_rustls::TlsAcceptor::from);
    let t = opts.timeouts;
    loop {
        let (stream, peer) = listener.accept().await?;
        let accepted = Instant::now();
        stream.set_nodelay(true)?;
        match acceptor.clone() {
            None => spinpark::spawn(async move {
                let r = http::serve_spinpark(stream, opts.axum, t, accepted).await;
                if let Err(e) = r {
                    CONN_ERRORS.log(format_args!("connection from {peer}: {e}"));
                }
            }),
            Some(acceptor) => spinpark::spawn(async move {
                // The handshake deadline covers the TLS handshake too.
                let deadline = spinpark::time::Instant::from_std(accepted + t.handshake);
                let handshake = spinpark::time::timeout_at(deadline, acceptor.accept(stream));
                let r = match handshake.await {
                    // TLS streams are futures-io streams: ZeroFill adapts their reads.
                    Ok(Ok(tls)) => {
                        let tls = spinpark::hyper::ZeroFill::new(tls);
                        http::serve_spinpark(tls, opts.axum, t, accepted).await
                    }
                    Ok(Err(e)) => Err(e.into()),
                    Err(_) => Err("no TLS handshake within the handshake timeout".into()),
                };
                if let Err(e) = r {
                    CONN_ERRORS.log(format_args!("connection from {peer}: {e}"));
                }
            }),
        };
    }
}

async fn serve_tokio(opts: Options) -> Result<(), http::BoxError> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, peer) = listener.accept().await?;
        let accepted = Instant::now();
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let r = http::serve_tokio(stream, opts.axum, opts.timeouts, accepted).await;
            if let Err(e) = r {
                CONN_ERRORS.log(format_args!("connection from {peer}: {e}"));
            }
        });
    }
}
