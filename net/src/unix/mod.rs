//! Unix-domain stream sockets: [`UnixListener`], [`UnixStream`] and its halves, with the same
//! traits and helpers as their TCP counterparts.
//!
//! ```
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! use spinpark_net::{UnixListener, UnixStream};
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! let dir = std::env::temp_dir().join(format!("spinpark-doc-unix-{}", std::process::id()));
//! let _ = std::fs::remove_file(&dir);
//! let listener = UnixListener::bind(&dir).unwrap();
//! let mut client = UnixStream::connect(&dir).await.unwrap();
//! let (mut server, _) = listener.accept().await.unwrap();
//! client.write_all(b"hi").await.unwrap();
//! let mut buf = [0; 2];
//! server.read_exact(&mut buf).await.unwrap();
//! assert_eq!(&buf, b"hi");
//! std::fs::remove_file(&dir).unwrap();
//! # });
//! ```
//!
//! How: each type is a thin wrapper; what a stream does lives in `stream.rs`, how a listener
//! accepts in `listener.rs`, both shared with the TCP types.

mod accept;
mod datagram;
mod listener;
pub mod pipe;
mod socket;
mod split;
mod split_io;
mod stream;
mod ucred;

pub use accept::Accept;
pub use datagram::UnixDatagram;
pub use listener::UnixListener;
pub use socket::UnixSocket;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use std::os::unix::net::SocketAddr;
pub use stream::UnixStream;
pub use ucred::UCred;
