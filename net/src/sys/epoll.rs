//! The reactor's calls: an epoll instance, and the eventfd that unparks the driver (and wakes
//! each signal kind's listeners).

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::time::Duration;

use super::check;

/// An epoll instance.
#[derive(Debug)]
pub(crate) struct Epoll {
    fd: OwnedFd,
}

/// Registered once per fd: readable, writable, peer closed its write side, edge-triggered.
pub(crate) const INTEREST: u32 =
    (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;

impl Epoll {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative result is a new fd we own.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd })
    }

    /// Registers `fd` for `events` (the sockets' [`INTEREST`], or an `AsyncFd`'s own), with
    /// `token` as its event data.
    pub(crate) fn add(&self, fd: RawFd, token: u64, events: u32) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: `ev` is a valid epoll_event on our stack for the duration of the call.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })
            .map(drop)
    }

    /// Removes `fd`. Called before the fd is closed, so no event can name it afterwards.
    pub(crate) fn delete(&self, fd: RawFd) -> io::Result<()> {
        // SAFETY: EPOLL_CTL_DEL ignores the event pointer (null is allowed since Linux 2.6.9).
        check(unsafe {
            libc::epoll_ctl(
                self.fd.as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                fd,
                std::ptr::null_mut(),
            )
        })
        .map(drop)
    }

    /// Waits for events. `None` blocks indefinitely; the timeout is rounded up to whole
    /// milliseconds, so a timer is never seen before its deadline. Returns the number of
    /// events written to `events` (0 on timeout or interruption).
    pub(crate) fn wait(
        &self,
        events: &mut [MaybeUninit<libc::epoll_event>],
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
        match check(n) {
            Ok(n) => Ok(n as usize),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) => Err(e),
        }
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

/// A non-blocking eventfd: the driver's unpark signal, and each signal kind's wake-up.
#[derive(Debug)]
pub(crate) struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a new fd we own.
        let fd = check(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
        // SAFETY: just created, owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd })
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Gives up ownership: the fd stays open for the rest of the process.
    pub(crate) fn into_raw(self) -> RawFd {
        self.fd.into_raw_fd()
    }

    /// Adds one to the counter, which makes the fd readable until [`EventFd::drain`].
    pub(crate) fn signal(&self) {
        if self.add_one().is_err() {
            // EAGAIN: the counter is at its maximum (after ~2^64 signals); reset it and
            // retry. Nothing else can fail on an eventfd we own.
            self.drain();
            let _ = self.add_one();
        }
    }

    fn add_one(&self) -> io::Result<()> {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 on our stack.
        let n = unsafe { libc::write(self.raw(), (&one as *const u64).cast(), 8) };
        check(n).map(drop)
    }

    /// Resets the counter to zero.
    pub(crate) fn drain(&self) {
        let mut buf: u64 = 0;
        // SAFETY: reads at most 8 bytes into a valid u64 on our stack.
        let n = unsafe { libc::read(self.raw(), (&mut buf as *mut u64).cast(), 8) };
        // EAGAIN: it was zero already, which is what we want.
        let _ = check(n);
    }
}
