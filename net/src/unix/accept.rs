//! [`Accept`]: the future of [`UnixListener::accept`].

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::{SocketAddr, UnixListener, UnixStream};

/// The future returned by [`UnixListener::accept`]. It is a `FusedFuture` (terminated once it
/// has produced its connection or error), so `futures::select!` takes it without `.fuse()`.
///
/// ```no_run
/// use futures_util::select;
/// # async fn f(listener: spinpark_net::UnixListener) -> std::io::Result<()> {
/// let mut stop = std::pin::pin!(spinpark_net::time::sleep(std::time::Duration::from_secs(1)));
/// select! {
///     r = listener.accept() => { let (_stream, _peer) = r?; }
///     _ = stop => println!("nobody came"),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` them"]
pub struct Accept<'a> {
    listener: &'a UnixListener,
    done: bool,
}

impl<'a> Accept<'a> {
    pub(super) fn new(listener: &'a UnixListener) -> Self {
        Accept {
            listener,
            done: false,
        }
    }
}

impl Future for Accept<'_> {
    type Output = io::Result<(UnixStream, SocketAddr)>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let r = ready!(self.listener.poll_accept(cx));
        self.done = true;
        Poll::Ready(r)
    }
}

impl futures_core::FusedFuture for Accept<'_> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}
