//! tonic's client on spinpark's own sockets: a `Channel` from
//! `Endpoint::connect_with_connector(spinpark::hyper::Connector)` with spinpark's executor,
//! calling the example Greeter served on spinpark in the test. Unary and streaming calls
//! succeed with no tokio runtime current, 200 concurrent calls share the channel's one
//! connection, and a server that is down or never answers gives a clear error within a bound.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use examples_common::conn_timeouts::Timeouts;
use examples_common::grpc::{self, pb};
use futures_util::{AsyncReadExt, StreamExt};
use pb::greeter_client::GreeterClient;
use spinpark::hyper::{Connector, Executor};
use spinpark::net::TcpListener;
use spinpark::time::timeout;
use tonic::transport::{Channel, Endpoint};

const LIMIT: Duration = Duration::from_secs(30);

fn run<F: std::future::Future<Output = ()> + Send + 'static>(test: F) {
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async move {
        timeout(LIMIT, spinpark::spawn(test))
            .await
            .expect("the test did not finish within 30 s")
            .expect("the test task panicked");
    });
}

/// The example Greeter on 127.0.0.1:0; counts the connections it accepts.
async fn greeter() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    spinpark::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::Relaxed);
            spinpark::spawn(grpc::serve_connection(
                stream,
                grpc::routes(),
                Timeouts::default(),
                Instant::now(),
            ));
        }
    });
    (addr, accepted)
}

async fn channel(addr: SocketAddr) -> Result<Channel, tonic::transport::Error> {
    Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .executor(Executor::new())
        .connect_with_connector(Connector::new())
        .await
}

fn hello(name: &str) -> pb::HelloRequest {
    pb::HelloRequest {
        name: name.to_string(),
    }
}

#[test]
fn tonic_calls_without_a_tokio_runtime() {
    run(async {
        assert!(tokio::runtime::Handle::try_current().is_err());
        let (addr, accepted) = greeter().await;
        let mut client = GreeterClient::new(channel(addr).await.expect("connect"));
        let reply = client.say_hello(hello("spinpark")).await.expect("SayHello");
        assert_eq!(reply.into_inner().message, "hello, spinpark");
        let mut counts = client
            .count_to(pb::CountRequest { up_to: 250 })
            .await
            .expect("CountTo")
            .into_inner();
        let mut next = 1;
        while let Some(c) = counts.next().await {
            assert_eq!(c.expect("a streamed item").n, next);
            next += 1;
        }
        assert_eq!(next, 251);

        // 200 calls at once on clones of the one channel: one HTTP/2 connection.
        let mut calls = spinpark::JoinSet::new();
        for i in 0..200 {
            let mut c = client.clone();
            calls.spawn(async move {
                let r = c.say_hello(hello(&i.to_string())).await;
                (i, r.map(|r| r.into_inner().message))
            });
        }
        while let Some(done) = calls.join_next().await {
            let (i, message) = done.unwrap();
            assert_eq!(message.expect("SayHello"), format!("hello, {i}"));
        }
        assert_eq!(accepted.load(Ordering::Relaxed), 1);
        assert!(tokio::runtime::Handle::try_current().is_err());
    });
}

#[test]
fn a_grpc_downstream_that_is_down_or_silent_fails_clearly() {
    run(async {
        // Down: nothing listens on the port any more.
        let addr = {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            l.local_addr().unwrap()
        };
        let err = channel(addr).await.expect_err("connected to nothing");
        let mut chain = format!("{err}");
        let mut source = std::error::Error::source(&err);
        while let Some(s) = source {
            chain.push_str(&format!(": {s}"));
            source = s.source();
        }
        assert!(chain.contains("refused"), "{chain}");
        assert!(chain.contains(&addr.to_string()), "{chain}");

        // Silent: accepts and reads, never answers; the caller's deadline ends the call.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spinpark::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            while let Ok(n) = stream.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        });
        let call = async {
            let mut client = GreeterClient::new(channel(addr).await?);
            client.say_hello(hello("anyone")).await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        };
        assert!(
            timeout(Duration::from_millis(300), call).await.is_err(),
            "a server that never answers answered"
        );
        // Dropping the call dropped the channel: its connection closes.
        timeout(Duration::from_secs(20), server)
            .await
            .expect("the abandoned connection stayed open")
            .unwrap();
    });
}
