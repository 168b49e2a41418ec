//! [`TcpStream`]: a connected TCP socket with `futures-io`'s `AsyncRead` and `AsyncWrite`.

use std::future::poll_fn;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};

use crate::io_source::IoSource;
use crate::readiness::Direction;

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
    io: IoSource<std::net::TcpStream>,
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .field("fd", &self.io.raw_fd())
            .finish()
    }
}

impl TcpStream {
    /// Connects to `addr`, trying each of its addresses in turn. A host name is looked up on
    /// the blocking pool.
    ///
    /// # Errors
    /// The last address's error (`ConnectionRefused` for a closed port), naming the address.
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
            match Self::connect_addr(a).await {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(io::Error::new(e.kind(), format!("connecting to {a}: {e}"))),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "no addresses to connect to")
        }))
    }

    async fn connect_addr(addr: SocketAddr) -> io::Result<TcpStream> {
        Self::connected(start_connect(addr)?).await
    }

    /// Finishes a connection started on the non-blocking `std` (its `connect` returned
    /// `EINPROGRESS` or succeeded).
    pub(crate) async fn connected(std: std::net::TcpStream) -> io::Result<TcpStream> {
        let stream = TcpStream {
            io: IoSource::connecting(std)?,
        };
        // The connection is established (or failed) when the socket turns writable.
        poll_fn(|cx| stream.io.poll_ready(Direction::Write, cx)).await?;
        if let Some(e) = stream.io.get().take_error()? {
            return Err(e);
        }
        // Writable without an error but not connected would be a kernel oddity; make sure.
        stream.io.get().peer_addr()?;
        Ok(stream)
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
        Ok(TcpStream {
            io: IoSource::new(stream)?,
        })
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
        Ok(self.io.into_inner())
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
        self.io.get().peer_addr()
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
        self.io.get().local_addr()
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
        self.io.get().set_nodelay(nodelay)
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
        self.io.get().nodelay()
    }

    stream_io_methods! {
        setup: [
            r#"# let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();"#,
            r#"# let stream = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();"#,
        ],
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
        self.io.read_closed()
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
    pub fn split(&mut self) -> (super::ReadHalf<'_>, super::WriteHalf<'_>) {
        super::split::split(self)
    }

    /// Splits into owned halves that can move to different tasks; see
    /// [`super::OwnedWriteHalf`] for what dropping the write half does.
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
    pub fn into_split(self) -> (super::OwnedReadHalf, super::OwnedWriteHalf) {
        super::split::into_split(self)
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
        let len = buf.len();
        self.io.poll_transfer(Direction::Read, cx, len, |s| {
            crate::sys::recv(s.as_raw_fd(), buf)
        })
    }

    pub(crate) fn poll_write_priv(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        // std's write uses send(MSG_NOSIGNAL): a closed peer is an EPIPE error, not SIGPIPE.
        self.io
            .poll_transfer(Direction::Write, cx, buf.len(), |s| (&*s).write(buf))
    }
}

/// Creates a non-blocking socket and starts connecting it.
fn start_connect(addr: SocketAddr) -> io::Result<std::net::TcpStream> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // The std stream owns (and will close) the socket, also on the error paths below.
    let stream = std::net::TcpStream::from(crate::sys::stream_socket(domain)?);
    crate::sys::connect(stream.as_raw_fd(), &crate::sys::SockAddr::inet(&addr))?;
    Ok(stream)
}

impl_async_read!(TcpStream, s => s);
impl_async_write!(TcpStream, s => s);
impl_async_read!(&TcpStream, s => s);
impl_async_write!(&TcpStream, s => s);

impl AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }
}
