//! The parent's ends of a child's standard streams: [`ChildStdin`], [`ChildStdout`] and
//! [`ChildStderr`], each a pipe end on the reactor (`unix::pipe`'s `Sender` or `Receiver`:
//! non-blocking, registered for its one direction).

use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};

use crate::sys::fd::set_nonblocking;
use crate::unix::pipe::{Receiver, Sender};

/// A pipe end std handed over (blocking), made non-blocking for the reactor.
fn nonblocking(fd: OwnedFd) -> io::Result<OwnedFd> {
    set_nonblocking(fd.as_raw_fd(), true)?;
    Ok(fd)
}

/// The write end of a child's standard input, when it was spawned with
/// `Stdio::piped()`: futures-io's `AsyncWrite` (and tokio's with the `tokio-io` feature).
/// Dropping it closes the pipe, and the child reads end of file.
///
/// ```
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// use spinpark::process::Command;
/// use std::process::Stdio;
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let mut child = Command::new("cat")
///     .stdin(Stdio::piped())
///     .stdout(Stdio::piped())
///     .spawn()
///     .unwrap();
/// let mut stdin = child.stdin.take().unwrap();
/// stdin.write_all(b"hello").await.unwrap();
/// drop(stdin); // end of file for `cat`
/// let mut out = String::new();
/// child.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
/// assert_eq!(out, "hello");
/// assert!(child.wait().await.unwrap().success());
/// # });
/// ```
pub struct ChildStdin {
    inner: Sender,
}

/// The read end of a child's standard output, when it was spawned with
/// `Stdio::piped()`: futures-io's `AsyncRead` (and tokio's with the `tokio-io` feature).
///
/// ```
/// use futures_util::AsyncReadExt;
/// use spinpark::process::Command;
/// use std::process::Stdio;
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let mut child = Command::new("echo").arg("hi").stdout(Stdio::piped()).spawn().unwrap();
/// let mut out = String::new();
/// child.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
/// assert_eq!(out, "hi\n");
/// child.wait().await.unwrap();
/// # });
/// ```
pub struct ChildStdout {
    inner: Receiver,
}

/// The read end of a child's standard error, when it was spawned with `Stdio::piped()`:
/// futures-io's `AsyncRead` (and tokio's with the `tokio-io` feature).
///
/// ```
/// use futures_util::AsyncReadExt;
/// use spinpark::process::Command;
/// use std::process::Stdio;
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let mut child = Command::new("sh")
///     .args(["-c", "echo oops >&2"])
///     .stderr(Stdio::piped())
///     .spawn()
///     .unwrap();
/// let mut err = String::new();
/// child.stderr.take().unwrap().read_to_string(&mut err).await.unwrap();
/// assert_eq!(err, "oops\n");
/// child.wait().await.unwrap();
/// # });
/// ```
pub struct ChildStderr {
    inner: Receiver,
}

impl ChildStdin {
    /// std's handle on the current runtime's reactor (made non-blocking).
    ///
    /// # Errors
    /// Outside a spinpark runtime, or if the reactor refuses the fd.
    ///
    /// ```
    /// use spinpark::process::ChildStdin;
    /// use std::process::{Command, Stdio};
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut child = Command::new("cat").stdin(Stdio::piped()).spawn().unwrap();
    /// let stdin = ChildStdin::from_std(child.stdin.take().unwrap()).unwrap();
    /// drop(stdin);
    /// child.wait().unwrap();
    /// # });
    /// ```
    pub fn from_std(inner: std::process::ChildStdin) -> io::Result<ChildStdin> {
        let fd = nonblocking(inner.into())?;
        Ok(ChildStdin {
            inner: Sender::from_owned_fd_unchecked(fd)?,
        })
    }

    /// Takes the fd off the reactor and hands it back in blocking mode.
    ///
    /// ```
    /// use spinpark::process::Command;
    /// use std::process::Stdio;
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut child = Command::new("cat").stdin(Stdio::piped()).spawn().unwrap();
    /// let fd: std::os::fd::OwnedFd = child.stdin.take().unwrap().into_owned_fd().unwrap();
    /// drop(fd);
    /// child.wait().await.unwrap();
    /// # });
    /// ```
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        self.inner.into_blocking_fd()
    }
}

impl ChildStdout {
    /// std's handle on the current runtime's reactor (made non-blocking).
    ///
    /// # Errors
    /// Outside a spinpark runtime, or if the reactor refuses the fd.
    ///
    /// ```
    /// use spinpark::process::ChildStdout;
    /// use std::process::{Command, Stdio};
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut child = Command::new("sh").args(["-c", "echo x"])
    ///     .stdout(Stdio::piped()).spawn().unwrap();
    /// let pipe = ChildStdout::from_std(child.stdout.take().unwrap()).unwrap();
    /// drop(pipe);
    /// child.wait().unwrap();
    /// # });
    /// ```
    pub fn from_std(inner: std::process::ChildStdout) -> io::Result<ChildStdout> {
        let fd = nonblocking(inner.into())?;
        Ok(ChildStdout {
            inner: Receiver::from_owned_fd_unchecked(fd)?,
        })
    }

    /// Takes the fd off the reactor and hands it back in blocking mode.
    ///
    /// ```
    /// use spinpark::process::Command;
    /// use std::process::Stdio;
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut child = Command::new("sh").args(["-c", "echo x"])
    ///     .stdout(Stdio::piped()).spawn().unwrap();
    /// let pipe = child.stdout.take().unwrap();
    /// let fd: std::os::fd::OwnedFd = pipe.into_owned_fd().unwrap();
    /// drop(fd);
    /// child.wait().await.unwrap();
    /// # });
    /// ```
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        self.inner.into_blocking_fd()
    }
}

impl ChildStderr {
    /// std's handle on the current runtime's reactor (made non-blocking).
    ///
    /// # Errors
    /// Outside a spinpark runtime, or if the reactor refuses the fd.
    ///
    /// ```
    /// use spinpark::process::ChildStderr;
    /// use std::process::{Command, Stdio};
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut child = Command::new("sh").args(["-c", "echo x >&2"])
    ///     .stderr(Stdio::piped()).spawn().unwrap();
    /// let pipe = ChildStderr::from_std(child.stderr.take().unwrap()).unwrap();
    /// drop(pipe);
    /// child.wait().unwrap();
    /// # });
    /// ```
    pub fn from_std(inner: std::process::ChildStderr) -> io::Result<ChildStderr> {
        let fd = nonblocking(inner.into())?;
        Ok(ChildStderr {
            inner: Receiver::from_owned_fd_unchecked(fd)?,
        })
    }

    /// Takes the fd off the reactor and hands it back in blocking mode.
    ///
    /// ```
    /// use spinpark::process::Command;
    /// use std::process::Stdio;
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut child = Command::new("sh").args(["-c", "echo x >&2"])
    ///     .stderr(Stdio::piped()).spawn().unwrap();
    /// let pipe = child.stderr.take().unwrap();
    /// let fd: std::os::fd::OwnedFd = pipe.into_owned_fd().unwrap();
    /// drop(fd);
    /// child.wait().await.unwrap();
    /// # });
    /// ```
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        self.inner.into_blocking_fd()
    }
}

macro_rules! common {
    ($type:ident) => {
        impl std::fmt::Debug for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($type))
                    .field("fd", &self.inner.as_raw_fd())
                    .finish()
            }
        }

        impl AsRawFd for $type {
            fn as_raw_fd(&self) -> RawFd {
                self.inner.as_raw_fd()
            }
        }

        impl AsFd for $type {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.inner.as_fd()
            }
        }

        /// The pipe end as a child's standard stream (taken off the reactor, blocking), to
        /// connect one child to another.
        impl TryFrom<$type> for Stdio {
            type Error = io::Error;

            fn try_from(io: $type) -> io::Result<Stdio> {
                io.into_owned_fd().map(Stdio::from)
            }
        }
    };
}

common!(ChildStdin);
common!(ChildStdout);
common!(ChildStderr);

impl futures_io::AsyncWrite for ChildStdin {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        futures_io::AsyncWrite::poll_write(Pin::new(&mut self.inner), cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        futures_io::AsyncWrite::poll_write_vectored(Pin::new(&mut self.inner), cx, bufs)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        futures_io::AsyncWrite::poll_flush(Pin::new(&mut self.inner), cx)
    }

    /// Nothing to do (as tokio's `poll_shutdown`): drop the `ChildStdin` to close the pipe.
    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        futures_io::AsyncWrite::poll_close(Pin::new(&mut self.inner), cx)
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncWrite for ChildStdin {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        tokio::io::AsyncWrite::poll_write(Pin::new(&mut self.inner), cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        tokio::io::AsyncWrite::poll_write_vectored(Pin::new(&mut self.inner), cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        tokio::io::AsyncWrite::poll_flush(Pin::new(&mut self.inner), cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        tokio::io::AsyncWrite::poll_shutdown(Pin::new(&mut self.inner), cx)
    }
}

macro_rules! reader_traits {
    ($type:ident) => {
        impl futures_io::AsyncRead for $type {
            fn poll_read(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                futures_io::AsyncRead::poll_read(Pin::new(&mut self.inner), cx, buf)
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncRead for $type {
            fn poll_read(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                tokio::io::AsyncRead::poll_read(Pin::new(&mut self.inner), cx, buf)
            }
        }
    };
}

reader_traits!(ChildStdout);
reader_traits!(ChildStderr);
