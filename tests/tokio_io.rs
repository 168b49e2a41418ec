//! tokio-io code on spinpark's sockets (the `tokio-io` feature): `tokio_util::codec::Framed`
//! straight over a `TcpStream` and over owned halves, with no `.compat()`.
#![cfg(feature = "tokio-io")]

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use spinpark::net::{TcpListener, TcpStream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::codec::{FramedRead, FramedWrite, LinesCodec, LinesCodecError};

const LIMIT: Duration = Duration::from_secs(20);

#[spinpark::test]
async fn framed_lines_round_trip_over_a_tcp_stream() {
    spinpark::time::timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // A line-echo server: upper-cases each line.
        let server = spinpark::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut framed = tokio_util::codec::Framed::new(stream, LinesCodec::new());
            let mut n = 0;
            while let Some(line) = framed.next().await {
                framed.send(line.unwrap().to_uppercase()).await.unwrap();
                n += 1;
            }
            n
        });
        let client = TcpStream::connect(addr).await.unwrap();
        let mut framed = tokio_util::codec::Framed::new(client, LinesCodec::new());
        for word in ["alpha", "beta", "gamma"] {
            framed.send(word).await.unwrap();
            assert_eq!(framed.next().await.unwrap().unwrap(), word.to_uppercase());
        }
        // Closing shuts down the write side: the server sees the end of the stream.
        SinkExt::<&str>::close(&mut framed).await.unwrap();
        assert_eq!(server.await.unwrap(), 3);
    })
    .await
    .expect("timed out");
}

#[spinpark::test]
async fn framed_over_owned_halves_and_a_line_limit() {
    spinpark::time::timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spinpark::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let (r, w) = stream.into_split();
            let mut lines = FramedRead::new(r, LinesCodec::new_with_max_length(16));
            let mut out = FramedWrite::new(w, LinesCodec::new());
            let first = lines.next().await.unwrap().unwrap();
            out.send(format!("got {first}")).await.unwrap();
            // The next line is longer than the limit: a clear error, not a growing buffer.
            matches!(
                lines.next().await,
                Some(Err(LinesCodecError::MaxLineLengthExceeded))
            )
        });
        let mut client = TcpStream::connect(addr).await.unwrap();
        client.write_all(b"short\n").await.unwrap();
        let mut buf = [0u8; 10];
        client.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"got short\n");
        client.write_all(&[b'x'; 100]).await.unwrap();
        client.write_all(b"\n").await.unwrap();
        assert!(server.await.unwrap(), "an over-long line must be refused");
    })
    .await
    .expect("timed out");
}

/// With `tokio-io`, hyper-util's `TokioIo` (a pure trait adapter) takes a spinpark socket: it
/// is `tokio::net` sockets, tokio's timers and `tokio::spawn` that need tokio's runtime.
#[spinpark::test]
async fn hyper_util_tokio_io_over_a_spinpark_socket() {
    use http_body_util::{BodyExt, Full};
    use hyper::body::{Bytes, Incoming};
    use hyper_util::rt::TokioIo;
    spinpark::time::timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let svc = hyper::service::service_fn(|req: hyper::Request<Incoming>| async move {
                let path = req.uri().path().to_string();
                Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from(
                    path,
                ))))
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        spinpark::spawn(conn);
        let req = hyper::Request::get("/via-tokio-io")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let body = sender.send_request(req).await.unwrap().into_body();
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"/via-tokio-io");
    })
    .await
    .expect("timed out");
}

/// tokio code half-closes with `AsyncWriteExt::shutdown` written as a method call:
/// `stream.shutdown().await`. spinpark's own half-close (`shutdown_with`) must not shadow it
/// on any stream type or write half; each call here ends the peer's read with end of stream.
#[spinpark::test]
async fn tokio_shutdown_method_call_compiles_and_half_closes() {
    use spinpark::net::UnixStream;
    spinpark::time::timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        async fn eof_after(peer: &mut (impl tokio::io::AsyncRead + Unpin), want: &[u8]) {
            let mut got = Vec::new();
            peer.read_to_end(&mut got).await.unwrap();
            assert_eq!(got, want);
        }
        // A TcpStream.
        let mut client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        client.write_all(b"a").await.unwrap();
        client.shutdown().await.unwrap();
        eof_after(&mut server, b"a").await;
        // Its owned write half, and a borrowed one.
        let client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let (_r, mut w) = client.into_split();
        w.write_all(b"b").await.unwrap();
        w.shutdown().await.unwrap();
        eof_after(&mut server, b"b").await;
        let mut client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let (_r, mut w) = client.split();
        w.write_all(b"c").await.unwrap();
        w.shutdown().await.unwrap();
        eof_after(&mut server, b"c").await;
        // A UnixStream.
        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.write_all(b"d").await.unwrap();
        a.shutdown().await.unwrap();
        eof_after(&mut b, b"d").await;
    })
    .await
    .expect("timed out");
}
