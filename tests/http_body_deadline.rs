//! The HTTP example's request-body deadline: a client that trickles a request body (one
//! byte at a time on HTTP/1, one-byte DATA frames on HTTP/2), which keeps the idle timeout
//! from ever firing, is cut once its body is late; a body that keeps up the minimum rate is
//! served however long it takes. The deadline here is 1 s (the default is 20 s); the clients
//! send a byte every 250 ms, 40 bytes in all, so an uncut body would take 10 s.
#![cfg(feature = "hyper")]

use examples_common::conn_timeouts::Timeouts;
use examples_common::http;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{AsyncReadExt, AsyncWriteExt};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Bytes, Frame};
use hyper::Request;
use spinpark::hyper::{Executor, Io};
use spinpark::net::{TcpListener, TcpStream};
use spinpark::time::{sleep, timeout};

/// The trickled body's length, and the pause between its bytes.
const BODY: usize = 40;
const PACE: Duration = Duration::from_millis(250);
/// How long a test waits for the server to cut a connection (a watchdog).
const WATCHDOG: Duration = Duration::from_secs(30);

/// Timeouts with a 1 s body deadline, and everything else long enough not to interfere.
fn short() -> Timeouts {
    Timeouts {
        body: Duration::from_secs(1),
        body_min_rate: 1024,
        ..Timeouts::DEFAULT
    }
}

/// Serves the example's routes with `t` on a fresh port.
async fn start(t: Timeouts) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    spinpark::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            spinpark::spawn(async move {
                // Cut connections end with an error: expected here.
                let _ = http::serve_spinpark(stream, false, t, Instant::now()).await;
            });
        }
    });
    addr
}

/// A request body of `chunks` chunks of `size` bytes, one every `pace`; `sent` counts them.
fn paced_body(
    chunks: usize,
    size: usize,
    pace: Duration,
    sent: Arc<AtomicUsize>,
) -> StreamBody<Paced> {
    StreamBody::new(Box::pin(futures_util::stream::unfold(0, move |i| {
        let sent = sent.clone();
        async move {
            if i == chunks {
                return None;
            }
            if i > 0 {
                sleep(pace).await;
            }
            sent.fetch_add(1, SeqCst);
            Some((Ok(Frame::data(Bytes::from(vec![b'x'; size]))), i + 1))
        }
    })))
}

/// The frames of [`paced_body`].
type Paced =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send>>;

#[spinpark::test(flavor = "multi_thread")]
async fn an_http1_body_trickled_a_byte_at_a_time_is_cut() {
    let addr = start(short()).await;
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut rd, mut wr) = stream.into_split();
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    spinpark::spawn(async move {
        let head = format!("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {BODY}\r\n\r\n");
        if wr.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for _ in 0..BODY {
            if wr.write_all(b"x").await.is_err() {
                return; // cut
            }
            counter.fetch_add(1, SeqCst);
            sleep(PACE).await;
        }
    });
    // Read until the server closes the connection (end of stream or reset).
    let closed = timeout(WATCHDOG, async {
        let mut buf = [0u8; 1024];
        while let Ok(n) = rd.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
        sent.load(SeqCst)
    })
    .await;
    match closed {
        Ok(n) => {
            println!("HTTP/1: cut after {n} of {BODY} trickled body bytes");
            assert!(
                n < BODY,
                "the server waited for the whole trickled body ({n} bytes)"
            );
        }
        Err(_) => panic!(
            "the connection was still open after {WATCHDOG:?}, {} of {BODY} body bytes sent",
            sent.load(SeqCst)
        ),
    }
}

#[spinpark::test(flavor = "multi_thread")]
async fn an_http2_body_trickled_a_frame_at_a_time_is_cut() {
    let addr = start(short()).await;
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(Executor::new(), Io::new(stream))
            .await
            .unwrap();
    spinpark::spawn(conn);
    let sent = Arc::new(AtomicUsize::new(0));
    let req = Request::post("http://localhost/echo")
        .body(paced_body(BODY, 1, PACE, sent.clone()))
        .unwrap();
    let exchange = async {
        let resp = sender.send_request(req).await?;
        resp.into_body().collect().await.map(|b| b.to_bytes())
    };
    match timeout(WATCHDOG, exchange).await {
        Ok(Err(e)) => {
            let n = sent.load(SeqCst);
            println!("HTTP/2: cut after {n} of {BODY} trickled DATA frames: {e}");
            assert!(n < BODY, "cut only after the whole body ({n} frames): {e}");
        }
        Ok(Ok(echoed)) => panic!(
            "the server took the whole trickled body ({} bytes echoed)",
            echoed.len()
        ),
        Err(_) => panic!("the stream was still open after {WATCHDOG:?}"),
    }
}

#[spinpark::test(flavor = "multi_thread")]
async fn a_body_above_the_minimum_rate_may_take_longer_than_the_deadline() {
    // 2 s to start, one more per KiB received; the client sends 16 KiB, 1 KiB every 150 ms
    // (about 2.4 s in all, at over six times the minimum rate).
    let t = Timeouts {
        body: Duration::from_secs(2),
        body_min_rate: 1024,
        ..Timeouts::DEFAULT
    };
    let addr = start(t).await;
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream))
        .await
        .unwrap();
    spinpark::spawn(conn);
    let sent = Arc::new(AtomicUsize::new(0));
    let req = Request::post("http://localhost/echo")
        .body(paced_body(16, 1024, Duration::from_millis(150), sent))
        .unwrap();
    let echoed = timeout(WATCHDOG, async {
        let resp = sender.send_request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        resp.into_body().collect().await.unwrap().to_bytes()
    })
    .await
    .expect("timed out");
    assert_eq!(echoed.len(), 16 << 10);
    assert!(echoed.iter().all(|&b| b == b'x'));
}
