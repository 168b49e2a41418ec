//! An HTTP gateway on spinpark: each request is forwarded (method GET, same path) to a
//! downstream HTTP service through one pooled hyper-util client on spinpark's own sockets
//! (`spinpark::hyper::{Connector, client_builder}`), so the downstream call's socket events are
//! picked up by spinpark's spinning workers like the request's own.
//!
//! ```text
//! cargo run --release --features hyper --example http_server -- --addr 127.0.0.1:8081 &
//! cargo run --release --features hyper-client --example http_gateway -- \
//!     --addr 127.0.0.1:8080 --downstream http://127.0.0.1:8081
//! curl -i http://127.0.0.1:8080/      # the downstream's "Hello, world!"
//! ```
//!
//! Errors as a production gateway gives them: the downstream down (connection refused) is a
//! `502 Bad Gateway` naming it; slower than `--timeout` (2 s) a `504 Gateway Timeout`; a
//! downstream that resets or sends a broken response a `502`; a downstream body over 1 MiB a
//! `502` too (the gateway never buffers more). Connects are bounded by `--connect-timeout`
//! (1 s). A request abandoned by its deadline closes its downstream connection (hyper's client
//! drops it), so nothing hangs and nothing accumulates.

use examples_common::args::{timeout as parse_timeout, RuntimeArgs};

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{service::service_fn, Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::server::conn::auto;
use spinpark::hyper::{client_builder, Connector, Executor, Io, Timer};

/// The most body bytes taken from the downstream per response.
const MAX_BODY: usize = 1 << 20;

/// An HTTP gateway: forwards each request's path to a downstream service.
#[derive(Parser)]
#[command(name = "http_gateway")]
struct Cli {
    /// Where to listen
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The downstream service's base URI (http:// only)
    #[arg(long, value_name = "URI", default_value = "http://127.0.0.1:8081")]
    downstream: Uri,
    /// Deadline of each downstream call, connect included
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_timeout)]
    timeout: Duration,
    /// Deadline of a downstream connect
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_timeout)]
    connect_timeout: Duration,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

type Downstream = Client<Connector, Empty<Bytes>>;

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let client: Downstream = client_builder()
        .pool_idle_timeout(Duration::from_secs(30))
        .build(Connector::new().connect_timeout(cli.connect_timeout));
    cli.runtime.builder().build()?.block_on(async move {
        let listener = spinpark::net::TcpListener::bind(cli.addr).await?;
        println!("gateway listening on {}", listener.local_addr()?);
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(conn) => conn,
                Err(e) => {
                    eprintln!("accept: {e}");
                    spinpark::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            stream.set_nodelay(true)?;
            let (client, base, limit) = (client.clone(), cli.downstream.clone(), cli.timeout);
            spinpark::spawn(async move {
                let svc = service_fn(move |req: Request<Incoming>| {
                    let (client, base) = (client.clone(), base.clone());
                    async move { Ok::<_, Infallible>(forward(&client, &base, req, limit).await) }
                });
                let mut builder = auto::Builder::new(Executor::new());
                builder.http1().timer(Timer::new());
                builder.http2().timer(Timer::new());
                if let Err(e) = builder.serve_connection(Io::new(stream), svc).await {
                    eprintln!("connection: {e}");
                }
            });
        }
    })
}

/// One downstream call for `req`, its failures turned into the gateway's answer.
async fn forward(
    client: &Downstream,
    base: &Uri,
    req: Request<Incoming>,
    limit: Duration,
) -> Response<Full<Bytes>> {
    let path = req.uri().path_and_query().map_or("/", |p| p.as_str());
    let uri = match format!("{}{}", base.to_string().trim_end_matches('/'), path).parse::<Uri>() {
        Ok(uri) => uri,
        Err(e) => return answer(StatusCode::BAD_REQUEST, format!("bad path: {e}")),
    };
    let call = async {
        let response = client.get(uri).await?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_BODY)
            .collect()
            .await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((status, body.to_bytes()))
    };
    match spinpark::time::timeout(limit, call).await {
        Ok(Ok((status, body))) => {
            let mut r = Response::new(Full::new(body));
            *r.status_mut() = status;
            r
        }
        Ok(Err(e)) => answer(
            StatusCode::BAD_GATEWAY,
            format!("downstream {base}: {}", chain(&*e)),
        ),
        Err(_) => answer(
            StatusCode::GATEWAY_TIMEOUT,
            format!("downstream {base}: no answer within {limit:?}"),
        ),
    }
}

fn answer(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text + "\n")));
    *r.status_mut() = status;
    r
}

/// An error and its sources, `a: b: c` (hyper-util's own message alone says little).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
