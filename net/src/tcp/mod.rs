//! TCP: [`TcpListener`], [`TcpStream`] and its halves.

/// `futures-io`'s `AsyncRead` for a type whose `$s => $e` is a `&TcpStream`.
macro_rules! impl_async_read {
    ($t:ty, $s:ident => $e:expr) => {
        impl futures_io::AsyncRead for $t {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $e.poll_read_priv(cx, buf)
            }
        }
    };
}

/// `futures-io`'s `AsyncWrite` likewise; closing shuts down the write side (the peer reads end
/// of stream), flushing is a no-op (writes are not buffered).
macro_rules! impl_async_write {
    ($t:ty, $s:ident => $e:expr) => {
        impl futures_io::AsyncWrite for $t {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $e.poll_write_priv(cx, buf)
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $e.poll_write_vectored_priv(cx, bufs)
            }

            fn poll_flush(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn poll_close(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
                let $s = &*self;
                std::task::Poll::Ready($e.shutdown(std::net::Shutdown::Write))
            }
        }
    };
}

mod accept;
mod listener;
mod socket;
mod split;
mod stream;
#[cfg(feature = "tokio-io")]
mod tokio_io;

pub use accept::Accept;
pub use listener::{Incoming, TcpListener, ACCEPT_BACKOFF, DEFAULT_BACKLOG};
pub use socket::TcpSocket;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::TcpStream;
