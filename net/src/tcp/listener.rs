//! [`TcpListener`]: accepting connections.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::listener::ListenerCore;

use super::{Accept, TcpSocket, TcpStream};

/// The listen backlog [`TcpListener::bind`] asks for: the most connections the kernel queues
/// until they are accepted. The kernel caps it at `net.core.somaxconn` (4096 by default since
/// Linux 5.4). A short queue makes bursts of connects wait for a SYN retransmit (a second).
pub const DEFAULT_BACKLOG: u32 = 1024;

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
/// `ENOMEM`), it does not spin: it waits [`ACCEPT_BACKOFF`](super::ACCEPT_BACKOFF) and tries
/// again, as long as it takes.
pub struct TcpListener {
    core: ListenerCore<std::net::TcpListener>,
}

impl std::fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpListener")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.core.raw_fd())
            .finish()
    }
}

impl TcpListener {
    /// Binds to `addr` (the first of its addresses that works) and listens, with a backlog of
    /// [`DEFAULT_BACKLOG`]. A host name is looked up on the blocking pool.
    ///
    /// # Errors
    /// The bind error of the last address tried, as the OS gave it (`AddrInUse`, with
    /// `raw_os_error()` `Some(EADDRINUSE)`, ...); an error outside a spinpark runtime.
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
            // With `SO_REUSEADDR`, as the standard library sets.
            let listen = || {
                let socket = TcpSocket::new_for(&a)?;
                socket.set_reuseaddr(true)?;
                socket.bind(a)?;
                socket.listen(backlog)
            };
            match listen() {
                Ok(l) => return Ok(l),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "no addresses to bind to")
        }))
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
        Self::from_nonblocking(listener)
    }

    /// Registers a listening socket that is already non-blocking.
    pub(super) fn from_nonblocking(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        Ok(TcpListener {
            core: ListenerCore::new(listener)?,
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
        Ok(self.core.into_inner())
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
        self.core.get().local_addr()
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
    pub fn accept(&self) -> Accept<'_> {
        Accept::new(self)
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
        let (mut core, addr) = ready!(self.core.poll_accept(cx))?;
        let addr = addr.to_inet()?;
        core.tally_peer(&addr);
        Poll::Ready(Ok((TcpStream::from_core(core), addr)))
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

/// The `Stream` of [`TcpListener::incoming`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::StreamExt;
/// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let mut incoming: spinpark::net::tcp::Incoming<'_> = listener.incoming();
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

impl AsRawFd for TcpListener {
    fn as_raw_fd(&self) -> RawFd {
        self.core.raw_fd()
    }
}
