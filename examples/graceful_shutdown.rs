//! A server that shuts down gracefully on Ctrl-C or SIGTERM: it stops accepting, lets the
//! requests in flight finish, and exits after a deadline even if some do not.
//!
//! ```text
//! cargo run --example graceful_shutdown -- 127.0.0.1:7002
//! printf '200\nhello\n' | nc 127.0.0.1 7002     # "200" works for 200 ms, then answers
//! ```
//!
//! The protocol is one request per line: a number N means "work for N milliseconds", the
//! reply is `done <line>`. Each request has a timeout (`REQUEST_TIMEOUT`), and a periodic task
//! prints how many requests were served.
//!
//! Written as with tokio (`tokio::sync::{watch, mpsc}` and `tokio::select!` work on spinpark
//! as they are); only the runtime, net, time, signal and I/O-trait imports differ.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark::net::TcpStream;
use spinpark::signal::{signal, SignalKind};
use spinpark::time::{interval, sleep, timeout};
use tokio::sync::{mpsc, watch};

const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
const GRACE: Duration = Duration::from_secs(10);
const MAX_LINE: usize = 1024;

/// A line server that stops gracefully on Ctrl-C or SIGTERM: no new connections, and the
/// requests in flight get a deadline.
#[derive(Parser)]
#[command(name = "graceful_shutdown")]
struct Cli {
    /// Where to listen
    #[arg(value_name = "HOST:PORT", default_value = "127.0.0.1:7002")]
    addr: SocketAddr,
}

#[spinpark::main]
async fn main() -> io::Result<()> {
    let Cli { addr } = Cli::parse();
    let listener = spinpark::net::TcpListener::bind(addr).await?;
    println!("listening on {}", listener.local_addr()?);

    let served = Arc::new(AtomicU64::new(0));
    // `true` once shutdown starts; every connection watches it.
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    // Each connection holds a sender; when all are dropped, `recv` returns `None`.
    let (done_tx, mut done_rx) = mpsc::channel::<()>(1);

    let stats = {
        let served = served.clone();
        spinpark::spawn(async move {
            let mut every = interval(Duration::from_secs(5));
            loop {
                every.tick().await;
                println!("{} requests served", served.load(Relaxed));
            }
        })
    };

    // Both signal streams are made once, before the loop, and live across its turns. A
    // `ctrl_c()` written inside `select!` would work too (a SIGINT that arrives between two
    // turns is kept for the next turn's listener), but would make and drop a listener on
    // every accept.
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = accepted?;
                let conn = Connection {
                    stream,
                    shutdown: shutdown_rx.clone(),
                    served: served.clone(),
                    _done: done_tx.clone(),
                };
                spinpark::spawn(async move {
                    if let Err(e) = conn.run().await {
                        eprintln!("{peer}: {e}");
                    }
                });
            }
            _ = int.recv() => break,
            _ = term.recv() => break,
        }
    }

    println!("shutting down: no new connections; waiting up to {GRACE:?} for requests in flight");
    drop(listener);
    let _ = shutdown_tx.send(true);
    drop(done_tx);
    match timeout(GRACE, done_rx.recv()).await {
        Ok(_) => println!("every connection finished"),
        Err(_) => println!("deadline passed with connections still busy; exiting anyway"),
    }
    stats.abort();
    println!("{} requests served in all", served.load(Relaxed));
    Ok(())
}

struct Connection {
    stream: TcpStream,
    shutdown: watch::Receiver<bool>,
    served: Arc<AtomicU64>,
    /// Dropped when the connection ends, which is how `main` learns that it has.
    _done: mpsc::Sender<()>,
}

impl Connection {
    async fn run(mut self) -> io::Result<()> {
        let mut buf = [0u8; 512];
        let mut line = Vec::new();
        loop {
            // Between requests, stop on shutdown. `biased`: a request that has already arrived
            // is read (and answered) before the shutdown is looked at.
            let n = tokio::select! {
                biased;
                n = self.stream.read(&mut buf) => n?,
                _ = self.shutdown.wait_for(|stop| *stop) => return Ok(()),
            };
            if n == 0 {
                return Ok(());
            }
            for &b in &buf[..n] {
                if b != b'\n' {
                    if line.len() == MAX_LINE {
                        self.stream.write_all(b"error: line too long\n").await?;
                        return Ok(());
                    }
                    line.push(b);
                    continue;
                }
                let request = String::from_utf8_lossy(&line).trim().to_string();
                line.clear();
                let reply = match timeout(REQUEST_TIMEOUT, handle(&request)).await {
                    Ok(reply) => reply,
                    Err(_) => format!("error: {request:?} timed out\n"),
                };
                self.stream.write_all(reply.as_bytes()).await?;
                self.served.fetch_add(1, Relaxed);
            }
        }
    }
}

/// The "work": a number is slept for that many milliseconds.
async fn handle(request: &str) -> String {
    if let Ok(ms) = request.parse::<u64>() {
        sleep(Duration::from_millis(ms)).await;
    }
    format!("done {request}\n")
}
