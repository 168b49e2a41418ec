//! Signal handling calls: reading and installing a signal's action, calling the action a
//! handler replaced, and the one write a handler makes.

use std::io;
use std::os::fd::RawFd;

use super::check;

/// A handler installed with `SA_SIGINFO`: the signal number, what the kernel says about the
/// delivery, and the interrupted context.
pub(crate) type SigInfoHandler =
    extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// The action in place for `signum` now (a handler, `SIG_DFL` or `SIG_IGN`), changing nothing.
pub(crate) fn current_action(signum: libc::c_int) -> io::Result<libc::sigaction> {
    // SAFETY: sigaction is plain old data; all-zero is a valid starting value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `old`, a valid sigaction on
    // our stack.
    check(unsafe { libc::sigaction(signum, std::ptr::null(), &mut old) })?;
    Ok(old)
}

/// Installs `handler` for `signum`, with `SA_SIGINFO` (so that an action it chains to gets
/// the delivery's real `siginfo_t` and context) and `SA_RESTART` (so interrupted calls
/// resume). Returns the action it replaced.
pub(crate) fn install_handler(
    signum: libc::c_int,
    handler: SigInfoHandler,
) -> io::Result<libc::sigaction> {
    // SAFETY: sigaction is plain old data; all-zero is a valid starting value.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler as libc::sighandler_t;
    action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: sigemptyset initialises the mask inside our `action`.
    check(unsafe { libc::sigemptyset(&mut action.sa_mask) })?;
    // SAFETY: as in `current_action`.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: `action` and `old` are valid sigactions on our stack. The caller's handler must
    // be async-signal-safe.
    check(unsafe { libc::sigaction(signum, &action, &mut old) })?;
    Ok(old)
}

/// Whether `action` is a handler to call (not `SIG_DFL` or `SIG_IGN`), and not `ours`.
pub(crate) fn is_foreign_handler(action: &libc::sigaction, ours: SigInfoHandler) -> bool {
    let f = action.sa_sigaction;
    f != libc::SIG_DFL && f != libc::SIG_IGN && f != ours as libc::sighandler_t
}

/// Calls `previous`, the action our handler replaced, from inside our handler, with the
/// arguments the kernel gave ours: as a three-argument action if it was installed with
/// `SA_SIGINFO`, else as a plain handler. `SIG_DFL` and `SIG_IGN` are not called (there is
/// nothing to call: the default action is what installing a handler gave up).
///
/// # Safety
///
/// Only from a signal handler for `signum` (the previous action expects to run as one), with
/// the `info` and `context` the kernel passed it; `previous` must be an action that
/// `sigaction` returned for `signum`.
pub(crate) unsafe fn call_previous(
    previous: &libc::sigaction,
    signum: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    let f = previous.sa_sigaction;
    if f == libc::SIG_DFL || f == libc::SIG_IGN {
        return;
    }
    if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: with SA_SIGINFO the kernel calls `sa_sigaction` as a three-argument
        // function, so that is the type it was installed as.
        let action: SigInfoHandler = unsafe { std::mem::transmute::<libc::sighandler_t, _>(f) };
        action(signum, info, context);
    } else {
        // SAFETY: without SA_SIGINFO the kernel calls it as a one-argument handler (the
        // `sa_handler` member of the union libc names `sa_sigaction`).
        let handler: extern "C" fn(libc::c_int) =
            unsafe { std::mem::transmute::<libc::sighandler_t, _>(f) };
        handler(signum);
    }
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
