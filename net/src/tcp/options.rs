//! TCP socket options tokio has on its `TcpStream` and `TcpSocket` (linger, quick ack, TOS
//! and traffic class), and the `TryFrom` conversions from std.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use super::{TcpListener, TcpSocket, TcpStream};
use crate::sys;

impl TcpStream {
    /// `SO_LINGER`: how long closing waits to send what is queued (`None`: the default, in
    /// the background).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let s = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// assert_eq!(s.linger().unwrap(), None);
    /// # });
    /// ```
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        sys::linger(self.as_raw_fd())
    }

    /// Sets `SO_LINGER` (whole seconds).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let s = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// s.set_linger(Some(std::time::Duration::from_secs(1))).unwrap();
    /// assert_eq!(s.linger().unwrap(), Some(std::time::Duration::from_secs(1)));
    /// # });
    /// ```
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        sys::set_linger(self.as_raw_fd(), dur)
    }

    /// Linger of zero: closing drops what is queued and resets the connection.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let s = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// s.set_zero_linger().unwrap();
    /// assert_eq!(s.linger().unwrap(), Some(std::time::Duration::ZERO));
    /// # });
    /// ```
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.set_linger(Some(Duration::ZERO))
    }

    /// `TCP_QUICKACK`: whether acknowledgements go out at once rather than delayed.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let s = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// s.set_quickack(true).unwrap();
    /// # let _ = s.quickack().unwrap();
    /// # });
    /// ```
    pub fn quickack(&self) -> io::Result<bool> {
        sys::getsockopt_int(self.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_QUICKACK).map(|v| v != 0)
    }

    /// Sets `TCP_QUICKACK` (the kernel may turn it off again by itself).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let l = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let s = spinpark::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    /// s.set_quickack(false).unwrap();
    /// # });
    /// ```
    pub fn set_quickack(&self, quickack: bool) -> io::Result<()> {
        sys::setsockopt_int(
            self.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_QUICKACK,
            quickack as libc::c_int,
        )
    }
}

impl TcpSocket {
    /// `SO_LINGER`, as [`TcpStream::linger`].
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// assert_eq!(s.linger().unwrap(), None);
    /// ```
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        sys::linger(self.as_raw_fd())
    }

    /// Sets `SO_LINGER`, as [`TcpStream::set_linger`].
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_linger(Some(std::time::Duration::from_secs(2))).unwrap();
    /// assert_eq!(s.linger().unwrap(), Some(std::time::Duration::from_secs(2)));
    /// ```
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        sys::set_linger(self.as_raw_fd(), dur)
    }

    /// Linger of zero, as [`TcpStream::set_zero_linger`].
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_zero_linger().unwrap();
    /// assert_eq!(s.linger().unwrap(), Some(std::time::Duration::ZERO));
    /// ```
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.set_linger(Some(Duration::ZERO))
    }

    /// `IP_TOS` of an IPv4 socket.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_tos_v4(0x10).unwrap();
    /// assert_eq!(s.tos_v4().unwrap(), 0x10);
    /// ```
    pub fn tos_v4(&self) -> io::Result<u32> {
        sys::getsockopt_int(self.as_raw_fd(), libc::IPPROTO_IP, libc::IP_TOS).map(|v| v as u32)
    }

    /// Sets `IP_TOS` of an IPv4 socket.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_tos_v4(0x08).unwrap();
    /// ```
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        sys::setsockopt_int(
            self.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_TOS,
            tos as libc::c_int,
        )
    }

    /// `IPV6_TCLASS` of an IPv6 socket.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v6().unwrap();
    /// s.set_tclass_v6(0x10).unwrap();
    /// assert_eq!(s.tclass_v6().unwrap(), 0x10);
    /// ```
    pub fn tclass_v6(&self) -> io::Result<u32> {
        sys::getsockopt_int(self.as_raw_fd(), libc::IPPROTO_IPV6, libc::IPV6_TCLASS)
            .map(|v| v as u32)
    }

    /// Sets `IPV6_TCLASS` of an IPv6 socket.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v6().unwrap();
    /// s.set_tclass_v6(0x08).unwrap();
    /// ```
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        sys::setsockopt_int(
            self.as_raw_fd(),
            libc::IPPROTO_IPV6,
            libc::IPV6_TCLASS,
            tclass as libc::c_int,
        )
    }
}

impl TryFrom<std::net::TcpStream> for TcpStream {
    type Error = io::Error;

    /// [`TcpStream::from_std`].
    fn try_from(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        TcpStream::from_std(stream)
    }
}

impl TryFrom<std::net::TcpListener> for TcpListener {
    type Error = io::Error;

    /// [`TcpListener::from_std`].
    fn try_from(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        TcpListener::from_std(listener)
    }
}

impl std::os::fd::AsFd for TcpListener {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the listener owns its fd, open until it is dropped.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl std::os::fd::AsFd for TcpSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the socket owns its fd, open until it is dropped.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}
