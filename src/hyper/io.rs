//! [`Io`]: a spinpark stream as hyper's `Read` and `Write`.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! let stream = spinpark::net::TcpStream::connect("127.0.0.1:8080").await?;
//! let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, String>(
//!     spinpark::hyper::Io::new(stream),
//! )
//! .await?;
//! spinpark::spawn(conn);
//! let response = sender.send_request(hyper::Request::new(String::new())).await?;
//! # Ok(()) }
//! ```
//!
//! How: hyper hands `Read` a cursor over memory that may be uninitialised. A
//! [`TcpStream`] reads into it directly with `recv(2)` ([`TcpStream::poll_read_uninit`]);
//! other streams go through [`ZeroFill`], which zeroes the cursor before a `futures-io` read
//! (the price of `futures-io` taking `&mut [u8]`). Writes, vectored writes, flush and
//! shutdown map one to one onto `futures-io`'s `AsyncWrite` (shutdown is `poll_close`).

use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};
use hyper::rt::ReadBufCursor;

use crate::net::TcpStream;

/// A byte stream [`Io`] can drive: `futures-io`'s traits plus a read into uninitialised
/// memory. Implemented for [`TcpStream`] and, by zeroing first, for [`ZeroFill`].
///
/// # Safety
/// When `poll_read_uninit` returns `Ready(Ok(n))`, `n` is at most `buf.len()` and the first
/// `n` bytes of `buf` have been written: hyper then reads them as initialised memory.
///
/// ```
/// fn takes_stream<S: spinpark::hyper::Stream>(_: S) {}
/// # fn f(tcp: spinpark::net::TcpStream) {
/// takes_stream(tcp);
/// # }
/// ```
pub unsafe trait Stream: AsyncRead + AsyncWrite + Unpin {
    /// Reads into `buf`; on `Ok(n)` its first `n` bytes are initialised (0: end of stream).
    fn poll_read_uninit(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>>;

    /// Whether `poll_write_vectored` writes several buffers at once (hyper then queues
    /// buffers instead of copying them into one).
    fn is_write_vectored(&self) -> bool;
}

// SAFETY: TcpStream::poll_read_uninit returns what recv(2) wrote into the buffer, which the
// kernel caps at the buffer's length.
unsafe impl Stream for TcpStream {
    fn poll_read_uninit(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        TcpStream::poll_read_uninit(&self, cx, buf)
    }

    fn is_write_vectored(&self) -> bool {
        // sendmsg(2) with one iovec per buffer.
        true
    }
}

/// Any `futures-io` stream (a TLS stream, say) as a [`Stream`]: hyper's buffer is zeroed
/// before each read, since `futures-io` reads need initialised memory.
///
/// ```no_run
/// # async fn f(tls: futures_rustls::server::TlsStream<spinpark::net::TcpStream>) {
/// let io = spinpark::hyper::Io::new(spinpark::hyper::ZeroFill::new(tls));
/// # }
/// ```
#[derive(Debug)]
pub struct ZeroFill<T> {
    inner: T,
}

impl<T> ZeroFill<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> ZeroFill<T> {
        ZeroFill { inner }
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The wrapped stream, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Unwraps the stream.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ZeroFill<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ZeroFill<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

// SAFETY: the whole buffer is zeroed before the read, and `n` is capped at its length.
unsafe impl<T: AsyncRead + AsyncWrite + Unpin> Stream for ZeroFill<T> {
    fn poll_read_uninit(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        buf.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `buf` was just initialised, and MaybeUninit<u8> has the
        // layout of u8.
        let init = unsafe { &mut *(buf as *mut [MaybeUninit<u8>] as *mut [u8]) };
        let n = ready!(Pin::new(&mut self.inner).poll_read(cx, init))?;
        Poll::Ready(Ok(n.min(init.len())))
    }

    fn is_write_vectored(&self) -> bool {
        // futures-io cannot tell; its default writes only the first buffer per call, so let
        // hyper flatten instead.
        false
    }
}

/// A [`Stream`] as hyper's `Read` and `Write`.
///
/// ```no_run
/// # async fn f(stream: spinpark::net::TcpStream) {
/// let io = spinpark::hyper::Io::new(stream);
/// # }
/// ```
#[derive(Debug)]
pub struct Io<T> {
    inner: T,
}

impl<T> Io<T> {
    /// Wraps `inner` for hyper.
    pub fn new(inner: T) -> Io<T> {
        Io { inner }
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The wrapped stream, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Unwraps the stream.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: Stream> ::hyper::rt::Read for Io<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the stream only writes into the slice (it never de-initialises bytes hyper
        // already counts as initialised), and we advance only over what it reports written.
        let unfilled = unsafe { buf.as_mut() };
        let len = unfilled.len();
        let n = ready!(Pin::new(&mut self.inner).poll_read_uninit(cx, unfilled))?;
        // Stream's contract already promises this; a cheap check against a faulty impl.
        assert!(n <= len, "a stream reported reading more than it was given");
        // SAFETY: by Stream's contract the stream initialised the first `n` bytes of the
        // cursor, which are within it (checked above).
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

impl<T: Stream> ::hyper::rt::Write for Io<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}
