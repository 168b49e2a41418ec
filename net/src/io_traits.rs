//! The I/O traits on every stream type and half: `futures-io`'s `AsyncRead`/`AsyncWrite`,
//! and with the `tokio-io` feature tokio's, so code written against tokio's I/O traits
//! (`tokio_util::codec::Framed`, `tokio-rustls`, hyper-util's `TokioIo`) takes spinpark's
//! sockets without a `.compat()` wrapper.
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
//! client.write_all(b"hi").await.unwrap();
//! client.shutdown().await.unwrap(); // tokio's: the server reads end of stream
//! let mut buf = Vec::new();
//! server.read_to_end(&mut buf).await.unwrap();
//! assert_eq!(buf, b"hi");
//! # });
//! # }
//! # #[cfg(not(feature = "tokio-io"))]
//! # fn main() {}
//! ```
//!
//! # How it works
//!
//! Each impl forwards to the type's [`StreamCore`](crate::stream::StreamCore): reads, writes
//! and vectored writes go straight to the socket (tokio's reads into the unfilled part of its
//! `ReadBuf`, without zeroing it), flushing pushes what the task's poll queued in the kernel
//! (`cork.rs`), and closing (`poll_close`, tokio's `poll_shutdown`) shuts down the write side,
//! so the peer reads every byte, then end of stream. Only the traits are used: these sockets
//! are driven by spinpark's reactor, never by tokio's.
//!
//! The impls are generated here, one `impl_async_read!`/`impl_async_write!` line per type,
//! next to the type (`tcp/stream.rs`, `tcp/split.rs`, ...): the macros define no type, only
//! these trait impls, each a one-line forward.

/// `AsyncRead` (futures-io's, and tokio's with `tokio-io`) for `$t`, where `$s => $core`
/// turns `&$t` into its `&StreamCore`.
macro_rules! impl_async_read {
    ($t:ty, $s:ident => $core:expr) => {
        impl futures_io::AsyncRead for $t {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $core.poll_read(cx, buf)
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncRead for $t {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let $s = &*self;
                $crate::io_traits::poll_read_buf(&$core, cx, buf)
            }
        }
    };
}

/// `AsyncWrite` (futures-io's, and tokio's with `tokio-io`) for `$t`, as `impl_async_read!`.
macro_rules! impl_async_write {
    ($t:ty, $s:ident => $core:expr) => {
        impl futures_io::AsyncWrite for $t {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $core.poll_write(cx, buf)
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $core.poll_write_vectored(cx, bufs)
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let $s = &*self;
                $core.poll_flush(cx)
            }

            fn poll_close(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let $s = &*self;
                $core.poll_close(cx)
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncWrite for $t {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $core.poll_write(cx, buf)
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = &*self;
                $core.poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let $s = &*self;
                $core.poll_flush(cx)
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let $s = &*self;
                $core.poll_close(cx)
            }
        }
    };
}

pub(crate) use {impl_async_read, impl_async_write};

/// tokio's read: into `buf`'s unfilled part, then marks what was read as filled.
#[cfg(feature = "tokio-io")]
pub(crate) fn poll_read_buf<S: std::os::fd::AsRawFd>(
    core: &crate::stream::StreamCore<S>,
    cx: &mut std::task::Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> std::task::Poll<std::io::Result<()>> {
    // SAFETY: poll_read_uninit only writes into the slice (never de-initialises bytes), so
    // the bytes tokio already considers initialised stay initialised.
    let unfilled = unsafe { buf.unfilled_mut() };
    let n = std::task::ready!(core.poll_read_uninit(cx, unfilled))?;
    // SAFETY: poll_read_uninit returned `n`: the first `n` bytes of the unfilled part were
    // written by the kernel.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    std::task::Poll::Ready(Ok(()))
}
