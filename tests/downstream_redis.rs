//! redis-rs's multiplexed connection on a spinpark socket (the `tokio-io` feature gives
//! `spinpark::net::TcpStream` tokio's `AsyncRead`/`AsyncWrite`), its driver spawned with
//! `spinpark::spawn`, with no tokio runtime anywhere: against the kv example server (run here on
//! spinpark) and against a real `redis-server` (skipped, with a line saying so, when it is not
//! on the PATH).
//!
//! What redis-rs needs from tokio besides the traits: `tokio::time::timeout` for its response
//! timeout (on by default, 500 ms), so the connection is made with the response timeout off and
//! each call is bounded with `spinpark::time::timeout` instead; the last test shows that the
//! default configuration panics without a tokio runtime. The connection's setup (`CLIENT
//! SETINFO`) and its driver (a `Framed` codec and tokio's runtime-free channels) need nothing
//! else.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use examples_common::kv;
use futures_util::AsyncReadExt;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisConnectionInfo, RedisResult};
use spinpark::time::timeout;

const LIMIT: Duration = Duration::from_secs(30);

/// A multiplexed connection over a spinpark socket; its driver runs as a spinpark task and
/// ends once every clone of the connection is dropped or the server goes away.
async fn connect(addr: SocketAddr) -> RedisResult<MultiplexedConnection> {
    let stream = spinpark::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    // redis-rs's timeouts run on tokio's timer: off here; callers bound calls themselves.
    let config = AsyncConnectionConfig::new()
        .set_response_timeout(None)
        .set_connection_timeout(None);
    let (con, driver) =
        MultiplexedConnection::new_with_config(&RedisConnectionInfo::default(), stream, config)
            .await?;
    spinpark::spawn(driver);
    Ok(con)
}

fn run<F: std::future::Future<Output = ()> + Send + 'static>(test: F) {
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async move {
        timeout(LIMIT, spinpark::spawn(test))
            .await
            .expect("the test did not finish within 30 s")
            .expect("the test task panicked");
    });
}

/// The kv example server on its own runtime (dropping it takes the server away).
fn kv_server() -> (spinpark::Runtime, SocketAddr) {
    let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    let addr = rt.block_on(async {
        let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(kv::serve(listener, kv::Store::new()));
        addr
    });
    (rt, addr)
}

/// `redis-server` on a free port of 127.0.0.1, without persistence; killed on drop.
struct Redis {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_redis() -> Option<Redis> {
    for _ in 0..5 {
        let port = StdListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = match Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => child,
            Err(e) if e.kind() == ErrorKind::NotFound => return None,
            Err(e) => panic!("starting redis-server: {e}"),
        };
        let mut redis = Redis {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if redis.child.try_wait().unwrap().is_some() {
                break; // It exited: most likely the port was taken.
            }
            if StdStream::connect(redis.addr).is_ok() {
                return Some(redis);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    panic!("redis-server did not start");
}

/// Commands, a pipeline, an error reply and 200 concurrent calls on clones of one connection.
async fn session(addr: SocketAddr) {
    assert!(tokio::runtime::Handle::try_current().is_err());
    let mut con = connect(addr).await.expect("connect");
    let call = Duration::from_secs(10);
    redis::cmd("SET")
        .arg("greeting")
        .arg("hello")
        .query_async::<()>(&mut con)
        .await
        .expect("SET");
    let got: String = timeout(
        call,
        redis::cmd("GET").arg("greeting").query_async(&mut con),
    )
    .await
    .expect("GET timed out")
    .expect("GET");
    assert_eq!(got, "hello");
    let (v, n): (String, i64) = redis::pipe()
        .cmd("SET")
        .arg("k1")
        .arg("v1")
        .ignore()
        .cmd("GET")
        .arg("k1")
        .cmd("INCR")
        .arg("n")
        .query_async(&mut con)
        .await
        .expect("pipeline");
    assert_eq!((v.as_str(), n), ("v1", 1));
    let err = redis::cmd("INCR")
        .arg("greeting")
        .query_async::<i64>(&mut con)
        .await
        .expect_err("INCR of a non-number");
    assert!(!err.is_connection_dropped(), "{err}");

    let mut calls = spinpark::JoinSet::new();
    for _ in 0..200 {
        let mut c = con.clone();
        calls.spawn(async move {
            timeout(
                call,
                redis::cmd("INCR").arg("counter").query_async::<i64>(&mut c),
            )
            .await
        });
    }
    let mut seen = Vec::new();
    while let Some(done) = calls.join_next().await {
        seen.push(done.unwrap().expect("INCR timed out").expect("INCR"));
    }
    seen.sort_unstable();
    assert_eq!(seen, (1..=200).collect::<Vec<i64>>());
    assert!(tokio::runtime::Handle::try_current().is_err());
}

/// A command after the server went away fails as a dropped connection, not by a timeout.
async fn after_server_gone(mut con: MultiplexedConnection) {
    let reply = timeout(
        LIMIT,
        redis::cmd("GET")
            .arg("greeting")
            .query_async::<Option<String>>(&mut con),
    )
    .await
    .expect("a command on a dropped connection hung");
    let err = reply.expect_err("a command succeeded after the server went away");
    assert!(
        err.is_connection_dropped() || err.is_io_error() || err.is_unrecoverable_error(),
        "not reported as a connection error: {err}"
    );
}

#[test]
fn kv_server_through_a_multiplexed_connection_on_spinpark() {
    let (server, addr) = kv_server();
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async { timeout(LIMIT, spinpark::spawn(session(addr))).await })
        .expect("the session did not finish within 30 s")
        .expect("the session panicked");
    let con = rt
        .block_on(async { timeout(LIMIT, connect(addr)).await })
        .expect("connect timed out")
        .expect("connect");
    drop(server);
    rt.block_on(async { spinpark::spawn(after_server_gone(con)).await })
        .expect("the task panicked");
}

#[test]
fn redis_server_through_a_multiplexed_connection_on_spinpark() {
    let Some(redis) = start_redis() else {
        println!("skipped: redis-server not installed (apt-get install redis-server)");
        return;
    };
    let addr = redis.addr;
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async { timeout(LIMIT, spinpark::spawn(session(addr))).await })
        .expect("the session did not finish within 30 s")
        .expect("the session panicked");
    let con = rt
        .block_on(async { timeout(LIMIT, connect(addr)).await })
        .expect("connect timed out")
        .expect("connect");
    drop(redis); // killed
    rt.block_on(async { spinpark::spawn(after_server_gone(con)).await })
        .expect("the task panicked");
}

#[test]
fn a_silent_redis_is_cut_by_the_callers_deadline() {
    run(async {
        let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spinpark::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            while let Ok(n) = stream.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        });
        // The connection's setup waits for its CLIENT SETINFO replies: the deadline ends it.
        assert!(
            timeout(Duration::from_millis(300), connect(addr))
                .await
                .is_err(),
            "a server that never answers answered"
        );
        // The abandoned socket was closed.
        timeout(Duration::from_secs(20), server)
            .await
            .expect("the abandoned connection stayed open")
            .unwrap();
    });
}

#[test]
fn redis_rs_default_response_timeout_needs_a_tokio_runtime() {
    // Why `connect` above turns redis-rs's response timeout off: with it on (the default),
    // each call runs under `tokio::time::timeout`, which panics outside a tokio runtime.
    let (_server, addr) = kv_server();
    let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    let outcome = rt.block_on(async move {
        spinpark::spawn(async move {
            let stream = spinpark::net::TcpStream::connect(addr).await.unwrap();
            // redis-rs's defaults: a 500 ms response timeout.
            let (mut con, driver) = MultiplexedConnection::new_with_config(
                &RedisConnectionInfo::default(),
                stream,
                AsyncConnectionConfig::new(),
            )
            .await
            .expect("the setup itself needs no timer");
            spinpark::spawn(driver);
            let _ = redis::cmd("PING").query_async::<String>(&mut con).await;
        })
        .await
    });
    let err = outcome.expect_err("redis-rs's default timeout ran without tokio");
    assert!(err.is_panic());
    let msg = format!("{err}");
    assert!(msg.contains("Tokio") || msg.contains("reactor"), "{msg}");
}
