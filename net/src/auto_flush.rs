//! [`AutoFlush`]: opt-in write buffering that flushes itself, for handlers that write many
//! small replies per poll and want them to leave in one send, without a `flush` to forget.
//!
//! ```
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(rt.spawn(async {
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! use spinpark_net::io::AutoFlush;
//! let listener = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let mut client = spinpark_net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
//! let (server, _) = listener.accept().await.unwrap();
//! let mut server = AutoFlush::new(server);
//! server.set_nodelay(true).unwrap(); // the socket's own methods pass through
//! for _ in 0..16 {
//!     server.write_all(b"reply\n").await.unwrap(); // buffered
//! }
//! // No flush: the task's poll ends at the read below, and the 16 replies leave in one send.
//! let mut got = [0u8; 96];
//! client.read_exact(&mut got).await.unwrap();
//! assert!(got.starts_with(b"reply\nreply\n"));
//! # })).unwrap();
//! ```
//!
//! # The promise, and how it differs from the plain socket's
//!
//! `AutoFlush` keeps [`BufWriter`](futures_util::io::BufWriter)'s promise, not the plain
//! socket's: a write that returns `Ok` has put its bytes in a buffer in this process. What
//! `abort`, `std::process::exit` or a `SIGKILL` finds in that buffer is lost, as with
//! `BufWriter`; dropping an `AutoFlush` sends what the socket takes at once and loses the rest
//! (a peer that does not read could otherwise hold the fd for ever). A plain spinpark socket
//! loses nothing in any of these cases: its `Ok` means the kernel has the bytes.
//!
//! Unlike `BufWriter`, nobody has to call `flush`. The buffer goes to the kernel in one send:
//!
//! * when the task's poll ends (it returns `Pending`, completes, panics or is aborted), and
//!   when the poll has lasted [`LATE_AFTER`](spinpark_executor::task::poll_end::LATE_AFTER)
//!   since its first buffered write (the task computes or blocks its thread): the executor's
//!   late runner sends it from its own thread;
//! * when a write would not fit (then the write itself waits, as any write to a full socket);
//! * on `flush`, and on `close` (tokio's `shutdown`), before the write side is shut down;
//! * before a send on another socket that pushes at once from the same poll, so that peers
//!   see the task's writes in program order.
//!
//! If the socket is full when the buffer is due, the rest goes as soon as the kernel has room,
//! whether or not the task touches the writer again. An error met by such a send is returned
//! by the next write or flush. Writes from outside a task's poll (a `block_on` future, a
//! future some other executor polls) have no poll end to wait for and go out at once.
//!
//! # How it works
//!
//! The buffer lives behind a mutex in an `Arc`, beside the socket's fd and its readiness. A
//! poll's first buffered write defers the `Arc` to the poll's end
//! (`spinpark_executor::task::poll_end`), which also arms the thread's late alarm. The
//! deferred flush sends what the buffer holds with one `send`; if the kernel has no room it
//! registers the `Arc` itself as a waker for the socket's writability, and the reactor's
//! next write event sends the rest. The writer's drop marks the fd as no longer the buffer's
//! under the same mutex, so a late flush never reaches a closed (or reused) fd.

use std::fmt;
use std::io;
use std::ops::{Deref, DerefMut};
use std::os::fd::RawFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll, Wake, Waker};

use spinpark_executor::task::poll_end::{self, PollEnd};

use crate::readiness::{Direction, Readiness};
use crate::sys;

/// The default capacity of an [`AutoFlush`]'s buffer, as `BufWriter`'s.
const DEFAULT_CAPACITY: usize = 8 * 1024;

/// A spinpark writer whose small writes are gathered in a buffer that flushes itself when the
/// task's poll ends (or fills, or the poll runs long): hand-batched throughput from a handler
/// that writes each reply with its own `write_all` and never calls `flush`.
///
/// `Ok` from a write means the bytes are buffered, as with `BufWriter`: what `abort` or `exit`
/// finds unflushed is lost, and so is what the socket has no room for when the `AutoFlush` is
/// dropped. (A plain spinpark socket loses nothing in these cases: its `Ok` means the kernel has
/// the bytes.)
///
/// Nobody has to call `flush`: the buffer goes to the kernel in one send when the task's poll
/// ends (it returns `Pending`, completes, panics or is aborted), when the poll has lasted
/// [`LATE_AFTER`](spinpark_executor::task::poll_end::LATE_AFTER) since its first buffered
/// write (from the executor's late runner), when a write would not fit, on `flush`, on
/// `close`/`shutdown`, and before a send on another socket that pushes at once from the same
/// poll (program order). If the kernel has no room then, the rest goes at the socket's next
/// write event, whether or not the task touches the writer again; an error such a send meets
/// is returned by the next write or flush. Writes from outside a task's poll (a `block_on`
/// future) go out at once.
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(rt.spawn(async {
/// use futures_util::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
/// use spinpark_net::io::AutoFlush;
/// let listener = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr = listener.local_addr().unwrap();
/// spinpark_executor::spawn(async move {
///     let (stream, _) = listener.accept().await.unwrap();
///     // Reads pass through; each reply is its own write_all; no flush anywhere.
///     let mut conn = BufReader::new(AutoFlush::new(stream));
///     let mut line = String::new();
///     while conn.read_line(&mut line).await.unwrap() > 0 {
///         conn.get_mut().write_all(b"+").await.unwrap();
///         conn.get_mut().write_all(line.as_bytes()).await.unwrap();
///         line.clear();
///     }
/// });
/// let mut client = spinpark_net::TcpStream::connect(addr).await.unwrap();
/// client.write_all(b"a\nb\n").await.unwrap();
/// let mut replies = BufReader::new(client);
/// let mut got = String::new();
/// replies.read_line(&mut got).await.unwrap();
/// replies.read_line(&mut got).await.unwrap();
/// assert_eq!(got, "+a\n+b\n");
/// # })).unwrap();
/// ```
pub struct AutoFlush<W: AutoFlushWrite> {
    shared: Arc<Shared>,
    capacity: usize,
    inner: W,
}

/// The writers [`AutoFlush`] takes: spinpark's TCP and Unix streams and their write halves.
/// Sealed.
///
/// ```
/// # spinpark_executor::Runtime::new().unwrap().block_on(async {
/// # let l = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let stream = spinpark_net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
/// let (_read, write) = stream.into_split();
/// // A write half takes it too: the read half stays free for another task.
/// let out = spinpark_net::io::AutoFlush::new(write);
/// # drop(out);
/// # });
/// ```
pub trait AutoFlushWrite: private::Sealed {}

// A public trait in a private module: nameable here, unnameable (so unimplementable) outside.
#[allow(unreachable_pub)]
pub(crate) mod private {
    /// What the buffer needs of its writer: the fd to send on, and its readiness.
    pub trait Sealed {
        fn parts(&self) -> super::Parts;
    }
}

/// A writer's fd and readiness, for the buffer's sends.
#[doc(hidden)]
#[allow(unreachable_pub)]
pub struct Parts {
    fd: RawFd,
    readiness: Arc<Readiness>,
}

impl fmt::Debug for Parts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parts").field("fd", &self.fd).finish()
    }
}

impl Parts {
    pub(crate) fn of<S: std::os::fd::AsRawFd>(core: &crate::stream::StreamCore<S>) -> Parts {
        Parts {
            fd: core.raw_fd(),
            readiness: core.io().readiness().clone(),
        }
    }
}

/// `AutoFlushWrite` for a spinpark stream type, `$s => $core` turning `&$t` into its
/// `&StreamCore`: one line next to the type's `impl_async_write!`.
macro_rules! auto_flush_write {
    ($t:ty, $s:ident => $core:expr) => {
        impl $crate::auto_flush::AutoFlushWrite for $t {}
        impl $crate::auto_flush::private::Sealed for $t {
            fn parts(&self) -> $crate::auto_flush::Parts {
                let $s = self;
                $crate::auto_flush::Parts::of(&$core)
            }
        }
    };
}

pub(crate) use auto_flush_write;

/// The buffer and what a flush from another thread needs.
struct Shared {
    fd: RawFd,
    state: Mutex<State>,
}

struct State {
    /// Buffered bytes; `buf[sent..]` are not yet the kernel's.
    buf: Vec<u8>,
    sent: usize,
    /// The error a flush met, for the next write or flush to return.
    error: Option<io::Error>,
    /// Deferred to a poll's end and not run since.
    deferred: bool,
    /// The socket's readiness; `None` once the writer is dropped (the fd is no longer ours).
    readiness: Option<Arc<Readiness>>,
}

impl State {
    fn pending(&self) -> usize {
        self.buf.len() - self.sent
    }

    /// Sends what is buffered, waiting (with `cx`) while the kernel has no room.
    fn poll_drain(&mut self, fd: RawFd, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.pending() > 0 {
            let Some(readiness) = &self.readiness else {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "spinpark: AutoFlush: the writer is gone",
                )));
            };
            match ready!(poll_send(readiness, fd, cx, &self.buf[self.sent..])) {
                Ok(n) => self.sent += n,
                Err(e) => {
                    self.discard();
                    return Poll::Ready(Err(e));
                }
            }
        }
        self.discard();
        Poll::Ready(Ok(()))
    }

    /// Empties the buffer, keeping its allocation.
    fn discard(&mut self) {
        self.buf.clear();
        self.sent = 0;
    }
}

/// One `send` of `data` on `fd` once the socket is writable, waiting (with `cx`) while the
/// kernel has no room: the bytes it took, or its error.
fn poll_send(
    readiness: &Readiness,
    fd: RawFd,
    cx: &mut Context<'_>,
    data: &[u8],
) -> Poll<io::Result<usize>> {
    loop {
        let seen = ready!(readiness.poll_ready(Direction::Write, cx));
        match sys::send(fd, data) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => readiness.clear(seen),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            r => return Poll::Ready(r),
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No user code runs under this lock, and nothing under it panics.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends the buffer from wherever the poll's end, the late runner or a write event runs
    /// this: one `send` if the kernel has room; else the rest goes at the socket's next write
    /// event, this buffer being the waker.
    fn flush_from_anywhere(self: &Arc<Self>) {
        let mut st = self.lock();
        st.deferred = false;
        if st.pending() == 0 || st.readiness.is_none() {
            return;
        }
        let waker = Waker::from(self.clone());
        match st.poll_drain(self.fd, &mut Context::from_waker(&waker)) {
            Poll::Ready(Err(e)) => st.error = Some(e),
            Poll::Ready(Ok(())) | Poll::Pending => {}
        }
    }
}

impl PollEnd for Shared {
    fn poll_end(self: Arc<Self>) {
        self.flush_from_anywhere();
    }
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.flush_from_anywhere();
    }
}

impl<W: AutoFlushWrite> AutoFlush<W> {
    /// Wraps `inner` with a buffer of 8 KiB.
    ///
    /// ```
    /// # spinpark_executor::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let stream = spinpark_net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let out = spinpark_net::io::AutoFlush::new(stream);
    /// assert_eq!(out.capacity(), 8 * 1024);
    /// # });
    /// ```
    pub fn new(inner: W) -> AutoFlush<W> {
        AutoFlush::with_capacity(DEFAULT_CAPACITY, inner)
    }

    /// Wraps `inner` with a buffer of `capacity` bytes (at least 1). A write of `capacity`
    /// bytes or more goes to the socket directly, after what is buffered.
    ///
    /// ```
    /// # spinpark_executor::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let stream = spinpark_net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let out = spinpark_net::io::AutoFlush::with_capacity(64 * 1024, stream);
    /// assert_eq!(out.capacity(), 64 * 1024);
    /// # });
    /// ```
    pub fn with_capacity(capacity: usize, inner: W) -> AutoFlush<W> {
        let Parts { fd, readiness } = inner.parts();
        let capacity = capacity.max(1);
        AutoFlush {
            shared: Arc::new(Shared {
                fd,
                state: Mutex::new(State {
                    buf: Vec::new(),
                    sent: 0,
                    error: None,
                    deferred: false,
                    readiness: Some(readiness),
                }),
            }),
            capacity,
            inner,
        }
    }

    /// The buffer's capacity.
    ///
    /// ```
    /// # spinpark_executor::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark_net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let out = spinpark_net::io::AutoFlush::with_capacity(100, stream);
    /// assert_eq!(out.capacity(), 100);
    /// # });
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many written bytes the buffer holds that the kernel does not have yet.
    ///
    /// ```
    /// # spinpark_executor::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark_net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// use futures_util::AsyncWriteExt;
    /// let mut out = spinpark_net::io::AutoFlush::new(stream);
    /// out.write_all(b"hello").await.unwrap(); // outside a task: sent at once
    /// assert_eq!(out.buffered(), 0);
    /// # });
    /// ```
    pub fn buffered(&self) -> usize {
        self.shared.lock().pending()
    }

    /// The writer. Writes made through it directly bypass the buffer (and may overtake it).
    ///
    /// ```
    /// # spinpark_executor::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark_net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let out = spinpark_net::io::AutoFlush::new(stream);
    /// assert!(out.get_ref().peer_addr().is_ok());
    /// # });
    /// ```
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The writer, mutably. Writes made through it directly bypass the buffer.
    ///
    /// ```
    /// # spinpark_executor::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// # let stream = spinpark_net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// let mut out = spinpark_net::io::AutoFlush::new(stream);
    /// out.get_mut().set_nodelay(true).unwrap();
    /// # });
    /// ```
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Buffers `data` if the task's poll has an end to flush it at and it fits; else sends
    /// what is buffered, then buffers it or (too large to buffer) sends it directly.
    fn poll_write_buf(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let scope = poll_end::current(cx.waker()).filter(|_| poll_end::late_runner_available());
        {
            let mut st = self.shared.lock();
            if let Some(e) = st.error.take() {
                return Poll::Ready(Err(e));
            }
            if let Some(scope) = scope {
                if data.len() < self.capacity && st.pending() + data.len() <= self.capacity {
                    return Poll::Ready(Ok(self.buffer(st, scope, data)));
                }
            }
        }
        // What the poll queued before on other sockets goes first (this may run this buffer's
        // own deferred flush, which is why no lock is held here).
        crate::cork::in_order();
        let mut st = self.shared.lock();
        ready!(st.poll_drain(self.shared.fd, cx))?;
        if let Some(scope) = scope.filter(|_| data.len() < self.capacity) {
            return Poll::Ready(Ok(self.buffer(st, scope, data)));
        }
        // Too large to buffer, or no poll end to flush at: straight to the socket.
        let readiness = st
            .readiness
            .as_deref()
            .expect("present while the writer is");
        poll_send(readiness, self.shared.fd, cx, data)
    }

    /// Appends `data` and defers the flush to the poll `scope`'s end, once.
    fn buffer(
        &self,
        mut st: MutexGuard<'_, State>,
        scope: poll_end::ScopeId,
        data: &[u8],
    ) -> usize {
        if st.buf.capacity() == 0 {
            st.buf.reserve_exact(self.capacity);
        }
        st.buf.extend_from_slice(data);
        if !std::mem::replace(&mut st.deferred, true) {
            drop(st);
            scope.defer(self.shared.clone());
        }
        data.len()
    }

    /// Sends everything buffered, waiting while the kernel has no room; returns a flush's
    /// stored error first.
    fn poll_flush_buf(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(e) = self.shared.lock().error.take() {
            return Poll::Ready(Err(e));
        }
        crate::cork::in_order();
        self.shared.lock().poll_drain(self.shared.fd, cx)
    }
}

impl<W: AutoFlushWrite> Drop for AutoFlush<W> {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        if st.pending() > 0 {
            // What the socket takes now; the rest is lost, as with `BufWriter`.
            let _ = sys::send(self.shared.fd, &st.buf[st.sent..]);
        }
        st.discard();
        // The fd is no longer the buffer's; and the readiness no longer holds a waker that
        // holds the buffer once the socket is gone.
        st.readiness = None;
    }
}

impl<W: AutoFlushWrite> Deref for AutoFlush<W> {
    type Target = W;

    fn deref(&self) -> &W {
        &self.inner
    }
}

impl<W: AutoFlushWrite> DerefMut for AutoFlush<W> {
    fn deref_mut(&mut self) -> &mut W {
        &mut self.inner
    }
}

impl<W: AutoFlushWrite + fmt::Debug> fmt::Debug for AutoFlush<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutoFlush")
            .field("inner", &self.inner)
            .field("capacity", &self.capacity)
            .field("buffered", &self.buffered())
            .finish()
    }
}

impl<W: AutoFlushWrite + futures_io::AsyncWrite + Unpin> futures_io::AsyncWrite for AutoFlush<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_buf(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_flush_buf(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_flush_buf(cx))?;
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

impl<W: AutoFlushWrite + futures_io::AsyncRead + Unpin> futures_io::AsyncRead for AutoFlush<W> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

#[cfg(feature = "tokio-io")]
impl<W: AutoFlushWrite + tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for AutoFlush<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_buf(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_flush_buf(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_flush_buf(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(feature = "tokio-io")]
impl<W: AutoFlushWrite + tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for AutoFlush<W> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}
