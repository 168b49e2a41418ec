//! The futex behind a trait, so the idle protocol can be model-checked.
//!
//! The idle protocol ([`crate::idle`]) needs exactly two things from the kernel: "sleep while
//! this word still holds this value" and "wake one (or all) of the threads sleeping on it".
//! [`Futex`] names those two operations. [`SysFutex`] is Linux's `futex(2)` on a private
//! mapping; under `--cfg loom`, `LoomFutex` models the same contract with a mutex and a
//! condition variable, which `loom` knows how to explore.

use super::sync::AtomicU32;

/// Wait and wake on a 32-bit word, with the semantics of Linux's `FUTEX_WAIT` / `FUTEX_WAKE`.
pub(crate) trait Futex: Send + Sync {
    /// Blocks while `word` holds `expected`. Returns at once when it does not; may return
    /// spuriously, so the caller always re-reads the word.
    fn wait(&self, word: &AtomicU32, expected: u32);
    /// Wakes up to `n` threads blocked in [`Futex::wait`] on `word`.
    fn wake(&self, word: &AtomicU32, n: u32);
}

/// Linux's futex, private to this process.
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct SysFutex;

/// Elsewhere the crate does not build (see the `compile_error!` in `lib.rs`); this keeps that
/// the only error.
#[cfg(all(not(loom), not(target_os = "linux")))]
impl Futex for SysFutex {
    fn wait(&self, _: &AtomicU32, _: u32) {
        unreachable!("spinpark builds on Linux only")
    }

    fn wake(&self, _: &AtomicU32, _: u32) {
        unreachable!("spinpark builds on Linux only")
    }
}

#[cfg(all(not(loom), target_os = "linux"))]
impl Futex for SysFutex {
    fn wait(&self, word: &AtomicU32, expected: u32) {
        // SAFETY: `word` is a live `AtomicU32` for the duration of the call (we hold a
        // reference), it is 4-byte aligned, and FUTEX_WAIT_PRIVATE only reads it. A null
        // timeout means "no timeout". Every error (EAGAIN: the value changed; EINTR: a
        // signal) is a spurious return, which the caller handles by re-reading the word.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }

    fn wake(&self, word: &AtomicU32, n: u32) {
        let n = n.min(i32::MAX as u32) as libc::c_int;
        // SAFETY: as in `wait`: a valid, aligned word; FUTEX_WAKE_PRIVATE does not access
        // memory beyond looking up waiters keyed by its address.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                n,
            );
        }
    }
}

/// A model of a futex for `loom`: a waiter sleeps on a condition variable after checking the
/// word under a mutex, and a waker takes the same mutex before notifying, which gives the
/// "check and sleep atomically with respect to wake" guarantee the kernel gives.
#[cfg(loom)]
#[derive(Debug, Default)]
pub(crate) struct LoomFutex {
    lock: loom::sync::Mutex<()>,
    cond: loom::sync::Condvar,
}

#[cfg(loom)]
impl Futex for LoomFutex {
    fn wait(&self, word: &AtomicU32, expected: u32) {
        let guard = self.lock.lock().unwrap();
        if word.load(std::sync::atomic::Ordering::SeqCst) == expected {
            drop(self.cond.wait(guard).unwrap());
        }
    }

    fn wake(&self, _word: &AtomicU32, n: u32) {
        let _guard = self.lock.lock().unwrap();
        if n == 1 {
            self.cond.notify_one();
        } else {
            self.cond.notify_all();
        }
    }
}
