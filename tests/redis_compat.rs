//! A real tokio-bound client library inside spinpark tasks: the `redis` crate (its `tokio-comp`
//! multiplexed connection, whose driver task it starts with `tokio::spawn` and whose socket
//! is a `tokio::net::TcpStream`) talking to the kv example server (`examples/kv_server.rs`,
//! run in-process on a spinpark runtime of its own).
//!
//! SET, GET, a pipeline, an error reply, then the server goes away under an open connection:
//! the next command must fail with a connection error, not hang. Every wait is bounded by
//! tokio's timeout (and the client's own response timeout).

use std::net::SocketAddr;
use std::time::Duration;

use examples_common::kv;
use redis::AsyncConnectionConfig;

const LIMIT: Duration = Duration::from_secs(30);

/// The kv server on 127.0.0.1 and a port of the OS's choosing, on its own runtime, so that
/// dropping the runtime takes the server and its connections away.
fn kv_server() -> (spinpark::Runtime, SocketAddr) {
    let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    let addr = rt.block_on(async {
        let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the kv server");
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(kv::serve(listener, kv::Store::new()));
        addr
    });
    (rt, addr)
}

fn config() -> AsyncConnectionConfig {
    // redis-rs's default response timeout is 500 ms, short for a loaded CI machine.
    AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(10)))
        .set_response_timeout(Some(Duration::from_secs(10)))
}

#[test]
fn redis_client_in_spinpark_tasks() {
    let (server, addr) = kv_server();
    let client_rt = spinpark::Builder::new()
        .worker_threads(2)
        .tokio_compat()
        .build()
        .unwrap();
    let client = redis::Client::open(format!("redis://{addr}/")).expect("redis URL");

    let opened = client.clone();
    let mut con = client_rt
        .block_on(client_rt.spawn(async move {
            tokio::time::timeout(LIMIT, async move {
                let mut con = opened
                    .get_multiplexed_async_connection_with_config(&config())
                    .await
                    .expect("connect to the kv server");

                redis::cmd("SET")
                    .arg("greeting")
                    .arg("hello")
                    .query_async::<()>(&mut con)
                    .await
                    .expect("SET");
                let got: String = redis::cmd("GET")
                    .arg("greeting")
                    .query_async(&mut con)
                    .await
                    .expect("GET");
                assert_eq!(got, "hello");
                let missing: Option<String> = redis::cmd("GET")
                    .arg("no-such-key")
                    .query_async(&mut con)
                    .await
                    .expect("GET of a missing key");
                assert_eq!(missing, None);

                // A pipeline: one write, four replies (one ignored).
                let (got, counter, again): (String, i64, i64) = redis::pipe()
                    .cmd("SET")
                    .arg("k1")
                    .arg("v1")
                    .ignore()
                    .cmd("GET")
                    .arg("k1")
                    .cmd("INCR")
                    .arg("counter")
                    .cmd("INCR")
                    .arg("counter")
                    .query_async(&mut con)
                    .await
                    .expect("pipeline");
                assert_eq!((got.as_str(), counter, again), ("v1", 1, 2));

                // The server's error replies come back as errors; the connection stays usable.
                let err = redis::cmd("INCR")
                    .arg("greeting")
                    .query_async::<i64>(&mut con)
                    .await
                    .expect_err("INCR of a non-number");
                assert!(!err.is_connection_dropped(), "{err}");
                let still: String = redis::cmd("GET")
                    .arg("k1")
                    .query_async(&mut con)
                    .await
                    .expect("GET after an error reply");
                assert_eq!(still, "v1");
                con
            })
            .await
            .expect("the redis session did not finish within 30 s")
        }))
        .expect("the client task failed");

    // The server goes away under the open connection.
    drop(server);

    let err = client_rt
        .block_on(client_rt.spawn(async move {
            let reply = tokio::time::timeout(
                LIMIT,
                redis::cmd("GET")
                    .arg("greeting")
                    .query_async::<Option<String>>(&mut con),
            )
            .await
            .expect("a command on a dropped connection hung instead of failing");
            reply.expect_err("a command succeeded after the server went away")
        }))
        .expect("the client task failed");
    println!("after the server went away: {err} (kind {:?})", err.kind());
    assert!(
        err.is_connection_dropped() || err.is_io_error() || err.is_unrecoverable_error(),
        "not reported as a connection error: {err}"
    );
    assert!(
        !err.is_timeout(),
        "the drop was noticed only by a timeout: {err}"
    );
}
