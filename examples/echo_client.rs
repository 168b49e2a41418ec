//! A small blocking client for the echo protocol: sends `--requests` frames of `--size`
//! bytes, one at a time, checks every response, and prints the latency distribution. A reply
//! that announces more than `--max-frame` bytes (16 MiB by default) is an error.
//!
//! ```text
//! cargo run --release --example echo_client -- --addr 127.0.0.1:7000 --requests 100000 --size 100
//! ```

use examples_common::{args, echo_proto};

use std::net::SocketAddr;
use std::time::Instant;

fn main() -> std::io::Result<()> {
    let addr: SocketAddr = args::get("--addr", "127.0.0.1:7000".parse().unwrap(), args::number);
    let requests: usize = args::get("--requests", 10_000, args::number);
    let size: usize = args::get("--size", 100, args::number);
    let max_frame = args::get("--max-frame", echo_proto::DEFAULT_MAX_FRAME, args::number);
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
