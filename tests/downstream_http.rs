//! hyper-util's pooled client on spinpark's own sockets (`spinpark::hyper::{Connector,
//! client_builder}`), against hyper servers run in the test on spinpark: calls succeed with no
//! tokio runtime anywhere (checked inside the client task and inside the server's handler),
//! many concurrent calls share one pooled client (a few connections over HTTP/2, reused idle
//! connections over HTTP/1), and a downstream that is down, slow, resetting or never completes
//! the connect gives the caller a clear error, with nothing hanging (every wait is bounded)
//! and the abandoned connection closed.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{service::service_fn, Request, Response, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::server::conn::auto;
use spinpark::hyper::{client_builder, Connector, Executor, Io, Timer};
use spinpark::net::TcpListener;
use spinpark::time::timeout;

const LIMIT: Duration = Duration::from_secs(30);

/// What the test server saw.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    /// A handler found a tokio runtime current.
    tokio_found: AtomicBool,
}

/// A hyper server (HTTP/1.1 and HTTP/2) on `listener`: answers each request with its path.
async fn serve(listener: TcpListener, seen: Arc<Seen>) {
    while let Ok((stream, _)) = listener.accept().await {
        seen.connections.fetch_add(1, Ordering::Relaxed);
        let seen = seen.clone();
        spinpark::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let seen = seen.clone();
                async move {
                    if tokio::runtime::Handle::try_current().is_ok() {
                        seen.tokio_found.store(true, Ordering::Relaxed);
                    }
                    let path = req.uri().path().to_string();
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(path))))
                }
            });
            let mut builder = auto::Builder::new(Executor::new());
            builder.http1().timer(Timer::new());
            builder.http2().timer(Timer::new());
            let _ = builder.serve_connection(Io::new(stream), svc).await;
        });
    }
}

async fn server() -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    spinpark::spawn(serve(listener, seen.clone()));
    (addr, seen)
}

fn uri(addr: SocketAddr, path: &str) -> Uri {
    format!("http://{addr}{path}").parse().unwrap()
}

type HttpClient = Client<Connector, Empty<Bytes>>;

async fn get(client: &HttpClient, uri: Uri) -> Result<String, Box<dyn StdError + Send + Sync>> {
    let response = client.get(uri).await?;
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await?.to_bytes();
    Ok(String::from_utf8(body.to_vec())?)
}

/// Runs `test` on a fresh two-worker spinpark runtime (no tokio_compat), bounded by LIMIT.
fn run<F: std::future::Future<Output = ()> + Send + 'static>(test: F) {
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async move {
        let task = spinpark::spawn(test);
        timeout(LIMIT, task)
            .await
            .expect("the test did not finish within 30 s")
            .expect("the test task panicked");
    });
}

/// The io::Error somewhere in `err`'s source chain.
fn io_error<'a>(err: &'a (dyn StdError + 'static)) -> Option<&'a io::Error> {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return Some(io);
        }
        cur = e.source();
    }
    None
}

#[test]
fn http1_and_http2_calls_without_a_tokio_runtime() {
    run(async {
        assert!(
            tokio::runtime::Handle::try_current().is_err(),
            "a tokio runtime is current in a spinpark task"
        );
        let (addr, seen) = server().await;
        let http1: HttpClient = client_builder().build(Connector::new());
        assert_eq!(get(&http1, uri(addr, "/one")).await.unwrap(), "/one");
        assert_eq!(get(&http1, uri(addr, "/two")).await.unwrap(), "/two");
        // HTTP/2 runs the connection on the executor and installs the timer.
        let http2: HttpClient = client_builder()
            .http2_only(true)
            .http2_keep_alive_interval(Duration::from_secs(5))
            .build(Connector::new());
        assert_eq!(get(&http2, uri(addr, "/h2")).await.unwrap(), "/h2");
        assert!(
            !seen.tokio_found.load(Ordering::Relaxed),
            "a tokio runtime was current in the server's handler"
        );
        assert!(tokio::runtime::Handle::try_current().is_err());
    });
}

#[test]
fn many_concurrent_calls_share_one_pooled_client() {
    run(async {
        let (addr, seen) = server().await;
        // HTTP/2: 200 calls at once multiplex over the pool's connections (hyper-util may open
        // a second one while the first one's handshake races the calls: a few, not 200).
        let http2: HttpClient = client_builder().http2_only(true).build(Connector::new());
        let mut calls = spinpark::JoinSet::new();
        for i in 0..200 {
            let client = http2.clone();
            calls.spawn(async move { (i, get(&client, uri(addr, &format!("/{i}"))).await) });
        }
        while let Some(done) = calls.join_next().await {
            let (i, body) = done.unwrap();
            assert_eq!(body.unwrap(), format!("/{i}"));
        }
        let h2_conns = seen.connections.load(Ordering::Relaxed);
        assert!((1..10).contains(&h2_conns), "{h2_conns} HTTP/2 connections");
        seen.connections.store(0, Ordering::Relaxed);

        // HTTP/1.1: 100 calls at once, then one after another on idle pooled connections.
        let http1: HttpClient = client_builder().build(Connector::new());
        let mut calls = spinpark::JoinSet::new();
        for i in 0..100 {
            let client = http1.clone();
            calls.spawn(async move { (i, get(&client, uri(addr, &format!("/{i}"))).await) });
        }
        while let Some(done) = calls.join_next().await {
            let (i, body) = done.unwrap();
            assert_eq!(body.unwrap(), format!("/{i}"));
        }
        let after_burst = seen.connections.load(Ordering::Relaxed);
        assert!(
            (1..=100).contains(&after_burst),
            "{after_burst} connections"
        );
        for i in 0..20 {
            assert_eq!(
                get(&http1, uri(addr, "/again")).await.unwrap(),
                "/again",
                "call {i}"
            );
        }
        let opened = seen.connections.load(Ordering::Relaxed) - after_burst;
        assert!(
            opened < 10,
            "20 sequential calls opened {opened} connections: the pool is not reused"
        );
    });
}

#[test]
fn a_downstream_that_is_down_is_a_connect_error() {
    run(async {
        // A port that was just listening: nothing accepts there now.
        let addr = {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            l.local_addr().unwrap()
        };
        let client: HttpClient = client_builder().build(Connector::new());
        let err = get(&client, uri(addr, "/")).await.unwrap_err();
        let legacy = err
            .downcast_ref::<hyper_util::client::legacy::Error>()
            .expect("a hyper-util client error");
        assert!(legacy.is_connect(), "{legacy:?}");
        let io = io_error(&*err).expect("an io::Error in the chain");
        assert_eq!(io.kind(), io::ErrorKind::ConnectionRefused, "{io}");
        assert!(io.to_string().contains(&addr.to_string()), "{io}");

        // The connector alone says the same, and refuses what it cannot do.
        let e = Connector::new().connect(uri(addr, "/")).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        let https: Uri = format!("https://{addr}/").parse().unwrap();
        let e = Connector::new().connect(https).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    });
}

#[test]
fn a_slow_downstream_times_out_and_its_connection_is_closed() {
    run(async {
        // Reads the request and never answers; the task ends when the client closes.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spinpark::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        });
        let client: HttpClient = client_builder().build(Connector::new());
        let answer = timeout(Duration::from_millis(300), get(&client, uri(addr, "/"))).await;
        assert!(answer.is_err(), "a server that never answers answered");
        // The abandoned request's connection is closed, not left open.
        drop(client);
        timeout(Duration::from_secs(20), server)
            .await
            .expect("the abandoned connection stayed open")
            .unwrap();
    });
}

#[test]
fn a_reset_mid_response_is_an_error() {
    run(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                // The request's head, then half a response, then a reset (RST, not FIN).
                let _ = stream.read(&mut buf).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part")
                    .await;
                let _ = stream.flush().await;
                spinpark::time::sleep(Duration::from_millis(20)).await;
                stream.set_zero_linger().unwrap();
                drop(stream);
            }
        });
        let client: HttpClient = client_builder().build(Connector::new());
        let err = get(&client, uri(addr, "/"))
            .await
            .expect_err("a response cut by a reset was taken as complete");
        println!("reset mid-response: {err}");
        // A second call fails the same way: the broken connection was not pooled.
        assert!(get(&client, uri(addr, "/")).await.is_err());
    });
}

#[test]
fn a_connect_nobody_completes_times_out() {
    run(async {
        // A listener that never accepts, its queue filled: the kernel drops further SYNs, so
        // the next connect neither completes nor fails until the connector's deadline.
        let socket = spinpark::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(1).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut held = Vec::new();
        let mut full = false;
        for _ in 0..16 {
            let attempt = timeout(
                Duration::from_millis(200),
                spinpark::net::TcpStream::connect(addr),
            )
            .await;
            match attempt {
                Ok(Ok(stream)) => held.push(stream),
                Ok(Err(e)) => panic!("connect: {e}"),
                Err(_) => {
                    full = true;
                    break;
                }
            }
        }
        if !full {
            println!("skipped: this kernel completed 16 connects to a listener with backlog 1");
            return;
        }
        let connector = Connector::new().connect_timeout(Duration::from_millis(200));
        let e = connector.connect(uri(addr, "/")).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains(&addr.to_string()), "{e}");

        // Through the pooled client: a connect error, not a hang.
        let client: HttpClient = client_builder().build(connector);
        let err = get(&client, uri(addr, "/")).await.unwrap_err();
        let io = io_error(&*err).expect("an io::Error in the chain");
        assert_eq!(io.kind(), io::ErrorKind::TimedOut, "{io}");
        drop((listener, held));
    });
}
