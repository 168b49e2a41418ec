//! An in-memory key-value server that speaks the part of the Redis protocol (RESP2) that
//! `redis-cli` and `redis-benchmark` use, on spinpark.
//!
//! ```text
//! cargo run --release --example kv_server -- --addr 127.0.0.1:6379 --workers 4 --spin 50us
//! redis-benchmark -p 6379 -t set,get,incr,mset -P 16 -q
//! ```
//!
//! Commands: PING [msg], ECHO, GET, SET key value [NX|XX] [EX s|PX ms|KEEPTTL], DEL and EXISTS
//! (several keys, answer a count), INCR, MGET, MSET, CONFIG GET (an empty array) and COMMAND
//! (an empty array, whatever follows), and QUIT. Names are case-insensitive; requests may be
//! RESP arrays or inline lines (`SET a b`, with Redis's quoting: `SET "a b" 'c'`,
//! `"\x41\n"`), and may be pipelined. `tests/kv_vs_redis.rs` sends the same raw inputs to
//! this server and to `redis-server` and compares the replies byte for byte.
//!
//! Flags (`--help` lists them): `--addr`, `--workers`, `--spin`, and `--max-output` (64MiB by
//! default), the most bytes of replies a connection may hold unsent. A reply larger than
//! that, such as an `MGET` naming a large key many times, is answered
//! `-ERR reply of N bytes exceeds the output limit ...` and the connection is closed, instead
//! of being built in memory (redis-server, whose default output limit for normal clients is
//! none, builds it: one 2.7 KB request naming an 8 MiB key 300 times takes 2.4 GB). Pipelined
//! replies are not refused: once they reach the limit, the server waits for the client to
//! read them before running more commands. A `GET` of a value larger than the limit needs a
//! larger `--max-output`.
//!
//! How: the protocol lives in `examples/common/src/resp.rs` (a streaming parser with bounds on
//! every declared length, and the replies), the store and the commands in
//! `examples/common/src/kv.rs`, the connection loop in `kv/conn.rs` and its capped output in
//! `kv/output.rs`. Each connection is a task that reads, runs the complete commands it got,
//! and writes their replies back in one write. Keys with a deadline expire lazily, when a
//! command next touches them. A malformed request gets `-ERR Protocol error: ...` and its
//! connection is closed; the other connections carry on.

use examples_common::args::Spin;
use examples_common::kv;

use std::io;

use clap::Parser;

fn main() -> io::Result<()> {
    let opts = kv::Options::parse();
    let rt = opts.runtime.builder().build()?;
    let workers = rt.handle().worker_threads();
    let spin = match opts.runtime.spin {
        Spin::Fixed(d) => format!("{d:?}"),
        Spin::Adaptive => "adaptive".to_string(),
    };
    rt.block_on(async move {
        let listener = spinpark::net::TcpListener::bind(opts.addr.as_str()).await?;
        println!(
            "kv_server listening on {} ({workers} workers, spin {spin})",
            listener.local_addr()?
        );
        kv::serve_with(listener, kv::Store::new(), opts.settings()).await
    })
}
