//! The echo server on compio with its io_uring driver: one thread, a task per connection,
//! owned buffers.
//!
//! Each connection owns one `Vec<u8>`: `append` reads into its spare capacity, and each whole
//! frame goes back with one `write_all` of a `slice` of the same buffer, which the completed
//! write returns (see `frame.rs`). The runtime is built with the io_uring driver only, so a
//! kernel without io_uring fails the start instead of falling back to polling.

use std::io;

use compio::buf::{BufResult, IntoInner, IoBuf};
use compio::io::{AsyncReadExt, AsyncWriteExt};
use compio::net::{TcpListener, TcpStream};

use crate::control::Listening;
use crate::frame::{Cursor, READ_BUF};

/// Starts the server's thread; it reports its port (or why it has none) to `listening`.
pub fn start(listening: Listening) -> io::Result<()> {
    std::thread::Builder::new()
        .name("compio".into())
        .spawn(move || run(listening))
        .map(drop)
}

fn run(listening: Listening) {
    let runtime = match compio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return listening.report(Err(format!("io_uring runtime: {e}"))),
    };
    runtime.block_on(async move {
        let listener = match TcpListener::bind("127.0.0.1:0").await.and_then(|l| {
            let port = l.local_addr()?.port();
            Ok((l, port))
        }) {
            Ok((l, port)) => {
                listening.report(Ok(port));
                l
            }
            Err(e) => return listening.report(Err(format!("bind: {e}"))),
        };
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("compio server: accept: {e}");
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            compio::runtime::spawn(async move {
                if let Err(e) = echo(stream).await {
                    eprintln!("compio server: closing a connection: {e}");
                }
            })
            .detach();
        }
    })
}

/// Answers every frame of one connection until the peer closes it.
async fn echo(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = Vec::with_capacity(READ_BUF);
    let mut frames = Cursor::default();
    loop {
        frames.make_room(&mut buf);
        let BufResult(read, filled) = stream.append(buf).await;
        buf = filled;
        if read? == 0 {
            return frames.at_eof(&buf);
        }
        while let Some(frame) = frames.next_frame(&buf)? {
            let BufResult(wrote, reply) = stream.write_all(buf.slice(frame)).await;
            buf = reply.into_inner();
            wrote?;
        }
    }
}
