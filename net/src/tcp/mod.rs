//! TCP: [`TcpListener`], [`TcpStream`] and its halves, [`TcpSocket`].
//!
//! ```
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! use spinpark_net::tcp::{TcpListener, TcpStream};
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
//! let (server, _) = listener.accept().await.unwrap();
//! let (mut read, mut write) = server.into_split();
//! client.write_all(b"hi").await.unwrap();
//! let mut buf = [0; 2];
//! read.read_exact(&mut buf).await.unwrap();
//! write.write_all(&buf).await.unwrap();
//! # });
//! ```
//!
//! How: each type is a thin wrapper; what a stream does lives in `stream.rs`, how a listener
//! accepts in `listener.rs`, both shared with the Unix-domain types.

mod accept;
mod listener;
mod options;
mod socket;
mod split;
mod split_io;
mod stream;

pub use crate::listener::ACCEPT_BACKOFF;
pub use accept::Accept;
pub use listener::{Incoming, TcpListener, DEFAULT_BACKLOG};
pub use socket::TcpSocket;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::TcpStream;
