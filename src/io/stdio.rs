//! The process's standard streams for async code, as tokio's `tokio::io::{stdin, stdout,
//! stderr}`: each read, write and flush runs on the runtime's blocking pool.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use futures_util::AsyncWriteExt;
//! let mut err = spinpark::io::stderr();
//! err.write_all(b"a warning\n").await?;
//! err.flush().await?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: the standard streams may be terminals, pipes or files, and only some of those work
//! with epoll, so, as tokio does, a stream hands its std handle (`std::io::Stdin`, ...) and a
//! buffer to the blocking pool for each operation (the crate's `blocking` module, the same
//! machinery as `fs::File`'s). A write copies up to 2 MiB of the caller's bytes and returns at
//! once; the next write or a flush waits for it. A read asks for as many bytes as the caller
//! wants (up to 2 MiB) and keeps what the caller did not take for the next read.
//! futures-io's `AsyncRead`/`AsyncWrite` are implemented here, tokio's (with the `tokio-io`
//! feature) in `stdio_tokio_io.rs`.

use std::fmt;
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::blocking::{Blocking, Pool};

/// tokio's error for a stream operation refused while the runtime shuts down, which
/// `runtime::is_rt_shutdown_err` recognises.
fn shutting_down() -> io::Error {
    spinpark_executor::rt_shutdown_err("the spinpark runtime is shutting down")
}

const STDIN: Pool = Pool {
    what: "spinpark::io::stdin",
    refused: shutting_down,
};
const STDOUT: Pool = Pool {
    what: "spinpark::io::stdout",
    refused: shutting_down,
};
const STDERR: Pool = Pool {
    what: "spinpark::io::stderr",
    refused: shutting_down,
};

/// The process's standard input for async code (tokio's `tokio::io::Stdin`), made by
/// [`stdin`].
///
/// Each read runs a blocking read of `std::io::stdin()` on the blocking pool. Such a read
/// cannot be cancelled: dropping the future stops the waiting, not the read, and a runtime
/// shutting down waits for it, so a process reading an interactive terminal may not exit
/// until a line is entered. It suits input piped into the process; for a terminal, a
/// dedicated thread reading std's stdin and sending lines over a channel can be left
/// behind at exit.
///
/// It implements futures-io's `AsyncRead` (the `futures` crate's `AsyncReadExt`,
/// `BufReader`, `lines`), and with the `tokio-io` feature tokio's.
///
/// ```no_run
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::{AsyncBufReadExt, StreamExt};
/// let mut lines = futures_util::io::BufReader::new(spinpark::io::stdin()).lines();
/// while let Some(line) = lines.next().await {
///     println!("read: {}", line?);
/// }
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct Stdin {
    std: Blocking<io::Stdin>,
    /// For the fd only: the handle in `std` is on the pool while a read runs.
    fd: io::Stdin,
}

/// The process's standard output for async code (tokio's `tokio::io::Stdout`), made by
/// [`stdout`].
///
/// A write copies the bytes (up to 2 MiB of them), starts writing them on the blocking pool
/// and returns; the next write or a flush waits for it, and reports its error. std's stdout
/// buffers lines, so flush before expecting output that does not end in a newline to show,
/// and flush before the runtime shuts down: a write started before still happens, but its
/// error is heard by nobody.
///
/// Each `Stdout` keeps its own order; two of them (or `println!` beside one) may interleave
/// their writes. It implements futures-io's `AsyncWrite`, and with the `tokio-io` feature
/// tokio's.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::AsyncWriteExt;
/// let mut out = spinpark::io::stdout();
/// out.write_all(b"hello, ").await?;
/// out.write_all(b"world\n").await?;
/// out.flush().await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct Stdout {
    std: Blocking<io::Stdout>,
    fd: io::Stdout,
}

/// The process's standard error for async code (tokio's `tokio::io::Stderr`), made by
/// [`stderr`]. Writes behave as [`Stdout`]'s (std's stderr does not buffer, so a flush
/// only waits for the write in flight).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::AsyncWriteExt;
/// let mut err = spinpark::io::stderr();
/// err.write_all(b"something went wrong\n").await?;
/// err.flush().await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct Stderr {
    std: Blocking<io::Stderr>,
    fd: io::Stderr,
}

/// A handle to the process's standard input; see [`Stdin`].
///
/// Creating one needs no runtime; reading from it does (outside a spinpark runtime a read
/// fails with an error, where tokio's panics).
///
/// ```no_run
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::AsyncReadExt;
/// let mut input = String::new();
/// spinpark::io::stdin().read_to_string(&mut input).await?;
/// println!("{} bytes on stdin", input.len());
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn stdin() -> Stdin {
    Stdin {
        std: Blocking::new(STDIN, io::stdin),
        fd: io::stdin(),
    }
}

/// A handle to the process's standard output; see [`Stdout`].
///
/// Creating one needs no runtime; writing to it does (outside a spinpark runtime a write
/// fails with an error, where tokio's panics; once the runtime is shutting down it fails with
/// the error [`runtime::is_rt_shutdown_err`](crate::runtime::is_rt_shutdown_err) recognises).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::AsyncWriteExt;
/// let mut out = spinpark::io::stdout();
/// out.write_all(b"done\n").await?;
/// out.flush().await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn stdout() -> Stdout {
    Stdout {
        std: Blocking::new(STDOUT, io::stdout),
        fd: io::stdout(),
    }
}

/// A handle to the process's standard error; see [`Stderr`] and [`stdout`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::AsyncWriteExt;
/// spinpark::io::stderr().write_all(b"a note on stderr\n").await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn stderr() -> Stderr {
    Stderr {
        std: Blocking::new(STDERR, io::stderr),
        fd: io::stderr(),
    }
}

/// The parts of the three types that are the same but for the type.
macro_rules! stream_common {
    ($ty:ident, $fd:literal) => {
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("fd", &$fd)
                    .finish_non_exhaustive()
            }
        }

        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                self.fd.as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.fd.as_fd()
            }
        }
    };
}

stream_common!(Stdin, 0);
stream_common!(Stdout, 1);
stream_common!(Stderr, 2);

impl Stdin {
    /// Reads into `dst` (the blocking read fills the shared buffer first); for the I/O
    /// trait impls.
    pub(super) fn poll_read_with(
        &mut self,
        cx: &mut Context<'_>,
        want: usize,
        copy: impl FnOnce(&mut crate::blocking::Buf),
    ) -> Poll<io::Result<()>> {
        ready!(self.std.poll_fill(cx, want))?;
        if let Some(buf) = self.std.read_buf() {
            copy(buf);
        }
        Poll::Ready(Ok(()))
    }
}

impl futures_io::AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        dst: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut n = 0;
        ready!(self
            .get_mut()
            .poll_read_with(cx, dst.len(), |buf| n = buf.copy_to(dst)))?;
        Poll::Ready(Ok(n))
    }
}

/// futures-io's `AsyncWrite` for a writing stream, and its forwards for tokio's.
macro_rules! writer {
    ($ty:ident) => {
        impl $ty {
            pub(super) fn poll_write_inner(
                &mut self,
                cx: &mut Context<'_>,
                src: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.std.poll_write(cx, src)
            }

            pub(super) fn poll_write_vectored_inner(
                &mut self,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                self.std.poll_write_vectored(cx, bufs)
            }

            pub(super) fn poll_flush_inner(
                &mut self,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<()>> {
                self.std.poll_flush(cx)
            }
        }

        impl futures_io::AsyncWrite for $ty {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                src: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.get_mut().poll_write_inner(cx, src)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                self.get_mut().poll_write_vectored_inner(cx, bufs)
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().poll_flush_inner(cx)
            }

            /// A flush: the process's stream stays open.
            fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().poll_flush_inner(cx)
            }
        }
    };
}

writer!(Stdout);
writer!(Stderr);

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_traits<T: Send + Sync + Unpin + fmt::Debug + AsFd + 'static>() {}

    #[test]
    fn auto_traits_and_fds() {
        assert_traits::<Stdin>();
        assert_traits::<Stdout>();
        assert_traits::<Stderr>();
        assert_eq!(stdin().as_raw_fd(), 0);
        assert_eq!(stdout().as_raw_fd(), 1);
        assert_eq!(stderr().as_raw_fd(), 2);
        assert_eq!(format!("{:?}", stdout()), "Stdout { fd: 1, .. }");
    }
}
