//! Splitting a [`TcpStream`] into a read half and a write half.
//!
//! Reads and writes wait on separate wakers, so the two halves can be driven concurrently:
//! borrowed halves within one task ([`TcpStream::split`]), owned halves from two tasks
//! ([`TcpStream::into_split`]). The halves are written once for TCP and Unix streams
//! (`halves.rs`).

use std::net::SocketAddr;

use super::TcpStream;

stream_halves! {
    stream: TcpStream,
    addr: SocketAddr,
    setup: [
        r#"# let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();"#,
        r#"# let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();"#,
    ],
    other: r#"# let other = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();"#,
    owned_read_half: "spinpark::net::OwnedReadHalf",
}
