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
//! Flags: `--addr` (default 127.0.0.1:50051), `--workers`, `--spin`. The service lives in
//! `examples-common`'s `grpc` module; the protobuf and tonic code in `common/src/grpc/pb.rs` was generated once and
//! checked in (see its header), so no `protoc` is needed to build.

use examples_common::{args, grpc};

use std::net::SocketAddr;

fn main() -> std::io::Result<()> {
    let addr: SocketAddr = args::get("--addr", "127.0.0.1:50051".parse().unwrap(), args::number);
    let mut builder = spinpark::Builder::new();
    if let Some(n) = args::value("--workers") {
        builder = builder.worker_threads(args::number(&n).unwrap_or_else(|e| {
            eprintln!("--workers: {e}");
            std::process::exit(2)
        }));
    }
    args::spin(builder).build()?.block_on(async move {
        let listener = spinpark::net::TcpListener::bind(addr).await?;
        println!("gRPC server listening on {}", listener.local_addr()?);
        grpc::serve(listener).await
    })
}
