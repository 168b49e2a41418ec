//! Every call into libc that the crate makes, each a thin wrapper that checks the result
//! with [`check`]: the one place an `errno` is read.
//!
//! ```text
//! // SAFETY: ...
//! let fd = check(unsafe { libc::accept4(fd, ...) }, || "accept4")?;
//! ```
//!
//! A failure comes back as an `io::Error` of the errno's kind that names the call, so it
//! reads as "epoll_ctl(ADD, fd 7): Bad file descriptor (os error 9)" rather than a bare
//! errno; [`errno`] still finds the code for callers that branch on it (accept's back-off,
//! connect's `EINPROGRESS`). Two results are not failures but "try again" signals that the
//! callers consume on every drained read and filled write: `EAGAIN` and `EINTR` come back as
//! plain OS errors, which cost no allocation.
//!
//! The calls live in submodules by subject: the reactor's epoll, eventfd and `poll`
//! (`sys/epoll.rs`), sockets and their addresses (`sys/socket.rs`), and signal handlers
//! (`sys/signal.rs`).

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::os::fd::RawFd;

mod epoll;
mod signal;
mod socket;

pub(crate) use epoll::{poll_readable, Epoll, EventFd};
pub(crate) use signal::{eventfd_add_from_handler, install_handler};
pub(crate) use socket::{
    accept, bind, connect, getsockopt_int, listen, peer_addr, recv, send, send_vectored,
    setsockopt_int, shutdown, socketpair, stream_socket, take_error, SockAddr, IOV_MAX,
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

/// Checks the result of the libc call that `call` describes (called only on failure, so a
/// description that formats costs nothing on success): `Ok(ret)`, or the call's error.
pub(crate) fn check<T: SysRet, D: Into<Cow<'static, str>>>(
    ret: T,
    call: impl FnOnce() -> D,
) -> io::Result<T> {
    if !ret.failed() {
        return Ok(ret);
    }
    let os = io::Error::last_os_error();
    match os.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Err(os),
        kind => Err(io::Error::new(
            kind,
            CallError {
                call: call().into(),
                os,
            },
        )),
    }
}

/// The OS error code of an error from [`check`] (or of a plain OS error).
pub(crate) fn errno(e: &io::Error) -> Option<libc::c_int> {
    e.raw_os_error().or_else(|| {
        e.get_ref()?
            .downcast_ref::<CallError>()
            .and_then(|c| c.os.raw_os_error())
    })
}

/// A failed call: what was called, and the OS error (its `source`).
#[derive(Debug)]
struct CallError {
    call: Cow<'static, str>,
    os: io::Error,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.os)
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.os)
    }
}

/// Whether `fd` is in non-blocking mode (`fcntl(F_GETFL)`).
pub(crate) fn is_nonblocking(fd: RawFd) -> io::Result<bool> {
    // SAFETY: F_GETFL reads the flags of an fd the caller keeps open; no pointers.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) }, || {
        format!("fcntl(fd {fd}, F_GETFL)")
    })?;
    Ok(flags & libc::O_NONBLOCK != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_the_call_and_keeps_its_kind_and_code() {
        // SAFETY: close(2) of an fd that is not open only fails with EBADF.
        let e = check(unsafe { libc::close(-1) }, || "close(-1)").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("close(-1): {}", io::Error::from_raw_os_error(libc::EBADF))
        );
        assert_eq!(errno(&e), Some(libc::EBADF));
        assert_eq!(e.kind(), io::Error::from_raw_os_error(libc::EBADF).kind());
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
