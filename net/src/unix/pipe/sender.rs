//! [`Sender`]: the write end of a pipe or FIFO.

use std::fs::File;
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::PipeEnd;
use crate::interest::{Interest, Ready};
use crate::readiness::Direction;

/// The write end of a pipe: writes with futures-io's `AsyncWrite` (and tokio's with the
/// `tokio-io` feature) or the `try_write` family after `writable()`.
///
/// ```
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (mut tx, mut rx) = spinpark::net::unix::pipe::pipe().unwrap();
/// tx.write_all(b"ping").await.unwrap();
/// let mut buf = [0; 4];
/// rx.read_exact(&mut buf).await.unwrap();
/// assert_eq!(&buf, b"ping");
/// # });
/// ```
pub struct Sender {
    end: PipeEnd,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("fd", &self.end.raw_fd())
            .finish()
    }
}

impl Sender {
    /// The write end from an open FIFO `file`: checked to be a FIFO open for writing, and
    /// put in non-blocking mode.
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let file = std::fs::OpenOptions::new().write(true).open("/tmp/my.fifo").unwrap();
    /// let tx = spinpark::net::unix::pipe::Sender::from_file(file).unwrap();
    /// # drop(tx);
    /// # });
    /// ```
    pub fn from_file(file: File) -> io::Result<Sender> {
        Ok(Sender {
            end: PipeEnd::from_file(file, Direction::Write)?,
        })
    }

    /// [`Sender::from_file`] for an `OwnedFd`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::net::unix::pipe::{self, Sender};
    /// let (tx, _rx) = pipe::pipe().unwrap();
    /// let tx = Sender::from_owned_fd(tx.into_blocking_fd().unwrap()).unwrap();
    /// # drop(tx);
    /// # });
    /// ```
    pub fn from_owned_fd(fd: OwnedFd) -> io::Result<Sender> {
        Self::from_file(File::from(fd))
    }

    /// The write end from `file` as it is: no check, and its blocking mode is left alone
    /// (it must be non-blocking).
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::os::unix::fs::OpenOptionsExt;
    /// let file = std::fs::OpenOptions::new()
    ///     .write(true)
    ///     .custom_flags(libc::O_NONBLOCK)
    ///     .open("/tmp/my.fifo")
    ///     .unwrap();
    /// let tx = spinpark::net::unix::pipe::Sender::from_file_unchecked(file).unwrap();
    /// # drop(tx);
    /// # });
    /// ```
    pub fn from_file_unchecked(file: File) -> io::Result<Sender> {
        Self::from_owned_fd_unchecked(file.into())
    }

    /// [`Sender::from_file_unchecked`] for an `OwnedFd`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::net::unix::pipe::{self, Sender};
    /// let (tx, _rx) = pipe::pipe().unwrap();
    /// let tx = Sender::from_owned_fd_unchecked(tx.into_nonblocking_fd().unwrap()).unwrap();
    /// # drop(tx);
    /// # });
    /// ```
    pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<Sender> {
        Ok(Sender {
            end: PipeEnd::new(fd, Direction::Write)?,
        })
    }

    /// Waits until the pipe is ready for any of `interest` and says how.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::Interest;
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// assert!(tx.ready(Interest::WRITABLE).await.unwrap().is_writable());
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.end.ready(interest).await
    }

    /// Waits until the pipe may be writable (a write may still `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// tx.writable().await.unwrap();
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    /// Polls for write readiness; only the latest caller's waker is kept.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// std::future::poll_fn(|cx| tx.poll_write_ready(cx)).await.unwrap();
    /// # });
    /// ```
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.end.poll_ready(cx)
    }

    /// Writes what fits now: `WouldBlock` if nothing does.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// tx.writable().await.unwrap();
    /// assert_eq!(tx.try_write(b"hi").unwrap(), 2);
    /// # });
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.end.try_write(buf)
    }

    /// [`Sender::try_write`] from several buffers (`writev`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::io::IoSlice;
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// tx.writable().await.unwrap();
    /// let n = tx.try_write_vectored(&[IoSlice::new(b"a"), IoSlice::new(b"b")]).unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.end.try_write_vectored(bufs)
    }

    /// Runs `f` (a write the caller makes on the fd) if the pipe looks writable, clearing
    /// the readiness if it returns `WouldBlock`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// tx.writable().await.unwrap();
    /// assert!(tx.try_io(|| Ok(())).is_ok());
    /// # });
    /// ```
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.end.try_io(f)
    }

    /// Deregisters the fd and hands it back in blocking mode.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// let fd: std::os::fd::OwnedFd = tx.into_blocking_fd().unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub fn into_blocking_fd(self) -> io::Result<OwnedFd> {
        self.end.into_fd(false)
    }

    /// Deregisters the fd and hands it back, still non-blocking.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, _rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// let fd: std::os::fd::OwnedFd = tx.into_nonblocking_fd().unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
        self.end.into_fd(true)
    }
}

impl futures_io::AsyncWrite for Sender {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.end.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.end.poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Nothing to do: a pipe has no half-close; drop the `Sender` to close it.
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncWrite for Sender {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.end.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.end.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsRawFd for Sender {
    fn as_raw_fd(&self) -> RawFd {
        self.end.raw_fd()
    }
}

impl AsFd for Sender {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the fd is owned by `self` and open until it is dropped.
        unsafe { BorrowedFd::borrow_raw(self.end.raw_fd()) }
    }
}
