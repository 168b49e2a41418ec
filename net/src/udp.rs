//! [`UdpSocket`]: datagrams on the runtime's reactor.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;

use crate::addr::resolve;
use crate::ToSocketAddrs;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};

use crate::io_source::IoSource;
use crate::readiness::Direction;

mod tokio_api;

/// A UDP socket.
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// use spinpark_net::UdpSocket;
/// let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
/// let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
/// client.send_to(b"ping", server.local_addr().unwrap()).await.unwrap();
/// let mut buf = [0; 16];
/// let (n, from) = server.recv_from(&mut buf).await.unwrap();
/// assert_eq!((&buf[..n], from), (&b"ping"[..], client.local_addr().unwrap()));
///
/// client.connect(server.local_addr().unwrap()).await.unwrap();
/// client.send(b"pong").await.unwrap();
/// assert_eq!(server.recv(&mut buf).await.unwrap(), 4);
/// # });
/// ```
///
/// All operations take `&self`, so a socket can be shared (in an `Arc`) by a receiving task
/// and a sending task. A datagram larger than the buffer given to a receive is truncated, as
/// with `recv(2)`.
pub struct UdpSocket {
    io: IoSource<std::net::UdpSocket>,
}

impl std::fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.io.raw_fd())
            .finish()
    }
}

impl UdpSocket {
    /// Binds to `addr` (the first of its addresses that works).
    ///
    /// # Errors
    /// The bind error as the OS gave it (`AddrInUse`, ...); an error outside a spinpark
    /// runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # drop(socket);
    /// # });
    /// ```
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        let addrs = resolve(addr).await?;
        let std = std::net::UdpSocket::bind(&addrs[..])?;
        Self::from_std(std)
    }

    /// Wraps a socket from the standard library (it is made non-blocking).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let std = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    /// let socket = spinpark::net::UdpSocket::from_std(std).unwrap();
    /// # drop(socket);
    /// # });
    /// ```
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: IoSource::new(socket)?,
        })
    }

    /// Unwraps the standard library's socket (still in non-blocking mode).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// let std = socket.into_std().unwrap();
    /// # drop(std);
    /// # });
    /// ```
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        Ok(self.io.into_inner())
    }

    /// Sets the peer for [`send`](Self::send) and [`recv`](Self::recv), and receives only
    /// from it from now on.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// socket.connect(peer_addr).await.unwrap();
    /// assert_eq!(socket.peer_addr().unwrap(), peer_addr);
    /// # });
    /// ```
    pub async fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let addrs = resolve(addr).await?;
        self.io.get().connect(&addrs[..])
    }

    /// Sends a datagram to `target`; returns the bytes sent.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// assert_eq!(socket.send_to(b"hi", peer_addr).await.unwrap(), 2);
    /// # });
    /// ```
    pub async fn send_to(&self, buf: &[u8], target: impl ToSocketAddrs) -> io::Result<usize> {
        let addrs = resolve(target).await?;
        let addr = *addrs.first().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "send_to: no address to send to",
            )
        })?;
        poll_fn(|cx| self.poll_send_to(cx, buf, addr)).await
    }

    /// Polls sending a datagram to `target`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// std::future::poll_fn(|cx| socket.poll_send_to(cx, b"hi", peer_addr)).await.unwrap();
    /// # });
    /// ```
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        crate::cork::in_order();
        self.io
            .poll_io(Direction::Write, cx, |s| s.send_to(buf, target), |_| false)
    }

    /// Receives a datagram; returns its length and sender.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// socket.send_to(b"hi", peer_addr).await.unwrap();
    /// let mut buf = [0; 64];
    /// let (n, from) = peer.recv_from(&mut buf).await.unwrap();
    /// assert_eq!((&buf[..n], from), (&b"hi"[..], socket.local_addr().unwrap()));
    /// # });
    /// ```
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| self.poll_recv_from_slice(cx, buf)).await
    }

    /// Polls receiving a datagram into a plain slice; see [`UdpSocket::recv_from`]. (tokio's
    /// `poll_recv_from`, which takes a `ReadBuf`, comes with the `tokio-io` feature.)
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// socket.send_to(b"hi", peer_addr).await.unwrap();
    /// let mut buf = [0; 64];
    /// let (n, _) = std::future::poll_fn(|cx| peer.poll_recv_from_slice(cx, &mut buf)).await.unwrap();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    pub fn poll_recv_from_slice(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .poll_io(Direction::Read, cx, |s| s.recv_from(buf), |_| false)
    }

    /// Receives a datagram without removing it from the queue.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// socket.send_to(b"hi", peer_addr).await.unwrap();
    /// let mut buf = [0; 64];
    /// let (n, _) = peer.peek_from(&mut buf).await.unwrap();
    /// assert_eq!(peer.recv_from(&mut buf).await.unwrap().0, n); // still queued after the peek
    /// # });
    /// ```
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| {
            self.io
                .poll_io(Direction::Read, cx, |s| s.peek_from(buf), |_| false)
        })
        .await
    }

    /// Sends a datagram to the connected peer.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// # socket.connect(peer_addr).await.unwrap();
    /// # peer.connect(socket.local_addr().unwrap()).await.unwrap();
    /// assert_eq!(socket.send(b"hi").await.unwrap(), 2);
    /// # });
    /// ```
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_send(cx, buf)).await
    }

    /// Polls sending a datagram to the connected peer.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// # socket.connect(peer_addr).await.unwrap();
    /// # peer.connect(socket.local_addr().unwrap()).await.unwrap();
    /// std::future::poll_fn(|cx| socket.poll_send(cx, b"hi")).await.unwrap();
    /// # });
    /// ```
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        crate::cork::in_order();
        self.io
            .poll_io(Direction::Write, cx, |s| s.send(buf), |_| false)
    }

    /// Receives a datagram from the connected peer.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// # socket.connect(peer_addr).await.unwrap();
    /// # peer.connect(socket.local_addr().unwrap()).await.unwrap();
    /// socket.send(b"hi").await.unwrap();
    /// let mut buf = [0; 64];
    /// assert_eq!(peer.recv(&mut buf).await.unwrap(), 2);
    /// # });
    /// ```
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_recv_slice(cx, buf)).await
    }

    /// Polls receiving a datagram from the connected peer into a plain slice. (tokio's
    /// `poll_recv`, which takes a `ReadBuf`, comes with the `tokio-io` feature.)
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// # socket.connect(peer_addr).await.unwrap();
    /// # peer.connect(socket.local_addr().unwrap()).await.unwrap();
    /// socket.send(b"hi").await.unwrap();
    /// let mut buf = [0; 64];
    /// assert_eq!(std::future::poll_fn(|cx| peer.poll_recv_slice(cx, &mut buf)).await.unwrap(), 2);
    /// # });
    /// ```
    pub fn poll_recv_slice(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io
            .poll_io(Direction::Read, cx, |s| s.recv(buf), |_| false)
    }

    /// Sends now if the socket has room, without waiting: `WouldBlock` if not.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// socket.writable().await.unwrap();
    /// assert_eq!(socket.try_send_to(b"hi", peer_addr).unwrap(), 2);
    /// # });
    /// ```
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        crate::cork::in_order();
        self.io.try_io(Direction::Write, |s| s.send_to(buf, target))
    }

    /// Receives a queued datagram, without waiting: `WouldBlock` if none is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// let mut buf = [0; 64];
    /// assert_eq!(peer.try_recv_from(&mut buf).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
    /// # });
    /// ```
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.try_io(Direction::Read, |s| s.recv_from(buf))
    }

    /// Sends to the connected peer, without waiting.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// # socket.connect(peer_addr).await.unwrap();
    /// # peer.connect(socket.local_addr().unwrap()).await.unwrap();
    /// socket.writable().await.unwrap();
    /// assert_eq!(socket.try_send(b"hi").unwrap(), 2);
    /// # });
    /// ```
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        crate::cork::in_order();
        self.io.try_io(Direction::Write, |s| s.send(buf))
    }

    /// Receives from the connected peer, without waiting.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// # socket.connect(peer_addr).await.unwrap();
    /// # peer.connect(socket.local_addr().unwrap()).await.unwrap();
    /// socket.send(b"hi").await.unwrap();
    /// peer.readable().await.unwrap();
    /// let mut buf = [0; 64];
    /// assert_eq!(peer.try_recv(&mut buf).unwrap(), 2);
    /// # });
    /// ```
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_io(Direction::Read, |s| s.recv(buf))
    }

    /// Waits until a datagram may be queued (a receive may still return `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// socket.send_to(b"x", peer_addr).await.unwrap();
    /// peer.readable().await.unwrap();
    /// # });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        poll_fn(|cx| self.io.poll_ready(Direction::Read, cx)).await
    }

    /// Waits until the socket may have room to send.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// socket.writable().await.unwrap();
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        poll_fn(|cx| self.io.poll_ready(Direction::Write, cx)).await
    }

    /// The local address (with the actual port when bound to port 0).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// assert_ne!(socket.local_addr().unwrap().port(), 0);
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().local_addr()
    }

    /// The connected peer's address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let peer_addr = peer.local_addr().unwrap();
    /// assert!(socket.peer_addr().is_err()); // not connected
    /// socket.connect(peer_addr).await.unwrap();
    /// assert_eq!(socket.peer_addr().unwrap(), peer_addr);
    /// # });
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().peer_addr()
    }

    /// Sets `SO_BROADCAST`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// socket.set_broadcast(true).unwrap();
    /// # });
    /// ```
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.get().set_broadcast(on)
    }

    /// Whether `SO_BROADCAST` is set.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// assert!(!socket.broadcast().unwrap());
    /// # });
    /// ```
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.get().broadcast()
    }

    /// Sets the IP time-to-live of outgoing datagrams.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// socket.set_ttl(16).unwrap();
    /// # });
    /// ```
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get().set_ttl(ttl)
    }

    /// The IP time-to-live of outgoing datagrams.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// socket.set_ttl(16).unwrap();
    /// assert_eq!(socket.ttl().unwrap(), 16);
    /// # });
    /// ```
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get().ttl()
    }

    /// Takes the socket's pending error (`SO_ERROR`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let socket = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// assert!(socket.take_error().unwrap().is_none());
    /// # });
    /// ```
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get().take_error()
    }
}

impl AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }
}
