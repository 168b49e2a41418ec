//! Putting any non-blocking file descriptor on the runtime's reactor: [`AsyncFd`].
//!
//! ```
//! use std::io::Read;
//! use std::os::unix::net::UnixStream;
//! use spinpark_net::io::AsyncFd;
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! let (a, mut b) = UnixStream::pair().unwrap();
//! a.set_nonblocking(true).unwrap();
//! let fd = AsyncFd::new(a).unwrap();
//! std::io::Write::write_all(&mut b, b"ping").unwrap();
//! let mut buf = [0; 4];
//! let n = loop {
//!     let mut guard = fd.readable().await.unwrap();
//!     match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
//!         Ok(result) => break result.unwrap(),
//!         Err(_would_block) => continue, // readiness was cleared; wait for the next event
//!     }
//! };
//! assert_eq!(&buf[..n], b"ping");
//! # });
//! ```
//!
//! How it works: the fd is registered in the runtime's epoll set like spinpark's own sockets
//! (edge-triggered, both directions), so spinning workers poll it too. A guard from
//! [`AsyncFd::readable`] / [`AsyncFd::writable`] remembers the readiness it saw; after the
//! caller's syscall returned `WouldBlock`, [`AsyncFdReadyGuard::clear_ready`] (or `try_io`,
//! which does it for you) clears that readiness unless a new event arrived meanwhile, so the
//! next wait sleeps until the kernel reports a change.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{ready, Context, Poll};

use crate::io_source::IoSource;
use crate::readiness::{Direction, Seen};

/// A non-blocking fd `T` registered with the current runtime's reactor. Dropping it removes
/// the fd from epoll, then drops `T` (which closes it, if `T` owns it).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use std::os::unix::net::UnixStream;
/// let (a, _b) = UnixStream::pair().unwrap();
/// a.set_nonblocking(true).unwrap();
/// let fd = spinpark::io::AsyncFd::new(a).unwrap();
/// let guard = fd.writable().await.unwrap(); // a fresh socket has room
/// drop(guard);
/// # });
/// ```
pub struct AsyncFd<T: AsRawFd> {
    io: IoSource<T>,
}

impl<T: AsRawFd> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("fd", &self.io.raw_fd())
            .finish()
    }
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`, whose fd must already be in non-blocking mode, with the current
    /// runtime's reactor.
    ///
    /// # Errors
    /// `InvalidInput` if the fd is in blocking mode (an operation on it would stall a
    /// worker); the registration error (`EPERM` for a regular file, which epoll does not
    /// support); an error outside a spinpark runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap(); // required
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub fn new(inner: T) -> io::Result<Self> {
        let fd = inner.as_raw_fd();
        let nonblocking = crate::sys::is_nonblocking(fd)?;
        if !nonblocking {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("AsyncFd::new(fd {fd}): the fd is in blocking mode; set O_NONBLOCK first"),
            ));
        }
        Ok(AsyncFd {
            io: IoSource::connecting(inner)?,
        })
    }

    /// The wrapped object.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// assert!(fd.get_ref().peer_addr().is_ok());
    /// # });
    /// ```
    pub fn get_ref(&self) -> &T {
        self.io.get()
    }

    /// The wrapped object, mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let _inner: &mut std::os::unix::net::UnixStream = fd.get_mut();
    /// # });
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        self.io.get_mut()
    }

    /// Deregisters the fd and hands back the wrapped object.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let a = fd.into_inner(); // no longer on the reactor
    /// # drop(a);
    /// # });
    /// ```
    pub fn into_inner(self) -> T {
        self.io.into_inner()
    }

    /// Waits until the fd may be readable; the guard says what to do after trying.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// use std::io::Read;
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut buf = [0; 1];
    /// let mut guard = fd.readable().await.unwrap();
    /// let n = guard.try_io(|inner| inner.get_ref().read(&mut buf)).unwrap().unwrap();
    /// assert_eq!(n, 1);
    /// # });
    /// ```
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        poll_fn(|cx| self.poll_read_ready(cx)).await
    }

    /// Waits until the fd may be writable; the guard says what to do after trying.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// use std::io::Write;
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut guard = fd.writable().await.unwrap();
    /// let n = guard.try_io(|inner| inner.get_ref().write(b"hi")).unwrap().unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        poll_fn(|cx| self.poll_write_ready(cx)).await
    }

    /// Polls for read readiness; see [`AsyncFd::readable`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = std::future::poll_fn(|cx| fd.poll_read_ready(cx)).await.unwrap();
    /// # drop(guard);
    /// # });
    /// ```
    pub fn poll_read_ready(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'_, T>>> {
        self.poll_ready(Direction::Read, cx)
    }

    /// Polls for write readiness; see [`AsyncFd::writable`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = std::future::poll_fn(|cx| fd.poll_write_ready(cx)).await.unwrap();
    /// # drop(guard);
    /// # });
    /// ```
    pub fn poll_write_ready(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'_, T>>> {
        self.poll_ready(Direction::Write, cx)
    }

    fn poll_ready(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'_, T>>> {
        let seen = ready!(self.io.poll_seen(dir, cx))?;
        Poll::Ready(Ok(AsyncFdReadyGuard {
            fd: self,
            seen: Some(seen),
        }))
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }
}

/// Readiness seen by [`AsyncFd::readable`] or [`AsyncFd::writable`]. Try the operation; if it
/// returns `WouldBlock`, call [`clear_ready`](Self::clear_ready) (or use
/// [`try_io`](Self::try_io), which does), or the next wait returns at once.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
/// # a.set_nonblocking(true).unwrap();
/// # std::io::Write::write_all(&mut b, b"x").unwrap();
/// use std::io::Read;
/// let fd = spinpark::io::AsyncFd::new(a).unwrap();
/// let mut buf = [0; 8];
/// let mut guard = fd.readable().await.unwrap();
/// match guard.get_inner().read(&mut buf) {
///     Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => guard.clear_ready(),
///     r => assert_eq!(r.unwrap(), 1),
/// }
/// # });
/// ```
#[must_use = "try the operation, then clear the readiness if it would block"]
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    fd: &'a AsyncFd<T>,
    seen: Option<Seen>,
}

impl<T: AsRawFd> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyGuard")
            .field("fd", &self.fd)
            .field("cleared", &self.seen.is_none())
            .finish()
    }
}

impl<'a, T: AsRawFd> AsyncFdReadyGuard<'a, T> {
    /// The operation returned `WouldBlock`: forget this readiness, so the next wait sleeps
    /// until the kernel reports a new event (one that arrived since the wait is kept).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// use std::io::Read;
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut buf = [0; 8];
    /// let mut guard = fd.readable().await.unwrap();
    /// guard.get_inner().read(&mut buf).unwrap(); // took the one byte
    /// if let Err(e) = guard.get_inner().read(&mut buf) {
    ///     assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    ///     guard.clear_ready(); // the next readable() waits for new data
    /// }
    /// # });
    /// ```
    pub fn clear_ready(&mut self) {
        if let Some(seen) = self.seen.take() {
            self.fd.io.clear(seen);
        }
    }

    /// Keeps the readiness (the default when the guard is dropped without clearing).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut guard = fd.readable().await.unwrap();
    /// guard.retain_ready(); // nothing was read: the next readable() returns at once
    /// drop(guard);
    /// drop(fd.readable().await.unwrap());
    /// # });
    /// ```
    pub fn retain_ready(&mut self) {
        self.seen = None;
    }

    /// Runs `f`; if it returns `WouldBlock`, clears the readiness and returns
    /// `Err(TryIoError)`, so the caller waits again. Any other result is `Ok`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// use std::io::Read;
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut buf = [0; 8];
    /// let n = loop {
    ///     let mut guard = fd.readable().await.unwrap();
    ///     if let Ok(result) = guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
    ///         break result.unwrap();
    ///     }
    /// };
    /// assert_eq!(&buf[..n], b"x");
    /// # });
    /// ```
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        match f(self.fd) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Err(TryIoError(()))
            }
            r => Ok(r),
        }
    }

    /// The `AsyncFd` this guard belongs to.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.readable().await.unwrap();
    /// assert!(std::ptr::eq(guard.get_ref(), &fd));
    /// # });
    /// ```
    pub fn get_ref(&self) -> &'a AsyncFd<T> {
        self.fd
    }

    /// The wrapped object.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.readable().await.unwrap();
    /// assert!(guard.get_inner().peer_addr().is_ok());
    /// # });
    /// ```
    pub fn get_inner(&self) -> &'a T {
        self.fd.get_ref()
    }
}

/// [`AsyncFdReadyGuard::try_io`]'s "the operation would block; wait again".
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
/// # a.set_nonblocking(true).unwrap();
/// # std::io::Write::write_all(&mut b, b"x").unwrap();
/// let fd = spinpark::io::AsyncFd::new(a).unwrap();
/// let mut guard = fd.writable().await.unwrap();
/// let r = guard.try_io(|_| Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
/// assert!(r.is_err()); // the readiness was cleared; wait again
/// # });
/// ```
#[derive(Debug)]
pub struct TryIoError(());

impl fmt::Display for TryIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the operation would block")
    }
}

impl std::error::Error for TryIoError {}
