//! [`UnixStream`]: a connected Unix-domain socket with `futures-io`'s `AsyncRead` and
//! `AsyncWrite`.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

use crate::auto_flush::auto_flush_write;
use crate::io_traits::{impl_async_read, impl_async_write};
use crate::readiness::Direction;
use crate::stream::StreamCore;
use crate::sys::{self, SockAddr};

use super::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, SocketAddr, WriteHalf};

/// A Unix-domain stream connection: the same API as [`crate::TcpStream`] (reads and writes
/// through `futures-io`'s traits, `split`, `into_split`, `readable`, `try_read`, ...).
///
/// ```
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// let (mut a, mut b) = spinpark_net::UnixStream::pair().unwrap();
/// a.write_all(b"ping").await.unwrap();
/// let mut buf = [0; 4];
/// b.read_exact(&mut buf).await.unwrap();
/// assert_eq!(&buf, b"ping");
/// # });
/// ```
pub struct UnixStream {
    pub(super) core: StreamCore<std::os::unix::net::UnixStream>,
}

impl std::fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnixStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .field("fd", &self.core.raw_fd())
            .finish()
    }
}

impl UnixStream {
    /// Connects to the socket at `path`, or, when `path` starts with a NUL byte (`"\0name"`),
    /// to the name after it in Linux's abstract namespace, as tokio does.
    ///
    /// # Errors
    /// The connect error as the OS gave it, with its `raw_os_error()`: `NotFound` (`ENOENT`)
    /// when nothing is at the path, `ConnectionRefused` when nobody listens, `WouldBlock`
    /// (`EAGAIN`) when the listener's backlog is full; `InvalidInput`, naming the path, for a
    /// path too long for a socket address (107 bytes) or with a NUL byte after its start.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-doc-connect-{}", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let _listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// let stream = spinpark::net::UnixStream::connect(&path).await.unwrap();
    /// # drop(stream);
    /// std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        Self::connect_sockaddr(SockAddr::unix(path.as_ref())?).await
    }

    /// Connects to the listener at `addr` (a path or an abstract name, as std's `SocketAddr`
    /// holds them); see [`UnixStream::connect`] (tokio's `connect_addr`).
    ///
    /// # Errors
    /// Those of [`UnixStream::connect`]; `InvalidInput` for an unnamed address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-doc-caddr-{}", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let stream = spinpark::net::UnixStream::connect_addr(&addr).await.unwrap();
    /// # drop(stream);
    /// std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub async fn connect_addr(addr: &SocketAddr) -> io::Result<UnixStream> {
        Self::connect_sockaddr(SockAddr::from_std_unix(addr)?).await
    }

    async fn connect_sockaddr(addr: SockAddr) -> io::Result<UnixStream> {
        let socket = std::os::unix::net::UnixStream::from(sys::stream_socket(libc::AF_UNIX)?);
        // A Unix socket's connect fails at once (EAGAIN) when the listener's queue is full.
        let core = StreamCore::connect(socket, &addr).await?;
        Ok(UnixStream { core })
    }

    /// A connected pair of streams (`socketpair(2)`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixStream::pair().unwrap();
    /// # drop((a, b));
    /// # });
    /// ```
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = sys::socketpair()?;
        let wrap = |fd| {
            Ok::<_, io::Error>(UnixStream {
                core: StreamCore::new(std::os::unix::net::UnixStream::from(fd))?,
            })
        };
        Ok((wrap(a)?, wrap(b)?))
    }

    /// Wraps a connected stream from the standard library (it is made non-blocking).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let stream = spinpark::net::UnixStream::from_std(a).unwrap();
    /// # drop(stream);
    /// # });
    /// ```
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        Ok(UnixStream {
            core: StreamCore::new(stream)?,
        })
    }

    /// Unwraps the standard library's stream (still in non-blocking mode).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// let std = stream.into_std().unwrap();
    /// # drop(std);
    /// # });
    /// ```
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        self.core.into_inner()
    }

    /// The remote address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// assert!(stream.peer_addr().is_ok());
    /// # });
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.core.get().peer_addr()
    }

    /// The local address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// assert!(stream.local_addr().is_ok());
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.core.get().local_addr()
    }

    /// Shuts down the read side, the write side, or both, at once (`shutdown(2)`).
    ///
    /// Not named `shutdown`: tokio's `AsyncWriteExt::shutdown()` (with the `tokio-io`
    /// feature) shuts down the write side, and an inherent method of that name would shadow
    /// it, so `stream.shutdown().await` in tokio code would not compile. With `futures-io`'s
    /// traits, `close().await` does the same.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// stream.shutdown_with(std::net::Shutdown::Write).unwrap(); // the peer reads end of stream
    /// # });
    /// ```
    pub fn shutdown_with(&self, how: std::net::Shutdown) -> io::Result<()> {
        self.core.shutdown(how)
    }

    /// Takes the socket's pending error (`SO_ERROR`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// assert!(stream.take_error().unwrap().is_none());
    /// # });
    /// ```
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.core.take_error()
    }

    /// Waits until the stream may be readable (a read may still return `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// # peer.try_write(b"hi").unwrap();
    /// let mut buf = [0; 16];
    /// let n = loop {
    ///     stream.readable().await.unwrap();
    ///     match stream.try_read(&mut buf) {
    ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue, // not yet
    ///         r => break r.unwrap(),
    ///     }
    /// };
    /// assert_eq!(&buf[..n], b"hi");
    /// # });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.core.ready(Direction::Read).await
    }

    /// Waits until the stream may be writable (a write may still return `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// stream.writable().await.unwrap();
    /// assert_eq!(stream.try_write(b"hi").unwrap(), 2);
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.core.ready(Direction::Write).await
    }

    /// Reads what is available now, without waiting: `WouldBlock` if nothing is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// match stream.try_read(&mut [0; 16]) {
    ///     Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {} // nothing yet
    ///     r => { r.unwrap(); }
    /// }
    /// # });
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.core.try_read(buf)
    }

    /// Writes what fits now, without waiting: `WouldBlock` if nothing does.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// assert_eq!(stream.try_write(b"ping").unwrap(), 4);
    /// # });
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.core.try_write(buf)
    }

    /// Splits into a borrowed read half and write half, usable concurrently in one task.
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
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        (ReadHalf(self), WriteHalf(self))
    }

    /// Splits into owned halves that can move to different tasks; dropping the write half
    /// shuts down the write side.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// spinpark::spawn(async move { drop(read) }).await.unwrap();
    /// # drop(write);
    /// # });
    /// ```
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        let (read, write) = crate::halves::into_split(self);
        (OwnedReadHalf(read), OwnedWriteHalf(write))
    }
}

impl UnixStream {
    /// The credentials of the peer process (`SO_PEERCRED`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixStream::pair().unwrap();
    /// assert_eq!(a.peer_cred().unwrap(), b.peer_cred().unwrap());
    /// # });
    /// ```
    pub fn peer_cred(&self) -> io::Result<super::UCred> {
        super::ucred::peer_cred(self.core.raw_fd())
    }
}

crate::stream_api::impl_stream_api!(
    UnixStream,
    "let (a, b) = spinpark::net::UnixStream::pair().unwrap();"
);

impl_async_read!(UnixStream, s => s.core);
impl_async_write!(UnixStream, s => s.core);
impl_async_read!(&UnixStream, s => s.core);
impl_async_write!(&UnixStream, s => s.core);
auto_flush_write!(UnixStream, s => s.core);

impl AsRawFd for UnixStream {
    fn as_raw_fd(&self) -> RawFd {
        self.core.raw_fd()
    }
}

impl crate::halves::ShutWrite for UnixStream {
    fn shut_write(&self) -> io::Result<()> {
        self.core.shutdown(std::net::Shutdown::Write)
    }
}
