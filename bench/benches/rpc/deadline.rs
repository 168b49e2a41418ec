//! The echo handler with per-request timers, on both runtimes: what timers cost under load.
//!
//! ```text
//! spinpark::spawn(deadline::serve_spinpark(stream, DEFAULT_MAX_FRAME));
//! tokio::spawn(deadline::serve_tokio(stream, DEFAULT_MAX_FRAME));
//! ```
//!
//! As RPC servers do, waiting for the next request runs under an idle timeout and handling it
//! (reading the payload, writing the reply) under a deadline, each `time::timeout(1 s, ..)`:
//! every request registers and cancels two timers. An idle connection is closed quietly; a
//! request that misses its deadline is an error that closes its connection.

use std::io;
use std::time::Duration;

use crate::echo_proto::FrameReader;

/// How long a connection may sit idle between requests.
const IDLE: Duration = Duration::from_secs(1);
/// How long reading and answering one request may take.
const DEADLINE: Duration = Duration::from_secs(1);

fn missed() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("a request missed its {DEADLINE:?} deadline"),
    )
}

/// Serves one connection on spinpark, with an idle timeout and a per-request deadline.
pub async fn serve_spinpark(stream: spinpark::net::TcpStream, max: usize) -> io::Result<u64> {
    use futures_util::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    use spinpark::time::timeout;
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    // Memory grows with the bytes received, not with the length a header announces.
    let mut frames = FrameReader::new(max);
    let mut served = 0;
    loop {
        // A request's first bytes, under the idle timeout.
        let n = match timeout(IDLE, stream.read(frames.spare())).await {
            Err(_idle) => return Ok(served),
            Ok(r) => r?,
        };
        if n == 0 {
            return match frames.is_empty() {
                true => Ok(served),
                false => Err(frames.eof_error()),
            };
        }
        let mut done = frames.filled(n)?;
        // The rest of it, and the reply, under the deadline.
        timeout(DEADLINE, async {
            while !done {
                let n = stream.read(frames.spare()).await?;
                if n == 0 {
                    return Err(frames.eof_error());
                }
                done = frames.filled(n)?;
            }
            stream.get_mut().write_all(frames.frame()).await
        })
        .await
        .map_err(|_| missed())??;
        frames.consume();
        served += 1;
    }
}

/// The same, written against tokio's I/O traits and timers.
pub async fn serve_tokio(stream: tokio::net::TcpStream, max: usize) -> io::Result<u64> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    use tokio::time::timeout;
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    // Memory grows with the bytes received, not with the length a header announces.
    let mut frames = FrameReader::new(max);
    let mut served = 0;
    loop {
        // A request's first bytes, under the idle timeout.
        let n = match timeout(IDLE, stream.read(frames.spare())).await {
            Err(_idle) => return Ok(served),
            Ok(r) => r?,
        };
        if n == 0 {
            return match frames.is_empty() {
                true => Ok(served),
                false => Err(frames.eof_error()),
            };
        }
        let mut done = frames.filled(n)?;
        // The rest of it, and the reply, under the deadline.
        timeout(DEADLINE, async {
            while !done {
                let n = stream.read(frames.spare()).await?;
                if n == 0 {
                    return Err(frames.eof_error());
                }
                done = frames.filled(n)?;
            }
            stream.get_mut().write_all(frames.frame()).await
        })
        .await
        .map_err(|_| missed())??;
        frames.consume();
        served += 1;
    }
}
