//! [`UnixDatagram`]: Unix-domain datagram sockets on the reactor.

use std::future::poll_fn;
use std::io;
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::interest::{Interest, Ready};
use crate::io_source::IoSource;
use crate::readiness::Direction;
use crate::sys;

type StdDatagram = std::os::unix::net::UnixDatagram;

/// A Unix-domain datagram socket, bound to a path, to an abstract name, unbound, or one of
/// a connected pair.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::net::UnixDatagram;
/// let (a, b) = UnixDatagram::pair().unwrap();
/// a.send(b"ping").await.unwrap();
/// let mut buf = [0; 16];
/// let n = b.recv(&mut buf).await.unwrap();
/// assert_eq!(&buf[..n], b"ping");
/// # });
/// ```
///
/// All operations take `&self`, so one socket can be shared (in an `Arc`) by tasks that
/// send and receive. A datagram larger than the buffer given is truncated, as with `recv(2)`.
pub struct UnixDatagram {
    io: IoSource<StdDatagram>,
}

impl std::fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnixDatagram")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.io.raw_fd())
            .finish()
    }
}

/// Views initialised bytes as possibly-uninitialised, for a call that only writes them.
fn as_uninit(buf: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: the receive calls only write initialised bytes into the slice, never read it
    // or de-initialise it.
    unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

impl UnixDatagram {
    /// Binds a new socket to `path`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("spinpark-doc-dgram-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("sock");
    /// # let _ = std::fs::remove_file(&path);
    /// let s = spinpark::net::UnixDatagram::bind(&path).unwrap();
    /// assert_eq!(s.local_addr().unwrap().as_pathname(), Some(path.as_path()));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixDatagram> {
        Self::from_std(StdDatagram::bind(path)?)
    }

    /// A pair of connected sockets.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// # drop((a, b));
    /// # });
    /// ```
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = StdDatagram::pair()?;
        Ok((Self::from_std(a)?, Self::from_std(b)?))
    }

    /// A socket bound to no address (it can still send, and connect).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::UnixDatagram::unbound().unwrap();
    /// assert!(s.local_addr().unwrap().is_unnamed());
    /// # });
    /// ```
    pub fn unbound() -> io::Result<UnixDatagram> {
        Self::from_std(StdDatagram::unbound()?)
    }

    /// Wraps a socket from the standard library (it is made non-blocking).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let std = std::os::unix::net::UnixDatagram::unbound().unwrap();
    /// let s = spinpark::net::UnixDatagram::from_std(std).unwrap();
    /// # drop(s);
    /// # });
    /// ```
    pub fn from_std(socket: StdDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        // Writable at once (a fresh socket has room), readable only once the kernel says so:
        // a `poll_recv_ready` on a fresh socket waits.
        Ok(UnixDatagram {
            io: IoSource::writable_first(socket)?,
        })
    }

    /// Deregisters the socket and hands it back, in blocking mode as std expects.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::UnixDatagram::unbound().unwrap();
    /// let std = s.into_std().unwrap();
    /// # drop(std);
    /// # });
    /// ```
    pub fn into_std(self) -> io::Result<StdDatagram> {
        let s = self.io.into_inner();
        s.set_nonblocking(false)?;
        Ok(s)
    }

    /// Connects to the socket at `path`: `send`/`recv` then talk to it only.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let dir = std::env::temp_dir().join(format!("spinpark-doc-dgram-c-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let path = dir.join("sock");
    /// # let _ = std::fs::remove_file(&path);
    /// let server = spinpark::net::UnixDatagram::bind(&path).unwrap();
    /// let client = spinpark::net::UnixDatagram::unbound().unwrap();
    /// client.connect(&path).unwrap();
    /// client.send(b"hi").await.unwrap();
    /// # let mut buf = [0; 2];
    /// # server.recv(&mut buf).await.unwrap();
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn connect<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        self.io.get().connect(path)
    }

    /// Sends a datagram to the connected peer.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// assert_eq!(a.send(b"hi").await.unwrap(), 2);
    /// # });
    /// ```
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_send(cx, buf)).await
    }

    /// Polls sending a datagram to the connected peer.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// std::future::poll_fn(|cx| a.poll_send(cx, b"hi")).await.unwrap();
    /// # });
    /// ```
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        crate::cork::in_order();
        self.io
            .poll_io(Direction::Write, cx, |s| s.send(buf), |_| false)
    }

    /// Sends a datagram to the socket at `target`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let dir = std::env::temp_dir().join(format!("spinpark-doc-dgram-s-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let path = dir.join("sock");
    /// # let _ = std::fs::remove_file(&path);
    /// let server = spinpark::net::UnixDatagram::bind(&path).unwrap();
    /// let client = spinpark::net::UnixDatagram::unbound().unwrap();
    /// client.send_to(b"hi", &path).await.unwrap();
    /// let mut buf = [0; 8];
    /// let (n, _from) = server.recv_from(&mut buf).await.unwrap();
    /// assert_eq!(&buf[..n], b"hi");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub async fn send_to<P: AsRef<Path>>(&self, buf: &[u8], target: P) -> io::Result<usize> {
        let target = target.as_ref();
        poll_fn(|cx| self.poll_send_to(cx, buf, target)).await
    }

    /// Polls sending a datagram to the socket at `target`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// // A pair's sockets are unnamed: there is no path to send to.
    /// let r = std::future::poll_fn(|cx| a.poll_send_to(cx, b"x", "/nonexistent/sock")).await;
    /// assert!(r.is_err());
    /// # drop(b);
    /// # });
    /// ```
    pub fn poll_send_to<P: AsRef<Path>>(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: P,
    ) -> Poll<io::Result<usize>> {
        let target = target.as_ref();
        crate::cork::in_order();
        self.io
            .poll_io(Direction::Write, cx, |s| s.send_to(buf, target), |_| false)
    }

    /// Receives a datagram from the connected peer.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// let mut buf = [0; 8];
    /// assert_eq!(b.recv(&mut buf).await.unwrap(), 2);
    /// # });
    /// ```
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let buf = as_uninit(buf);
        poll_fn(|cx| self.poll_recv_uninit(cx, buf)).await
    }

    fn poll_recv_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_io(
            Direction::Read,
            cx,
            |s| sys::recv(s.as_raw_fd(), buf),
            |_| false,
        )
    }

    fn poll_recv_from_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io.poll_io(
            Direction::Read,
            cx,
            |s| {
                let (n, addr) = sys::recv_from(s.as_raw_fd(), buf, 0)?;
                Ok((n, addr.to_unix()?))
            },
            |_| false,
        )
    }

    /// Receives a datagram and the address of its sender.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// let mut buf = [0; 8];
    /// let (n, from) = b.recv_from(&mut buf).await.unwrap();
    /// assert_eq!((n, from.is_unnamed()), (2, true));
    /// # });
    /// ```
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let buf = as_uninit(buf);
        poll_fn(|cx| self.poll_recv_from_uninit(cx, buf)).await
    }

    /// Receives a datagram into a `BufMut`'s spare capacity, advancing it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// b.recv_buf(&mut buf).await.unwrap();
    /// assert_eq!(buf, b"hi");
    /// # });
    /// ```
    pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        poll_fn(|cx| {
            let mut r = None;
            let n = crate::buf::read_into(buf, |dst| match self.poll_recv_uninit(cx, dst) {
                Poll::Ready(n) => n,
                Poll::Pending => {
                    r = Some(());
                    Ok(0)
                }
            });
            if r.is_some() {
                Poll::Pending
            } else {
                Poll::Ready(n)
            }
        })
        .await
    }

    /// Receives a datagram into a `BufMut`, with its sender's address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// let (n, _from) = b.recv_buf_from(&mut buf).await.unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub async fn recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| {
            let mut from = None;
            let mut pending = false;
            let n = crate::buf::read_into(buf, |dst| match self.poll_recv_from_uninit(cx, dst) {
                Poll::Ready(Ok((n, addr))) => {
                    from = Some(addr);
                    Ok(n)
                }
                Poll::Ready(Err(e)) => Err(e),
                Poll::Pending => {
                    pending = true;
                    Ok(0)
                }
            });
            match (pending, n, from) {
                (true, _, _) => Poll::Pending,
                (false, Ok(n), Some(addr)) => Poll::Ready(Ok((n, addr))),
                (false, Err(e), _) => Poll::Ready(Err(e)),
                (false, Ok(_), None) => unreachable!("a successful receive sets the sender"),
            }
        })
        .await
    }

    /// tokio's `poll_recv`: receives into the unfilled part of `buf` (`tokio-io` feature).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// let mut storage = [0; 8];
    /// let mut buf = tokio::io::ReadBuf::new(&mut storage);
    /// std::future::poll_fn(|cx| b.poll_recv(cx, &mut buf)).await.unwrap();
    /// assert_eq!(buf.filled(), b"hi");
    /// # });
    /// ```
    #[cfg(feature = "tokio-io")]
    pub fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the receive only writes into the unfilled part (never de-initialises).
        let dst = unsafe { buf.unfilled_mut() };
        let n = std::task::ready!(self.poll_recv_uninit(cx, dst))?;
        // SAFETY: the kernel wrote the first `n` bytes.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }

    /// tokio's `poll_recv_from`: receives into the unfilled part of `buf` and returns the
    /// sender's address (`tokio-io` feature).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// let mut storage = [0; 8];
    /// let mut buf = tokio::io::ReadBuf::new(&mut storage);
    /// let from = std::future::poll_fn(|cx| b.poll_recv_from(cx, &mut buf)).await.unwrap();
    /// assert!(from.is_unnamed());
    /// # });
    /// ```
    #[cfg(feature = "tokio-io")]
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        // SAFETY: as in `poll_recv`.
        let dst = unsafe { buf.unfilled_mut() };
        let (n, addr) = std::task::ready!(self.poll_recv_from_uninit(cx, dst))?;
        // SAFETY: the kernel wrote the first `n` bytes.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(addr))
    }

    /// Sends to the connected peer now, without waiting: `WouldBlock` if there is no room.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.writable().await.unwrap();
    /// assert_eq!(a.try_send(b"hi").unwrap(), 2);
    /// # });
    /// ```
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        crate::cork::in_order();
        self.io.try_io(Direction::Write, |s| s.send(buf))
    }

    /// Sends to `target` now, without waiting.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::UnixDatagram::unbound().unwrap();
    /// s.writable().await.unwrap();
    /// assert!(s.try_send_to(b"x", "/nonexistent/sock").is_err());
    /// # });
    /// ```
    pub fn try_send_to<P: AsRef<Path>>(&self, buf: &[u8], target: P) -> io::Result<usize> {
        crate::cork::in_order();
        self.io
            .try_io(Direction::Write, |s| s.send_to(buf, target.as_ref()))
    }

    /// Receives a queued datagram, without waiting: `WouldBlock` if none is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (_a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// let e = b.try_recv(&mut [0; 8]).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    /// # });
    /// ```
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let buf = as_uninit(buf);
        self.io
            .try_io(Direction::Read, |s| sys::recv(s.as_raw_fd(), buf))
    }

    /// [`UnixDatagram::try_recv`] with the sender's address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// b.readable().await.unwrap();
    /// let (n, _) = b.try_recv_from(&mut [0; 8]).unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let buf = as_uninit(buf);
        self.try_recv_from_uninit(buf)
    }

    fn try_recv_from_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, SocketAddr)> {
        self.io.try_io(Direction::Read, |s| {
            let (n, addr) = sys::recv_from(s.as_raw_fd(), buf, 0)?;
            Ok((n, addr.to_unix()?))
        })
    }

    /// [`UnixDatagram::try_recv`] into a `BufMut`'s spare capacity, advancing it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// b.readable().await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// assert_eq!(b.try_recv_buf(&mut buf).unwrap(), 2);
    /// # });
    /// ```
    pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        crate::buf::read_into(buf, |dst| {
            self.io
                .try_io(Direction::Read, |s| sys::recv(s.as_raw_fd(), dst))
        })
    }

    /// [`UnixDatagram::try_recv_buf`] with the sender's address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"hi").await.unwrap();
    /// b.readable().await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// let (n, _) = b.try_recv_buf_from(&mut buf).unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        let mut from = None;
        let n = crate::buf::read_into(buf, |dst| {
            let (n, addr) = self.try_recv_from_uninit(dst)?;
            from = Some(addr);
            Ok(n)
        })?;
        Ok((n, from.expect("a successful receive sets the sender")))
    }

    /// Waits until the socket is ready for any of `interest` and says how.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::Interest;
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// assert!(a.ready(Interest::WRITABLE).await.unwrap().is_writable());
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.ready(interest).await
    }

    /// Waits until a datagram may be queued (a receive may still `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"x").await.unwrap();
    /// b.readable().await.unwrap();
    /// # });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// Waits until the socket may have room to send.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.writable().await.unwrap();
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    /// Polls for read readiness; only the latest caller's waker is kept.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.send(b"x").await.unwrap();
    /// std::future::poll_fn(|cx| b.poll_recv_ready(cx)).await.unwrap();
    /// # });
    /// ```
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_ready_latest(Direction::Read, cx)
    }

    /// Polls for write readiness; only the latest caller's waker is kept.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// std::future::poll_fn(|cx| a.poll_send_ready(cx)).await.unwrap();
    /// # });
    /// ```
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_ready_latest(Direction::Write, cx)
    }

    /// Runs `f` (the caller's own syscall on the fd) if the socket looks ready for
    /// `interest`, clearing the readiness if it returns `WouldBlock`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::Interest;
    /// let (_a, b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// b.writable().await.unwrap();
    /// assert!(b.try_io(Interest::WRITABLE, || Ok(())).is_ok());
    /// # });
    /// ```
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        self.io.try_io_mask(interest.mask(), f)
    }

    /// Waits for `interest` and runs `f` until it does not return `WouldBlock`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::Interest;
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.async_io(Interest::WRITABLE, || Ok(())).await.unwrap();
    /// # });
    /// ```
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        poll_fn(|cx| self.io.poll_io_mask(interest.mask(), cx, &mut f)).await
    }

    /// The socket's own address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// assert!(a.local_addr().unwrap().is_unnamed());
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().local_addr()
    }

    /// The connected peer's address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// assert!(a.peer_addr().unwrap().is_unnamed());
    /// # });
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().peer_addr()
    }

    /// Takes the socket's pending error (`SO_ERROR`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// assert!(a.take_error().unwrap().is_none());
    /// # });
    /// ```
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        sys::take_error(self.io.raw_fd())
    }

    /// Shuts down the read side, the write side, or both.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixDatagram::pair().unwrap();
    /// a.shutdown(std::net::Shutdown::Write).unwrap();
    /// assert!(a.send(b"x").await.is_err());
    /// # });
    /// ```
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        sys::shutdown(self.io.raw_fd(), how)
    }
}

impl AsRawFd for UnixDatagram {
    fn as_raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }
}

impl AsFd for UnixDatagram {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.get().as_fd()
    }
}

impl TryFrom<StdDatagram> for UnixDatagram {
    type Error = io::Error;

    fn try_from(socket: StdDatagram) -> io::Result<UnixDatagram> {
        Self::from_std(socket)
    }
}
