//! tokio's `AsyncRead`, `AsyncWrite` and `AsyncSeek` for [`File`] (the `tokio-io`
//! feature), so code written for `tokio::fs::File` (`tokio::io::AsyncReadExt`,
//! `tokio::io::BufReader`, `tokio_util::codec`) takes spinpark's.
//!
//! ```
//! # #[cfg(feature = "tokio-io")]
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
//! let path = std::env::temp_dir().join(format!("spinpark-tokio-io-{}", std::process::id()));
//! let mut file = spinpark::fs::File::create_new(&path).await?;
//! file.write_all(b"0123456789").await?;
//! assert_eq!(file.stream_position().await?, 10);
//! file.rewind().await?;
//! let mut all = String::new();
//! file.read_to_string(&mut all).await?;
//! assert_eq!(all, "0123456789");
//! file.shutdown().await?; // a flush
//! std::fs::remove_file(&path)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: the same forwards as `file_io.rs`; a read copies into the `ReadBuf`'s unfilled
//! part, and seeking is tokio's two steps (`start_seek`, then `poll_complete`). Only the
//! traits come from tokio; the work runs on spinpark's blocking pool.

use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::ReadBuf;

use super::File;

impl tokio::io::AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        dst: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let inner = me.inner.get_mut();
        ready!(inner.poll_fill(cx, &me.std, me.max_buf_size, dst.remaining()))?;
        if let Some(buf) = inner.idle_buf() {
            let n = buf.len().min(dst.remaining());
            dst.put_slice(&buf.unread()[..n]);
            buf.consume(n);
        }
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        me.inner
            .get_mut()
            .poll_write_slice(cx, &me.std, me.max_buf_size, src)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        me.inner
            .get_mut()
            .poll_write_vectored(cx, &me.std, me.max_buf_size, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner.get_mut().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner.get_mut().poll_flush(cx)
    }
}

impl tokio::io::AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, pos: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        me.inner.get_mut().start_seek(&me.std, pos)
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        self.get_mut().inner.get_mut().poll_complete(cx)
    }
}
