//! [`Tick`]: the future of [`Interval::tick`](super::Interval::tick).

use super::Instant;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Interval;

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
/// let mut tick = every.tick();
/// (&mut tick).await;
/// assert!(tick.is_terminated());
/// # });
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` them"]
pub struct Tick<'a> {
    interval: &'a mut Interval,
    done: bool,
}

impl<'a> Tick<'a> {
    pub(super) fn new(interval: &'a mut Interval) -> Self {
        Tick {
            interval,
            done: false,
        }
    }
}

impl Future for Tick<'_> {
    type Output = Instant;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        assert!(!self.done, "Tick polled after it completed");
        let t = std::task::ready!(self.interval.poll_tick(cx));
        self.done = true;
        Poll::Ready(t)
    }
}

impl futures_core::FusedFuture for Tick<'_> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}
