//! An echo RPC server on spinpark: a task per connection, reading a 4-byte big-endian length
//! and that many bytes, and writing the same frame back in one write.
//!
//! ```text
//! cargo run --release --example echo_server -- --addr 127.0.0.1:7000 --workers 2 --spin 250us
//! cargo run --release --example echo_client -- --addr 127.0.0.1:7000 --requests 100000
//! ```
//!
//! Frames over `--max-frame` bytes (16 MiB by default) are refused: the server logs one line
//! and closes that connection only. Such lines are limited to 10 a second (then a count).

use examples_common::args::RuntimeArgs;
use examples_common::echo_proto;
use examples_common::log_limit::LogLimit;

use std::net::SocketAddr;

use clap::Parser;

/// An echo RPC server on spinpark (4-byte big-endian length, then that many bytes; the same
/// frame is sent back).
#[derive(Parser)]
#[command(name = "echo_server")]
struct Cli {
    /// Where to listen
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7000")]
    addr: SocketAddr,
    /// The largest frame accepted, in bytes; a larger one closes its connection
    #[arg(long, value_name = "BYTES", default_value_t = echo_proto::DEFAULT_MAX_FRAME)]
    max_frame: usize,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let rt = cli.runtime.builder().build()?;
    rt.block_on(serve(cli.addr, cli.max_frame))
}

/// Connection errors (resets, oversized frames) print at most this many lines a second.
static CONN_ERRORS: LogLimit = LogLimit::new(10);

async fn serve(addr: SocketAddr, max_frame: usize) -> std::io::Result<()> {
    let listener = spinpark::net::TcpListener::bind(addr).await?;
    println!("echo server listening on {}", listener.local_addr()?);
    loop {
        let (stream, peer) = listener.accept().await?;
        stream.set_nodelay(true)?;
        spinpark::spawn(async move {
            match echo_proto::serve_futures_io(stream, max_frame).await {
                Ok(_) => {}
                Err(e) => CONN_ERRORS.log(format_args!("closing connection from {peer}: {e}")),
            }
        });
    }
}
