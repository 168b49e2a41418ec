//! Thin, checked wrappers over the Linux calls the reactor makes: epoll, eventfd, and the
//! `poll` the parked driver blocks in; and the `socket(2)` every stream socket starts from.
//!
//! Every error comes back as an `io::Error` that names the call, so a failure reads as
//! "epoll_ctl(ADD, fd 7): Bad file descriptor" rather than a bare errno.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

fn check(ret: libc::c_int, what: impl FnOnce() -> String) -> io::Result<libc::c_int> {
    if ret < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{}: {e}", what())))
    } else {
        Ok(ret)
    }
}

/// A new non-blocking, close-on-exec stream socket in `domain` (`AF_INET`, `AF_INET6`,
/// `AF_UNIX`). The error is `socket(2)`'s own, for the caller to give context.
pub(crate) fn stream_socket(domain: libc::c_int) -> io::Result<OwnedFd> {
    let flags = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: socket(2) takes no pointers.
    let fd = unsafe { libc::socket(domain, flags, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket owned by nobody else; the OwnedFd now owns (and will
    // close) it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An epoll instance.
#[derive(Debug)]
pub(crate) struct Epoll {
    fd: OwnedFd,
}

/// Registered once per fd: readable, writable, peer closed its write side, edge-triggered.
const INTEREST: u32 = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;

impl Epoll {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative result is a new fd we own.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, || {
            "epoll_create1".into()
        })?;
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd })
    }

    /// Registers `fd` for all events, edge-triggered, with `token` as its event data.
    pub(crate) fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: INTEREST,
            u64: token,
        };
        // SAFETY: `ev` is a valid epoll_event on our stack for the duration of the call.
        check(
            unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) },
            || format!("epoll_ctl(ADD, fd {fd})"),
        )
        .map(drop)
    }

    /// Removes `fd`. Called before the fd is closed, so no event can name it afterwards.
    pub(crate) fn delete(&self, fd: RawFd) -> io::Result<()> {
        // SAFETY: EPOLL_CTL_DEL ignores the event pointer (null is allowed since Linux 2.6.9).
        check(
            unsafe {
                libc::epoll_ctl(
                    self.fd.as_raw_fd(),
                    libc::EPOLL_CTL_DEL,
                    fd,
                    std::ptr::null_mut(),
                )
            },
            || format!("epoll_ctl(DEL, fd {fd})"),
        )
        .map(drop)
    }

    /// Waits for events. `None` blocks indefinitely; the timeout is rounded up to whole
    /// milliseconds, so a timer is never seen before its deadline. Returns the number of
    /// events written to `events` (0 on timeout or interruption).
    pub(crate) fn wait(
        &self,
        events: &mut [std::mem::MaybeUninit<libc::epoll_event>],
        timeout: Option<Duration>,
    ) -> io::Result<usize> {
        let ms = timeout_ms(timeout);
        // SAFETY: `events` is a valid, writable buffer of `events.len()` epoll_event structs
        // (uninitialised is fine: the kernel only writes them).
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                events.as_mut_ptr().cast(),
                events.len().min(i32::MAX as usize) as libc::c_int,
                ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(io::Error::new(e.kind(), format!("epoll_wait: {e}")));
        }
        Ok(n as usize)
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// A timeout for `epoll_wait` / `poll`: `None` is -1 (block), else whole milliseconds rounded
/// up, so a timer is never seen before its deadline.
fn timeout_ms(timeout: Option<Duration>) -> libc::c_int {
    match timeout {
        None => -1,
        Some(d) => {
            let ms = d.as_nanos().div_ceil(1_000_000);
            ms.min(i32::MAX as u128) as libc::c_int
        }
    }
}

/// Blocks until `a` or `b` is readable or `timeout` passes (see [`Epoll::wait`] for its
/// rounding); returns which of the two are readable (neither on timeout or interruption).
pub(crate) fn poll_readable(
    a: RawFd,
    b: RawFd,
    timeout: Option<Duration>,
) -> io::Result<(bool, bool)> {
    let mut fds = [a, b].map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    // SAFETY: `fds` is a valid, writable array of two pollfd structs on our stack.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms(timeout)) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok((false, false));
        }
        return Err(io::Error::new(e.kind(), format!("poll: {e}")));
    }
    Ok((fds[0].revents != 0, fds[1].revents != 0))
}

/// A non-blocking eventfd, used to make the parked driver's `poll` return.
#[derive(Debug)]
pub(crate) struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a new fd we own.
        let fd = check(
            unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) },
            || "eventfd".into(),
        )?;
        // SAFETY: just created, owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd })
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Adds one to the counter, which makes the fd readable until [`EventFd::drain`].
    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 on our stack.
        let n = unsafe { libc::write(self.raw(), (&one as *const u64).cast(), 8) };
        if n < 0 {
            // EAGAIN: the counter is at its maximum (after ~2^64 signals); reset it and retry.
            self.drain();
            // SAFETY: as above.
            unsafe { libc::write(self.raw(), (&one as *const u64).cast(), 8) };
        }
    }

    /// Resets the counter to zero.
    pub(crate) fn drain(&self) {
        let mut buf: u64 = 0;
        // SAFETY: reads at most 8 bytes into a valid u64 on our stack.
        unsafe { libc::read(self.raw(), (&mut buf as *mut u64).cast(), 8) };
    }
}

/// The most slices one `sendmsg` takes (Linux's `UIO_MAXIOV`, POSIX's `IOV_MAX`); more is
/// `EMSGSIZE`.
pub(crate) const IOV_MAX: usize = libc::UIO_MAXIOV as usize;

/// `sendmsg` with `MSG_NOSIGNAL`: a vectored write that reports a closed peer as `EPIPE`.
/// `bufs` must hold at most [`IOV_MAX`] slices.
pub(crate) fn send_vectored(fd: RawFd, bufs: &[std::io::IoSlice<'_>]) -> io::Result<usize> {
    debug_assert!(bufs.len() <= IOV_MAX);
    // SAFETY: msghdr is plain old data; zero is valid for every field we leave unset.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSlice is guaranteed ABI-compatible with iovec on Unix; sendmsg only reads it.
    msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = bufs.len() as _;
    // SAFETY: `msg` points at `bufs`, which outlive the call; the kernel only reads them.
    let n = unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
