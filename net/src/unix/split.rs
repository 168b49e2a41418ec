//! Splitting a [`UnixStream`] into a read half and a write half.
//!
//! Reads and writes wait on separate wakers, so the two halves can be driven concurrently:
//! borrowed halves within one task ([`UnixStream::split`]), owned halves from two tasks
//! ([`UnixStream::into_split`]). The halves are written once for TCP and Unix streams
//! (`halves.rs`).

use super::{SocketAddr, UnixStream};

stream_halves! {
    stream: UnixStream,
    addr: SocketAddr,
    setup: [r#"# let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();"#],
    other: r#"# let (other, _o) = spinpark::net::UnixStream::pair().unwrap();"#,
    owned_read_half: "spinpark::net::unix::OwnedReadHalf",
}
