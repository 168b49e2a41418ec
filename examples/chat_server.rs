//! A broadcast chat server: every line a client sends goes to every other client.
//!
//! ```text
//! cargo run --example chat_server -- 127.0.0.1:7001
//! nc 127.0.0.1 7001          # from several terminals
//! ```
//!
//! Written as with tokio: `tokio::sync::broadcast` and `tokio::select!` work on spinpark as
//! they are. What differs is the imports: the runtime (`#[spinpark::main]`, `spinpark::spawn`),
//! the sockets (`spinpark::net`), and the I/O traits (`futures-util`'s instead of tokio's).
//!
//! A line longer than `MAX_LINE` bytes is refused (that client is told and disconnected), so a
//! client cannot make the server buffer without bound; a client too slow to keep up is told
//! how many messages it missed.

use std::io;
use std::net::SocketAddr;

use clap::Parser;
use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;

const MAX_LINE: usize = 4096;

/// A broadcast chat server: every line a client sends goes to every other client.
#[derive(Parser)]
#[command(name = "chat_server")]
struct Cli {
    /// Where to listen
    #[arg(value_name = "HOST:PORT", default_value = "127.0.0.1:7001")]
    addr: SocketAddr,
}

#[spinpark::main]
async fn main() -> io::Result<()> {
    let Cli { addr } = Cli::parse();
    let listener = TcpListener::bind(addr).await?;
    println!("chat server on {}", listener.local_addr()?);
    let (tx, _) = broadcast::channel::<(SocketAddr, String)>(1024);
    loop {
        let (stream, peer) = listener.accept().await?;
        let tx = tx.clone();
        let rx = tx.subscribe();
        spinpark::spawn(async move {
            if let Err(e) = client(stream, peer, tx, rx).await {
                eprintln!("{peer}: {e}");
            }
        });
    }
}

async fn client(
    stream: TcpStream,
    peer: SocketAddr,
    tx: broadcast::Sender<(SocketAddr, String)>,
    mut rx: broadcast::Receiver<(SocketAddr, String)>,
) -> io::Result<()> {
    let (mut read, mut write) = stream.into_split();
    let _ = tx.send((peer, format!("* {peer} joined\n")));
    let mut buf = [0u8; 1024];
    let mut line = Vec::new();
    loop {
        tokio::select! {
            // Both branches are cancel-safe: a read that loses the race has read nothing.
            n = read.read(&mut buf) => {
                let n = n?;
                if n == 0 {
                    break;
                }
                for &b in &buf[..n] {
                    if b == b'\n' {
                        let text = String::from_utf8_lossy(&line);
                        let _ = tx.send((peer, format!("{peer}: {}\n", text.trim_end())));
                        line.clear();
                    } else if line.len() == MAX_LINE {
                        write.write_all(b"* line too long, bye\n").await?;
                        return Ok(());
                    } else {
                        line.push(b);
                    }
                }
            }
            msg = rx.recv() => match msg {
                Ok((from, text)) if from != peer => write.write_all(text.as_bytes()).await?,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    write.write_all(format!("* you missed {n} messages\n").as_bytes()).await?;
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    }
    let _ = tx.send((peer, format!("* {peer} left\n")));
    Ok(())
}
