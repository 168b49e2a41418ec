//! The `Accept` future of [`crate::TcpListener`] and [`crate::UnixListener`], written once.
//!
//! ```text
//! accept_future!(listener: TcpListener, stream: TcpStream, addr: SocketAddr);
//! ```
//!
//! # How it works
//!
//! Called in each listener's `accept.rs`, it defines there `Accept<'a>` and its crate-private
//! `Accept::new`. The future polls the listener's `poll_accept` and remembers that it has
//! finished, which is what makes it a `FusedFuture`.

// rustfmt re-indents the `concat!` doc attributes deeper on every run (not idempotent).
#[rustfmt::skip]
macro_rules! accept_future {
    (listener: $listener:ident, stream: $stream:ident, addr: $addr:ty $(,)?) => {
        #[doc = concat!(
            "The future returned by [`",
            stringify!($listener),
            "::accept`]. It is a `FusedFuture` (terminated once it"
        )]
        /// has produced its connection or error), so `futures::select!` takes it without `.fuse()`.
        ///
        /// ```no_run
        /// use futures_util::select;
        #[doc = concat!(
            "# async fn f(listener: spinpark_net::",
            stringify!($listener),
            ") -> std::io::Result<()> {"
        )]
        /// let mut stop = spinpark_net::time::sleep(std::time::Duration::from_secs(1));
        /// select! {
        ///     r = listener.accept() => { let (_stream, _peer) = r?; }
        ///     _ = stop => println!("nobody came"),
        /// }
        /// # Ok(()) }
        /// ```
        #[derive(Debug)]
        #[must_use = "futures do nothing unless you `.await` them"]
        pub struct Accept<'a> {
            listener: &'a $listener,
            done: bool,
        }

        impl<'a> Accept<'a> {
            pub(super) fn new(listener: &'a $listener) -> Self {
                Accept {
                    listener,
                    done: false,
                }
            }
        }

        impl std::future::Future for Accept<'_> {
            type Output = std::io::Result<($stream, $addr)>;

            fn poll(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Self::Output> {
                let r = std::task::ready!(self.listener.poll_accept(cx));
                self.done = true;
                std::task::Poll::Ready(r)
            }
        }

        impl futures_core::FusedFuture for Accept<'_> {
            fn is_terminated(&self) -> bool {
                self.done
            }
        }
    };
}
