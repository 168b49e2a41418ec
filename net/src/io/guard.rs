//! The guards [`AsyncFd`]'s waits return ([`AsyncFdReadyGuard`], [`AsyncFdReadyMutGuard`]),
//! and the errors of its constructors and guards.

use std::fmt;
use std::io;
use std::os::fd::AsRawFd;

use super::{AsyncFd, Interest, Ready};
use crate::readiness::Seen;

/// What a guard saw: the sighting to clear after `WouldBlock` (`None` once cleared or
/// retained), and the readiness bits it reports for its interest.
#[derive(Clone, Copy)]
struct Sighting {
    seen: Option<Seen>,
    reported: usize,
}

impl Sighting {
    fn new(seen: Seen, interest: Interest) -> Self {
        Sighting {
            seen: Some(seen),
            reported: interest.reported(),
        }
    }

    fn ready(&self) -> Ready {
        self.seen.map_or(Ready::EMPTY, |s| {
            Ready::from_word(s.ready_bits() & self.reported)
        })
    }

    fn clear<T: AsRawFd>(&mut self, fd: &AsyncFd<T>) {
        if let Some(seen) = self.seen.take() {
            fd.source().clear(seen);
        }
    }

    fn clear_matching<T: AsRawFd>(&mut self, fd: &AsyncFd<T>, ready: Ready) {
        if let Some(seen) = self.seen {
            fd.source().clear_bits(seen, ready.bits());
            self.seen = Some(seen.without(ready.bits()));
        }
    }
}

/// Readiness seen by [`AsyncFd::readable`], [`AsyncFd::writable`] or [`AsyncFd::ready`]. Try
/// the operation; if it returns `WouldBlock`, call [`clear_ready`](Self::clear_ready) (or use
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
    sighting: Sighting,
}

impl<T: AsRawFd> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyGuard")
            .field("fd", &self.fd)
            .field("ready", &self.sighting.ready())
            .finish()
    }
}

impl<'a, T: AsRawFd> AsyncFdReadyGuard<'a, T> {
    pub(super) fn new(fd: &'a AsyncFd<T>, seen: Seen, interest: Interest) -> Self {
        AsyncFdReadyGuard {
            fd,
            sighting: Sighting::new(seen, interest),
        }
    }

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
        self.sighting.clear(self.fd);
    }

    /// Clears only the readiness in `ready` (say, `Ready::READABLE` after a read returned
    /// `WouldBlock`, keeping `WRITABLE`). End of stream is never cleared.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest, Ready};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// let fd = AsyncFd::new(a).unwrap();
    /// let mut guard = fd.ready(Interest::WRITABLE).await.unwrap();
    /// guard.clear_ready_matching(Ready::WRITABLE);
    /// assert_eq!(guard.ready(), Ready::EMPTY);
    /// # });
    /// ```
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        self.sighting.clear_matching(self.fd, ready);
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
        self.sighting.seen = None;
    }

    /// The readiness this guard saw, as far as its interest goes (minus what was cleared).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.writable().await.unwrap();
    /// assert!(guard.ready().is_writable());
    /// # });
    /// ```
    pub fn ready(&self) -> Ready {
        self.sighting.ready()
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
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.writable().await.unwrap();
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
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.writable().await.unwrap();
    /// assert!(guard.get_inner().peer_addr().is_ok());
    /// # });
    /// ```
    pub fn get_inner(&self) -> &'a T {
        self.fd.get_ref()
    }
}

/// [`AsyncFdReadyGuard`] that lends its [`AsyncFd`] mutably (from `readable_mut`,
/// `writable_mut`, `ready_mut` and the `poll_*_ready_mut` calls).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use std::io::Write;
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// a.set_nonblocking(true).unwrap();
/// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
/// let mut guard = fd.writable_mut().await.unwrap();
/// let n = guard.try_io(|fd| fd.get_mut().write(b"hi")).unwrap().unwrap();
/// assert_eq!(n, 2);
/// # });
/// ```
#[must_use = "try the operation, then clear the readiness if it would block"]
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    fd: &'a mut AsyncFd<T>,
    sighting: Sighting,
}

impl<T: AsRawFd> fmt::Debug for AsyncFdReadyMutGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyMutGuard")
            .field("fd", &self.fd)
            .field("ready", &self.sighting.ready())
            .finish()
    }
}

impl<'a, T: AsRawFd> AsyncFdReadyMutGuard<'a, T> {
    pub(super) fn new(fd: &'a mut AsyncFd<T>, seen: Seen, interest: Interest) -> Self {
        AsyncFdReadyMutGuard {
            fd,
            sighting: Sighting::new(seen, interest),
        }
    }

    /// As [`AsyncFdReadyGuard::clear_ready`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut guard = fd.writable_mut().await.unwrap();
    /// guard.clear_ready();
    /// assert!(guard.ready().is_empty());
    /// # });
    /// ```
    pub fn clear_ready(&mut self) {
        self.sighting.clear(self.fd);
    }

    /// As [`AsyncFdReadyGuard::clear_ready_matching`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest, Ready};
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = AsyncFd::new(a).unwrap();
    /// let mut guard = fd.ready_mut(Interest::WRITABLE).await.unwrap();
    /// guard.clear_ready_matching(Ready::WRITABLE);
    /// assert_eq!(guard.ready(), Ready::EMPTY);
    /// # });
    /// ```
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        self.sighting.clear_matching(self.fd, ready);
    }

    /// As [`AsyncFdReadyGuard::retain_ready`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// fd.writable_mut().await.unwrap().retain_ready();
    /// # });
    /// ```
    pub fn retain_ready(&mut self) {
        self.sighting.seen = None;
    }

    /// As [`AsyncFdReadyGuard::ready`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// assert!(fd.writable_mut().await.unwrap().ready().is_writable());
    /// # });
    /// ```
    pub fn ready(&self) -> Ready {
        self.sighting.ready()
    }

    /// As [`AsyncFdReadyGuard::try_io`], with the `AsyncFd` lent mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut guard = fd.writable_mut().await.unwrap();
    /// let r = guard.try_io(|_| Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
    /// assert!(r.is_err());
    /// # });
    /// ```
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<T>) -> io::Result<R>,
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
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.writable_mut().await.unwrap();
    /// assert!(guard.get_ref().get_ref().peer_addr().is_ok());
    /// # });
    /// ```
    pub fn get_ref(&self) -> &AsyncFd<T> {
        self.fd
    }

    /// The `AsyncFd` this guard belongs to, mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut guard = fd.writable_mut().await.unwrap();
    /// let _fd: &mut spinpark::io::AsyncFd<_> = guard.get_mut();
    /// # });
    /// ```
    pub fn get_mut(&mut self) -> &mut AsyncFd<T> {
        self.fd
    }

    /// The wrapped object.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.writable_mut().await.unwrap();
    /// assert!(guard.get_inner().peer_addr().is_ok());
    /// # });
    /// ```
    pub fn get_inner(&self) -> &T {
        self.fd.get_ref()
    }

    /// The wrapped object, mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut guard = fd.writable_mut().await.unwrap();
    /// let _s: &mut std::os::unix::net::UnixStream = guard.get_inner_mut();
    /// # });
    /// ```
    pub fn get_inner_mut(&mut self) -> &mut T {
        self.fd.get_mut()
    }
}

/// A guard's `try_io`'s "the operation would block; wait again".
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// # a.set_nonblocking(true).unwrap();
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

/// A failed registration (`AsyncFd::try_new`, `register` and the like): the object that was
/// to be registered, and why it was not.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap(); // still blocking
/// let e = spinpark::io::AsyncFd::try_new(a).unwrap_err();
/// let as_io: std::io::Error = spinpark::io::AsyncFd::try_new(e.into_parts().0)
///     .unwrap_err()
///     .into();
/// assert_eq!(as_io.kind(), std::io::ErrorKind::InvalidInput);
/// # });
/// ```
pub struct AsyncFdRegisterError<T> {
    inner: T,
    cause: io::Error,
}

/// tokio's older name of [`AsyncFdRegisterError`].
pub type AsyncFdTryNewError<T> = AsyncFdRegisterError<T>;

impl<T> AsyncFdRegisterError<T> {
    pub(super) fn new(inner: T, cause: io::Error) -> Self {
        AsyncFdRegisterError { inner, cause }
    }

    /// The object handed back, and the error.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let (a, cause) = spinpark::io::AsyncFd::try_new(a).unwrap_err().into_parts();
    /// assert!(cause.to_string().contains("blocking"));
    /// # drop(a);
    /// # });
    /// ```
    pub fn into_parts(self) -> (T, io::Error) {
        (self.inner, self.cause)
    }
}

impl<T> fmt::Display for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.cause, f)
    }
}

impl<T> fmt::Debug for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.cause, f)
    }
}

impl<T> std::error::Error for AsyncFdRegisterError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

impl<T> From<AsyncFdRegisterError<T>> for io::Error {
    fn from(e: AsyncFdRegisterError<T>) -> io::Error {
        e.cause
    }
}
