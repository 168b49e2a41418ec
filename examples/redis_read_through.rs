//! A read-through cache in front of a slow source, on spinpark: `GET /item/<id>` looks the
//! item up in Redis, and on a miss computes it (the "database": a 5 ms sleep standing in for
//! a query), stores it with a 60 s expiry and answers. The Redis connection is redis-rs's
//! multiplexed connection over a spinpark socket (the `tokio-io` feature gives
//! `spinpark::net::TcpStream` tokio's I/O traits), its driver a spinpark task: no tokio runtime,
//! and the cache's socket events are picked up by spinpark's spinning workers.
//!
//! ```text
//! redis-server --port 6379 --save '' &       # or: cargo run --example kv_server
//! cargo run --release --features hyper,tokio-io --example redis_read_through -- \
//!     --addr 127.0.0.1:8080 --redis 127.0.0.1:6379
//! curl -i http://127.0.0.1:8080/item/42      # x-cache: miss, then hit
//! ```
//!
//! Errors: every Redis call has `--redis-timeout` (100 ms), connects included. When Redis is
//! down, slow or resets, the handler answers from the source (`x-cache: bypass`), logs why (at
//! most once a second), and the next request reconnects: the cache failing never fails the
//! request. redis-rs's own response timeout is off, because it runs on tokio's timer and
//! panics without a tokio runtime; spinpark's `timeout` bounds each call instead.

use examples_common::args::{timeout as parse_timeout, RuntimeArgs};

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{service::service_fn, Request, Response, StatusCode};
use hyper_util::server::conn::auto;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisConnectionInfo, RedisError};
use spinpark::hyper::{Executor, Io, Timer};
use spinpark::time::timeout;

/// An HTTP service reading items through a Redis cache.
#[derive(Parser)]
#[command(name = "redis_read_through")]
struct Cli {
    /// Where to listen
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The Redis server
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:6379")]
    redis: SocketAddr,
    /// Deadline of each Redis call (connects included)
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_timeout)]
    redis_timeout: Duration,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

/// How long cached items live, in seconds.
const TTL_SECS: u64 = 60;

/// The Redis side: one multiplexed connection, shared, replaced after it fails.
struct Cache {
    addr: SocketAddr,
    limit: Duration,
    con: Mutex<Option<MultiplexedConnection>>,
    last_log: Mutex<Option<Instant>>,
}

impl Cache {
    /// The shared connection, opened first if there is none.
    async fn connection(&self) -> Result<MultiplexedConnection, RedisError> {
        if let Some(con) = self.con.lock().unwrap().clone() {
            return Ok(con);
        }
        let stream = spinpark::net::TcpStream::connect(self.addr).await?;
        stream.set_nodelay(true)?;
        let config = AsyncConnectionConfig::new()
            .set_response_timeout(None)
            .set_connection_timeout(None);
        let (con, driver) =
            MultiplexedConnection::new_with_config(&RedisConnectionInfo::default(), stream, config)
                .await?;
        // The driver ends when the last clone of `con` is dropped or the socket fails.
        spinpark::spawn(driver);
        *self.con.lock().unwrap() = Some(con.clone());
        Ok(con)
    }

    /// Runs `call` on the connection within the deadline; on any failure the connection is
    /// dropped (the next call reconnects) and the reason returned.
    async fn call<T, F, Fut>(&self, call: F) -> Result<T, String>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: std::future::Future<Output = Result<T, RedisError>>,
    {
        let attempt = async { call(self.connection().await?).await };
        let failure = match timeout(self.limit, attempt).await {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) => format!("redis {}: {e}", self.addr),
            Err(_) => format!("redis {}: no answer within {:?}", self.addr, self.limit),
        };
        self.con.lock().unwrap().take();
        Err(failure)
    }

    fn log(&self, why: &str) {
        let mut last = self.last_log.lock().unwrap();
        if last.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            eprintln!("cache bypassed: {why}");
            *last = Some(Instant::now());
        }
    }
}

/// The slow source of truth the cache is in front of.
async fn load_from_source(id: u64) -> String {
    spinpark::time::sleep(Duration::from_millis(5)).await;
    format!("item {id}: {}", id.wrapping_mul(2654435761) % 1000)
}

async fn handle(cache: &Cache, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let Some(id) = req
        .uri()
        .path()
        .strip_prefix("/item/")
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return reply(
            StatusCode::NOT_FOUND,
            "try GET /item/<number>\n".into(),
            "none",
        );
    };
    let key = format!("item:{id}");
    let cached = cache
        .call(|mut con| {
            let key = key.clone();
            async move {
                redis::cmd("GET")
                    .arg(&key)
                    .query_async::<Option<String>>(&mut con)
                    .await
            }
        })
        .await;
    match cached {
        Ok(Some(value)) => reply(StatusCode::OK, value, "hit"),
        Ok(None) => {
            let value = load_from_source(id).await;
            let stored = cache
                .call(|mut con| {
                    let (key, value) = (key.clone(), value.clone());
                    async move {
                        redis::cmd("SET")
                            .arg(&key)
                            .arg(&value)
                            .arg("EX")
                            .arg(TTL_SECS)
                            .query_async::<()>(&mut con)
                            .await
                    }
                })
                .await;
            if let Err(why) = stored {
                cache.log(&why);
            }
            reply(StatusCode::OK, value, "miss")
        }
        Err(why) => {
            cache.log(&why);
            reply(StatusCode::OK, load_from_source(id).await, "bypass")
        }
    }
}

fn reply(status: StatusCode, body: String, cache: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("x-cache", hyper::header::HeaderValue::from_static(cache));
    r
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let cache = Arc::new(Cache {
        addr: cli.redis,
        limit: cli.redis_timeout,
        con: Mutex::new(None),
        last_log: Mutex::new(None),
    });
    cli.runtime.builder().build()?.block_on(async move {
        match cache.call(|_| async { Ok(()) }).await {
            Ok(()) => println!("cache: redis at {}", cli.redis),
            Err(why) => eprintln!(
                "{why}; serving without the cache until it answers (start one with \
                 `redis-server --port {}`, or the kv example)",
                cli.redis.port()
            ),
        }
        let listener = spinpark::net::TcpListener::bind(cli.addr).await?;
        println!("listening on {}", listener.local_addr()?);
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
            let cache = cache.clone();
            spinpark::spawn(async move {
                let svc = service_fn(move |req| {
                    let cache = cache.clone();
                    async move { Ok::<_, Infallible>(handle(&cache, req).await) }
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
