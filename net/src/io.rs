//! Putting any non-blocking file descriptor on the runtime's reactor: [`AsyncFd`], with
//! tokio's [`Interest`] and [`Ready`]; and [`AutoFlush`], write buffering that flushes itself
//! when the task's poll ends.
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
//! (edge-triggered, for the events of its [`Interest`]), so spinning workers poll it too. A
//! guard from [`AsyncFd::readable`], [`AsyncFd::writable`] or [`AsyncFd::ready`] remembers
//! the readiness it saw; after the caller's syscall returned `WouldBlock`,
//! [`AsyncFdReadyGuard::clear_ready`] (or `try_io`, which does it for you) clears that
//! readiness unless a new event arrived meanwhile, so the next wait sleeps until the kernel
//! reports a change.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{ready, Context, Poll};

use crate::io_source::IoSource;
use crate::readiness::Direction;

mod guard;

pub use crate::auto_flush::{AutoFlush, AutoFlushWrite};
pub use crate::interest::{Interest, Ready};
pub use guard::{
    AsyncFdReadyGuard, AsyncFdReadyMutGuard, AsyncFdRegisterError, AsyncFdTryNewError, TryIoError,
};

/// A non-blocking fd `T` registered with the current runtime's reactor. Dropping it removes
/// the fd from epoll, then drops `T` (which closes it, if `T` owns it).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::io::{unix::AsyncFd, Interest, Ready};
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// a.set_nonblocking(true).unwrap();
/// let fd = AsyncFd::new(a).unwrap();
/// let guard = fd.ready(Interest::WRITABLE).await.unwrap(); // a fresh socket has room
/// assert_eq!(guard.ready(), Ready::WRITABLE);
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

/// Whether `fd` can go on the reactor: `EPERM` for a regular file or a directory, which
/// epoll does not support (what registering it would say, whatever its mode, as in tokio);
/// otherwise `InvalidInput` unless `fd` is in non-blocking mode: an operation on a blocking
/// fd would stall a worker.
fn check_nonblocking(fd: RawFd) -> io::Result<()> {
    let kind = crate::sys::fd::file_type(fd)?;
    if kind == libc::S_IFREG || kind == libc::S_IFDIR {
        // The OS error as it is, so that `raw_os_error()` answers `EPERM`.
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    if crate::sys::is_nonblocking(fd)? {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("AsyncFd (fd {fd}): the fd is in blocking mode; set O_NONBLOCK first"),
        ))
    }
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`, whose fd must already be in non-blocking mode, with the current
    /// runtime's reactor, for reading and writing.
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
        Self::with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// [`AsyncFd::new`] for the events of `interest` only.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// let fd = AsyncFd::with_interest(a, Interest::READABLE).unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<Self> {
        Ok(Self::try_with_interest(inner, interest)?)
    }

    /// [`AsyncFd::new`] that hands `inner` back on failure.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap(); // blocking
    /// let e = spinpark::io::AsyncFd::try_new(a).unwrap_err();
    /// let (_a, cause) = e.into_parts();
    /// assert_eq!(cause.kind(), std::io::ErrorKind::InvalidInput);
    /// # });
    /// ```
    pub fn try_new(inner: T) -> Result<Self, AsyncFdRegisterError<T>> {
        Self::try_with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// [`AsyncFd::with_interest`] that hands `inner` back on failure.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// let fd = AsyncFd::try_with_interest(a, Interest::WRITABLE).unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub fn try_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<Self, AsyncFdRegisterError<T>> {
        if let Err(cause) = check_nonblocking(inner.as_raw_fd()) {
            return Err(AsyncFdRegisterError::new(inner, cause));
        }
        // SAFETY: the caller of a safe constructor owes us nothing, and nothing here relies
        // on the fd staying open: a closed (or reused) fd makes operations fail, and its
        // registration's generation keeps stale events away from other sources.
        unsafe { Self::register_with_interest(inner, interest) }
    }

    /// Registers `inner` for reading and writing, as tokio's `AsyncFd::register`: no check
    /// of blocking mode (a blocking fd stalls the worker that runs its operation).
    ///
    /// # Safety
    /// The fd `inner.as_raw_fd()` returns must be open, and stay the same open file, until
    /// the `AsyncFd` is dropped or [`into_inner`](AsyncFd::into_inner) is called.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// // SAFETY: `a` owns its fd, which the AsyncFd owns from now on.
    /// let fd = unsafe { spinpark::io::AsyncFd::register(a) }.unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub unsafe fn register(inner: T) -> Result<Self, AsyncFdRegisterError<T>> {
        // SAFETY: the caller's promise, passed on.
        unsafe { Self::register_with_interest(inner, Interest::READABLE | Interest::WRITABLE) }
    }

    /// [`AsyncFd::register`] for the events of `interest` only (`PRIORITY` and `ERROR`
    /// included).
    ///
    /// # Safety
    /// As [`AsyncFd::register`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// // SAFETY: `a` owns its fd, which the AsyncFd owns from now on.
    /// let fd = unsafe { AsyncFd::register_with_interest(a, Interest::ERROR) }.unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub unsafe fn register_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<Self, AsyncFdRegisterError<T>> {
        match IoSource::with_events(inner, interest.epoll_events()) {
            Ok(io) => Ok(AsyncFd { io }),
            Err((inner, cause)) => Err(AsyncFdRegisterError::new(inner, cause)),
        }
    }

    /// The wrapped object.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
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
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
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
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let a = fd.into_inner(); // no longer on the reactor
    /// # drop(a);
    /// # });
    /// ```
    pub fn into_inner(self) -> T {
        self.io.into_inner()
    }

    /// Polls for read readiness. Only the waker of the latest call (per direction) is woken,
    /// as in tokio; [`AsyncFd::readable`] lets any number of tasks wait.
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
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let seen = ready!(self.io.poll_seen_latest(Direction::Read, cx))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, seen, Interest::READABLE)))
    }

    /// [`AsyncFd::poll_read_ready`] with a guard that lends the `AsyncFd` mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let ready = std::future::poll_fn(|cx| fd.poll_read_ready_mut(cx).map_ok(|g| g.ready()))
    ///     .await
    ///     .unwrap();
    /// assert!(ready.is_readable());
    /// # });
    /// ```
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let seen = ready!(self.io.poll_seen_latest(Direction::Read, cx))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(
            self,
            seen,
            Interest::READABLE,
        )))
    }

    /// Polls for write readiness; see [`AsyncFd::poll_read_ready`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = std::future::poll_fn(|cx| fd.poll_write_ready(cx)).await.unwrap();
    /// # drop(guard);
    /// # });
    /// ```
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let seen = ready!(self.io.poll_seen_latest(Direction::Write, cx))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, seen, Interest::WRITABLE)))
    }

    /// [`AsyncFd::poll_write_ready`] with a guard that lends the `AsyncFd` mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let ready = std::future::poll_fn(|cx| fd.poll_write_ready_mut(cx).map_ok(|g| g.ready()))
    ///     .await
    ///     .unwrap();
    /// assert!(ready.is_writable());
    /// # });
    /// ```
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let seen = ready!(self.io.poll_seen_latest(Direction::Write, cx))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(
            self,
            seen,
            Interest::WRITABLE,
        )))
    }

    /// Waits until the fd is ready for any of `interest`; the guard's
    /// [`ready`](AsyncFdReadyGuard::ready) says which.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest, Ready};
    /// let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let fd = AsyncFd::new(a).unwrap();
    /// let mut guard = fd.ready(Interest::READABLE | Interest::WRITABLE).await.unwrap();
    /// assert_eq!(guard.ready(), Ready::READABLE | Ready::WRITABLE);
    /// guard.clear_ready_matching(Ready::WRITABLE);
    /// assert_eq!(guard.ready(), Ready::READABLE);
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let seen = poll_fn(|cx| self.io.poll_mask(interest.mask(), cx)).await?;
        Ok(AsyncFdReadyGuard::new(self, seen, interest))
    }

    /// [`AsyncFd::ready`] with a guard that lends the `AsyncFd` mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// let mut fd = AsyncFd::new(a).unwrap();
    /// let mut guard = fd.ready_mut(Interest::WRITABLE).await.unwrap();
    /// let _inner: &mut std::os::unix::net::UnixStream = guard.get_inner_mut();
    /// # });
    /// ```
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        // The closure holds the unique borrow (moved in), not a shared one: `&mut T` is `Send`
        // when `T` is, `&T` only when `T` is `Sync`, so the future is `Send` for a `Send`
        // inner type, as tokio's.
        let io = &mut self.io;
        let seen = poll_fn(move |cx| io.poll_mask(interest.mask(), cx)).await?;
        Ok(AsyncFdReadyMutGuard::new(self, seen, interest))
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
        self.ready(Interest::READABLE).await
    }

    /// [`AsyncFd::readable`] with a guard that lends the `AsyncFd` mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// # std::io::Write::write_all(&mut b, b"x").unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.readable_mut().await.unwrap();
    /// # drop(guard);
    /// # });
    /// ```
    pub async fn readable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    /// Waits until the fd may be writable; the guard says what to do after trying.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// use std::io::Write;
    /// let fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let mut guard = fd.writable().await.unwrap();
    /// let n = guard.try_io(|inner| inner.get_ref().write(b"hi")).unwrap().unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::WRITABLE).await
    }

    /// [`AsyncFd::writable`] with a guard that lends the `AsyncFd` mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// # a.set_nonblocking(true).unwrap();
    /// let mut fd = spinpark::io::AsyncFd::new(a).unwrap();
    /// let guard = fd.writable_mut().await.unwrap();
    /// # drop(guard);
    /// # });
    /// ```
    pub async fn writable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Waits for `interest` and runs `f` until it does not return `WouldBlock` (clearing the
    /// readiness and waiting again each time it does).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::io::Read;
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// std::io::Write::write_all(&mut b, b"hi").unwrap();
    /// let fd = AsyncFd::new(a).unwrap();
    /// let mut buf = [0; 2];
    /// let n = fd.async_io(Interest::READABLE, |mut s| s.read(&mut buf)).await.unwrap();
    /// assert_eq!(&buf[..n], b"hi");
    /// # });
    /// ```
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        poll_fn(|cx| {
            self.io
                .poll_io_mask(interest.mask(), cx, || f(self.io.get()))
        })
        .await
    }

    /// [`AsyncFd::async_io`] with the wrapped object lent mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::io::Write;
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// let mut fd = AsyncFd::new(a).unwrap();
    /// let n = fd.async_io_mut(Interest::WRITABLE, |s| s.write(b"hi")).await.unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let mask = interest.mask();
        let io = &mut self.io;
        poll_fn(|cx| {
            // Bounded as `IoSource::poll_io` is: a source that keeps looking ready while `f`
            // keeps saying `WouldBlock` yields instead of spinning inside one poll.
            for _ in 0..4 {
                let seen = ready!(io.poll_mask(mask, cx))?;
                match f(io.get_mut()) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => io.clear(seen),
                    r => return Poll::Ready(r),
                }
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await
    }

    /// Runs `f` once if the fd looks ready for `interest`, without waiting: `WouldBlock` if it
    /// does not, or if `f` returned that (which also clears the readiness).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// let fd = AsyncFd::new(a).unwrap();
    /// let r = fd.try_io(Interest::READABLE, |_| Ok(()));
    /// assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::WouldBlock); // nothing to read
    /// # });
    /// ```
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        self.io.try_io_mask(interest.mask(), || f(self.io.get()))
    }

    /// [`AsyncFd::try_io`] with the wrapped object lent mutably.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::{AsyncFd, Interest};
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// a.set_nonblocking(true).unwrap();
    /// let mut fd = AsyncFd::new(a).unwrap();
    /// let _ = fd.writable().await.unwrap(); // the first event has come
    /// assert!(fd.try_io_mut(Interest::WRITABLE, |_| Ok(())).is_ok());
    /// # });
    /// ```
    pub fn try_io_mut<R>(
        &mut self,
        interest: Interest,
        f: impl FnOnce(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let mask = interest.mask();
        let Some(seen) = self.io.ready_now_mask(mask) else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        if seen.is_shutdown() {
            return Err(crate::io_source::runtime_gone());
        }
        let r = f(self.io.get_mut());
        if matches!(&r, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
            self.io.clear(seen);
        }
        r
    }

    pub(crate) fn source(&self) -> &IoSource<T> {
        &self.io
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }
}

impl<T: AsRawFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the fd stays open while `self` holds `T`, which owns or borrows it (a
        // promise `register`'s caller made, and the safe constructors' `T` keeps).
        unsafe { BorrowedFd::borrow_raw(self.io.raw_fd()) }
    }
}
