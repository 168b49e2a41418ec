//! A gRPC server on spinpark: tonic's generated `Greeter` service (`common/greeter.proto`:
//! `SayHello`, unary, and `CountTo`, a server stream) served through `spinpark::hyper` and
//! hyper-util's connection builder, without tonic's tokio transport.
//!
//! ```text
//! cargo run --release --features hyper --example grpc_server -- --addr 127.0.0.1:50051
//! grpcurl -plaintext -import-path examples/common -proto greeter.proto \
//!     -d '{"name": "spinpark"}' 127.0.0.1:50051 greeter.Greeter/SayHello
//! ```
//!
//! Flags (`--help` lists them): `--addr` (default 127.0.0.1:50051), `--workers`, `--spin`,
//! and the connection timeouts: `--handshake-timeout` (10 s from accept to the HTTP/2
//! preface), `--header-timeout` (30 s for HTTP/1 headers), `--idle-timeout` (60 s without a
//! byte moving), `--h2-keep-alive` (20 s between pings, and as long for the answer),
//! `--body-timeout` and `--body-min-rate` (a request body has 20 s, plus a second per 1024
//! bytes received). The
//! service lives in `examples-common`'s `grpc` module; the protobuf and tonic code in
//! `common/src/grpc/pb.rs` was generated once and checked in (see its header), so no `protoc`
//! is needed to build.

use examples_common::args::{RuntimeArgs, TimeoutArgs};
use examples_common::grpc;

use std::net::SocketAddr;

use clap::Parser;

/// A gRPC server (tonic's Greeter) on spinpark, through hyper.
#[derive(Parser)]
#[command(name = "grpc_server")]
struct Cli {
    /// Where to listen
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50051")]
    addr: SocketAddr,
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten)]
    timeouts: TimeoutArgs,
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let timeouts = cli.timeouts.timeouts();
    cli.runtime.builder().build()?.block_on(async move {
        let listener = spinpark::net::TcpListener::bind(cli.addr).await?;
        println!("gRPC server listening on {}", listener.local_addr()?);
        grpc::serve_with(listener, timeouts).await
    })
}
