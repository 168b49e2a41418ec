//! Every call into libc that the crate makes, each a thin wrapper that checks the result
//! with [`check`]: the one place an `errno` is read.
//!
//! ```text
//! // SAFETY: ...
//! let fd = check(unsafe { libc::accept4(fd, ...) })?;
//! ```
//!
//! A failure comes back as the OS error itself (`io::Error::last_os_error()`), exactly as the
//! standard library and tokio return it: `raw_os_error()` gives the errno and `kind()` its
//! kind, so callers (and users) can branch on either, and it reads as "Connection refused
//! (os error 111)". No context is added to an OS error: an `io::Error` holds either an OS
//! code or a custom payload, never both, so naming the call (or the address) would lose the
//! code. Context goes only on errors that have no OS code to lose ([`with_context`]: a
//! resolver failure, an error the crate makes itself such as a path too long for a socket
//! address).
//!
//! The calls live in submodules by subject: the reactor's epoll, eventfd and `poll`
//! (`sys/epoll.rs`), sockets and their addresses (`sys/socket.rs`), and signal handlers
//! (`sys/signal.rs`).

use std::io;
use std::os::fd::RawFd;

mod epoll;
pub(crate) mod fd;
mod signal;
mod socket;

pub(crate) use epoll::{Epoll, EventFd, INTEREST};
pub(crate) use signal::{
    call_previous, current_action, eventfd_add_from_handler, install_handler, is_foreign_handler,
};
pub(crate) use socket::{
    accept, affinity, bind, connect, getsockopt_int, incoming_cpu, linger, listen, local_addr,
    peer_addr, peer_cred, push, recv, recv_from, send, send_more, send_vectored,
    send_vectored_more, set_linger, setsockopt_int, shutdown, socketpair, stream_socket,
    take_error, unix_datagram_socket, SockAddr, IOV_MAX,
};

/// A libc call's return value: negative means failure, with the reason in `errno`.
pub(crate) trait SysRet: Copy {
    fn failed(self) -> bool;
}

impl SysRet for libc::c_int {
    fn failed(self) -> bool {
        self < 0
    }
}

impl SysRet for libc::ssize_t {
    fn failed(self) -> bool {
        self < 0
    }
}

impl SysRet for libc::c_long {
    fn failed(self) -> bool {
        self < 0
    }
}

/// Checks the result of a libc call: `Ok(ret)`, or the OS error `errno` holds, as it is.
pub(crate) fn check<T: SysRet>(ret: T) -> io::Result<T> {
    if ret.failed() {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `e` with `context` in front of its message, if it has no OS code; an OS error is returned
/// as it is, so that `raw_os_error()` still answers (see the module docs).
pub(crate) fn with_context(e: io::Error, context: impl FnOnce() -> String) -> io::Error {
    if e.raw_os_error().is_some() {
        e
    } else {
        io::Error::new(e.kind(), format!("{}: {e}", context()))
    }
}

/// Whether `fd` is in non-blocking mode (`fcntl(F_GETFL)`).
pub(crate) fn is_nonblocking(fd: RawFd) -> io::Result<bool> {
    // SAFETY: F_GETFL reads the flags of an fd the caller keeps open; no pointers.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    Ok(flags & libc::O_NONBLOCK != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_the_os_error_as_std_gives_it() {
        // SAFETY: close(2) of an fd that is not open only fails with EBADF.
        let e = check(unsafe { libc::close(-1) }).unwrap_err();
        let std = io::Error::from_raw_os_error(libc::EBADF);
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
        assert_eq!(e.kind(), std.kind());
        assert_eq!(e.to_string(), std.to_string());
    }

    #[test]
    fn context_goes_only_on_errors_without_an_os_code() {
        let os = with_context(io::Error::from_raw_os_error(libc::ENOENT), || "x".into());
        assert_eq!(os.raw_os_error(), Some(libc::ENOENT));
        let own = io::Error::new(io::ErrorKind::InvalidInput, "bad");
        let own = with_context(own, || "resolving h".into());
        assert_eq!(own.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(own.to_string(), "resolving h: bad");
    }

    #[test]
    fn would_block_stays_a_plain_os_error() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let mut buf = [std::mem::MaybeUninit::new(0u8); 4];
        let e = recv(std::os::fd::AsRawFd::as_raw_fd(&a), &mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(e.raw_os_error(), Some(libc::EAGAIN));
    }
}
