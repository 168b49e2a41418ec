//! The rest of tokio's `UdpSocket`: peeking at the sender, receiving into a `BufMut` or a
//! `ReadBuf`, readiness by `Interest`, multicast and TOS options, `AsFd` and `TryFrom`.

use std::future::poll_fn;
use std::io;
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::task::{Context, Poll};

use super::UdpSocket;
use crate::interest::{Interest, Ready};
use crate::readiness::Direction;
use crate::sys;

fn as_uninit(buf: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: the receive calls only write initialised bytes into the slice.
    unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

impl UdpSocket {
    fn poll_recv_from_flags(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
        flags: libc::c_int,
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io.poll_io(
            Direction::Read,
            cx,
            |s| {
                let (n, addr) = sys::recv_from(s.as_raw_fd(), buf, flags)?;
                Ok((n, addr.to_inet()?))
            },
            |_| false,
        )
    }

    fn try_recv_from_flags(
        &self,
        buf: &mut [MaybeUninit<u8>],
        flags: libc::c_int,
    ) -> io::Result<(usize, SocketAddr)> {
        self.io.try_io(Direction::Read, |s| {
            let (n, addr) = sys::recv_from(s.as_raw_fd(), buf, flags)?;
            Ok((n, addr.to_inet()?))
        })
    }

    /// tokio's `poll_recv`: receives from the connected peer into the unfilled part of
    /// `buf` (`tokio-io` feature).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # a.connect(b.local_addr().unwrap()).await.unwrap();
    /// # b.connect(a.local_addr().unwrap()).await.unwrap();
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
        self.poll_read_buf(cx, buf, 0).map_ok(drop)
    }

    /// tokio's `poll_recv_from`: receives into the unfilled part of `buf` and returns the
    /// sender (`tokio-io` feature).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
    /// let mut storage = [0; 8];
    /// let mut buf = tokio::io::ReadBuf::new(&mut storage);
    /// let from = std::future::poll_fn(|cx| b.poll_recv_from(cx, &mut buf)).await.unwrap();
    /// assert_eq!(from, a.local_addr().unwrap());
    /// # });
    /// ```
    #[cfg(feature = "tokio-io")]
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        self.poll_read_buf(cx, buf, 0)
    }

    /// tokio's `poll_peek_from`: as `poll_recv_from`, leaving the datagram queued
    /// (`tokio-io` feature).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
    /// let mut storage = [0; 8];
    /// let mut buf = tokio::io::ReadBuf::new(&mut storage);
    /// std::future::poll_fn(|cx| b.poll_peek_from(cx, &mut buf)).await.unwrap();
    /// assert_eq!(b.recv_from(&mut [0; 8]).await.unwrap().0, 2); // still queued
    /// # });
    /// ```
    #[cfg(feature = "tokio-io")]
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        self.poll_read_buf(cx, buf, libc::MSG_PEEK)
    }

    #[cfg(feature = "tokio-io")]
    fn poll_read_buf(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
        flags: libc::c_int,
    ) -> Poll<io::Result<SocketAddr>> {
        // SAFETY: the receive only writes into the unfilled part (never de-initialises).
        let dst = unsafe { buf.unfilled_mut() };
        let (n, addr) = std::task::ready!(self.poll_recv_from_flags(cx, dst, flags))?;
        // SAFETY: the kernel wrote the first `n` bytes.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(addr))
    }

    /// Peeks at the next datagram's sender, leaving the datagram queued.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
    /// assert_eq!(b.peek_sender().await.unwrap(), a.local_addr().unwrap());
    /// # });
    /// ```
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        poll_fn(|cx| self.poll_peek_sender(cx)).await
    }

    /// Polls [`UdpSocket::peek_sender`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
    /// let from = std::future::poll_fn(|cx| b.poll_peek_sender(cx)).await.unwrap();
    /// assert_eq!(from, a.local_addr().unwrap());
    /// # });
    /// ```
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        self.poll_recv_from_flags(cx, &mut [], libc::MSG_PEEK)
            .map_ok(|(_, a)| a)
    }

    /// [`UdpSocket::peek_sender`] without waiting: `WouldBlock` if nothing is queued.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// let e = b.try_peek_sender().unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    /// # });
    /// ```
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        self.try_recv_from_flags(&mut [], libc::MSG_PEEK)
            .map(|(_, a)| a)
    }

    /// Peeks at the next datagram without waiting: `WouldBlock` if nothing is queued.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// let e = b.try_peek_from(&mut [0; 8]).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    /// # });
    /// ```
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.try_recv_from_flags(as_uninit(buf), libc::MSG_PEEK)
    }

    /// Receives from the connected peer into a `BufMut`'s spare capacity, advancing it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # a.connect(b.local_addr().unwrap()).await.unwrap();
    /// # b.connect(a.local_addr().unwrap()).await.unwrap();
    /// a.send(b"hi").await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// assert_eq!(b.recv_buf(&mut buf).await.unwrap(), 2);
    /// # });
    /// ```
    pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.recv_buf_from(buf).await.map(|(n, _)| n)
    }

    /// Receives into a `BufMut`'s spare capacity, with the sender.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// let (n, from) = b.recv_buf_from(&mut buf).await.unwrap();
    /// assert_eq!((n, from), (2, a.local_addr().unwrap()));
    /// # });
    /// ```
    pub async fn recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| {
            let mut out = None;
            let r = crate::buf::read_into(buf, |dst| match self.poll_recv_from_flags(cx, dst, 0) {
                Poll::Ready(Ok((n, a))) => {
                    out = Some(a);
                    Ok(n)
                }
                Poll::Ready(Err(e)) => Err(e),
                Poll::Pending => Ok(0),
            });
            match (r, out) {
                (Err(e), _) => Poll::Ready(Err(e)),
                (Ok(n), Some(a)) => Poll::Ready(Ok((n, a))),
                (Ok(_), None) => Poll::Pending,
            }
        })
        .await
    }

    /// Receives from the connected peer into a `BufMut` without waiting.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// assert!(b.try_recv_buf(&mut buf).is_err()); // nothing queued
    /// # });
    /// ```
    pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.try_recv_buf_from(buf).map(|(n, _)| n)
    }

    /// Receives into a `BufMut` without waiting, with the sender.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// assert!(b.try_recv_buf_from(&mut buf).is_err()); // nothing queued
    /// # });
    /// ```
    pub fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        let mut from = None;
        let n = crate::buf::read_into(buf, |dst| {
            let (n, a) = self.try_recv_from_flags(dst, 0)?;
            from = Some(a);
            Ok(n)
        })?;
        Ok((n, from.expect("a successful receive sets the sender")))
    }

    /// Waits until the socket is ready for any of `interest` and says how.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::Interest;
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// assert!(s.ready(Interest::WRITABLE).await.unwrap().is_writable());
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.ready(interest).await
    }

    /// Polls for read readiness; only the latest caller's waker is kept.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let a = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// # let b = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
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
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// std::future::poll_fn(|cx| s.poll_send_ready(cx)).await.unwrap();
    /// # });
    /// ```
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_ready_latest(Direction::Write, cx)
    }

    /// Runs `f` (the caller's own syscall) if the socket looks ready for `interest`,
    /// clearing that readiness if it returns `WouldBlock`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::io::Interest;
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.writable().await.unwrap();
    /// assert!(s.try_io(Interest::WRITABLE, || Ok(())).is_ok());
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
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.async_io(Interest::WRITABLE, || Ok(())).await.unwrap();
    /// # });
    /// ```
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        poll_fn(|cx| self.io.poll_io_mask(interest.mask(), cx, &mut f)).await
    }

    fn get_int(&self, level: libc::c_int, name: libc::c_int) -> io::Result<u32> {
        sys::getsockopt_int(self.io.raw_fd(), level, name).map(|v| v as u32)
    }

    fn set_int(&self, level: libc::c_int, name: libc::c_int, v: u32) -> io::Result<()> {
        sys::setsockopt_int(self.io.raw_fd(), level, name, v as libc::c_int)
    }

    /// `IP_MULTICAST_LOOP`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.set_multicast_loop_v4(false).unwrap();
    /// assert!(!s.multicast_loop_v4().unwrap());
    /// # });
    /// ```
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.get_int(libc::IPPROTO_IP, libc::IP_MULTICAST_LOOP)
            .map(|v| v != 0)
    }

    /// Sets `IP_MULTICAST_LOOP`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.set_multicast_loop_v4(true).unwrap();
    /// # });
    /// ```
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.set_int(libc::IPPROTO_IP, libc::IP_MULTICAST_LOOP, on as u32)
    }

    /// `IP_MULTICAST_TTL`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.set_multicast_ttl_v4(3).unwrap();
    /// assert_eq!(s.multicast_ttl_v4().unwrap(), 3);
    /// # });
    /// ```
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.get_int(libc::IPPROTO_IP, libc::IP_MULTICAST_TTL)
    }

    /// Sets `IP_MULTICAST_TTL`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.set_multicast_ttl_v4(1).unwrap();
    /// # });
    /// ```
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.set_int(libc::IPPROTO_IP, libc::IP_MULTICAST_TTL, ttl)
    }

    /// `IPV6_MULTICAST_LOOP`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::UdpSocket::bind("[::1]:0").await;
    /// if let Ok(s) = s { // no IPv6 on this host otherwise
    ///     s.set_multicast_loop_v6(false).unwrap();
    ///     assert!(!s.multicast_loop_v6().unwrap());
    /// }
    /// # });
    /// ```
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.get_int(libc::IPPROTO_IPV6, libc::IPV6_MULTICAST_LOOP)
            .map(|v| v != 0)
    }

    /// Sets `IPV6_MULTICAST_LOOP`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// if let Ok(s) = spinpark::net::UdpSocket::bind("[::1]:0").await {
    ///     s.set_multicast_loop_v6(true).unwrap();
    /// }
    /// # });
    /// ```
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.set_int(libc::IPPROTO_IPV6, libc::IPV6_MULTICAST_LOOP, on as u32)
    }

    /// Joins the IPv4 multicast group `multiaddr` on `interface`.
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::net::Ipv4Addr;
    /// let s = spinpark::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
    /// s.join_multicast_v4(Ipv4Addr::new(224, 0, 0, 123), Ipv4Addr::UNSPECIFIED).unwrap();
    /// # });
    /// ```
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get().join_multicast_v4(&multiaddr, &interface)
    }

    /// Joins the IPv6 multicast group `multiaddr` on interface number `interface`.
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::UdpSocket::bind("[::]:0").await.unwrap();
    /// s.join_multicast_v6(&"ff02::123".parse().unwrap(), 0).unwrap();
    /// # });
    /// ```
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get().join_multicast_v6(multiaddr, interface)
    }

    /// Leaves an IPv4 multicast group.
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::net::Ipv4Addr;
    /// let s = spinpark::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
    /// s.leave_multicast_v4(Ipv4Addr::new(224, 0, 0, 123), Ipv4Addr::UNSPECIFIED).unwrap();
    /// # });
    /// ```
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get().leave_multicast_v4(&multiaddr, &interface)
    }

    /// Leaves an IPv6 multicast group.
    ///
    /// ```no_run
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::UdpSocket::bind("[::]:0").await.unwrap();
    /// s.leave_multicast_v6(&"ff02::123".parse().unwrap(), 0).unwrap();
    /// # });
    /// ```
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get().leave_multicast_v6(multiaddr, interface)
    }

    /// `IP_TOS` of an IPv4 socket.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.set_tos_v4(0x10).unwrap();
    /// assert_eq!(s.tos_v4().unwrap(), 0x10);
    /// # });
    /// ```
    pub fn tos_v4(&self) -> io::Result<u32> {
        self.get_int(libc::IPPROTO_IP, libc::IP_TOS)
    }

    /// Sets `IP_TOS` of an IPv4 socket.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let s = spinpark::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    /// s.set_tos_v4(0x08).unwrap();
    /// # });
    /// ```
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.set_int(libc::IPPROTO_IP, libc::IP_TOS, tos)
    }

    /// `IPV6_TCLASS` of an IPv6 socket.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// if let Ok(s) = spinpark::net::UdpSocket::bind("[::1]:0").await {
    ///     s.set_tclass_v6(0x10).unwrap();
    ///     assert_eq!(s.tclass_v6().unwrap(), 0x10);
    /// }
    /// # });
    /// ```
    pub fn tclass_v6(&self) -> io::Result<u32> {
        self.get_int(libc::IPPROTO_IPV6, libc::IPV6_TCLASS)
    }

    /// Sets `IPV6_TCLASS` of an IPv6 socket.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// if let Ok(s) = spinpark::net::UdpSocket::bind("[::1]:0").await {
    ///     s.set_tclass_v6(0x08).unwrap();
    /// }
    /// # });
    /// ```
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.set_int(libc::IPPROTO_IPV6, libc::IPV6_TCLASS, tclass)
    }
}

impl AsFd for UdpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.get().as_fd()
    }
}

impl TryFrom<std::net::UdpSocket> for UdpSocket {
    type Error = io::Error;

    /// [`UdpSocket::from_std`].
    fn try_from(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        UdpSocket::from_std(socket)
    }
}
