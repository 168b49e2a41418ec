//! Calls on plain file descriptors (pipes and FIFOs): `read`, `write` and their vectored
//! forms, `pipe2`, `open`, and the checks `unix::pipe` makes (file type, access mode) and the
//! blocking-mode switch; and `poll(2)` for one fd's writability.

use std::ffi::CString;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::{self, MaybeUninit};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{check, IOV_MAX};

/// `read(2)` into possibly uninitialised memory; `Ok(n)` initialised the first `n` bytes.
pub(crate) fn read(fd: RawFd, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes during the call; read only
    // writes into it.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    check(n).map(|n| n as usize)
}

/// `write(2)`.
pub(crate) fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes during the call.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    check(n).map(|n| n as usize)
}

/// `readv(2)` into at most [`IOV_MAX`] of `bufs`.
pub(crate) fn readv(fd: RawFd, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
    let len = bufs.len().min(IOV_MAX);
    // SAFETY: IoSliceMut is ABI-compatible with iovec on Unix; each points at memory valid
    // for writes during the call.
    let n = unsafe { libc::readv(fd, bufs.as_mut_ptr().cast(), len as libc::c_int) };
    check(n).map(|n| n as usize)
}

/// `writev(2)` from at most [`IOV_MAX`] of `bufs`.
pub(crate) fn writev(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    let len = bufs.len().min(IOV_MAX);
    // SAFETY: IoSlice is ABI-compatible with iovec on Unix; the kernel only reads them.
    let n = unsafe { libc::writev(fd, bufs.as_ptr().cast(), len as libc::c_int) };
    check(n).map(|n| n as usize)
}

/// A new pipe, both ends non-blocking and close-on-exec: `(read end, write end)`.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two fds pipe2 writes.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) })?;
    // SAFETY: pipe2 succeeded: both are new fds that nobody else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `open(2)` of `path` with `flags` (plus `O_CLOEXEC`).
pub(crate) fn open(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path has an interior NUL byte",
        )
    })?;
    // SAFETY: `c` is a NUL-terminated path valid during the call.
    let fd = check(unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) })?;
    // SAFETY: open succeeded: a new fd nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `fd`'s file type: the `S_IFMT` bits of its mode (`S_IFIFO`, `S_IFREG`, ...).
pub(crate) fn file_type(fd: RawFd) -> io::Result<libc::mode_t> {
    // SAFETY: stat is plain old data; fstat fills it.
    let mut st: libc::stat = unsafe { mem::zeroed() };
    // SAFETY: `st` is valid for writes during the call.
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st.st_mode & libc::S_IFMT)
}

/// Whether `fd` is a FIFO (or pipe).
pub(crate) fn is_fifo(fd: RawFd) -> io::Result<bool> {
    Ok(file_type(fd)? == libc::S_IFIFO)
}

/// `fd`'s access mode (`O_RDONLY`, `O_WRONLY` or `O_RDWR`).
pub(crate) fn access_mode(fd: RawFd) -> io::Result<libc::c_int> {
    // SAFETY: F_GETFL takes no pointers.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    Ok(flags & libc::O_ACCMODE)
}

/// Puts `fd` in non-blocking mode, or takes it out.
pub(crate) fn set_nonblocking(fd: RawFd, nonblocking: bool) -> io::Result<()> {
    // SAFETY: F_GETFL takes no pointers.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    let new = if nonblocking {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    if new != flags {
        // SAFETY: F_SETFL with an int argument; no pointers.
        check(unsafe { libc::fcntl(fd, libc::F_SETFL, new) })?;
    }
    Ok(())
}
