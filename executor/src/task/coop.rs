//! Cooperative budgeting: a task whose sockets are always ready still lets its neighbours run.
//!
//! A worker grants each task poll a budget of [`BUDGET`] operations. I/O types call
//! [`poll_proceed`] before each operation; once the budget is spent it wakes the task and
//! returns `Pending`, so the task goes to the back of its worker's queue (a yield) and the
//! other tasks there run. Outside a worker (in `block_on`) the budget is unlimited.
//!
//! This module is public for I/O types outside this crate (spinpark-net's sockets, an
//! adapter's, your own): a resource that can be ready on every poll should take part in
//! budgeting, or a task looping on it starves the other tasks of its worker.
//!
//! ```
//! use std::future::poll_fn;
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! # spinpark_executor::spawn(async {
//! // Inside an I/O type's poll function:
//! poll_fn(|cx| {
//!     std::task::ready!(spinpark_executor::coop::poll_proceed(cx));
//!     // ... perform one operation ...
//!     std::task::Poll::Ready(())
//! })
//! .await;
//! # }).await.unwrap();
//! # });
//! ```

use std::cell::Cell;
use std::task::{Context, Poll};

/// Operations one task poll may perform before it yields.
pub const BUDGET: u32 = 128;

thread_local! {
    /// Remaining operations in the current task poll; `None` means unlimited.
    static REMAINING: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Gives the task about to be polled on this worker a fresh budget.
pub(crate) fn reset() {
    REMAINING.with(|r| r.set(Some(BUDGET)));
}

/// Back to an unlimited budget: this thread stopped driving a current-thread runtime.
pub(crate) fn clear() {
    REMAINING.with(|r| r.set(None));
}

/// Runs `f` (one task's poll) with a fresh budget, then gives the caller back the budget it
/// had: a `LocalSet` runs its tasks inside the poll of the future that drives it.
pub(crate) fn budgeted<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Option<u32>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(before) = self.0 {
                let _ = REMAINING.try_with(|r| r.set(before));
            }
        }
    }
    let _restore = Restore(REMAINING.try_with(|r| r.replace(Some(BUDGET))).ok());
    f()
}

/// Takes one unit of the current task's budget, or wakes the task and returns `Pending` when
/// it is spent (see the module docs for an example).
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<()> {
    REMAINING.with(|r| match r.get() {
        None => Poll::Ready(()),
        Some(0) => {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
        Some(n) => {
            r.set(Some(n - 1));
            Poll::Ready(())
        }
    })
}

/// Whether the current task has budget left for another operation (always `true` outside a
/// task, where the budget is unlimited).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// spinpark::spawn(async {
///     assert!(spinpark::task::coop::has_budget_remaining()); // a fresh poll
/// })
/// .await
/// .unwrap();
/// # });
/// ```
pub fn has_budget_remaining() -> bool {
    REMAINING.try_with(|r| r.get() != Some(0)).unwrap_or(true)
}

/// Takes one unit of the current task's budget, yielding first if it is spent: for a loop of
/// CPU work that polls nothing, so that it still lets its worker's other tasks run.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let mut sum = 0u64;
/// for i in 0..10_000u64 {
///     sum += i;
///     spinpark::task::coop::consume_budget().await;
/// }
/// assert_eq!(sum, 49_995_000);
/// # });
/// ```
pub async fn consume_budget() {
    std::future::poll_fn(poll_proceed).await
}

/// Runs `future` without a budget: its operations never yield for want of one. For futures
/// that must not be interrupted (a tight protocol exchange), at the price of possibly
/// starving the worker's other tasks.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// spinpark::spawn(spinpark::task::coop::unconstrained(async {
///     for _ in 0..1000 {
///         spinpark::task::coop::consume_budget().await; // never yields here
///     }
///     assert!(spinpark::task::coop::has_budget_remaining());
/// }))
/// .await
/// .unwrap();
/// # });
/// ```
pub fn unconstrained<F: std::future::Future>(future: F) -> Unconstrained<F> {
    Unconstrained { inner: future }
}

pin_project_lite::pin_project! {
    /// A future run without a cooperative budget; see [`unconstrained`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless polled"]
    pub struct Unconstrained<F> {
        #[pin]
        inner: F,
    }
}

impl<F: std::future::Future> std::future::Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let saved = REMAINING.with(|r| r.replace(None));
        // Restored however the poll ends (a panic unwinds through here).
        struct Restore(Option<u32>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let _ = REMAINING.try_with(|r| r.set(self.0));
            }
        }
        let _restore = Restore(saved);
        self.project().inner.poll(cx)
    }
}
