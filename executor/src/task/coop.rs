//! Cooperative budgeting: a task whose sockets are always ready still lets its neighbours run.
//!
//! A worker grants each task poll a budget of [`BUDGET`] operations. I/O types call
//! [`poll_proceed`] before each operation and keep the unit it took only when the operation
//! completes ([`RestoreOnPending::made_progress`]); once the budget is spent it wakes the
//! task and returns `Pending`, so the task goes to the back of its worker's queue (a yield) and the
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
//!     let coop = std::task::ready!(spinpark_executor::coop::poll_proceed(cx));
//!     // ... perform one operation; it completed, so the unit stays spent ...
//!     coop.made_progress();
//!     std::task::Poll::Ready(())
//! })
//! .await;
//! # }).await.unwrap();
//! # });
//! ```

use std::cell::Cell;
use std::marker::PhantomData;
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
    with_budget(Some(BUDGET), f)
}

/// Runs `f` with the budget set to `budget` (`None`: unlimited), then gives the caller back
/// the budget it had, however `f` ends (a panic unwinds through here).
fn with_budget<R>(budget: Option<u32>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Option<u32>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(before) = self.0 {
                let _ = REMAINING.try_with(|r| r.set(before));
            }
        }
    }
    let _restore = Restore(REMAINING.try_with(|r| r.replace(budget)).ok());
    f()
}

/// Takes one unit of the current task's budget, or wakes the task and returns `Pending` when
/// it is spent (see the module docs for an example).
///
/// The unit is taken back when the returned [`RestoreOnPending`] is dropped, unless
/// [`RestoreOnPending::made_progress`] was called first: an operation that ends up `Pending`
/// (nothing to read yet) costs nothing, as in tokio, so a task waiting on many resources is
/// not made to yield by the ones that had nothing for it.
// Inline: called on every operation of every budgeted resource, from other crates.
#[inline]
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    REMAINING.with(|r| match r.get() {
        None => Poll::Ready(RestoreOnPending::new(None)),
        Some(0) => {
            // A yield: the task runs again after its worker's next reactor turn.
            super::yield_now::defer(cx.waker());
            Poll::Pending
        }
        Some(n) => {
            r.set(Some(n - 1));
            Poll::Ready(RestoreOnPending::new(Some(n)))
        }
    })
}

/// One unit of budget taken by [`poll_proceed`]; given back on drop unless the operation
/// [made progress](RestoreOnPending::made_progress).
///
/// ```
/// use std::task::{ready, Poll};
/// use spinpark::task::coop;
///
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// spinpark::spawn(async {
///     std::future::poll_fn(|cx| {
///         let coop = ready!(coop::poll_proceed(cx));
///         // ... the operation completed: keep the unit spent.
///         coop.made_progress();
///         Poll::Ready(())
///     })
///     .await;
/// })
/// .await
/// .unwrap();
/// # });
/// ```
#[derive(Debug)]
#[must_use = "dropping it at once gives the budget back: call made_progress() when the operation completed"]
pub struct RestoreOnPending {
    /// The budget to put back on drop; `None` once progress was made (or when there was no
    /// limit to begin with).
    before: Cell<Option<u32>>,
    /// The budget belongs to this thread's current task poll: not `Send`.
    _not_send: PhantomData<*mut ()>,
}

impl RestoreOnPending {
    #[inline]
    fn new(before: Option<u32>) -> Self {
        RestoreOnPending {
            before: Cell::new(before),
            _not_send: PhantomData,
        }
    }

    /// The operation completed: the unit stays spent.
    #[inline]
    pub fn made_progress(&self) {
        self.before.set(None);
    }
}

impl Drop for RestoreOnPending {
    #[inline]
    fn drop(&mut self) {
        if let Some(before) = self.before.get() {
            let _ = REMAINING.try_with(|r| r.set(Some(before)));
        }
    }
}

/// Makes `future` take part in budgeting: each poll first takes a unit of the task's budget
/// (yielding if it is spent), and keeps it only if the future completes. For a future built
/// on something that does not consult spinpark's budget (another crate's channel).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let v = spinpark::task::coop::cooperative(async { 7 }).await;
/// assert_eq!(v, 7);
/// # });
/// ```
pub fn cooperative<F: std::future::Future>(future: F) -> Coop<F> {
    Coop { inner: future }
}

pin_project_lite::pin_project! {
    /// A future that consumes the task's budget; see [`cooperative`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless polled"]
    pub struct Coop<F> {
        #[pin]
        inner: F,
    }
}

impl<F: std::future::Future> std::future::Future for Coop<F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let coop = std::task::ready!(poll_proceed(cx));
        let out = self.project().inner.poll(cx);
        if out.is_ready() {
            coop.made_progress();
        }
        out
    }
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
    std::future::poll_fn(|cx| poll_proceed(cx).map(|coop| coop.made_progress())).await
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
        with_unconstrained(|| self.project().inner.poll(cx))
    }
}

/// Runs `f` with no budget (its operations never yield for want of one), then gives the
/// caller back the budget it had: for
/// [`Unconstrained`], a `JoinSet` polling the handles it already took a unit for, and
/// `block_in_place`'s blocking code, which may `block_on` budgeted futures (as in tokio,
/// where the budget is off there).
pub(crate) fn with_unconstrained<R>(f: impl FnOnce() -> R) -> R {
    with_budget(None, f)
}
