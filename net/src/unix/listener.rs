//! [`UnixListener`]: accepting Unix-domain connections.

use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::task::{ready, Context, Poll};

use crate::listener::ListenerCore;
use crate::sys::{self, SockAddr};

use super::{Accept, SocketAddr, UnixStream};

/// A Unix-domain socket listening for connections.
///
/// ```no_run
/// # async fn f() -> std::io::Result<()> {
/// let listener = spinpark_net::UnixListener::bind("/tmp/my.sock")?;
/// loop {
///     let (stream, _) = listener.accept().await?;
///     // spawn a task per connection ...
/// #   drop(stream);
/// }
/// # }
/// ```
///
/// Dropping the listener closes it but leaves the socket file in place (remove it yourself,
/// as with the standard library). `accept` follows the same policy as
/// [`TcpListener::accept`](crate::TcpListener::accept): it skips errors that concern only the
/// connection being accepted, and when descriptors or memory run out it waits
/// [`ACCEPT_BACKOFF`](crate::tcp::ACCEPT_BACKOFF) and tries again instead of spinning.
pub struct UnixListener {
    core: ListenerCore<std::os::unix::net::UnixListener>,
}

impl std::fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnixListener")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.core.raw_fd())
            .finish()
    }
}

impl UnixListener {
    /// Binds to `path` (which must not exist yet) and listens, with a backlog of
    /// [`DEFAULT_BACKLOG`](crate::tcp::DEFAULT_BACKLOG) connections. A `path` that starts with
    /// a NUL byte (`"\0name"`) names a socket in Linux's abstract namespace instead, as tokio
    /// reads it: nothing is created in the file system, and the name is free again once the
    /// listener is closed.
    ///
    /// # Errors
    /// The bind error as the OS gave it, with its `raw_os_error()` (`AddrInUse` if the path
    /// exists or the name is taken); `InvalidInput`, naming the path, for one too long for a
    /// socket address or with a NUL byte after its start; an error outside a spinpark
    /// runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let path = std::env::temp_dir().join(format!("spinpark-doc-ul-{}-{}", std::process::id(), line!()));
    /// # let _ = std::fs::remove_file(&path);
    /// let listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// # drop(listener);
    /// # std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        Self::bind_sockaddr(SockAddr::unix(path.as_ref())?)
    }

    /// Binds a new socket to `addr` and listens (`bind`, `bind_addr`).
    fn bind_sockaddr(addr: SockAddr) -> io::Result<UnixListener> {
        let socket = sys::stream_socket(libc::AF_UNIX)?;
        sys::bind(socket.as_raw_fd(), &addr)?;
        sys::listen(socket.as_raw_fd(), crate::tcp::DEFAULT_BACKLOG)?;
        // Non-blocking from its creation.
        Ok(UnixListener {
            core: ListenerCore::new(std::os::unix::net::UnixListener::from(socket))?,
        })
    }

    /// Binds to `addr` (a path or an abstract name, as std's `SocketAddr` holds them) and
    /// listens; see [`UnixListener::bind`] (tokio's `bind_addr`).
    ///
    /// # Errors
    /// Those of [`UnixListener::bind`]; `InvalidInput` for an unnamed address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::os::linux::net::SocketAddrExt;
    /// let name = format!("spinpark-doc-bind-addr-{}", std::process::id());
    /// let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    /// let listener = spinpark::net::UnixListener::bind_addr(&addr).unwrap();
    /// let _client = spinpark::net::UnixStream::connect_addr(&addr).await.unwrap();
    /// # drop(listener);
    /// # });
    /// ```
    pub fn bind_addr(addr: &std::os::unix::net::SocketAddr) -> io::Result<UnixListener> {
        Self::bind_sockaddr(SockAddr::from_std_unix(addr)?)
    }

    /// Wraps a listener from the standard library (it is made non-blocking).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let path = std::env::temp_dir().join(format!("spinpark-doc-ul-{}-{}", std::process::id(), line!()));
    /// # let _ = std::fs::remove_file(&path);
    /// let std = std::os::unix::net::UnixListener::bind(&path).unwrap();
    /// let listener = spinpark::net::UnixListener::from_std(std).unwrap();
    /// # drop(listener);
    /// # std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        Ok(UnixListener {
            core: ListenerCore::new(listener)?,
        })
    }

    /// Unwraps the standard library's listener (still in non-blocking mode).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let path = std::env::temp_dir().join(format!("spinpark-doc-ul-{}-{}", std::process::id(), line!()));
    /// # let _ = std::fs::remove_file(&path);
    /// let listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// let std = listener.into_std().unwrap();
    /// # drop(std);
    /// # std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        Ok(self.core.into_inner())
    }

    /// The address this listener is bound to.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let path = std::env::temp_dir().join(format!("spinpark-doc-ul-{}-{}", std::process::id(), line!()));
    /// # let _ = std::fs::remove_file(&path);
    /// let listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// assert_eq!(listener.local_addr().unwrap().as_pathname(), Some(path.as_path()));
    /// # std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.core.get().local_addr()
    }

    /// Accepts a connection; its stream is registered with the same runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let path = std::env::temp_dir().join(format!("spinpark-doc-ul-{}-{}", std::process::id(), line!()));
    /// # let _ = std::fs::remove_file(&path);
    /// let listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// let client = spinpark::spawn(spinpark::net::UnixStream::connect(path.clone()));
    /// let (stream, _addr) = listener.accept().await.unwrap();
    /// # drop(stream);
    /// client.await.unwrap().unwrap();
    /// # std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn accept(&self) -> Accept<'_> {
        Accept::new(self)
    }

    /// Polls for a connection; see [`UnixListener::accept`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let path = std::env::temp_dir().join(format!("spinpark-doc-ul-{}-{}", std::process::id(), line!()));
    /// # let _ = std::fs::remove_file(&path);
    /// let listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// let client = spinpark::spawn(spinpark::net::UnixStream::connect(path.clone()));
    /// let (_stream, _addr) = std::future::poll_fn(|cx| listener.poll_accept(cx)).await.unwrap();
    /// client.await.unwrap().unwrap();
    /// # std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        let (core, addr) = ready!(self.core.poll_accept(cx))?;
        Poll::Ready(Ok((UnixStream { core }, addr.to_unix()?)))
    }
}

impl std::os::fd::AsRawFd for UnixListener {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.core.raw_fd()
    }
}
