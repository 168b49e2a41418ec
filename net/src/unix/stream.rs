//! [`UnixStream`]: a connected Unix-domain socket with `futures-io`'s `AsyncRead` and
//! `AsyncWrite`.

use std::future::poll_fn;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::io_source::IoSource;
use crate::readiness::Direction;

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
    io: IoSource<std::os::unix::net::UnixStream>,
}

impl std::fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnixStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .field("fd", &self.io.raw_fd())
            .finish()
    }
}

impl UnixStream {
    /// Connects to the socket at `path`.
    ///
    /// # Errors
    /// The connect error, naming the path: `NotFound` when nothing is there,
    /// `ConnectionRefused` when nobody listens, `WouldBlock` when the listener's backlog is
    /// full; `InvalidInput` for a path too long for a socket address (107 bytes) or with a NUL.
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
        let path = path.as_ref();
        let context = |e: io::Error| {
            io::Error::new(e.kind(), format!("connecting to {}: {e}", path.display()))
        };
        let (std, in_progress) = start_connect(path).map_err(context)?;
        let stream = UnixStream {
            io: if in_progress {
                IoSource::connecting(std)?
            } else {
                IoSource::new(std)?
            },
        };
        if in_progress {
            poll_fn(|cx| stream.io.poll_ready(Direction::Write, cx)).await?;
            if let Some(e) = stream.io.get().take_error()? {
                return Err(context(e));
            }
        }
        Ok(stream)
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
        let (a, b) = crate::sys::socketpair()?;
        let wrap = |fd| {
            Ok::<_, io::Error>(UnixStream {
                io: IoSource::new(std::os::unix::net::UnixStream::from(fd))?,
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
            io: IoSource::new(stream)?,
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
        Ok(self.io.into_inner())
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
        self.io.get().peer_addr()
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
        self.io.get().local_addr()
    }

    stream_io_methods! {
        setup: [r#"# let (stream, _other) = spinpark::net::UnixStream::pair().unwrap();"#],
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
    pub fn split(&mut self) -> (super::ReadHalf<'_>, super::WriteHalf<'_>) {
        super::split::split(self)
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
    pub fn into_split(self) -> (super::OwnedReadHalf, super::OwnedWriteHalf) {
        super::split::into_split(self)
    }

    pub(crate) fn poll_write_priv(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_transfer(Direction::Write, cx, buf.len(), |s| {
            crate::sys::send(s.as_raw_fd(), buf)
        })
    }
}

/// Creates a non-blocking Unix socket and starts connecting it to `path`; the flag says
/// whether the connection is still in progress.
fn start_connect(path: &Path) -> io::Result<(std::os::unix::net::UnixStream, bool)> {
    let addr = crate::sys::SockAddr::unix_path(path)?;
    // The std stream owns (and will close) the socket, also on the error paths below.
    let stream = std::os::unix::net::UnixStream::from(crate::sys::stream_socket(libc::AF_UNIX)?);
    match crate::sys::connect(stream.as_raw_fd(), &addr) {
        Ok(in_progress) => Ok((stream, in_progress)),
        Err(e) if crate::sys::errno(&e) == Some(libc::EAGAIN) => Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "the listener's backlog is full",
        )),
        Err(e) => Err(e),
    }
}

impl_async_read!(UnixStream, s => s);
impl_async_write!(UnixStream, s => s);
impl_async_read!(&UnixStream, s => s);
impl_async_write!(&UnixStream, s => s);

impl AsRawFd for UnixStream {
    fn as_raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }
}
