//! The process-wide half of signal handling: the `sigaction` handler, what it counts, and the
//! eventfd it writes.
//!
//! The handler does only async-signal-safe things: it bumps the signal's delivery counter (a
//! lock-free atomic) and writes 8 bytes to one process-wide eventfd, saving and restoring
//! `errno` around the write. Every [`Signal`](super::Signal) holds its own `dup` of that
//! eventfd, registered in its runtime's epoll set, so one write wakes every listener of every
//! runtime; a listener then compares the counter with the value it saw last.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;

use crate::sys;

/// Signal numbers are 1..=64 on Linux (`SIGRTMAX` is 64).
pub(crate) const MAX_SIGNAL: libc::c_int = 64;

/// Deliveries seen by the handler, per signal number.
static DELIVERED: [AtomicU64; MAX_SIGNAL as usize + 1] =
    [const { AtomicU64::new(0) }; MAX_SIGNAL as usize + 1];

/// The eventfd the handler writes, or -1 before the first handler is installed. It is never
/// closed once created (it lives as long as the process, like the handlers).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

/// Which handlers are installed (bit `n` for signal `n`), and the eventfd they write.
static INSTALLED: Mutex<(u128, Option<OwnedFd>)> = Mutex::new((0, None));

/// How many times `signum` has been delivered since its handler was installed.
pub(crate) fn delivered(signum: libc::c_int) -> u64 {
    // SeqCst: pairs with the handler's increment, which precedes its eventfd write; a
    // listener that saw the write (through epoll) then sees the increment.
    DELIVERED[signum as usize].load(SeqCst)
}

extern "C" fn on_signal(signum: libc::c_int) {
    if let Some(count) = DELIVERED.get(signum as usize) {
        // SeqCst: the increment is visible before the write below can wake anybody.
        count.fetch_add(1, SeqCst);
    }
    let fd = WAKE_FD.load(SeqCst);
    if fd >= 0 {
        // Async-signal-safe. Nobody reads the eventfd, so its counter only grows.
        sys::eventfd_add_from_handler(fd);
    }
}

/// Installs the handler for `signum` (once per process) and returns a new descriptor of the
/// eventfd it writes, for the caller to register with its reactor.
pub(crate) fn register(signum: libc::c_int) -> io::Result<OwnedFd> {
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if installed.1.is_none() {
        let fd = sys::EventFd::new()
            .map_err(|e| io::Error::new(e.kind(), format!("eventfd for signals: {e}")))?
            .into_raw();
        // SAFETY: `fd` was just created and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        WAKE_FD.store(fd.as_raw_fd(), SeqCst);
        installed.1 = Some(fd);
    }
    if installed.0 & (1 << signum) == 0 {
        sys::install_handler(signum, on_signal)?;
        installed.0 |= 1 << signum;
    }
    let fd = installed.1.as_ref().expect("created above");
    fd.try_clone()
        .map_err(|e| io::Error::new(e.kind(), format!("dup of the signal eventfd: {e}")))
}
