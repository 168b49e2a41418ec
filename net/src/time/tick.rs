//! [`Tick`]: the future of [`Interval::tick`](super::Interval::tick).

use super::Instant;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Interval;

pin_project_lite::pin_project! {
    /// The future returned by [`Interval::tick`]: the instant the tick was scheduled for. It is a
    /// `FusedFuture` (terminated once it has produced its tick), so `futures::select!` takes it
    /// without `.fuse()`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures_util::future::FusedFuture;
    /// # let rt = spinpark_executor::Runtime::new().unwrap();
    /// # rt.block_on(async {
    /// let mut every = spinpark_net::time::interval(Duration::from_millis(1));
    /// let mut tick = std::pin::pin!(every.tick());
    /// tick.as_mut().await;
    /// assert!(tick.is_terminated());
    /// # });
    /// ```
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` them"]
    pub struct Tick<'a> {
        interval: &'a mut Interval,
        done: bool,
        // `!Unpin`, as tokio's (an `async fn`'s future there): code written against this
        // future pins it as it would tokio's, and it keeps room to hold pinned state.
        #[pin]
        _pinned: PhantomPinned,
    }
}

impl<'a> Tick<'a> {
    pub(super) fn new(interval: &'a mut Interval) -> Self {
        Tick {
            interval,
            done: false,
            _pinned: PhantomPinned,
        }
    }
}

impl Future for Tick<'_> {
    type Output = Instant;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        let this = self.project();
        assert!(!*this.done, "Tick polled after it completed");
        let t = std::task::ready!(this.interval.poll_tick(cx));
        *this.done = true;
        Poll::Ready(t)
    }
}

impl futures_core::FusedFuture for Tick<'_> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}
