//! The service of `examples/http_server.rs` on spinpark: plain HTTP/1.1 and HTTP/2, the axum
//! router through the same adapter, and HTTPS (rustls through futures-rustls) with a
//! certificate made in the test. The clients are hyper's, on the same spinpark runtime.
#![cfg(feature = "hyper")]

use examples_common::conn_timeouts::Timeouts;
use examples_common::{http, tls};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_rustls::rustls::pki_types::{CertificateDer, ServerName};
use futures_rustls::{TlsAcceptor, TlsConnector};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::Request;
use spinpark::hyper::{Executor, Io, Stream, ZeroFill};
use spinpark::net::{TcpListener, TcpStream};

const LIMIT: Duration = Duration::from_secs(20);

/// Serves the example's service on a fresh port, optionally behind TLS.
async fn start(
    use_axum: bool,
    tls: Option<Arc<futures_rustls::rustls::ServerConfig>>,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = tls.map(TlsAcceptor::from);
    spinpark::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let acceptor = acceptor.clone();
            spinpark::spawn(async move {
                let (t, accepted) = (Timeouts::DEFAULT, Instant::now());
                let r = match acceptor {
                    None => http::serve_spinpark(stream, use_axum, t, accepted).await,
                    Some(a) => {
                        let tls = a.accept(stream).await.expect("TLS handshake");
                        http::serve_spinpark(ZeroFill::new(tls), use_axum, t, accepted).await
                    }
                };
                // A detached task: the clients' assertions are what fail a test.
                if let Err(e) = r {
                    eprintln!("server connection: {e}");
                }
            });
        }
    });
    addr
}

/// GET / and POST /echo over one connection, HTTP/2 if `h2` else HTTP/1.1; returns the bodies.
async fn exchange<S: Stream + Send + 'static>(io: S, h2: bool, payload: Bytes) -> (String, Bytes) {
    let get = || {
        Request::get("http://localhost/")
            .body(Full::new(Bytes::new()))
            .unwrap()
    };
    let post = Request::post("http://localhost/echo")
        .body(Full::new(payload))
        .unwrap();
    let (r1, r2) = if h2 {
        let (mut s, conn) = hyper::client::conn::http2::handshake(Executor::new(), Io::new(io))
            .await
            .unwrap();
        spinpark::spawn(conn);
        let r1 = s.send_request(get()).await.unwrap();
        (r1, s.send_request(post).await.unwrap())
    } else {
        let (mut s, conn) = hyper::client::conn::http1::handshake(Io::new(io))
            .await
            .unwrap();
        spinpark::spawn(conn);
        let r1 = s.send_request(get()).await.unwrap();
        let r1b = r1.into_body().collect().await.unwrap().to_bytes();
        s.ready().await.unwrap();
        let r2 = s.send_request(post).await.unwrap();
        assert_eq!(r2.status(), 200);
        let r2b = r2.into_body().collect().await.unwrap().to_bytes();
        return (String::from_utf8(r1b.to_vec()).unwrap(), r2b);
    };
    assert_eq!((r1.status().as_u16(), r2.status().as_u16()), (200, 200));
    let r1b = r1.into_body().collect().await.unwrap().to_bytes();
    let r2b = r2.into_body().collect().await.unwrap().to_bytes();
    (String::from_utf8(r1b.to_vec()).unwrap(), r2b)
}

fn payload() -> Bytes {
    (0..300_000u32)
        .map(|i| (i % 253) as u8)
        .collect::<Vec<u8>>()
        .into()
}

async fn check_plain(use_axum: bool) {
    let addr = start(use_axum, None).await;
    for h2 in [false, true] {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (hello, echoed) = exchange(stream, h2, payload()).await;
        assert_eq!(hello, http::HELLO, "h2={h2} axum={use_axum}");
        assert!(
            echoed == payload(),
            "echo differs (h2={h2} axum={use_axum})"
        );
    }
}

// Several workers: h2 wakes its connection task from the stream tasks' workers.
#[spinpark::test(flavor = "multi_thread")]
async fn hyper_service_over_http1_and_h2c() {
    spinpark::time::timeout(LIMIT, check_plain(false))
        .await
        .expect("timed out");
}

#[spinpark::test]
async fn axum_router_through_the_same_adapter() {
    spinpark::time::timeout(LIMIT, check_plain(true))
        .await
        .expect("timed out");
}

async fn tls_client(
    addr: SocketAddr,
    cert: CertificateDer<'static>,
    alpn: &[&[u8]],
) -> futures_rustls::client::TlsStream<TcpStream> {
    let connector = TlsConnector::from(tls::client_config(cert, alpn).unwrap());
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    connector.connect(name, tcp).await.expect("TLS handshake")
}

#[spinpark::test]
async fn https_with_http1_and_h2_by_alpn() {
    spinpark::time::timeout(LIMIT, async {
        let (cert, key) = tls::self_signed(&["localhost"]).unwrap();
        let addr = start(false, Some(tls::server_config(cert.clone(), key).unwrap())).await;
        for (alpn, h2) in [(&b"http/1.1"[..], false), (&b"h2"[..], true)] {
            let stream = tls_client(addr, cert.clone(), &[alpn]).await;
            assert_eq!(stream.get_ref().1.alpn_protocol(), Some(alpn));
            let (hello, echoed) = exchange(ZeroFill::new(stream), h2, payload()).await;
            assert_eq!(hello, http::HELLO);
            assert!(echoed == payload(), "echo over TLS differs (h2={h2})");
        }
    })
    .await
    .expect("timed out");
}

#[spinpark::test]
async fn https_refuses_a_client_that_does_not_trust_the_certificate() {
    spinpark::time::timeout(LIMIT, async {
        let (cert, key) = tls::self_signed(&["localhost"]).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let acceptor = TlsAcceptor::from(tls::server_config(cert, key).unwrap());
        let server = spinpark::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            acceptor.accept(stream).await.is_err()
        });
        // The client trusts a different certificate.
        let (other, _) = tls::self_signed(&["localhost"]).unwrap();
        let connector = TlsConnector::from(tls::client_config(other, &[]).unwrap());
        let tcp = TcpStream::connect(addr).await.unwrap();
        let r = connector
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await;
        let e = r.expect_err("a certificate the client does not trust must fail the handshake");
        assert!(
            e.to_string().contains("certificate"),
            "unexpected error: {e}"
        );
        assert!(
            server.await.unwrap(),
            "the server side sees the failed handshake"
        );
    })
    .await
    .expect("timed out");
}
