//! Signal handling calls: installing a handler, and the one write a handler makes.

use std::io;
use std::os::fd::RawFd;

use super::check;

/// Installs `handler` for `signum` (with `SA_RESTART`, so interrupted calls resume).
pub(crate) fn install_handler(
    signum: libc::c_int,
    handler: extern "C" fn(libc::c_int),
) -> io::Result<()> {
    // SAFETY: sigaction is plain old data; all-zero is a valid starting value.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler as libc::sighandler_t;
    action.sa_flags = libc::SA_RESTART;
    // SAFETY: sigemptyset initialises the mask inside our `action`.
    check(unsafe { libc::sigemptyset(&mut action.sa_mask) })?;
    // SAFETY: `action` is a valid sigaction on our stack; a null old-action pointer is
    // allowed. The caller's handler must be async-signal-safe.
    check(unsafe { libc::sigaction(signum, &action, std::ptr::null_mut()) }).map(drop)
}

/// Adds one to the eventfd `fd`, from a signal handler: only async-signal-safe work (no
/// allocation, no lock), and `errno` as the interrupted code left it.
///
/// The one libc call whose result is not handed to [`check`]: a handler has nobody to
/// report a failure to, and `check` may allocate to describe one. The only possible failure
/// is `EAGAIN` once the counter is at its maximum (2^64 - 2), when the eventfd is readable
/// anyway.
pub(crate) fn eventfd_add_from_handler(fd: RawFd) {
    // SAFETY: __errno_location returns this thread's errno slot, valid for the thread's life.
    let errno = unsafe { *libc::__errno_location() };
    let one: u64 = 1;
    // SAFETY: write(2) is async-signal-safe; it reads 8 bytes from a u64 on our stack.
    let _ = unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
    // SAFETY: as above; restoring errno keeps the interrupted code's view of it intact.
    unsafe { *libc::__errno_location() = errno };
}
