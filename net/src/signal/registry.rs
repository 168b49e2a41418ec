//! The process-wide half of signal handling: the `sigaction` handler, what it counts, the
//! eventfd of each signal kind it writes, and the tasks waiting for each kind.
//!
//! The handler does only async-signal-safe things: it bumps the signal's delivery counter (a
//! lock-free atomic) and writes 8 bytes to that signal's eventfd, saving and restoring `errno`
//! around the write. Then it calls the action it replaced, if that was a handler (the
//! program's own, or a library's): installing ours takes nothing away from them, as in
//! signal-hook-registry, which tokio uses. A replaced `SIG_DFL` or `SIG_IGN` is not called:
//! the default action is what a listener gives up (SIGINT no longer ends the process), and an
//! ignored signal is now seen (for `SIGCHLD`, whose `SIG_IGN` also tells the kernel to reap
//! children itself, that ends: children wait to be reaped, as under tokio).
//!
//! The replaced action is kept in a process-wide slot per signal ([`PREVIOUS`]), a pointer
//! the handler loads without a lock. It is written before our handler is installed, so the
//! first delivery to our handler already finds it. Each runtime registers a kind's eventfd once in its epoll set (the
//! reactor's `shared_source`); its listeners all wait on that one registration. A listener
//! compares the counter with the value it saw last.
//!
//! Beside the delivery count, each kind keeps the highest count any listener has reported
//! ([`reported`]). A new listener starts from that mark rather than from the current count,
//! so the deliveries no listener has reported yet (one that came while no listener existed)
//! are reported to it, once, and the ones a listener already reported are not.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{
    AtomicI32, AtomicPtr, AtomicU64,
    Ordering::{Acquire, Relaxed, Release, SeqCst},
};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Wake, Waker};

use crate::sys;

/// Signal numbers are 1..=64 on Linux (`SIGRTMAX` is 64).
pub(crate) const MAX_SIGNAL: libc::c_int = 64;

const KINDS: usize = MAX_SIGNAL as usize + 1;

/// Deliveries seen by the handler, per signal number.
static DELIVERED: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];

/// Per signal number, the highest delivery count a listener has reported: where a new
/// listener starts. Only grows (`fetch_max`), so a listener that reports late cannot move it
/// back.
static REPORTED: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];

/// Each signal's eventfd, or -1 before its first listener. Never closed once created: it
/// lives as long as the process, like the handler that writes it.
static KIND_FD: [AtomicI32; KINDS] = [const { AtomicI32::new(-1) }; KINDS];

/// Per signal number, the action our handler replaced, for the handler to call after its own
/// work; null before our handler is installed. Each action is leaked: a handler may be
/// reading one when a later one replaces it (only while installing, see [`kind_fd`]), so
/// none is ever freed (at most two per signal for the life of the process).
static PREVIOUS: [AtomicPtr<libc::sigaction>; KINDS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; KINDS];

/// Taken to create a kind's eventfd and install its handler, once.
static INSTALL: Mutex<()> = Mutex::new(());

/// The tasks waiting for each signal, in every runtime.
static WAITERS: [OnceLock<Arc<Waiters>>; KINDS] = [const { OnceLock::new() }; KINDS];

/// How many times `signum` has been delivered since its handler was installed.
pub(crate) fn delivered(signum: libc::c_int) -> u64 {
    // SeqCst: pairs with the handler's increment, which precedes its eventfd write; a
    // listener that saw the write (through epoll) then sees the increment.
    DELIVERED[signum as usize].load(SeqCst)
}

/// Where a new listener of `signum` starts: the highest delivery count a listener has
/// reported. Deliveries past it are reported to the new listener at once (merged into one).
pub(crate) fn reported(signum: libc::c_int) -> u64 {
    // Relaxed: the mark is one atomic that only grows. What a new listener needs is that a
    // report made before its creation (happens-before) is seen, which coherence of this one
    // location gives at any ordering; a report racing with the creation may be seen or not,
    // and either way the delivery is reported at least once.
    REPORTED[signum as usize].load(Relaxed)
}

/// Records that a listener of `signum` reported the deliveries up to `count`.
pub(crate) fn mark_reported(signum: libc::c_int, count: u64) {
    // Relaxed: as in `reported`.
    REPORTED[signum as usize].fetch_max(count, Relaxed);
}

extern "C" fn on_signal(signum: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let Some(count) = DELIVERED.get(signum as usize) else {
        return;
    };
    // SeqCst: the increment is visible before the write below can wake anybody.
    count.fetch_add(1, SeqCst);
    let fd = KIND_FD[signum as usize].load(SeqCst);
    if fd >= 0 {
        // Async-signal-safe. Nobody reads the eventfd, so its counter only grows.
        sys::eventfd_add_from_handler(fd);
    }
    // Acquire: pairs with the Release in `keep_previous`, so the action it points to is
    // fully written. A lock-free load: allowed in a handler.
    let previous = PREVIOUS[signum as usize].load(Acquire);
    if !previous.is_null() {
        // SAFETY: a non-null slot points to a leaked (never freed) action that `sigaction`
        // returned for `signum`; we are the handler for `signum`, passing on the kernel's
        // own `info` and `ctx`.
        unsafe { sys::call_previous(&*previous, signum, info, ctx) };
    }
}

/// Keeps `action`, which our handler replaces (or is about to) for `signum`, for the handler
/// to call. Our own handler is never kept: calling it would loop.
fn keep_previous(signum: libc::c_int, action: libc::sigaction) {
    let ptr = if sys::is_foreign_handler(&action, on_signal) {
        Box::into_raw(Box::new(action))
    } else {
        std::ptr::null_mut()
    };
    // Release: the action is written before a handler that loads the pointer reads it.
    PREVIOUS[signum as usize].store(ptr, Release);
}

/// Whether two actions are the same one (same handler, same flags).
fn same_action(a: &libc::sigaction, b: &libc::sigaction) -> bool {
    a.sa_sigaction == b.sa_sigaction && a.sa_flags == b.sa_flags
}

/// The eventfd that `signum`'s handler writes, for the caller to register with its reactor.
/// The first call for a signal creates it and installs the handler; later calls open
/// nothing, so they cannot fail for want of descriptors.
pub(crate) fn kind_fd(signum: libc::c_int) -> io::Result<RawFd> {
    let slot = &KIND_FD[signum as usize];
    // SeqCst: pairs with the store below, made once the handler is installed.
    let fd = slot.load(SeqCst);
    if fd >= 0 {
        return Ok(fd);
    }
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let fd = slot.load(SeqCst);
    if fd >= 0 {
        return Ok(fd);
    }
    let eventfd = sys::EventFd::new()?;
    // The action in place is kept before ours replaces it, so that no delivery to our
    // handler misses it. Should other code change it between this read and our install (a
    // race that code has with anything installing a handler), `sigaction` hands back the
    // action it really replaced, which is kept instead.
    let before = sys::current_action(signum)?;
    keep_previous(signum, before);
    let replaced = sys::install_handler(signum, on_signal)?;
    if !same_action(&replaced, &before) {
        keep_previous(signum, replaced);
    }
    // Published after the handler is installed, so a caller that finds it can rely on the
    // handler (a delivery in between is counted; no listener existed to wake).
    let fd = eventfd.into_raw();
    slot.store(fd, SeqCst);
    Ok(fd)
}

/// The tasks waiting for `signum`.
pub(crate) fn waiters(signum: libc::c_int) -> Arc<Waiters> {
    WAITERS[signum as usize]
        .get_or_init(Default::default)
        .clone()
}

/// The wakers of the tasks waiting for one signal, one slot per listener, and itself a waker:
/// registered (once) with each runtime's readiness of the signal's eventfd, it wakes all of
/// them. A listener's slot goes when the listener does, so the list holds only live
/// listeners, however many come and go between two deliveries.
#[derive(Default)]
pub(crate) struct Waiters {
    slots: Mutex<Slots>,
}

#[derive(Default)]
struct Slots {
    wakers: Vec<Option<Waker>>,
    free: Vec<usize>,
}

impl Waiters {
    fn slots(&self) -> MutexGuard<'_, Slots> {
        // Only wakers are kept under this lock, and none is woken while it is held.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a new listener.
    pub(crate) fn add(&self) -> usize {
        let mut s = self.slots();
        match s.free.pop() {
            Some(i) => i,
            None => {
                s.wakers.push(None);
                s.wakers.len() - 1
            }
        }
    }

    /// Stores the waker of the listener in `slot` (unless it is there already).
    pub(crate) fn set(&self, slot: usize, waker: &Waker) {
        let mut s = self.slots();
        let w = &mut s.wakers[slot];
        if !w.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *w = Some(waker.clone());
        }
    }

    /// Frees the slot of a listener that is going away.
    pub(crate) fn remove(&self, slot: usize) {
        let mut s = self.slots();
        s.wakers[slot] = None;
        s.free.push(slot);
    }
}

impl Wake for Waiters {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Wakers are woken outside the lock: a waker may run arbitrary code.
        let wakers: Vec<Waker> = self.slots().wakers.iter().flatten().cloned().collect();
        for w in wakers {
            w.wake();
        }
    }
}
