//! [`yield_now`]: let the other tasks run.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Returns `Pending` once; the task runs again after every task already queued on its worker
/// and after the worker's next reactor poll (so timers and sockets that came due are served
/// first), as tokio's.
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// spinpark_executor::yield_now().await;
/// # });
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future returned by [`yield_now`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let y: spinpark::YieldNow = spinpark::yield_now();
/// y.await;
/// # });
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` them"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        defer(cx.waker());
        Poll::Pending
    }
}

thread_local! {
    /// While a worker runs a task on this thread: the wakers of the tasks that yielded during
    /// that run, for the worker to wake after its next reactor turn. `None` elsewhere.
    static DEFERRED: RefCell<Option<Vec<Waker>>> = const { RefCell::new(None) };
}

/// Wakes a task that yields once its worker has given the reactor a turn (the worker's
/// deferred list), as tokio does; off a worker, at once. A task woken at once while it runs
/// goes to the back of its worker's queue (`schedule.rs`).
pub(crate) fn defer(waker: &Waker) {
    let kept = DEFERRED
        .try_with(|d| match d.borrow_mut().as_mut() {
            Some(deferred) => {
                // A task that yields twice in one poll (a budget spent inside a yield loop)
                // is woken once.
                if !deferred.last().is_some_and(|last| last.will_wake(waker)) {
                    deferred.push(waker.clone());
                }
                true
            }
            None => false,
        })
        .unwrap_or(false);
    if !kept {
        waker.wake_by_ref();
    }
}

/// A worker is about to run a task on this thread: yields are kept in `deferred` (the
/// worker's list, handed over so that its room is reused) until [`end_deferring`].
pub(crate) fn begin_deferring(deferred: Vec<Waker>) {
    DEFERRED.with(|d| *d.borrow_mut() = Some(deferred));
}

/// Runs `f`, blocking code inside a task (`block_in_place`), with the tasks that yielded so
/// far woken first (they must not wait for the end of a poll that may take long, as in
/// tokio) and yields inside it woken at once: a `block_on` in there waits for its own
/// `yield_now`, which nobody would wake from the list meanwhile.
pub(crate) fn without_deferring<R>(f: impl FnOnce() -> R) -> R {
    let Some(mut deferred) = DEFERRED.try_with(|d| d.borrow_mut().take()).ok().flatten() else {
        return f();
    };
    for waker in deferred.drain(..) {
        waker.wake();
    }
    /// Deferral back on after `f`, however it ends, with the list's room kept.
    struct Back(Option<Vec<Waker>>);
    impl Drop for Back {
        fn drop(&mut self) {
            let deferred = self.0.take();
            let _ = DEFERRED.try_with(|d| *d.borrow_mut() = deferred);
        }
    }
    let _back = Back(Some(deferred));
    f()
}

/// The task has run: the list back, with the wakers of the tasks that yielded meanwhile.
pub(crate) fn end_deferring() -> Vec<Waker> {
    DEFERRED
        .try_with(|d| d.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_default()
}
