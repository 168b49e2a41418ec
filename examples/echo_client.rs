//! A small blocking client for the echo protocol: sends `--requests` frames of `--size`
//! bytes, one at a time, checks every response, and prints the latency distribution. A reply
//! that announces more than `--max-frame` bytes (16 MiB by default) is an error.
//!
//! ```text
//! cargo run --release --example echo_client -- --addr 127.0.0.1:7000 --requests 100000 --size 100
//! ```

use examples_common::echo_proto;

use std::net::SocketAddr;
use std::time::Instant;

use clap::Parser;

/// A blocking client for the echo protocol: sends frames one at a time, checks every reply,
/// and prints the latency distribution.
#[derive(Parser)]
#[command(name = "echo_client")]
struct Cli {
    /// The server
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7000")]
    addr: SocketAddr,
    /// How many requests to send
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = examples_common::args::positive)]
    requests: usize,
    /// The payload of each request, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 100)]
    size: usize,
    /// The largest reply accepted, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = echo_proto::DEFAULT_MAX_FRAME)]
    max_frame: usize,
}

fn main() -> std::io::Result<()> {
    let Cli {
        addr,
        requests,
        size,
        max_frame,
    } = Cli::parse();
    let mut client = echo_proto::Client::connect(addr)?.max_frame(max_frame);
    let payload: Vec<u8> = (0..size).map(|i| i as u8).collect();
    let request = echo_proto::frame(&payload);
    let mut latencies = Vec::with_capacity(requests);
    let start = Instant::now();
    for _ in 0..requests {
        let t = Instant::now();
        let reply = client.call(&request)?;
        latencies.push(t.elapsed());
        if reply != payload.as_slice() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the server answered with different bytes",
            ));
        }
    }
    let total = start.elapsed();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize];
    println!(
        "{requests} requests of {size} bytes in {total:.2?}: {:.0} req/s; latency p50 {:?} p90 {:?} p99 {:?} max {:?}",
        requests as f64 / total.as_secs_f64(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );
    Ok(())
}
