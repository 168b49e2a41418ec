//! [`Receiver`]: the read end of a pipe or FIFO.

use std::fs::File;
use std::io::{self, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::PipeEnd;
use crate::interest::{Interest, Ready};
use crate::readiness::Direction;

/// The read end of a pipe: reads with futures-io's `AsyncRead` (and tokio's with the
/// `tokio-io` feature) or the `try_read` family after `readable()`.
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
pub struct Receiver {
    end: PipeEnd,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("fd", &self.end.raw_fd())
            .finish()
    }
}

impl Receiver {
    /// The read end from an open FIFO `file`: checked to be a FIFO open for reading, and
    /// put in non-blocking mode.
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let file = std::fs::File::open("/tmp/my.fifo").unwrap();
    /// let rx = spinpark::net::unix::pipe::Receiver::from_file(file).unwrap();
    /// # drop(rx);
    /// # });
    /// ```
    pub fn from_file(file: File) -> io::Result<Receiver> {
        Ok(Receiver {
            end: PipeEnd::from_file(file, Direction::Read)?,
        })
    }

    /// [`Receiver::from_file`] for an `OwnedFd`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::net::unix::pipe::{self, Receiver};
    /// let (_tx, rx) = pipe::pipe().unwrap();
    /// let fd = rx.into_blocking_fd().unwrap();
    /// let rx = Receiver::from_owned_fd(fd).unwrap();
    /// # drop(rx);
    /// # });
    /// ```
    pub fn from_owned_fd(fd: OwnedFd) -> io::Result<Receiver> {
        Self::from_file(File::from(fd))
    }

    /// The read end from `file` as it is: no check, and its blocking mode is left alone
    /// (it must be non-blocking).
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::os::unix::fs::OpenOptionsExt;
    /// let file = std::fs::OpenOptions::new()
    ///     .read(true)
    ///     .custom_flags(libc::O_NONBLOCK)
    ///     .open("/tmp/my.fifo")
    ///     .unwrap();
    /// let rx = spinpark::net::unix::pipe::Receiver::from_file_unchecked(file).unwrap();
    /// # drop(rx);
    /// # });
    /// ```
    pub fn from_file_unchecked(file: File) -> io::Result<Receiver> {
        Self::from_owned_fd_unchecked(file.into())
    }

    /// [`Receiver::from_file_unchecked`] for an `OwnedFd`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::net::unix::pipe::{self, Receiver};
    /// let (_tx, rx) = pipe::pipe().unwrap();
    /// let rx = Receiver::from_owned_fd_unchecked(rx.into_nonblocking_fd().unwrap()).unwrap();
    /// # drop(rx);
    /// # });
    /// ```
    pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<Receiver> {
        Ok(Receiver {
            end: PipeEnd::new(fd, Direction::Read)?,
        })
    }

    /// Waits until the pipe is ready for any of `interest` and says how.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::Interest;
    /// let (tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// drop(tx);
    /// let ready = rx.ready(Interest::READABLE).await.unwrap();
    /// assert!(ready.is_read_closed());
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.end.ready(interest).await
    }

    /// Waits until the pipe may be readable (a read may still `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// tx.writable().await.unwrap();
    /// tx.try_write(b"x").unwrap();
    /// rx.readable().await.unwrap();
    /// # });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// Polls for read readiness; only the latest caller's waker is kept.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// drop(tx);
    /// std::future::poll_fn(|cx| rx.poll_read_ready(cx)).await.unwrap();
    /// # });
    /// ```
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.end.poll_ready(cx)
    }

    /// Reads what is there now: `WouldBlock` if nothing is, `0` at end of stream.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (_tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// let e = rx.try_read(&mut [0; 4]).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    /// # });
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: read only writes initialised bytes, so viewing initialised memory as
        // possibly-uninitialised for it loses nothing.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.end.try_read_uninit(buf)
    }

    /// [`Receiver::try_read`] into several buffers (`readv`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// tx.writable().await.unwrap();
    /// tx.try_write(b"abcd").unwrap();
    /// rx.readable().await.unwrap();
    /// let (mut a, mut b) = ([0; 2], [0; 2]);
    /// let mut bufs = [std::io::IoSliceMut::new(&mut a), std::io::IoSliceMut::new(&mut b)];
    /// assert_eq!(rx.try_read_vectored(&mut bufs).unwrap(), 4);
    /// # });
    /// ```
    pub fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.end.try_read_vectored(bufs)
    }

    /// [`Receiver::try_read`] into a `BufMut`'s spare capacity, advancing it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// tx.writable().await.unwrap();
    /// tx.try_write(b"abc").unwrap();
    /// rx.readable().await.unwrap();
    /// let mut buf = Vec::with_capacity(16);
    /// assert_eq!(rx.try_read_buf(&mut buf).unwrap(), 3);
    /// assert_eq!(buf, b"abc");
    /// # });
    /// ```
    pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        crate::buf::read_into(buf, |dst| self.end.try_read_uninit(dst))
    }

    /// Runs `f` (a read the caller makes on the fd) if the pipe looks readable, clearing the
    /// readiness if it returns `WouldBlock`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (_tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// let r = rx.try_io(|| Ok(()));
    /// assert!(r.is_err()); // nothing was written: not readable
    /// # });
    /// ```
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.end.try_io(f)
    }

    /// Deregisters the fd and hands it back in blocking mode.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (_tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// let fd: std::os::fd::OwnedFd = rx.into_blocking_fd().unwrap();
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
    /// let (_tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
    /// let fd: std::os::fd::OwnedFd = rx.into_nonblocking_fd().unwrap();
    /// # drop(fd);
    /// # });
    /// ```
    pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
        self.end.into_fd(true)
    }
}

impl futures_io::AsyncRead for Receiver {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        // SAFETY: as in `try_read`.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.end.poll_read_uninit(cx, buf)
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncRead for Receiver {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the read only writes into the slice (never de-initialises bytes).
        let unfilled = unsafe { buf.unfilled_mut() };
        let n = std::task::ready!(self.end.poll_read_uninit(cx, unfilled))?;
        // SAFETY: the kernel wrote the first `n` bytes of the unfilled part.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsRawFd for Receiver {
    fn as_raw_fd(&self) -> RawFd {
        self.end.raw_fd()
    }
}

impl AsFd for Receiver {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the fd is owned by `self` and open until it is dropped.
        unsafe { BorrowedFd::borrow_raw(self.end.raw_fd()) }
    }
}
