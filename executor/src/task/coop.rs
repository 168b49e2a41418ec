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
