//! The echo server on glommio: one executor thread, a task per connection, and glommio's
//! futures-io `TcpStream` in a read-request/write-reply loop.
//!
//! A connection's stream is glommio's buffered one (`TcpStream::buffered`, its own receive
//! buffer, as the bench's servers read through a 16 KiB buffer); each request is a header and
//! a payload read with `read_exact` into one reused frame buffer, which goes back with one
//! `write_all`.

use std::io;

use futures_lite::{AsyncReadExt, AsyncWriteExt};
use glommio::net::{TcpListener, TcpStream};
use glommio::{LocalExecutorBuilder, Placement};

use crate::control::Listening;
use crate::frame::{payload_len, READ_BUF};

/// Starts the executor's thread; it reports its port (or why it has none) to `listening`.
pub fn start(listening: Listening) -> io::Result<()> {
    // The process is already confined to its CPUs: let the thread run anywhere in them.
    LocalExecutorBuilder::new(Placement::Unbound)
        .name("glommio")
        .spawn(move || run(listening))
        .map(drop)
        .map_err(|e| io::Error::other(e.to_string()))
}

async fn run(listening: Listening) {
    let listener = match TcpListener::bind("127.0.0.1:0").and_then(|l| {
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
        let stream = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("glommio server: accept: {e}");
                continue;
            }
        };
        stream.set_nodelay(true).ok();
        glommio::spawn_local(async move {
            if let Err(e) = echo(stream).await {
                eprintln!("glommio server: closing a connection: {e}");
            }
        })
        .detach();
    }
}

/// Answers every frame of one connection until the peer closes it.
async fn echo(stream: TcpStream) -> io::Result<()> {
    let mut stream = stream.buffered();
    let mut frame = Vec::with_capacity(READ_BUF);
    loop {
        let mut header = [0u8; 4];
        if !read_header(&mut stream, &mut header).await? {
            return Ok(());
        }
        let n = payload_len(header)?;
        frame.clear();
        frame.extend_from_slice(&header);
        frame.resize(4 + n, 0);
        stream.read_exact(&mut frame[4..]).await?;
        stream.write_all(&frame).await?;
    }
}

/// Reads a frame header; `false` when the stream ends before its first byte.
async fn read_header(
    stream: &mut (impl AsyncReadExt + Unpin),
    header: &mut [u8; 4],
) -> io::Result<bool> {
    let mut have = 0;
    while have < 4 {
        match stream.read(&mut header[have..]).await? {
            0 if have == 0 => return Ok(false),
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the connection closed {have} bytes into a frame"),
                ))
            }
            n => have += n,
        }
    }
    Ok(true)
}
