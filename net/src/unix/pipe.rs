//! Unix pipes and FIFOs on the reactor, as `tokio::net::unix::pipe`: [`pipe()`], a
//! [`Sender`] (write end) and a [`Receiver`] (read end), and [`OpenOptions`] to open a named
//! FIFO.
//!
//! ```
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let (mut tx, mut rx) = spinpark::net::unix::pipe::pipe().unwrap();
//! tx.write_all(b"hello").await.unwrap();
//! drop(tx); // the reader then sees end of stream
//! let mut got = Vec::new();
//! rx.read_to_end(&mut got).await.unwrap();
//! assert_eq!(got, b"hello");
//! # });
//! ```
//!
//! How it works: each end is a non-blocking fd registered with the runtime's epoll set for
//! its one direction (the read end for reading, the write end for writing), nothing assumed
//! ready: the kernel's first event says what is. Reads and writes are `read(2)`/`write(2)`
//! run through the same readiness loop as the sockets'.

use std::fs::File;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::task::{Context, Poll};

use crate::interest::{Interest, Ready};
use crate::io_source::IoSource;
use crate::readiness::Direction;
use crate::sys::fd as sys;

mod receiver;
mod sender;

pub use receiver::Receiver;
pub use sender::Sender;

/// A new anonymous pipe: its write end and its read end, both on the current runtime.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (tx, rx) = spinpark::net::unix::pipe::pipe().unwrap();
/// tx.writable().await.unwrap();
/// assert_eq!(tx.try_write(b"x").unwrap(), 1);
/// rx.readable().await.unwrap();
/// let mut buf = [0; 4];
/// assert_eq!(rx.try_read(&mut buf).unwrap(), 1);
/// # });
/// ```
pub fn pipe() -> io::Result<(Sender, Receiver)> {
    let (r, w) = sys::pipe()?;
    Ok((
        Sender::from_owned_fd_unchecked(w)?,
        Receiver::from_owned_fd_unchecked(r)?,
    ))
}

/// Options for opening a named FIFO as a [`Sender`] or [`Receiver`].
///
/// ```no_run
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::net::unix::pipe::OpenOptions;
/// // With `read_write`, opening the sending end does not need a reader to be there.
/// let tx = OpenOptions::new().read_write(true).open_sender("/tmp/my.fifo").unwrap();
/// # drop(tx);
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    read_write: bool,
    unchecked: bool,
}

impl OpenOptions {
    /// Read-only for a receiver, write-only for a sender, and the file checked to be a FIFO.
    ///
    /// ```
    /// let opts = spinpark::net::unix::pipe::OpenOptions::new();
    /// # drop(opts);
    /// ```
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Opens the FIFO for reading and writing (Linux): a sender then opens without a
    /// reader (no `ENXIO`), and a receiver never sees end of stream when writers leave.
    ///
    /// ```
    /// let opts = spinpark::net::unix::pipe::OpenOptions::new().read_write(true).clone();
    /// # drop(opts);
    /// ```
    pub fn read_write(&mut self, value: bool) -> &mut Self {
        self.read_write = value;
        self
    }

    /// Skips the check that the file is a FIFO.
    ///
    /// ```
    /// let opts = spinpark::net::unix::pipe::OpenOptions::new().unchecked(true).clone();
    /// # drop(opts);
    /// ```
    pub fn unchecked(&mut self, value: bool) -> &mut Self {
        self.unchecked = value;
        self
    }

    /// Opens the FIFO at `path` as the read end.
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let rx = spinpark::net::unix::pipe::OpenOptions::new().open_receiver("/tmp/my.fifo");
    /// # drop(rx);
    /// # });
    /// ```
    pub fn open_receiver<P: AsRef<Path>>(&self, path: P) -> io::Result<Receiver> {
        let fd = self.open(path.as_ref(), libc::O_RDONLY)?;
        Receiver::from_owned_fd_unchecked(fd)
    }

    /// Opens the FIFO at `path` as the write end: `ENXIO` if nobody has it open for reading
    /// (unless [`read_write`](OpenOptions::read_write)).
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let tx = spinpark::net::unix::pipe::OpenOptions::new().open_sender("/tmp/my.fifo");
    /// # drop(tx);
    /// # });
    /// ```
    pub fn open_sender<P: AsRef<Path>>(&self, path: P) -> io::Result<Sender> {
        let fd = self.open(path.as_ref(), libc::O_WRONLY)?;
        Sender::from_owned_fd_unchecked(fd)
    }

    fn open(&self, path: &Path, mode: libc::c_int) -> io::Result<OwnedFd> {
        let mode = if self.read_write { libc::O_RDWR } else { mode };
        let fd = sys::open(path, mode | libc::O_NONBLOCK)?;
        if !self.unchecked && !sys::is_fifo(fd.as_raw_fd())? {
            return Err(not_a_fifo());
        }
        Ok(fd)
    }
}

fn not_a_fifo() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a pipe or FIFO")
}

/// Checks that `fd` is a FIFO opened with one of `modes`, and makes it non-blocking.
fn checked(fd: OwnedFd, modes: [libc::c_int; 2]) -> io::Result<OwnedFd> {
    if !sys::is_fifo(fd.as_raw_fd())? {
        return Err(not_a_fifo());
    }
    if !modes.contains(&sys::access_mode(fd.as_raw_fd())?) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the pipe is not open in the access mode this end needs",
        ));
    }
    sys::set_nonblocking(fd.as_raw_fd(), true)?;
    Ok(fd)
}

/// One end of a pipe on the reactor: what [`Sender`] and [`Receiver`] share.
struct PipeEnd {
    io: IoSource<OwnedFd>,
    dir: Direction,
}

impl PipeEnd {
    /// Registers `fd` (non-blocking) for the one direction of this end.
    fn new(fd: OwnedFd, dir: Direction) -> io::Result<PipeEnd> {
        let interest = match dir {
            Direction::Read => Interest::READABLE,
            Direction::Write => Interest::WRITABLE,
        };
        let io = IoSource::with_events(fd, interest.epoll_events()).map_err(|(_, e)| e)?;
        Ok(PipeEnd { io, dir })
    }

    fn from_file(file: File, dir: Direction) -> io::Result<PipeEnd> {
        let modes = match dir {
            Direction::Read => [libc::O_RDONLY, libc::O_RDWR],
            Direction::Write => [libc::O_WRONLY, libc::O_RDWR],
        };
        PipeEnd::new(checked(file.into(), modes)?, dir)
    }

    fn raw_fd(&self) -> std::os::fd::RawFd {
        self.io.raw_fd()
    }

    async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        let seen = std::future::poll_fn(|cx| self.io.poll_mask(interest.mask(), cx)).await?;
        Ok(Ready::from_word(seen.ready_bits() & interest.reported()))
    }

    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_seen_latest(self.dir, cx).map(|r| r.map(drop))
    }

    fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.io.try_io(self.dir, |_| f())
    }

    fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        let len = buf.len();
        self.io.poll_transfer(Direction::Read, cx, len, |fd| {
            sys::read(fd.as_raw_fd(), buf)
        })
    }

    fn try_read_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        self.io
            .try_io(Direction::Read, |fd| sys::read(fd.as_raw_fd(), buf))
    }

    fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.io
            .try_io(Direction::Read, |fd| sys::readv(fd.as_raw_fd(), bufs))
    }

    fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        crate::cork::in_order();
        self.io
            .poll_transfer(Direction::Write, cx, buf.len(), |fd| {
                sys::write(fd.as_raw_fd(), buf)
            })
    }

    fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let bufs = &bufs[..bufs.len().min(crate::sys::IOV_MAX)];
        let len = bufs.iter().map(|b| b.len()).sum();
        crate::cork::in_order();
        self.io.poll_transfer(Direction::Write, cx, len, |fd| {
            sys::writev(fd.as_raw_fd(), bufs)
        })
    }

    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        crate::cork::in_order();
        self.io
            .try_io(Direction::Write, |fd| sys::write(fd.as_raw_fd(), buf))
    }

    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        crate::cork::in_order();
        self.io
            .try_io(Direction::Write, |fd| sys::writev(fd.as_raw_fd(), bufs))
    }

    /// Deregisters and hands back the fd, in the blocking mode asked for.
    fn into_fd(self, nonblocking: bool) -> io::Result<OwnedFd> {
        let fd = self.io.into_inner();
        sys::set_nonblocking(fd.as_raw_fd(), nonblocking)?;
        Ok(fd)
    }
}
