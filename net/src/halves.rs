//! The read and write halves of a stream, written once for [`crate::TcpStream`] and
//! [`crate::UnixStream`].
//!
//! ```text
//! stream_halves! {
//!     stream: TcpStream,
//!     addr: SocketAddr,
//!     setup: [r#"# let l = ..."#, r#"# let stream = ..."#],
//!     other: r#"# let other = ..."#,
//!     owned_read_half: "spinpark::net::OwnedReadHalf",
//! }
//! ```
//!
//! # How it works
//!
//! `stream_halves!` is called in each stream's `split.rs` and defines there `ReadHalf`,
//! `WriteHalf`, `OwnedReadHalf`, `OwnedWriteHalf`, `ReuniteError` and the crate-private
//! `split`/`into_split` the stream's methods call. The stream type needs `peer_addr`,
//! `local_addr` and `shutdown` returning `addr`, and what `impl_async_read!` and
//! `impl_async_write!` (tcp/mod.rs) need. The doc examples are the same text for both streams
//! but for the hidden lines that make `stream` (`setup`) and a second stream `other`, and the
//! path of `OwnedReadHalf`.

macro_rules! stream_halves {
    (
        stream: $stream:ident,
        addr: $addr:ty,
        setup: [$($setup:literal),* $(,)?],
        other: $other:literal,
        owned_read_half: $owned_read_half:literal $(,)?
    ) => {
        #[doc = concat!("The read half of [`", stringify!($stream), "::split`].")]
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// use futures_util::{AsyncReadExt, AsyncWriteExt};
        /// let mut stream = stream;
        #[doc = concat!(
            "let (mut read, mut write) = spinpark::net::",
            stringify!($stream),
            "::split(&mut stream);"
        )]
        /// let _ = (&mut read, &mut write); // both usable in one task, e.g. in select!
        /// # });
        /// ```
        #[derive(Debug)]
        pub struct ReadHalf<'a>(pub(super) &'a $stream);

        #[doc = concat!("The write half of [`", stringify!($stream), "::split`].")]
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// use futures_util::AsyncWriteExt;
        /// let mut stream = stream;
        #[doc = concat!(
            "let (_read, mut write) = spinpark::net::",
            stringify!($stream),
            "::split(&mut stream);"
        )]
        /// write.write_all(b"hi").await.unwrap();
        /// # });
        /// ```
        #[derive(Debug)]
        pub struct WriteHalf<'a>(pub(super) &'a $stream);

        pub(crate) fn split(stream: &mut $stream) -> (ReadHalf<'_>, WriteHalf<'_>) {
            (ReadHalf(stream), WriteHalf(stream))
        }

        #[doc = concat!("The read half of [`", stringify!($stream), "::into_split`].")]
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// let (read, write) = stream.into_split();
        #[doc = concat!(
            "let reader = spinpark::spawn(async move { let _r: ",
            $owned_read_half,
            " = read; });"
        )]
        /// reader.await.unwrap();
        /// # drop(write);
        /// # });
        /// ```
        #[derive(Debug)]
        pub struct OwnedReadHalf(pub(super) std::sync::Arc<$stream>);

        #[doc = concat!(
            "The write half of [`",
            stringify!($stream),
            "::into_split`]. Dropping it (or closing it) shuts down the"
        )]
        /// write side of the connection, so the peer reads end of stream; the read half keeps working.
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// use futures_util::AsyncWriteExt;
        /// let (_read, mut write) = stream.into_split();
        /// write.write_all(b"hi").await.unwrap();
        /// drop(write); // the peer now reads end of stream
        /// # });
        /// ```
        #[derive(Debug)]
        pub struct OwnedWriteHalf {
            pub(super) stream: std::sync::Arc<$stream>,
            shutdown_on_drop: bool,
        }

        pub(crate) fn into_split(stream: $stream) -> (OwnedReadHalf, OwnedWriteHalf) {
            let s = std::sync::Arc::new(stream);
            (
                OwnedReadHalf(s.clone()),
                OwnedWriteHalf {
                    stream: s,
                    shutdown_on_drop: true,
                },
            )
        }

        /// The halves given to [`OwnedReadHalf::reunite`] came from different streams.
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// let (a, _) = stream.into_split();
        #[doc = $other]
        /// let (_, b) = other.into_split();
        /// assert!(a.reunite(b).is_err()); // halves of different streams
        /// # });
        /// ```
        #[derive(Debug)]
        pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

        impl std::fmt::Display for ReuniteError {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("tried to reunite halves that are not from the same stream")
            }
        }

        impl std::error::Error for ReuniteError {}

        impl OwnedReadHalf {
            /// Puts the stream back together with its write half.
            ///
            /// ```
            /// # spinpark::Runtime::new().unwrap().block_on(async {
            $(#[doc = $setup])*
            /// let (read, write) = stream.into_split();
            /// let stream = read.reunite(write).unwrap();
            /// # drop(stream);
            /// # });
            /// ```
            pub fn reunite(self, mut write: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
                if !std::sync::Arc::ptr_eq(&self.0, &write.stream) {
                    return Err(ReuniteError(self, write));
                }
                write.shutdown_on_drop = false;
                let s = write.stream.clone();
                drop(write);
                drop(self);
                Ok(std::sync::Arc::try_unwrap(s).expect("both halves were just dropped"))
            }

            /// The remote address.
            ///
            /// ```
            /// # spinpark::Runtime::new().unwrap().block_on(async {
            $(#[doc = $setup])*
            /// let (read, _write) = stream.into_split();
            /// assert!(read.peer_addr().is_ok());
            /// # });
            /// ```
            pub fn peer_addr(&self) -> std::io::Result<$addr> {
                self.0.peer_addr()
            }

            /// The local address.
            ///
            /// ```
            /// # spinpark::Runtime::new().unwrap().block_on(async {
            $(#[doc = $setup])*
            /// let (read, _write) = stream.into_split();
            /// assert!(read.local_addr().is_ok());
            /// # });
            /// ```
            pub fn local_addr(&self) -> std::io::Result<$addr> {
                self.0.local_addr()
            }
        }

        impl OwnedWriteHalf {
            /// The remote address.
            ///
            /// ```
            /// # spinpark::Runtime::new().unwrap().block_on(async {
            $(#[doc = $setup])*
            /// let (_read, write) = stream.into_split();
            /// assert!(write.peer_addr().is_ok());
            /// # });
            /// ```
            pub fn peer_addr(&self) -> std::io::Result<$addr> {
                self.stream.peer_addr()
            }

            /// The local address.
            ///
            /// ```
            /// # spinpark::Runtime::new().unwrap().block_on(async {
            $(#[doc = $setup])*
            /// let (_read, write) = stream.into_split();
            /// assert!(write.local_addr().is_ok());
            /// # });
            /// ```
            pub fn local_addr(&self) -> std::io::Result<$addr> {
                self.stream.local_addr()
            }
        }

        impl Drop for OwnedWriteHalf {
            fn drop(&mut self) {
                if self.shutdown_on_drop {
                    // The peer may already be gone; there is nobody to report that to.
                    let _ = self.stream.shutdown(std::net::Shutdown::Write);
                }
            }
        }

        impl_async_read!(ReadHalf<'_>, s => s.0);
        impl_async_write!(WriteHalf<'_>, s => s.0);
        impl_async_read!(OwnedReadHalf, s => s.0);
        impl_async_write!(OwnedWriteHalf, s => s.stream);
    };
}
