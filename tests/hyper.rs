//! hyper 1.x served on spinpark through `spinpark::hyper` (the `hyper` feature): HTTP/1
//! keep-alive, HTTP/2 multiplexing, the header-read timeout, a client vanishing mid-body, and
//! large bodies streamed both ways. Clients are hyper's own, also on spinpark.
#![cfg(feature = "hyper")]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Request, Response};
use spinpark::hyper::{Executor, Io, Timer};
use spinpark::net::{TcpListener, TcpStream};
use spinpark::time::timeout;

/// Generous bound on anything that should finish: a hang fails the test instead of stalling it.
const LIMIT: Duration = Duration::from_secs(20);

type Body = http_body_util::combinators::BoxBody<Bytes, hyper::Error>;

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).map_err(|e| match e {}).boxed()
}

/// `/echo` streams the request body back; anything else says hello and the request's number
/// on its connection.
async fn handle(req: Request<Incoming>, nth: usize) -> Result<Response<Body>, Infallible> {
    if req.uri().path() == "/echo" {
        return Ok(Response::new(req.into_body().boxed()));
    }
    Ok(Response::new(full(format!("hello {nth}"))))
}

/// Binds a listener and serves HTTP/1 on it; returns the address and the accept count.
async fn http1_server(
    configure: impl Fn(&mut http1::Builder) + Send + 'static,
) -> (
    SocketAddr,
    Arc<AtomicUsize>,
    spinpark::JoinHandle<Vec<hyper::Error>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let acc = accepted.clone();
    // Serves connections until the test is done, returning the first connection's error (if
    // it had one) once it ends, so tests can look at it.
    let server = spinpark::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        acc.fetch_add(1, SeqCst);
        let requests = AtomicUsize::new(0);
        let mut b = http1::Builder::new();
        b.timer(Timer::new());
        configure(&mut b);
        let svc = service_fn(|req| handle(req, requests.fetch_add(1, SeqCst)));
        let r = b.serve_connection(Io::new(stream), svc).await;
        r.err().into_iter().collect()
    });
    (addr, accepted, server)
}

async fn http1_client(addr: SocketAddr) -> hyper::client::conn::http1::SendRequest<Body> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream))
        .await
        .unwrap();
    spinpark::spawn(async move {
        let _ = conn.await;
    });
    sender
}

async fn body_string(resp: Response<Incoming>) -> String {
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[spinpark::test]
async fn http1_keep_alive_serves_several_requests_on_one_connection() {
    timeout(LIMIT, async {
        let (addr, accepted, _server) = http1_server(|_| {}).await;
        let mut sender = http1_client(addr).await;
        for i in 0..5 {
            sender.ready().await.unwrap();
            let req = Request::get("/").body(full("")).unwrap();
            let resp = sender.send_request(req).await.unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(body_string(resp).await, format!("hello {i}"));
        }
        assert_eq!(accepted.load(SeqCst), 1, "all requests on one connection");
    })
    .await
    .expect("keep-alive test timed out");
}

// Several workers: h2 wakes its connection task from the stream tasks' workers.
#[spinpark::test(flavor = "multi_thread")]
async fn http2_multiplexes_concurrent_requests_on_one_connection() {
    const N: usize = 8;
    timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let in_flight = Arc::new(AtomicUsize::new(0));
            // Each request waits (bounded) until all N are in flight at once, which only
            // happens if the connection multiplexes them; it answers with what it saw.
            let svc = service_fn(move |_req: Request<Incoming>| {
                let in_flight = in_flight.clone();
                async move {
                    in_flight.fetch_add(1, SeqCst);
                    for _ in 0..2000 {
                        if in_flight.load(SeqCst) >= N {
                            break;
                        }
                        spinpark::time::sleep(Duration::from_millis(5)).await;
                    }
                    let seen = in_flight.load(SeqCst);
                    Ok::<_, Infallible>(Response::new(full(seen.to_string())))
                }
            });
            http2::Builder::new(Executor::new())
                .timer(Timer::new())
                .serve_connection(Io::new(stream), svc)
                .await
                .unwrap();
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (sender, conn) =
            hyper::client::conn::http2::handshake::<_, _, Body>(Executor::new(), Io::new(stream))
                .await
                .unwrap();
        spinpark::spawn(conn);
        let calls: Vec<_> = (0..N)
            .map(|_| {
                let mut s = sender.clone();
                spinpark::spawn(async move {
                    let req = Request::get("http://localhost/").body(full("")).unwrap();
                    body_string(s.send_request(req).await.unwrap()).await
                })
            })
            .collect();
        for c in calls {
            assert_eq!(
                c.await.unwrap(),
                N.to_string(),
                "requests were not concurrent"
            );
        }
    })
    .await
    .expect("HTTP/2 test timed out");
}

#[spinpark::test]
async fn header_read_timeout_closes_a_slow_client() {
    timeout(LIMIT, async {
        let (addr, _, server) = http1_server(|b| {
            b.header_read_timeout(Duration::from_millis(100));
        })
        .await;
        let mut client = TcpStream::connect(addr).await.unwrap();
        // Half a request head, then silence.
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let mut buf = Vec::new();
        // The server gives up: it may answer 408, then closes the connection.
        client.read_to_end(&mut buf).await.unwrap();
        let text = String::from_utf8_lossy(&buf);
        assert!(
            buf.is_empty() || text.starts_with("HTTP/1.1 408"),
            "unexpected answer {text:?}"
        );
        let errors = server.await.unwrap();
        assert!(
            errors.iter().any(|e| e.is_timeout()),
            "the connection should end with a timeout error, got {errors:?}"
        );
    })
    .await
    .expect("header timeout never fired");
}

#[spinpark::test]
async fn client_disconnecting_mid_body_fails_the_body_and_the_connection() {
    timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // tokio's channels need no tokio runtime.
        let (tx, rx) = tokio::sync::oneshot::channel();
        let server = spinpark::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let tx = std::sync::Mutex::new(Some(tx));
            let svc = service_fn(|req: Request<Incoming>| {
                let tx = tx.lock().unwrap().take();
                async move {
                    let r = req.into_body().collect().await;
                    if let Some(tx) = tx {
                        let _ = tx.send(r.map(|c| c.to_bytes().len()).map_err(|e| e.to_string()));
                    }
                    Ok::<_, Infallible>(Response::new(full("")))
                }
            });
            http1::Builder::new()
                .timer(Timer::new())
                .serve_connection(Io::new(stream), svc)
                .await
        });
        let mut client = TcpStream::connect(addr).await.unwrap();
        client
            .write_all(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
            .await
            .unwrap();
        client.write_all(&[7u8; 10_000]).await.unwrap();
        drop(client);
        let body = rx.await.expect("the handler ran");
        assert!(
            body.is_err(),
            "a truncated body must be an error, got {body:?}"
        );
        // The connection ends (with an error or not: the peer is gone) rather than hanging.
        let _ = server.await.unwrap();
    })
    .await
    .expect("disconnect test timed out");
}

/// 8 MiB in 64 KiB chunks, each chunk's bytes derived from its index.
fn big_chunks() -> Vec<Bytes> {
    (0..128u32)
        .map(|i| Bytes::from(vec![(i % 251) as u8; 64 * 1024]))
        .collect()
}

#[spinpark::test]
async fn large_bodies_stream_both_ways_over_http1() {
    timeout(LIMIT, async {
        let (addr, _, _server) = http1_server(|_| {}).await;
        let mut sender = http1_client(addr).await;
        let chunks = big_chunks();
        let expected: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        let stream = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, hyper::Error>(Frame::data(c))),
        );
        let req = Request::post("/echo")
            .body(BodyExt::boxed(StreamBody::new(stream)))
            .unwrap();
        let resp = sender.send_request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        let got = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(got.len(), expected.len());
        assert!(got == expected, "echoed body differs");
    })
    .await
    .expect("large body test timed out");
}

// Several workers: h2 wakes its connection task from the stream tasks' workers.
#[spinpark::test(flavor = "multi_thread")]
async fn large_bodies_stream_both_ways_over_http2() {
    timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let svc = service_fn(|req| handle(req, 0));
            let _ = http2::Builder::new(Executor::new())
                .timer(Timer::new())
                .serve_connection(Io::new(stream), svc)
                .await;
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake::<_, _, Body>(Executor::new(), Io::new(stream))
                .await
                .unwrap();
        spinpark::spawn(conn);
        let chunks = big_chunks();
        let expected: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        let stream = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, hyper::Error>(Frame::data(c))),
        );
        let req = Request::post("http://localhost/echo")
            .body(BodyExt::boxed(StreamBody::new(stream)))
            .unwrap();
        let resp = sender.send_request(req).await.unwrap();
        let got = resp.into_body().collect().await.unwrap().to_bytes();
        assert!(got == expected, "echoed body differs ({} bytes)", got.len());
    })
    .await
    .expect("large HTTP/2 body test timed out");
}
