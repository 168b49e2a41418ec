//! The gRPC example's service on a spinpark runtime, called by tonic's own client on a tokio
//! runtime (the usual client side): a unary call, a server stream, and a refused request.
#![cfg(feature = "hyper")]

use examples_common::grpc;

use std::net::SocketAddr;
use std::time::Duration;

use grpc::pb::greeter_client::GreeterClient;
use grpc::pb::{CountRequest, HelloRequest};

/// Runs the server on its own spinpark runtime in a thread until `stop` fires.
fn start_server() -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
        rt.block_on(async move {
            let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let serve = std::pin::pin!(grpc::serve(listener));
            // tokio's channels need no tokio runtime.
            futures_util::future::select(serve, stop_rx).await;
        });
    });
    let addr = addr_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    (addr, stop_tx, thread)
}

#[tokio::test]
async fn tonic_client_calls_a_service_served_on_spinpark() {
    let (addr, stop, thread) = start_server();
    let calls = async {
        let mut client = GreeterClient::connect(format!("http://{addr}"))
            .await
            .unwrap();

        let reply = client
            .say_hello(HelloRequest {
                name: "spinpark".into(),
            })
            .await
            .unwrap();
        assert_eq!(reply.into_inner().message, "hello, spinpark");

        let mut stream = client
            .count_to(CountRequest { up_to: 1000 })
            .await
            .unwrap()
            .into_inner();
        let mut got = Vec::new();
        while let Some(c) = stream.message().await.unwrap() {
            got.push(c.n);
        }
        assert_eq!(got, (1..=1000).collect::<Vec<u32>>());

        let err = client
            .count_to(CountRequest {
                up_to: grpc::MAX_COUNT + 1,
            })
            .await
            .expect_err("over the limit");
        assert_eq!(err.code(), tonic::Code::InvalidArgument);
        assert!(err.message().contains("exceeds the limit"), "{err:?}");

        // Several calls in flight on one HTTP/2 connection.
        let mut handles = Vec::new();
        for i in 0..16 {
            let mut c = client.clone();
            handles.push(tokio::spawn(async move {
                let r = c
                    .say_hello(HelloRequest {
                        name: format!("n{i}"),
                    })
                    .await;
                r.unwrap().into_inner().message
            }));
        }
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.await.unwrap(), format!("hello, n{i}"));
        }
    };
    tokio::time::timeout(Duration::from_secs(30), calls)
        .await
        .expect("gRPC calls timed out");
    stop.send(()).unwrap();
    thread.join().unwrap();
}
