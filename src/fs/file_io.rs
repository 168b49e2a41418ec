//! futures-io's `AsyncRead`, `AsyncWrite` and `AsyncSeek` for [`File`], so the `futures`
//! crate's `AsyncReadExt`, `AsyncWriteExt` and `AsyncSeekExt` work on it.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use futures_util::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
//! let path = std::env::temp_dir().join(format!("spinpark-file-io-{}", std::process::id()));
//! let mut file = spinpark::fs::File::create_new(&path).await?;
//! file.write_all(b"0123456789").await?;
//! file.seek(std::io::SeekFrom::Start(0)).await?;
//! let mut two = [0; 2];
//! file.read_exact(&mut two).await?;
//! assert_eq!(&two, b"01");
//! file.close().await?; // a flush: the file stays open until dropped
//! std::fs::remove_file(&path)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: each method is a short forward to the state machine of `file_state.rs`; a read
//! copies out of the buffer once it is ready. `poll_close` flushes (a file has no write
//! side to shut), and `poll_seek` waits for what is in flight, then seeks.

use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::File;

impl futures_io::AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        dst: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let inner = me.inner.get_mut();
        ready!(inner.poll_fill(cx, &me.std, me.max_buf_size, dst.len()))?;
        Poll::Ready(Ok(inner.idle_buf().map_or(0, |buf| buf.copy_to(dst))))
    }
}

impl futures_io::AsyncWrite for File {
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

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner.get_mut().poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner.get_mut().poll_flush(cx)
    }
}

impl futures_io::AsyncSeek for File {
    fn poll_seek(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        pos: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        let me = self.get_mut();
        me.inner.get_mut().poll_seek(cx, &me.std, pos)
    }
}
