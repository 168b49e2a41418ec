//! Socket calls: creating, binding, listening, connecting, accepting, and moving bytes; and
//! [`SockAddr`], a C socket address converted to and from the standard library's.

use std::ffi::OsStr;
use std::io::{self, IoSlice};
use std::mem::{self, MaybeUninit};
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::check;

/// Flags every socket the crate creates gets: it never blocks a worker, and it is not
/// inherited by a program the process executes.
const FLAGS: libc::c_int = libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;

/// A C socket address of any family, as the kernel reads and writes them.
#[derive(Clone, Copy)]
pub(crate) struct SockAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl SockAddr {
    /// Room for any address, for the kernel to fill in.
    fn empty() -> Self {
        SockAddr {
            // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
            storage: unsafe { mem::zeroed() },
            len: mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t,
        }
    }

    /// An IPv4 or IPv6 address.
    pub(crate) fn inet(addr: &SocketAddr) -> Self {
        let mut a = Self::empty();
        a.len = match addr {
            SocketAddr::V4(v4) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: v4.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(v4.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
                unsafe { std::ptr::write(a.as_mut_ptr().cast(), sin) };
                mem::size_of::<libc::sockaddr_in>()
            }
            SocketAddr::V6(v6) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: v6.port().to_be(),
                    sin6_flowinfo: v6.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: v6.ip().octets(),
                    },
                    sin6_scope_id: v6.scope_id(),
                };
                // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
                unsafe { std::ptr::write(a.as_mut_ptr().cast(), sin6) };
                mem::size_of::<libc::sockaddr_in6>()
            }
        } as libc::socklen_t;
        a
    }

    /// A Unix-domain address: a path, or, when `path` starts with a NUL byte, the name after
    /// it in Linux's abstract namespace (as tokio and the standard library's
    /// `SocketAddrExt::from_abstract_name` read it). The empty path is the unnamed address
    /// (binding it makes the kernel pick an abstract name).
    ///
    /// # Errors
    /// `InvalidInput`, naming the path, for a path with a NUL byte after its start, or one too
    /// long for `sun_path` (a path takes 107 bytes at most, with its terminating NUL; an
    /// abstract name 107 after its leading NUL).
    pub(crate) fn unix(path: &Path) -> io::Result<Self> {
        // SAFETY: sockaddr_un is plain old data; all-zero is a valid (empty) value.
        let mut sun: libc::sockaddr_un = unsafe { mem::zeroed() };
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let bytes = path.as_os_str().as_bytes();
        let is_abstract = bytes.first() == Some(&0);
        let invalid = |why: String| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("Unix socket address {:?}: {why}", path.as_os_str()),
            )
        };
        if !is_abstract && bytes.contains(&0) {
            return Err(invalid(
                "a path must not contain a NUL byte (only an abstract name, which starts with one)"
                    .into(),
            ));
        }
        // A path needs room for its terminating NUL; an abstract name has none.
        let room = sun.sun_path.len() - usize::from(!is_abstract);
        if bytes.len() > room {
            return Err(invalid(format!(
                "{} bytes long, over the {room} a socket address holds",
                bytes.len()
            )));
        }
        for (dst, &src) in sun.sun_path.iter_mut().zip(bytes) {
            *dst = src as libc::c_char;
        }
        let mut a = Self::empty();
        // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_un.
        unsafe { std::ptr::write(a.as_mut_ptr().cast(), sun) };
        // The family and the bytes given, then a path's terminating NUL. The kernel reads an
        // abstract name's length from the address length, so nothing follows it.
        let nul = usize::from(!is_abstract && !bytes.is_empty());
        a.len = (sun_path_offset() + bytes.len() + nul) as libc::socklen_t;
        Ok(a)
    }

    fn as_ptr(&self) -> *const libc::sockaddr {
        (&self.storage as *const libc::sockaddr_storage).cast()
    }

    fn as_mut_ptr(&mut self) -> *mut libc::sockaddr {
        (&mut self.storage as *mut libc::sockaddr_storage).cast()
    }

    /// The address of a std Unix socket address: its path, or its abstract name (as a path
    /// that starts with a NUL byte, which [`SockAddr::unix`] reads as one).
    ///
    /// # Errors
    /// `InvalidInput` for an unnamed address, which nothing can bind or connect to.
    pub(crate) fn from_std_unix(addr: &std::os::unix::net::SocketAddr) -> io::Result<Self> {
        use std::os::linux::net::SocketAddrExt;
        if let Some(path) = addr.as_pathname() {
            return Self::unix(path);
        }
        if let Some(name) = addr.as_abstract_name() {
            let mut bytes = Vec::with_capacity(name.len() + 1);
            bytes.push(0);
            bytes.extend_from_slice(name);
            return Self::unix(Path::new(OsStr::from_bytes(&bytes)));
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an unnamed Unix socket address cannot be bound or connected to",
        ))
    }

    /// The address as the standard library's IP socket address.
    pub(crate) fn to_inet(self) -> io::Result<SocketAddr> {
        match self.storage.ss_family as libc::c_int {
            libc::AF_INET => {
                // SAFETY: the kernel wrote a sockaddr_in (family AF_INET); sockaddr_storage
                // is larger than and aligned for it.
                let sin = unsafe { *(self.as_ptr() as *const libc::sockaddr_in) };
                let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Ok(SocketAddrV4::new(ip, u16::from_be(sin.sin_port)).into())
            }
            libc::AF_INET6 => {
                // SAFETY: as above, for sockaddr_in6 (family AF_INET6).
                let sin6 = unsafe { *(self.as_ptr() as *const libc::sockaddr_in6) };
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                let port = u16::from_be(sin6.sin6_port);
                Ok(SocketAddrV6::new(ip, port, sin6.sin6_flowinfo, sin6.sin6_scope_id).into())
            }
            family => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("expected an IP socket address, got address family {family}"),
            )),
        }
    }

    /// The address as the standard library's Unix-domain socket address: unnamed (the
    /// usual peer of a listener), a path, or an abstract name.
    pub(crate) fn to_unix(self) -> io::Result<std::os::unix::net::SocketAddr> {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::SocketAddr as UnixAddr;
        let offset = sun_path_offset();
        let len = (self.len as usize).saturating_sub(offset);
        if len == 0 {
            // The standard library makes the empty path an unnamed address.
            return UnixAddr::from_pathname("");
        }
        if self.storage.ss_family as libc::c_int != libc::AF_UNIX {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "expected a Unix socket address",
            ));
        }
        // SAFETY: the kernel wrote a sockaddr_un (family AF_UNIX); sockaddr_storage is larger
        // than and aligned for it.
        let sun = unsafe { &*(self.as_ptr() as *const libc::sockaddr_un) };
        let path: Vec<u8> = sun.sun_path[..len.min(sun.sun_path.len())]
            .iter()
            .map(|&c| c as u8)
            .collect();
        match path.split_first() {
            // Abstract: a leading NUL, then the name (which may hold any bytes).
            Some((0, name)) => UnixAddr::from_abstract_name(name),
            // A path: up to its terminating NUL.
            _ => {
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                UnixAddr::from_pathname(Path::new(OsStr::from_bytes(&path[..end])))
            }
        }
    }
}

/// Where `sun_path` starts in a `sockaddr_un` (after the family).
fn sun_path_offset() -> usize {
    mem::offset_of!(libc::sockaddr_un, sun_path)
}

/// A new non-blocking, close-on-exec stream socket in `domain` (`AF_INET`, `AF_INET6`,
/// `AF_UNIX`).
pub(crate) fn stream_socket(domain: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes no pointers.
    let fd = check(unsafe { libc::socket(domain, libc::SOCK_STREAM | FLAGS, 0) })?;
    // SAFETY: `fd` is a fresh socket owned by nobody else; the OwnedFd now owns (and will
    // close) it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A new non-blocking, close-on-exec Unix datagram socket, unbound.
pub(crate) fn unix_datagram_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes no pointers.
    let fd = check(unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | FLAGS, 0) })?;
    // SAFETY: `fd` is a fresh socket owned by nobody else; the OwnedFd now owns (and will
    // close) it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A connected pair of non-blocking, close-on-exec Unix stream sockets.
pub(crate) fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1; 2];
    let ty = libc::SOCK_STREAM | FLAGS;
    // SAFETY: the kernel writes two fds into the array on our stack.
    let r = unsafe { libc::socketpair(libc::AF_UNIX, ty, 0, fds.as_mut_ptr()) };
    check(r)?;
    // SAFETY: both fds are fresh sockets owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sets an integer socket option.
pub(crate) fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: passes a pointer to a c_int on our stack and its size; the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    check(r).map(drop)
}

/// Reads an integer socket option.
pub(crate) fn getsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into the c_int on our stack and updates
    // `len`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    check(r)?;
    Ok(value)
}

/// Pushes what a TCP socket holds queued but unsent (bytes sent with `MSG_MORE`), as the next
/// send without it would: `TCP_CORK` set to 0 makes the kernel transmit the queue at once
/// under `TCP_NODELAY`, or as Nagle's rule allows without it. One syscall, no payload.
pub(crate) fn push(fd: RawFd) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_CORK, 0)
}

/// `SO_LINGER`: how long a close waits for unsent data (`Some(0)`: reset at once).
pub(crate) fn linger(fd: RawFd) -> io::Result<Option<std::time::Duration>> {
    let mut l = libc::linger {
        l_onoff: 0,
        l_linger: 0,
    };
    let mut len = mem::size_of::<libc::linger>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into the linger on our stack.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&mut l as *mut libc::linger).cast(),
            &mut len,
        )
    };
    check(r)?;
    Ok((l.l_onoff != 0).then(|| std::time::Duration::from_secs(l.l_linger.max(0) as u64)))
}

/// Sets `SO_LINGER` (`None` turns it off).
pub(crate) fn set_linger(fd: RawFd, dur: Option<std::time::Duration>) -> io::Result<()> {
    let l = libc::linger {
        l_onoff: dur.is_some() as libc::c_int,
        l_linger: dur.map_or(0, |d| {
            d.as_secs().min(libc::c_int::MAX as u64) as libc::c_int
        }),
    };
    // SAFETY: the kernel reads `size_of::<linger>()` bytes from the linger on our stack.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    check(r).map(drop)
}

/// `SO_PEERCRED` of a connected Unix socket.
pub(crate) fn peer_cred(fd: RawFd) -> io::Result<libc::ucred> {
    let mut c = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into the ucred on our stack.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut c as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    check(r)?;
    Ok(c)
}

/// The socket's pending error (`SO_ERROR`), which reading clears.
pub(crate) fn take_error(fd: RawFd) -> io::Result<Option<io::Error>> {
    let code = getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_ERROR)?;
    Ok((code != 0).then(|| io::Error::from_raw_os_error(code)))
}

/// Binds `fd` to `addr`.
pub(crate) fn bind(fd: RawFd, addr: &SockAddr) -> io::Result<()> {
    // SAFETY: `addr` holds a valid socket address of `addr.len` bytes.
    check(unsafe { libc::bind(fd, addr.as_ptr(), addr.len) }).map(drop)
}

/// Listens with a queue of `backlog` connections (clamped to what `listen(2)` takes).
pub(crate) fn listen(fd: RawFd, backlog: u32) -> io::Result<()> {
    let backlog = backlog.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: listen(2) takes no pointers.
    check(unsafe { libc::listen(fd, backlog) }).map(drop)
}

/// Starts connecting the non-blocking `fd` to `addr`: `Ok(true)` if the connection is in
/// progress (wait until the socket is writable, then read its error), `Ok(false)` if it is
/// already established.
pub(crate) fn connect(fd: RawFd, addr: &SockAddr) -> io::Result<bool> {
    // SAFETY: `addr` holds a valid socket address of `addr.len` bytes.
    let r = unsafe { libc::connect(fd, addr.as_ptr(), addr.len) };
    match check(r) {
        Ok(_) => Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(true),
        Err(e) => Err(e),
    }
}

/// The address `fd` is bound to.
pub(crate) fn local_addr(fd: RawFd) -> io::Result<SockAddr> {
    let mut addr = SockAddr::empty();
    // SAFETY: the kernel writes at most `addr.len` bytes into the storage and updates the
    // length.
    let r = unsafe { libc::getsockname(fd, addr.as_mut_ptr(), &mut addr.len) };
    check(r)?;
    Ok(addr)
}

/// The CPU that processed the last segment `fd` received (`SO_INCOMING_CPU`): over loopback,
/// the CPU its peer sent from.
pub(crate) fn incoming_cpu(fd: RawFd) -> io::Result<usize> {
    let cpu = getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_INCOMING_CPU)?;
    usize::try_from(cpu).map_err(|_| io::Error::other("SO_INCOMING_CPU: no CPU recorded"))
}

/// The CPUs the calling thread may run on, indexed by CPU number.
pub(crate) fn affinity() -> io::Result<Vec<bool>> {
    // SAFETY: cpu_set_t is a plain bit set (all-zero is empty).
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: sched_getaffinity writes at most the given size into the set on our stack.
    let r = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
    check(r)?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads one bit of the set, and `c` is below CPU_SETSIZE.
        .map(|c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// The address of `fd`'s peer: fails with `ENOTCONN` unless it is connected.
pub(crate) fn peer_addr(fd: RawFd) -> io::Result<SockAddr> {
    let mut addr = SockAddr::empty();
    // SAFETY: the kernel writes at most `addr.len` bytes into the storage and updates the
    // length.
    let r = unsafe { libc::getpeername(fd, addr.as_mut_ptr(), &mut addr.len) };
    check(r)?;
    Ok(addr)
}

/// Accepts a connection on the listening `fd`: the new socket comes non-blocking and
/// close-on-exec from the one call (`accept4`), with its peer's address.
pub(crate) fn accept(fd: RawFd) -> io::Result<(OwnedFd, SockAddr)> {
    let mut addr = SockAddr::empty();
    // SAFETY: the kernel writes at most `addr.len` bytes into the storage and updates the
    // length.
    let new = check(unsafe { libc::accept4(fd, addr.as_mut_ptr(), &mut addr.len, FLAGS) })?;
    // SAFETY: `new` is a fresh socket owned by nobody else.
    Ok((unsafe { OwnedFd::from_raw_fd(new) }, addr))
}

/// `recv` into memory that need not be initialised; the kernel writes the bytes it returns
/// (`0` is end of stream).
pub(crate) fn recv(fd: RawFd, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the duration of the call and
    // recv only writes into it (it never reads it), so uninitialised memory is fine.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    check(n).map(|n| n as usize)
}

/// `recvfrom` into memory that need not be initialised, with `flags` (`MSG_PEEK`): the
/// byte count and the sender's address.
pub(crate) fn recv_from(
    fd: RawFd,
    buf: &mut [MaybeUninit<u8>],
    flags: libc::c_int,
) -> io::Result<(usize, SockAddr)> {
    let mut addr = SockAddr::empty();
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes and the storage for `addr.len`
    // bytes during the call; the kernel only writes them.
    let n = unsafe {
        libc::recvfrom(
            fd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            flags,
            addr.as_mut_ptr(),
            &mut addr.len,
        )
    };
    Ok((check(n)? as usize, addr))
}

/// `send` with `MSG_NOSIGNAL`: a closed peer is an `EPIPE` error, never a SIGPIPE.
pub(crate) fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    send_with(fd, buf, 0)
}

/// [`send`] with `MSG_MORE` as well: on TCP the kernel queues the bytes (they are its to send
/// from here on) but holds a partial segment back until a send without it or a [`push`].
pub(crate) fn send_more(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    send_with(fd, buf, libc::MSG_MORE)
}

/// Sends go through `syscall(2)` rather than libc's `send`, which is a thread cancellation
/// point and pays for it on every call (a pipelined reply is one send each): spinpark never
/// cancels threads.
fn send_with(fd: RawFd, buf: &[u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: sendto(fd, buf, len, flags, NULL, 0) is send(2); `buf` is valid for reads of
    // `buf.len()` bytes for the duration of the call, and a null address with length 0 is
    // what a connected socket takes.
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd,
            buf.as_ptr(),
            buf.len(),
            libc::MSG_NOSIGNAL | flags,
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::socklen_t,
        )
    };
    check(n).map(|n| n as usize)
}

/// The most slices one `sendmsg` takes (Linux's `UIO_MAXIOV`, POSIX's `IOV_MAX`); more is
/// `EMSGSIZE`.
pub(crate) const IOV_MAX: usize = libc::UIO_MAXIOV as usize;

/// `sendmsg` with `MSG_NOSIGNAL`: a vectored write that reports a closed peer as `EPIPE`.
/// `bufs` must hold at most [`IOV_MAX`] slices.
pub(crate) fn send_vectored(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    send_vectored_with(fd, bufs, 0)
}

/// [`send_vectored`] with `MSG_MORE`, as [`send_more`].
pub(crate) fn send_vectored_more(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    send_vectored_with(fd, bufs, libc::MSG_MORE)
}

fn send_vectored_with(fd: RawFd, bufs: &[IoSlice<'_>], flags: libc::c_int) -> io::Result<usize> {
    debug_assert!(bufs.len() <= IOV_MAX);
    // SAFETY: msghdr is plain old data; zero is valid for every field we leave unset.
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    // IoSlice is guaranteed ABI-compatible with iovec on Unix; sendmsg only reads it.
    msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = bufs.len() as _;
    // SAFETY: `msg` points at `bufs`, which outlive the call; the kernel only reads them.
    // (Through `syscall(2)`, as `send_with`.)
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendmsg,
            fd,
            &msg as *const libc::msghdr,
            libc::MSG_NOSIGNAL | flags,
        )
    };
    check(n).map(|n| n as usize)
}

/// Shuts down the read side, the write side, or both.
pub(crate) fn shutdown(fd: RawFd, how: Shutdown) -> io::Result<()> {
    let how = match how {
        Shutdown::Read => libc::SHUT_RD,
        Shutdown::Write => libc::SHUT_WR,
        Shutdown::Both => libc::SHUT_RDWR,
    };
    // SAFETY: shutdown(2) takes no pointers.
    check(unsafe { libc::shutdown(fd, how) }).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_addresses_round_trip() {
        for a in ["127.0.0.1:80", "[::1]:443", "[fe80::1%2]:8080"] {
            let a: SocketAddr = a.parse().unwrap();
            assert_eq!(SockAddr::inet(&a).to_inet().unwrap(), a);
        }
    }

    #[test]
    fn unix_addresses_convert_unnamed_path_and_abstract() {
        let mut unnamed = SockAddr::empty();
        unnamed.len = sun_path_offset() as libc::socklen_t;
        assert!(unnamed.to_unix().unwrap().is_unnamed());
        let p = SockAddr::unix(Path::new("/tmp/x.sock")).unwrap();
        assert_eq!(
            p.to_unix().unwrap().as_pathname(),
            Some(Path::new("/tmp/x.sock"))
        );
        use std::os::linux::net::SocketAddrExt;
        let abs = SockAddr::unix(Path::new("\0name")).unwrap();
        assert_eq!(abs.len as usize, sun_path_offset() + 5);
        assert_eq!(
            abs.to_unix().unwrap().as_abstract_name(),
            Some(&b"name"[..])
        );
        assert!(SockAddr::unix(Path::new(""))
            .unwrap()
            .to_unix()
            .unwrap()
            .is_unnamed());
    }
}
