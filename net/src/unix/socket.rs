//! [`UnixSocket`]: a Unix-domain socket made and bound before it becomes a listener, a stream
//! or a datagram socket (tokio's `UnixSocket`).
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use spinpark::net::UnixSocket;
//! let dir = std::env::temp_dir().join(format!("spinpark-doc-usock-{}", std::process::id()));
//! let _ = std::fs::remove_file(&dir);
//! let socket = UnixSocket::new_stream().unwrap();
//! socket.bind(&dir).unwrap();
//! let listener = socket.listen(128).unwrap();
//! let client = UnixSocket::new_stream().unwrap().connect(&dir).await.unwrap();
//! let (_server, _) = listener.accept().await.unwrap();
//! # drop(client);
//! std::fs::remove_file(&dir).unwrap();
//! # });
//! ```
//!
//! How: the socket is only an fd and its type; `listen`, `connect` and `datagram` hand the fd
//! to the same types `bind`/`connect`/`unbound` make, so everything after is theirs.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::Path;

use super::{UnixDatagram, UnixListener, UnixStream};
use crate::stream::StreamCore;
use crate::sys::{self, SockAddr};

/// A Unix-domain socket, stream or datagram, not yet listening, connected or registered; see
/// the module docs.
pub struct UnixSocket {
    fd: OwnedFd,
    datagram: bool,
}

impl fmt::Debug for UnixSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixSocket")
            .field("fd", &self.fd.as_raw_fd())
            .field("datagram", &self.datagram)
            .finish()
    }
}

/// The error of a call that does not fit the socket's type (tokio's texts).
fn wrong_type(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl UnixSocket {
    /// A new stream socket (non-blocking, close-on-exec).
    ///
    /// ```
    /// let s = spinpark::net::UnixSocket::new_stream().unwrap();
    /// # drop(s);
    /// ```
    pub fn new_stream() -> io::Result<UnixSocket> {
        Ok(UnixSocket {
            fd: sys::stream_socket(libc::AF_UNIX)?,
            datagram: false,
        })
    }

    /// A new datagram socket (non-blocking, close-on-exec).
    ///
    /// ```
    /// let s = spinpark::net::UnixSocket::new_datagram().unwrap();
    /// # drop(s);
    /// ```
    pub fn new_datagram() -> io::Result<UnixSocket> {
        Ok(UnixSocket {
            fd: sys::unix_datagram_socket()?,
            datagram: true,
        })
    }

    /// Binds the socket to `path` (a leading NUL byte names an abstract address).
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("spinpark-doc-ubind-{}", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let s = spinpark::net::UnixSocket::new_datagram().unwrap();
    /// s.bind(&path).unwrap();
    /// std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn bind(&self, path: impl AsRef<Path>) -> io::Result<()> {
        sys::bind(self.fd.as_raw_fd(), &SockAddr::unix(path.as_ref())?)
    }

    /// Listens with up to `backlog` pending connections, on the current runtime.
    ///
    /// # Errors
    /// On a datagram socket, an `InvalidInput` error; the OS error of `listen`; an error
    /// outside a spinpark runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-doc-ulisten-{}", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let s = spinpark::net::UnixSocket::new_stream().unwrap();
    /// s.bind(&path).unwrap();
    /// let listener = s.listen(1024).unwrap();
    /// # drop(listener);
    /// std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn listen(self, backlog: u32) -> io::Result<UnixListener> {
        if self.datagram {
            return Err(wrong_type("listen cannot be called on a datagram socket"));
        }
        sys::listen(self.fd.as_raw_fd(), backlog)?;
        UnixListener::from_std(std::os::unix::net::UnixListener::from(self.fd))
    }

    /// Connects to the listener at `path` and returns the stream, on the current runtime.
    ///
    /// # Errors
    /// On a datagram socket, an `InvalidInput` error; the connect error as the OS gave it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-doc-uconn-{}", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let _listener = spinpark::net::UnixListener::bind(&path).unwrap();
    /// let s = spinpark::net::UnixSocket::new_stream().unwrap();
    /// let stream = s.connect(&path).await.unwrap();
    /// # drop(stream);
    /// std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub async fn connect(self, path: impl AsRef<Path>) -> io::Result<UnixStream> {
        if self.datagram {
            return Err(wrong_type("connect cannot be called on a datagram socket"));
        }
        let addr = SockAddr::unix(path.as_ref())?;
        let socket = std::os::unix::net::UnixStream::from(self.fd);
        let core = StreamCore::connect(socket, &addr).await?;
        Ok(UnixStream { core })
    }

    /// Turns a datagram socket into a [`UnixDatagram`] on the current runtime.
    ///
    /// # Errors
    /// On a stream socket, an `InvalidInput` error; an error outside a spinpark runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::UnixSocket::new_datagram().unwrap();
    /// let datagram = s.datagram().unwrap();
    /// # drop(datagram);
    /// # });
    /// ```
    pub fn datagram(self) -> io::Result<UnixDatagram> {
        if !self.datagram {
            return Err(wrong_type("datagram cannot be called on a stream socket"));
        }
        UnixDatagram::from_std(std::os::unix::net::UnixDatagram::from(self.fd))
    }
}

impl AsRawFd for UnixSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for UnixSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
