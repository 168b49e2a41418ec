//! [`Accept`]: the future of [`UnixListener::accept`].

use std::future::Future;
use std::io;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::{SocketAddr, UnixListener, UnixStream};

pin_project_lite::pin_project! {
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
        // `!Unpin`, as tokio's (an `async fn`'s future there): code written against this
        // future pins it as it would tokio's, and it keeps room to hold pinned state.
        #[pin]
        _pinned: PhantomPinned,
    }
}

impl<'a> Accept<'a> {
    pub(super) fn new(listener: &'a UnixListener) -> Self {
        Accept {
            listener,
            done: false,
            _pinned: PhantomPinned,
        }
    }
}

impl Future for Accept<'_> {
    type Output = io::Result<(UnixStream, SocketAddr)>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let r = ready!(this.listener.poll_accept(cx));
        *this.done = true;
        Poll::Ready(r)
    }
}

impl futures_core::FusedFuture for Accept<'_> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}
