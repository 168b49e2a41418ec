//! [`TcpListener`]: accepting connections.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use crate::io_source::IoSource;
use crate::readiness::Direction;
use crate::sys;
use crate::tcp::stream::TcpStream;
use crate::time::{sleep, Sleep};

/// The listen backlog [`TcpListener::bind`] asks for: the most connections the kernel queues
/// until they are accepted. The kernel caps it at `net.core.somaxconn` (4096 by default since
/// Linux 5.4). A short queue makes bursts of connects wait for a SYN retransmit (a second).
pub const DEFAULT_BACKLOG: u32 = 1024;

/// How long accepting pauses after the process or system ran out of descriptors or memory.
/// Existing connections keep being served meanwhile; when one closes, the next try succeeds.
///
/// ```
/// assert!(spinpark::net::ACCEPT_BACKOFF < std::time::Duration::from_secs(1));
/// ```
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// A TCP socket listening for connections.
///
/// ```no_run
/// # async fn f() -> std::io::Result<()> {
/// use spinpark_net::TcpListener;
/// let listener = TcpListener::bind("127.0.0.1:0").await?;
/// loop {
///     let (stream, peer) = listener.accept().await?;
///     // spawn a task per connection ...
/// #   drop((stream, peer));
/// }
/// # }
/// ```
///
/// `accept` skips errors that belong to a single connection (it was reset or refused before
/// it could be accepted). When descriptors or memory run out (`EMFILE`, `ENFILE`, `ENOBUFS`,
/// `ENOMEM`), it does not spin: it waits [`ACCEPT_BACKOFF`] and tries again, as long as it
/// takes.
pub struct TcpListener {
    io: IoSource<std::net::TcpListener>,
    backoff: Mutex<Option<Sleep>>,
}

impl std::fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpListener")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.io.raw_fd())
            .finish()
    }
}

impl TcpListener {
    /// Binds to `addr` (the first of its addresses that works) and listens, with a backlog of
    /// [`DEFAULT_BACKLOG`]. A host name is looked up on the blocking pool.
    ///
    /// # Errors
    /// The bind error, naming the address; or an error outside a spinpark runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// assert_ne!(listener.local_addr().unwrap().port(), 0);
    /// # });
    /// ```
    pub async fn bind(addr: impl crate::ToSocketAddrs) -> io::Result<TcpListener> {
        Self::bind_with_backlog(addr, DEFAULT_BACKLOG).await
    }

    /// [`TcpListener::bind`] with a listen backlog of `backlog` connections (the kernel caps
    /// it at `net.core.somaxconn`).
    ///
    /// ```no_run
    /// # async fn f() -> std::io::Result<()> {
    /// let listener = spinpark::net::TcpListener::bind_with_backlog("127.0.0.1:0", 4096).await?;
    /// # drop(listener); Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`TcpListener::bind`].
    pub async fn bind_with_backlog(
        addr: impl crate::ToSocketAddrs,
        backlog: u32,
    ) -> io::Result<TcpListener> {
        let mut last = None;
        for a in crate::addr::resolve(addr).await? {
            match listen_on(a, backlog) {
                Ok(l) => return Self::from_std(l),
                Err(e) => last = Some(e),
            }
        }
        let e = last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "no addresses to bind to")
        });
        Err(io::Error::new(
            e.kind(),
            format!("binding a TCP listener: {e}"),
        ))
    }

    /// Wraps a listener from the standard library (it is made non-blocking).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let std = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let listener = spinpark::net::TcpListener::from_std(std).unwrap();
    /// # drop(listener);
    /// # });
    /// ```
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Ok(TcpListener {
            io: IoSource::new(listener)?,
            backoff: Mutex::new(None),
        })
    }

    /// Unwraps the standard library's listener (still in non-blocking mode).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let std = listener.into_std().unwrap();
    /// # drop(std);
    /// # });
    /// ```
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        Ok(self.io.into_inner())
    }

    /// The address this listener is bound to (with the actual port when bound to port 0).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// assert!(listener.local_addr().unwrap().ip().is_loopback());
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().local_addr()
    }

    /// Accepts a connection; its stream is registered with the same runtime. The future is
    /// a `FusedFuture`, so `futures::select!` takes it as it is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let client = spinpark::spawn(spinpark::net::TcpStream::connect(addr));
    /// let (stream, peer) = listener.accept().await.unwrap();
    /// assert_eq!(stream.peer_addr().unwrap(), peer);
    /// client.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn accept(&self) -> super::Accept<'_> {
        super::Accept::new(self)
    }

    /// Polls for a connection; see [`TcpListener::accept`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let client = spinpark::spawn(spinpark::net::TcpStream::connect(addr));
    /// let (_stream, _peer) = std::future::poll_fn(|cx| listener.poll_accept(cx)).await.unwrap();
    /// client.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        loop {
            {
                let mut backoff = self.backoff.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(s) = backoff.as_mut() {
                    ready!(Pin::new(s).poll(cx));
                    *backoff = None;
                }
            }
            match ready!(self
                .io
                .poll_io(Direction::Read, cx, |l| l.accept(), |_| false))
            {
                Ok((stream, peer)) => {
                    return Poll::Ready(TcpStream::from_std(stream).map(|s| (s, peer)));
                }
                Err(e) if is_per_connection(&e) => continue,
                Err(e) if is_resource_exhaustion(&e) => {
                    *self.backoff.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(sleep(ACCEPT_BACKOFF));
                }
                Err(e) => {
                    return Poll::Ready(Err(io::Error::new(e.kind(), format!("accept: {e}"))))
                }
            }
        }
    }

    /// The accepted connections as a `Stream` (it never ends).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use futures_util::StreamExt;
    /// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let client = spinpark::spawn(spinpark::net::TcpStream::connect(addr));
    /// let mut incoming = listener.incoming();
    /// let stream = incoming.next().await.unwrap().unwrap();
    /// # drop(stream);
    /// client.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn incoming(&self) -> Incoming<'_> {
        Incoming { listener: self }
    }
}

/// A non-blocking socket bound to `addr` (with `SO_REUSEADDR`, as the standard library sets)
/// and listening with `backlog`.
fn listen_on(addr: SocketAddr, backlog: u32) -> io::Result<std::net::TcpListener> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // The std listener owns (and will close) the socket, also on the error paths below.
    let listener = std::net::TcpListener::from(sys::stream_socket(domain)?);
    let fd = listener.as_raw_fd();
    sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
    sys::bind(fd, &sys::SockAddr::inet(&addr), || {
        format!("binding to {addr}")
    })?;
    sys::listen(fd, backlog)?;
    Ok(listener)
}

/// An error that concerns only the connection being accepted.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED | libc::EPERM | libc::EPROTO | libc::ECONNRESET | libc::ETIMEDOUT)
    )
}

/// Out of descriptors or memory: the pending connection stays queued in the kernel.
fn is_resource_exhaustion(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// The `Stream` of [`TcpListener::incoming`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::StreamExt;
/// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let mut incoming: spinpark::net::Incoming<'_> = listener.incoming();
/// let addr = listener.local_addr().unwrap();
/// let client = spinpark::spawn(spinpark::net::TcpStream::connect(addr));
/// assert!(incoming.next().await.unwrap().is_ok());
/// client.await.unwrap().unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct Incoming<'a> {
    listener: &'a TcpListener,
}

impl futures_core::Stream for Incoming<'_> {
    type Item = io::Result<TcpStream>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.listener
            .poll_accept(cx)
            .map(|r| Some(r.map(|(s, _)| s)))
    }
}
