//! A gRPC service that calls another gRPC service, both ends on spinpark: this front Greeter
//! answers `SayHello` by calling a downstream Greeter's `SayHello` through a tonic `Channel` on
//! spinpark's own sockets (`Endpoint::connect_with_connector_lazy(spinpark::hyper::Connector)`
//! with spinpark's executor), and relays `CountTo`'s stream. The protobuf code is the checked-in
//! `examples-common` one (`common/src/grpc/pb.rs`), so no `protoc` is needed.
//!
//! ```text
//! cargo run --release --features hyper --example grpc_server -- --addr 127.0.0.1:50051 &
//! cargo run --release --features hyper-client --example grpc_gateway -- \
//!     --addr 127.0.0.1:50052 --downstream http://127.0.0.1:50051
//! grpcurl -plaintext -import-path examples/common -proto greeter.proto \
//!     -d '{"name": "spinpark"}' 127.0.0.1:50052 greeter.Greeter/SayHello
//! ```
//!
//! Errors: each downstream call has `--timeout` (2 s; for `CountTo`, until its stream opens) and
//! ends with `DEADLINE_EXCEEDED` naming the downstream when it runs out; a downstream that is
//! down or resets gives `UNAVAILABLE` (or its own status), its message prefixed with the
//! downstream's address. The channel connects on first use with `--connect-timeout` (1 s) and
//! reconnects on the next call after a failure. Use spinpark's timeouts, not tonic's
//! `Endpoint::timeout` or a `grpc-timeout` on the outgoing request: those run on tokio's timer.

use examples_common::args::{timeout as parse_timeout, RuntimeArgs};
use examples_common::conn_timeouts::Timeouts;
use examples_common::grpc::{self, pb};

use std::net::SocketAddr;
use std::pin::Pin;
use std::time::{Duration, Instant};

use clap::Parser;
use futures_util::Stream;
use pb::greeter_client::GreeterClient;
use pb::greeter_server::{Greeter, GreeterServer};
use pb::{Count, CountRequest, HelloReply, HelloRequest};
use spinpark::hyper::{Connector, Executor};
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status};

/// A gRPC Greeter that answers by calling a downstream Greeter.
#[derive(Parser)]
#[command(name = "grpc_gateway")]
struct Cli {
    /// Where to listen
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50052")]
    addr: SocketAddr,
    /// The downstream Greeter (http:// only)
    #[arg(long, value_name = "URI", default_value = "http://127.0.0.1:50051")]
    downstream: String,
    /// Deadline of each downstream call
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_timeout)]
    timeout: Duration,
    /// Deadline of a downstream connect
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_timeout)]
    connect_timeout: Duration,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

/// The front service: one shared channel (HTTP/2, multiplexed) to the downstream.
struct Front {
    downstream: GreeterClient<Channel>,
    name: String,
    limit: Duration,
}

impl Front {
    /// The downstream's failure as this service's status, naming the downstream.
    fn relay(&self, s: Status) -> Status {
        Status::new(
            s.code(),
            format!("downstream {}: {}", self.name, s.message()),
        )
    }

    fn late(&self) -> Status {
        Status::deadline_exceeded(format!(
            "downstream {}: no answer within {:?}",
            self.name, self.limit
        ))
    }
}

#[tonic::async_trait]
impl Greeter for Front {
    async fn say_hello(
        &self,
        request: Request<HelloRequest>,
    ) -> Result<Response<HelloReply>, Status> {
        let mut client = self.downstream.clone();
        let call = client.say_hello(request.into_inner());
        let reply = match spinpark::time::timeout(self.limit, call).await {
            Ok(reply) => reply.map_err(|s| self.relay(s))?.into_inner(),
            Err(_) => return Err(self.late()),
        };
        Ok(Response::new(HelloReply {
            message: format!("{} (via the gateway)", reply.message),
        }))
    }

    type CountToStream = Pin<Box<dyn Stream<Item = Result<Count, Status>> + Send>>;

    async fn count_to(
        &self,
        request: Request<CountRequest>,
    ) -> Result<Response<Self::CountToStream>, Status> {
        let mut client = self.downstream.clone();
        let call = client.count_to(request.into_inner());
        match spinpark::time::timeout(self.limit, call).await {
            Ok(stream) => {
                let stream = stream.map_err(|s| self.relay(s))?.into_inner();
                Ok(Response::new(Box::pin(stream)))
            }
            Err(_) => Err(self.late()),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let endpoint = Endpoint::from_shared(cli.downstream.clone())?.executor(Executor::new());
    cli.runtime.builder().build()?.block_on(async move {
        // Lazy: the first call connects (and a call after a failure reconnects).
        let channel = endpoint
            .connect_with_connector_lazy(Connector::new().connect_timeout(cli.connect_timeout));
        let front = Front {
            downstream: GreeterClient::new(channel),
            name: cli.downstream.clone(),
            limit: cli.timeout,
        };
        let routes = tonic::service::Routes::new(GreeterServer::new(front));
        let listener = spinpark::net::TcpListener::bind(cli.addr).await?;
        println!("gRPC gateway listening on {}", listener.local_addr()?);
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
            let routes = routes.clone();
            spinpark::spawn(async move {
                let served =
                    grpc::serve_connection(stream, routes, Timeouts::default(), Instant::now());
                if let Err(e) = served.await {
                    eprintln!("connection: {e}");
                }
            });
        }
    })
}
