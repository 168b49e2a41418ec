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
//! Flags: `--addr` (default 127.0.0.1:8080), `--workers` (default: one per CPU), `--spin` (how
//! long idle workers spin, e.g. `50us`), `--axum` (serve the same routes as an axum router,
//! through the same adapter), `--tls` (HTTPS with a self-signed certificate for `localhost`
//! made at start-up: `curl -k https://localhost:8080/`), and `--runtime tokio` (the same
//! server on tokio with hyper-util's tokio adapters, which the http bench compares against).
//!
//! The routes live in `examples-common`'s `http` module, TLS in its `tls` module. The runtime is built with
//! `spinpark::Builder` rather than `#[spinpark::main]` because `--workers` is read at run time.

use examples_common::{args, http, tls};

use std::net::SocketAddr;
use std::sync::Arc;

struct Options {
    addr: SocketAddr,
    axum: bool,
    tls: Option<Arc<futures_rustls::rustls::ServerConfig>>,
}

fn main() -> Result<(), http::BoxError> {
    let flag = |name: &str| std::env::args().any(|a| a == name);
    let tls = if flag("--tls") {
        let (cert, key) = tls::self_signed(&["localhost", "127.0.0.1"])?;
        Some(tls::server_config(cert, key)?)
    } else {
        None
    };
    let opts = Options {
        addr: args::get("--addr", "127.0.0.1:8080".parse().unwrap(), args::number),
        axum: flag("--axum"),
        tls,
    };
    let workers: Option<usize> = args::value("--workers").map(|n| {
        args::number(&n).unwrap_or_else(|e| {
            eprintln!("--workers: {e}");
            std::process::exit(2)
        })
    });
    match args::value("--runtime").as_deref() {
        None | Some("spinpark") => {
            let mut builder = spinpark::Builder::new();
            if let Some(n) = workers {
                builder = builder.worker_threads(n);
            }
            args::spin(builder).build()?.block_on(serve_spinpark(opts))
        }
        Some("tokio") => {
            if opts.tls.is_some() {
                eprintln!("--tls is only supported with --runtime spinpark");
                std::process::exit(2)
            }
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            if let Some(n) = workers {
                builder.worker_threads(n);
            }
            builder.enable_all().build()?.block_on(serve_tokio(opts))
        }
        Some(other) => {
            eprintln!("--runtime {other}: use spinpark or tokio");
            std::process::exit(2)
        }
    }
}

async fn serve_spinpark(opts: Options) -> Result<(), http::BoxError> {
    let listener = spinpark::net::TcpListener::bind(opts.addr).await?;
    let scheme = if opts.tls.is_some() { "https" } else { "http" };
    println!("listening on {scheme}://{}", listener.local_addr()?);
    let acceptor = opts.tls.map(futures_rustls::TlsAcceptor::from);
    loop {
        let (stream, peer) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let acceptor = acceptor.clone();
        spinpark::spawn(async move {
            let r = match acceptor {
                None => http::serve_spinpark(stream, opts.axum).await,
                Some(acceptor) => match acceptor.accept(stream).await {
                    // TLS streams are futures-io streams: ZeroFill adapts their reads.
                    Ok(tls) => {
                        http::serve_spinpark(spinpark::hyper::ZeroFill::new(tls), opts.axum).await
                    }
                    Err(e) => Err(e.into()),
                },
            };
            if let Err(e) = r {
                eprintln!("connection from {peer}: {e}");
            }
        });
    }
}

async fn serve_tokio(opts: Options) -> Result<(), http::BoxError> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, peer) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            if let Err(e) = http::serve_tokio(stream, opts.axum).await {
                eprintln!("connection from {peer}: {e}");
            }
        });
    }
}
