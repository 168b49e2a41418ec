//! The echo server on monoio with its io_uring driver: one thread, a task per connection,
//! owned buffers.
//!
//! Each connection owns one `Vec<u8>`: a read fills its spare capacity (`slice_mut` past the
//! bytes held), and each whole frame goes back with one `write_all` of a `slice` of the same
//! buffer, which the completed write returns (see `frame.rs`).

use std::io;

use monoio::buf::{IoBuf, IoBufMut};
use monoio::io::{AsyncReadRent, AsyncWriteRentExt};
use monoio::net::{TcpListener, TcpStream};

use crate::control::Listening;
use crate::frame::{Cursor, READ_BUF};

/// Starts the server's thread; it reports its port (or why it has none) to `listening`.
pub fn start(listening: Listening) -> io::Result<()> {
    std::thread::Builder::new()
        .name("monoio".into())
        .spawn(move || run(listening))
        .map(drop)
}

fn run(listening: Listening) {
    let runtime = monoio::RuntimeBuilder::<monoio::IoUringDriver>::new().build();
    let mut runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => return listening.report(Err(format!("io_uring runtime: {e}"))),
    };
    runtime.block_on(async move {
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
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("monoio server: accept: {e}");
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            monoio::spawn(async move {
                if let Err(e) = echo(stream).await {
                    eprintln!("monoio server: closing a connection: {e}");
                }
            });
        }
    })
}

/// Answers every frame of one connection until the peer closes it.
async fn echo(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = Vec::with_capacity(READ_BUF);
    let mut frames = Cursor::default();
    loop {
        frames.make_room(&mut buf);
        let held = buf.len();
        let (read, spare) = stream.read(buf.slice_mut(held..)).await;
        buf = spare.into_inner();
        if read? == 0 {
            return frames.at_eof(&buf);
        }
        while let Some(frame) = frames.next_frame(&buf)? {
            let (wrote, reply) = stream.write_all(buf.slice(frame)).await;
            buf = reply.into_inner();
            wrote?;
        }
    }
}
