//! tokio's `AsyncRead` for [`Stdin`] and `AsyncWrite` for [`Stdout`] and [`Stderr`] (the
//! `tokio-io` feature), so code written for tokio's standard streams
//! (`tokio::io::AsyncWriteExt`, `tokio::io::BufReader`, `tokio_util::codec::FramedRead`)
//! takes spinpark's.
//!
//! ```
//! # #[cfg(feature = "tokio-io")]
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use tokio::io::AsyncWriteExt;
//! let mut out = spinpark::io::stdout();
//! out.write_all(b"through tokio's traits\n").await?;
//! out.flush().await?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: the same forwards as the futures-io impls in `stdio.rs`; a read copies into the
//! `ReadBuf`'s unfilled part. `poll_shutdown` flushes (tokio's returns at once): the
//! process's stream stays open either way, and this way the caller hears of a failed write.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::ReadBuf;

use super::{Stderr, Stdin, Stdout};

impl tokio::io::AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        dst: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.get_mut().poll_read_with(cx, dst.remaining(), |buf| {
            let n = buf.len().min(dst.remaining());
            dst.put_slice(&buf.unread()[..n]);
            buf.consume(n);
        })
    }
}

macro_rules! tokio_writer {
    ($ty:ident) => {
        impl tokio::io::AsyncWrite for $ty {
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

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().poll_flush_inner(cx)
            }

            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().poll_flush_inner(cx)
            }
        }
    };
}

tokio_writer!(Stdout);
tokio_writer!(Stderr);
