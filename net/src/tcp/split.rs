//! Splitting a [`TcpStream`] into a read half and a write half.
//!
//! Reads and writes wait on separate wakers, so the two halves can be driven concurrently:
//! borrowed halves within one task ([`TcpStream::split`]), owned halves from two tasks
//! ([`TcpStream::into_split`]). What dropping and reuniting owned halves does is shared with
//! the Unix stream's halves (`halves.rs`).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::auto_flush::auto_flush_write;
use crate::halves::OwnedWrite;
use crate::io_traits::{impl_async_read, impl_async_write};

use super::TcpStream;

/// The read half of [`TcpStream::split`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// let mut stream = stream;
/// let (mut read, mut write) = spinpark::net::TcpStream::split(&mut stream);
/// let _ = (&mut read, &mut write); // both usable in one task, e.g. in select!
/// # });
/// ```
#[derive(Debug)]
pub struct ReadHalf<'a>(pub(super) &'a TcpStream);

/// The write half of [`TcpStream::split`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
/// use futures_util::AsyncWriteExt;
/// let mut stream = stream;
/// let (_read, mut write) = spinpark::net::TcpStream::split(&mut stream);
/// write.write_all(b"hi").await.unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct WriteHalf<'a>(pub(super) &'a TcpStream);

/// The read half of [`TcpStream::into_split`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
/// let (read, write) = stream.into_split();
/// let reader = spinpark::spawn(async move { let _r: spinpark::net::tcp::OwnedReadHalf = read; });
/// reader.await.unwrap();
/// # drop(write);
/// # });
/// ```
#[derive(Debug)]
pub struct OwnedReadHalf(pub(super) Arc<TcpStream>);

/// The write half of [`TcpStream::into_split`]. Dropping it (or closing it) shuts down the
/// write side of the connection, so the peer reads end of stream; the read half keeps working.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
/// use futures_util::AsyncWriteExt;
/// let (_read, mut write) = stream.into_split();
/// write.write_all(b"hi").await.unwrap();
/// drop(write); // the peer now reads end of stream
/// # });
/// ```
#[derive(Debug)]
pub struct OwnedWriteHalf(pub(super) OwnedWrite<TcpStream>);

/// The halves given to [`OwnedReadHalf::reunite`] came from different streams.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
/// let (a, _) = stream.into_split();
/// # let other = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
/// let (_, b) = other.into_split();
/// assert!(a.reunite(b).is_err()); // halves of different streams
/// # });
/// ```
#[derive(Debug)]
pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

impl std::fmt::Display for ReuniteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tried to reunite halves that are not from the same stream")
    }
}

impl std::error::Error for ReuniteError {}

impl OwnedReadHalf {
    /// Puts the stream back together with its write half.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let (read, write) = stream.into_split();
    /// let stream = read.reunite(write).unwrap();
    /// # drop(stream);
    /// # });
    /// ```
    pub fn reunite(self, write: OwnedWriteHalf) -> Result<TcpStream, ReuniteError> {
        write
            .0
            .reunite(self.0)
            .map_err(|(r, w)| ReuniteError(OwnedReadHalf(r), OwnedWriteHalf(w)))
    }

    /// The remote address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let (read, _write) = stream.into_split();
    /// assert!(read.peer_addr().is_ok());
    /// # });
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }

    /// The local address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let (read, _write) = stream.into_split();
    /// assert!(read.local_addr().is_ok());
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl OwnedWriteHalf {
    /// The remote address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let (_read, write) = stream.into_split();
    /// assert!(write.peer_addr().is_ok());
    /// # });
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.stream().peer_addr()
    }

    /// The local address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let (_read, write) = stream.into_split();
    /// assert!(write.local_addr().is_ok());
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.stream().local_addr()
    }
}

impl_async_read!(ReadHalf<'_>, s => s.0.core);
impl_async_write!(WriteHalf<'_>, s => s.0.core);
impl_async_read!(OwnedReadHalf, s => s.0.core);
impl_async_write!(OwnedWriteHalf, s => s.0.stream().core);
auto_flush_write!(WriteHalf<'_>, s => s.0.core);
auto_flush_write!(OwnedWriteHalf, s => s.0.stream().core);
