//! [`TcpSocket`]: a TCP socket configured before it listens or connects.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::{TcpListener, TcpStream};
use crate::stream::StreamCore;
use crate::sys::{self, SockAddr};

/// A TCP socket that is neither listening nor connected yet: set options that must come
/// before `bind`/`listen`/`connect` (address and port reuse, buffer sizes, the backlog), then
/// turn it into a [`TcpListener`] or a [`TcpStream`].
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// use spinpark_net::TcpSocket;
/// let socket = TcpSocket::new_v4().unwrap();
/// socket.set_reuseaddr(true).unwrap();
/// socket.set_recv_buffer_size(256 * 1024).unwrap();
/// socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
/// let listener = socket.listen(1024).unwrap();
///
/// let client = TcpSocket::new_v4().unwrap();
/// client.set_send_buffer_size(64 * 1024).unwrap();
/// let stream = client.connect(listener.local_addr().unwrap()).await.unwrap();
/// assert_eq!(stream.peer_addr().unwrap(), listener.local_addr().unwrap());
/// # });
/// ```
#[derive(Debug)]
pub struct TcpSocket {
    // An unconnected socket; std's stream type is only the fd's owner (and gives us
    // `local_addr`, `set_nodelay` and `take_error`, which work on any TCP socket).
    socket: std::net::TcpStream,
}

impl TcpSocket {
    /// A new IPv4 TCP socket (non-blocking, close-on-exec).
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// ```
    pub fn new_v4() -> io::Result<TcpSocket> {
        Self::new(libc::AF_INET)
    }

    /// A new IPv6 TCP socket (non-blocking, close-on-exec).
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v6().unwrap();
    /// ```
    pub fn new_v6() -> io::Result<TcpSocket> {
        Self::new(libc::AF_INET6)
    }

    /// A new socket of `addr`'s family.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_for(&"127.0.0.1:0".parse().unwrap()).unwrap();
    /// ```
    pub fn new_for(addr: &SocketAddr) -> io::Result<TcpSocket> {
        if addr.is_ipv4() {
            Self::new_v4()
        } else {
            Self::new_v6()
        }
    }

    fn new(domain: libc::c_int) -> io::Result<TcpSocket> {
        let fd = sys::stream_socket(domain)?;
        let socket = std::net::TcpStream::from(fd);
        Ok(TcpSocket { socket })
    }

    fn set(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
        sys::setsockopt_int(self.socket.as_raw_fd(), level, name, value)
    }

    fn get(&self, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
        sys::getsockopt_int(self.socket.as_raw_fd(), level, name)
    }

    /// Sets `SO_REUSEADDR`: bind a port that still has connections in `TIME_WAIT`.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_reuseaddr(true).unwrap();
    /// ```
    pub fn set_reuseaddr(&self, on: bool) -> io::Result<()> {
        self.set(libc::SOL_SOCKET, libc::SO_REUSEADDR, on as _)
    }

    /// Whether `SO_REUSEADDR` is set.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_reuseaddr(true).unwrap();
    /// assert!(s.reuseaddr().unwrap());
    /// ```
    pub fn reuseaddr(&self) -> io::Result<bool> {
        Ok(self.get(libc::SOL_SOCKET, libc::SO_REUSEADDR)? != 0)
    }

    /// Sets `SO_REUSEPORT`: several sockets (of the same user) bind the same address and the
    /// kernel spreads incoming connections across them.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_reuseport(true).unwrap();
    /// ```
    pub fn set_reuseport(&self, on: bool) -> io::Result<()> {
        self.set(libc::SOL_SOCKET, libc::SO_REUSEPORT, on as _)
    }

    /// Whether `SO_REUSEPORT` is set.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// assert!(!s.reuseport().unwrap());
    /// ```
    pub fn reuseport(&self) -> io::Result<bool> {
        Ok(self.get(libc::SOL_SOCKET, libc::SO_REUSEPORT)? != 0)
    }

    /// Sets `SO_SNDBUF` (the kernel doubles it and applies its limits; read it back with
    /// [`send_buffer_size`](Self::send_buffer_size)).
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_send_buffer_size(1 << 20).unwrap();
    /// ```
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        let size = size.min(i32::MAX as u32) as libc::c_int;
        self.set(libc::SOL_SOCKET, libc::SO_SNDBUF, size)
    }

    /// The send buffer size the kernel uses.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_send_buffer_size(64 * 1024).unwrap();
    /// assert!(s.send_buffer_size().unwrap() >= 64 * 1024);
    /// ```
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        Ok(self.get(libc::SOL_SOCKET, libc::SO_SNDBUF)? as u32)
    }

    /// Sets `SO_RCVBUF` (the kernel doubles it and applies its limits).
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_recv_buffer_size(1 << 20).unwrap();
    /// ```
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        let size = size.min(i32::MAX as u32) as libc::c_int;
        self.set(libc::SOL_SOCKET, libc::SO_RCVBUF, size)
    }

    /// The receive buffer size the kernel uses.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_recv_buffer_size(64 * 1024).unwrap();
    /// assert!(s.recv_buffer_size().unwrap() >= 64 * 1024);
    /// ```
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        Ok(self.get(libc::SOL_SOCKET, libc::SO_RCVBUF)? as u32)
    }

    /// Sets `SO_KEEPALIVE`.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_keepalive(true).unwrap();
    /// ```
    pub fn set_keepalive(&self, on: bool) -> io::Result<()> {
        self.set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, on as _)
    }

    /// Whether `SO_KEEPALIVE` is set.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// assert!(!s.keepalive().unwrap());
    /// ```
    pub fn keepalive(&self) -> io::Result<bool> {
        Ok(self.get(libc::SOL_SOCKET, libc::SO_KEEPALIVE)? != 0)
    }

    /// Sets `TCP_NODELAY` (inherited by the connected stream).
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.set_nodelay(true).unwrap();
    /// ```
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        self.socket.set_nodelay(on)
    }

    /// Whether `TCP_NODELAY` is set.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// assert!(!s.nodelay().unwrap());
    /// ```
    pub fn nodelay(&self) -> io::Result<bool> {
        self.socket.nodelay()
    }

    /// Binds to `addr` (a literal address: resolve names with [`crate::lookup_host`]).
    ///
    /// # Errors
    /// The bind error as the OS gave it (`AddrInUse`, ...), with its `raw_os_error()`.
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    /// ```
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        sys::bind(self.socket.as_raw_fd(), &SockAddr::inet(&addr))
    }

    /// The bound address (with the actual port after binding port 0).
    ///
    /// ```
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    /// assert_ne!(s.local_addr().unwrap().port(), 0);
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Listens with a queue of up to `backlog` pending connections (the kernel caps it at
    /// `net.core.somaxconn`) and returns the listener, on the current runtime.
    ///
    /// # Errors
    /// The listen error; an error outside a spinpark runtime.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// s.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    /// let listener = s.listen(4096).unwrap();
    /// # drop(listener);
    /// # });
    /// ```
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        sys::listen(self.socket.as_raw_fd(), backlog)?;
        let fd = OwnedFd::from(self.socket);
        TcpListener::from_nonblocking(std::net::TcpListener::from(fd))
    }

    /// Connects to `addr` and returns the stream, on the current runtime.
    ///
    /// # Errors
    /// The connect error as the OS gave it (`ConnectionRefused`, ...), with its
    /// `raw_os_error()`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let listener = spinpark::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let s = spinpark::net::TcpSocket::new_v4().unwrap();
    /// let stream = s.connect(listener.local_addr().unwrap()).await.unwrap();
    /// # drop(stream);
    /// # });
    /// ```
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        let core = StreamCore::connect(self.socket, &SockAddr::inet(&addr)).await?;
        Ok(TcpStream::from_core(core))
    }
}

impl AsRawFd for TcpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }
}
