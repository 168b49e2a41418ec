//! tokio's `AsyncRead`/`AsyncWrite` for [`TcpStream`] and its halves (the `tokio-io` feature),
//! so code written against tokio's I/O traits (`tokio_util::codec::Framed`, `tokio-rustls`,
//! `hyper-util`'s `TokioIo`) takes spinpark's sockets without a `.compat()` wrapper.
//!
//! ```
//! # #[cfg(feature = "tokio-io")]
//! # fn main() {
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! let listener = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let mut client = spinpark_net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
//! let (mut server, _) = listener.accept().await.unwrap();
//! AsyncWriteExt::write_all(&mut client, b"hi").await.unwrap();
//! let mut buf = [0; 2];
//! AsyncReadExt::read_exact(&mut server, &mut buf).await.unwrap();
//! assert_eq!(&buf, b"hi");
//! # });
//! # }
//! # #[cfg(not(feature = "tokio-io"))]
//! # fn main() {}
//! ```
//!
//! How: reads go straight into the unfilled part of tokio's `ReadBuf` (no zeroing) through
//! [`TcpStream::poll_read_uninit`]; writes, vectored writes and shutdown are the same calls as
//! the `futures-io` impls make, and flushing is a no-op (writes are not buffered). Only the
//! traits are used: these sockets are driven by spinpark's reactor, never by tokio's.

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpStream, WriteHalf};

/// Reads from `s` into `buf`'s unfilled part and marks what was read as filled.
fn poll_read_buf(
    s: &TcpStream,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    // SAFETY: poll_read_uninit only writes into the slice (never de-initialises bytes), so
    // the bytes tokio already considers initialised stay initialised.
    let unfilled = unsafe { buf.unfilled_mut() };
    let n = ready!(s.poll_read_uninit(cx, unfilled))?;
    // SAFETY: poll_read_uninit returned `n`: the first `n` bytes of the unfilled part were
    // written by the kernel.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// tokio's `AsyncRead` for a type whose `$s => $e` is a `&TcpStream`.
macro_rules! impl_tokio_read {
    ($t:ty, $s:ident => $e:expr) => {
        impl AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                let $s = &*self;
                poll_read_buf(&$e, cx, buf)
            }
        }
    };
}

/// tokio's `AsyncWrite` likewise; shutting down shuts down the write side.
macro_rules! impl_tokio_write {
    ($t:ty, $s:ident => $e:expr) => {
        impl AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                let $s = &*self;
                $e.poll_write_priv(cx, buf)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                let $s = &*self;
                $e.poll_write_vectored_priv(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                let $s = &*self;
                Poll::Ready($e.shutdown(Shutdown::Write))
            }
        }
    };
}

impl_tokio_read!(TcpStream, s => s);
impl_tokio_write!(TcpStream, s => s);
impl_tokio_read!(&TcpStream, s => *s);
impl_tokio_write!(&TcpStream, s => *s);
impl_tokio_read!(ReadHalf<'_>, s => s.0);
impl_tokio_write!(WriteHalf<'_>, s => s.0);
impl_tokio_read!(OwnedReadHalf, s => s.0);
impl_tokio_write!(OwnedWriteHalf, s => s.stream);
