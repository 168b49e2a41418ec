//! [`yield_now`]: let the other tasks run.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Returns `Pending` once, after scheduling the task again at the back of its worker's queue,
/// so every task already queued there runs before this one continues.
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
        // Waking ourselves while running is how the schedule function learns this task
        // yielded: it goes to the back of the queue, not into the LIFO slot.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
