//! The calls on processes that `process` makes, each checked by the crate's one helper
//! ([`check`]): `pidfd_open`, `waitpid` on one pid, and `kill`.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use crate::sys::check;

/// A pidfd for `pid` (close-on-exec, as every pidfd is): readable once the process has
/// exited. `ENOSYS` on kernels before 5.3.
pub(super) fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and a flags word; no pointers. The raw syscall returns a
    // long that is either -1 (errno set) or a new fd, so narrowing it to an int keeps both.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int)?;
    // SAFETY: the call succeeded: `fd` is a new descriptor that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reaps `pid` if it has exited, without blocking: `Ok(None)` while it runs. Only this pid
/// is waited for (never `-1`: other code in the process may own other children).
pub(super) fn try_reap(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is valid for writes during the call.
        match check(unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) }) {
            Ok(0) => return Ok(None),
            Ok(_) => return Ok(Some(ExitStatus::from_raw(status))),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Sends `SIGKILL` to `pid`, which must be a child this process has not reaped yet (so the
/// pid cannot have been reused).
pub(super) fn kill(pid: libc::pid_t) -> io::Result<()> {
    // SAFETY: kill takes two integers; no pointers.
    check(unsafe { libc::kill(pid, libc::SIGKILL) }).map(drop)
}
