//! The two ways a wrapped wait takes part in spinpark's cooperative budget, and the check the
//! `blocking_*` methods make before they block.
//!
//! tokio's primitives consult tokio's budget at one of two places, and each wrapper here does
//! the same with spinpark's:
//!
//! * before the attempt (channel receives, `oneshot`, `broadcast::Receiver::recv`, `watch`):
//!   [`coop::poll_proceed`] first, the unit kept only if the wait completes. The wrappers call
//!   it in their poll functions, or wrap the whole future with [`coop::cooperative`];
//! * after it succeeded (the semaphore behind `Semaphore`, `Mutex`, `RwLock` and a bounded
//!   sender's `send`/`reserve*`): [`AfterAcquire`] polls tokio's future, and only once it has
//!   the permits takes a unit, keeping what it got (a guard, a permit) across the yield when
//!   the budget is spent. A wait that ends in an error (a closed semaphore) costs nothing.
//!
//! Nothing is allocated: the wrappers hold tokio's future and at most its output.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use spinpark_executor::coop;

/// The panic tokio's `blocking_*` methods raise inside a runtime, word for word, so that code
/// and tests matching on it keep working.
const BLOCKING_PANIC: &str = "Cannot block the current thread from within a runtime. This \
    happens because a function attempted to block the current thread while the thread is \
    being used to drive asynchronous tasks.";

/// Panics (at the caller of the `blocking_*` method) when this thread drives tasks: one of a
/// runtime's workers, or a thread inside `block_on`. A blocking-pool thread, a
/// `block_in_place` closure and a plain thread may block.
#[track_caller]
pub(super) fn forbid_blocking() {
    if spinpark_executor::blocking_forbidden() {
        panic!("{BLOCKING_PANIC}");
    }
}

/// An output that says whether the wait got what it waited for: only then is the budget spent
/// (tokio's semaphore returns its error before it looks at the budget).
pub(super) trait Acquired {
    fn acquired(&self) -> bool;
}

impl<T, E> Acquired for Result<T, E> {
    fn acquired(&self) -> bool {
        self.is_ok()
    }
}

/// The lock guards: a lock wait only ends with the lock.
macro_rules! always_acquired {
    ($($guard:ty),* $(,)?) => {$(
        impl<T: ?Sized> Acquired for $guard {
            fn acquired(&self) -> bool {
                true
            }
        }
    )*};
}
always_acquired!(
    tokio::sync::MutexGuard<'_, T>,
    tokio::sync::OwnedMutexGuard<T>,
    tokio::sync::RwLockReadGuard<'_, T>,
    tokio::sync::OwnedRwLockReadGuard<T>,
    tokio::sync::RwLockWriteGuard<'_, T>,
    tokio::sync::OwnedRwLockWriteGuard<T>,
);

pin_project_lite::pin_project! {
    /// Polls tokio's acquiring future; once it has acquired, takes a unit of the task's budget,
    /// or, the budget being spent, keeps the output and yields (the task is woken at once).
    pub(super) struct AfterAcquire<F: Future> {
        #[pin]
        inner: F,
        out: Exclusive<Option<F::Output>>,
    }
}

impl<F: Future> AfterAcquire<F> {
    pub(super) fn new(inner: F) -> Self {
        AfterAcquire {
            inner,
            out: Exclusive(None),
        }
    }
}

/// A value reachable only through `&mut` or by value, so that keeping a guard that is not
/// `Sync` (a `MutexGuard` of a `!Sync` value) does not make the future `!Sync` where tokio's is
/// `Sync`.
struct Exclusive<T>(T);

// SAFETY: `Exclusive` has no method taking `&self` and its field is private to this module,
// where it is only reached through `&mut` (the pinned future's projection): a shared
// reference gives no access to the `T`, so sharing one between threads cannot race on it.
unsafe impl<T> Sync for Exclusive<T> {}

impl<F> Future for AfterAcquire<F>
where
    F: Future,
    F::Output: Acquired,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let out = match this.out.0.take() {
            Some(out) => out,
            None => ready!(this.inner.poll(cx)),
        };
        if !out.acquired() {
            return Poll::Ready(out);
        }
        match coop::poll_proceed(cx) {
            Poll::Ready(unit) => {
                unit.made_progress();
                Poll::Ready(out)
            }
            Poll::Pending => {
                this.out.0 = Some(out);
                Poll::Pending
            }
        }
    }
}

/// Runs one poll step of a receive-like operation under the budget: a unit is taken first
/// (yielding if none is left) and kept only if the step completed.
pub(super) fn poll_budgeted<R>(
    cx: &mut Context<'_>,
    step: impl FnOnce(&mut Context<'_>) -> Poll<R>,
) -> Poll<R> {
    let unit = ready!(coop::poll_proceed(cx));
    let out = step(cx);
    if out.is_ready() {
        unit.made_progress();
    }
    out
}
