//! Splitting a [`UnixStream`] into a read half and a write half.
//!
//! Reads and writes wait on separate wakers, so the two halves can be driven concurrently:
//! borrowed halves within one task ([`UnixStream::split`]), owned halves from two tasks
//! ([`UnixStream::into_split`]). What dropping and reuniting owned halves does is shared with
//! the TCP stream's halves (`halves.rs`).

use std::io;
use std::sync::Arc;

use crate::auto_flush::auto_flush_write;
use crate::halves::OwnedWrite;
use crate::io_traits::{impl_async_read, impl_async_write};

use super::{SocketAddr, UnixStream};

/// The read half of [`UnixStream::split`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// let mut stream = stream;
/// let (mut read, mut write) = spinpark::net::UnixStream::split(&mut stream);
/// let _ = (&mut read, &mut write); // both usable in one task, e.g. in select!
/// # });
/// ```
#[derive(Debug)]
pub struct ReadHalf<'a>(pub(super) &'a UnixStream);

/// The write half of [`UnixStream::split`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
/// use futures_util::AsyncWriteExt;
/// let mut stream = stream;
/// let (_read, mut write) = spinpark::net::UnixStream::split(&mut stream);
/// write.write_all(b"hi").await.unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct WriteHalf<'a>(pub(super) &'a UnixStream);

/// The read half of [`UnixStream::into_split`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
/// let (read, write) = stream.into_split();
/// let reader = spinpark::spawn(async move { let _r: spinpark::net::unix::OwnedReadHalf = read; });
/// reader.await.unwrap();
/// # drop(write);
/// # });
/// ```
#[derive(Debug)]
pub struct OwnedReadHalf(pub(super) Arc<UnixStream>);

/// The write half of [`UnixStream::into_split`]. Dropping it (or closing it) shuts down the
/// write side of the connection, so the peer reads end of stream; the read half keeps working.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
/// use futures_util::AsyncWriteExt;
/// let (_read, mut write) = stream.into_split();
/// write.write_all(b"hi").await.unwrap();
/// drop(write); // the peer now reads end of stream
/// # });
/// ```
#[derive(Debug)]
pub struct OwnedWriteHalf(pub(super) OwnedWrite<UnixStream>);

/// The halves given to [`OwnedReadHalf::reunite`] came from different streams.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
/// let (a, _) = stream.into_split();
/// # let (other, _o) = spinpark::net::UnixStream::pair().unwrap();
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
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// let stream = read.reunite(write).unwrap();
    /// # drop(stream);
    /// # });
    /// ```
    pub fn reunite(self, write: OwnedWriteHalf) -> Result<UnixStream, ReuniteError> {
        write
            .0
            .reunite(self.0)
            .map_err(|(r, w)| ReuniteError(OwnedReadHalf(r), OwnedWriteHalf(w)))
    }

    /// The remote address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
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
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
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
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
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
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
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
