//! [`TcpStream`]: a connected TCP socket with `futures-io`'s `AsyncRead` and `AsyncWrite`.

use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};

use crate::auto_flush::auto_flush_write;
use crate::io_traits::{impl_async_read, impl_async_write};
use crate::readiness::Direction;
use crate::stream::StreamCore;

use super::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpSocket, WriteHalf};

/// A TCP connection.
///
/// ```no_run
/// # async fn f() -> std::io::Result<()> {
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// let mut stream = spinpark_net::TcpStream::connect("127.0.0.1:7000").await?;
/// stream.write_all(b"ping").await?;
/// let mut buf = [0; 4];
/// stream.read_exact(&mut buf).await?;
/// # Ok(()) }
/// ```
///
/// Reads and writes go straight to the socket (no buffering). After the peer shuts down its
/// side, reads return 0 and writes still work (half-close); writing to a peer that closed the
/// connection fails with `BrokenPipe` or `ConnectionReset`. Dropping the stream closes it.
pub struct TcpStream {
    pub(super) core: StreamCore<std::net::TcpStream>,
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .field("fd", &self.core.raw_fd())
            .finish()
    }
}

impl TcpStream {
    /// Connects to `addr`, trying each of its addresses in turn. A host name is looked up on
    /// the blocking pool.
    ///
    /// # Errors
    /// The last address's error, as the OS gave it (`ConnectionRefused`, `raw_os_error()`
    /// `Some(ECONNREFUSED)`, for a closed port); a resolver error names the host.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use futures_util::AsyncWriteExt;
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let addr = l.local_addr().unwrap();
    /// let mut stream = spinpark::net::TcpStream::connect(addr).await.unwrap();
    /// stream.write_all(b"hello").await.unwrap();
    /// // Host names work too, looked up on the blocking pool:
    /// let by_name = spinpark::net::TcpStream::connect(("localhost", addr.port())).await;
    /// # drop(by_name);
    /// # });
    /// ```
    pub async fn connect(addr: impl crate::ToSocketAddrs) -> io::Result<TcpStream> {
        let mut last = None;
        for a in crate::addr::resolve(addr).await? {
            match TcpSocket::new_for(&a) {
                Ok(socket) => match socket.connect(a).await {
                    Ok(s) => return Ok(s),
                    Err(e) => last = Some(e),
                },
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "no addresses to connect to")
        }))
    }

    /// Wraps a connected stream from the standard library (it is made non-blocking).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let std = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
    /// let stream = spinpark::net::TcpStream::from_std(std).unwrap();
    /// # drop(stream);
    /// # });
    /// ```
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        Ok(TcpStream::from_core(StreamCore::new(stream)?))
    }

    /// A stream around a connected core, coalescing its task's small writes (`cork.rs`).
    pub(crate) fn from_core(core: StreamCore<std::net::TcpStream>) -> TcpStream {
        TcpStream {
            core: core.corked(),
        }
    }

    /// Unwraps the standard library's stream (still in non-blocking mode).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let std = stream.into_std().unwrap();
    /// # drop(std);
    /// # });
    /// ```
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        self.core.into_inner()
    }

    /// The remote address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
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
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// assert!(stream.local_addr().is_ok());
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.core.get().local_addr()
    }

    /// Sets `TCP_NODELAY` (disables Nagle's algorithm): small writes go out at once.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// stream.set_nodelay(true).unwrap();
    /// # });
    /// ```
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.core.get().set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// stream.set_nodelay(true).unwrap();
    /// assert!(stream.nodelay().unwrap());
    /// # });
    /// ```
    pub fn nodelay(&self) -> io::Result<bool> {
        self.core.get().nodelay()
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
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
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
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
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
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// # let (peer, _) = l.accept().await.unwrap();
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
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
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
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
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
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// assert_eq!(stream.try_write(b"ping").unwrap(), 4);
    /// # });
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.core.try_write(buf)
    }

    /// Whether epoll reported that the peer closed its sending side.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// assert!(!stream.is_read_closed());
    /// # });
    /// ```
    pub fn is_read_closed(&self) -> bool {
        self.core.is_read_closed()
    }

    /// Splits into a borrowed read half and write half, usable concurrently in one task.
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
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        (ReadHalf(self), WriteHalf(self))
    }

    /// Splits into owned halves that can move to different tasks; see
    /// [`OwnedWriteHalf`] for what dropping the write half does.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let (read, write) = stream.into_split();
    /// spinpark::spawn(async move { drop(read) }).await.unwrap();
    /// # drop(write);
    /// # });
    /// ```
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        let (read, write) = crate::halves::into_split(self);
        (OwnedReadHalf(read), OwnedWriteHalf(write))
    }

    /// Reads into possibly uninitialised memory, waiting until the socket is readable: on
    /// `Ok(n)` the first `n` bytes of `buf` are initialised (`0` means end of stream).
    ///
    /// This is for adapters (hyper's `Read`, tokio's `AsyncRead`) whose buffers are not
    /// zeroed: `futures-io`'s `AsyncRead` takes `&mut [u8]`, which would force them to zero
    /// every buffer before each read.
    ///
    /// ```no_run
    /// # async fn f(stream: spinpark_net::TcpStream) -> std::io::Result<()> {
    /// let mut buf = Vec::<u8>::with_capacity(4096);
    /// let n = std::future::poll_fn(|cx| stream.poll_read_uninit(cx, buf.spare_capacity_mut())).await?;
    /// // SAFETY: poll_read_uninit initialised the first `n` bytes of the spare capacity.
    /// unsafe { buf.set_len(n) };
    /// # Ok(()) }
    /// ```
    pub fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        self.core.poll_read_uninit(cx, buf)
    }
}

crate::stream_api::impl_stream_api!(
    TcpStream,
    "let l = spinpark::net::TcpListener::bind(\"127.0.0.1:0\").await.unwrap();\nlet a = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();\nlet (b, _) = l.accept().await.unwrap();"
);

impl_async_read!(TcpStream, s => s.core);
impl_async_write!(TcpStream, s => s.core);
impl_async_read!(&TcpStream, s => s.core);
impl_async_write!(&TcpStream, s => s.core);
auto_flush_write!(TcpStream, s => s.core);

impl AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> RawFd {
        self.core.raw_fd()
    }
}

impl crate::halves::ShutWrite for TcpStream {
    fn shut_write(&self) -> io::Result<()> {
        self.core.shutdown(std::net::Shutdown::Write)
    }
}
