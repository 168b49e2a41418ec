//! The methods [`crate::TcpStream`] and [`crate::UnixStream`] share word for word, written
//! once: `shutdown`, `take_error`, `readable`, `writable`, `try_read`, `try_write` (and the
//! crate-private `poll_read_priv` behind `AsyncRead`).
//!
//! ```text
//! impl TcpStream {
//!     // ... the stream's own methods before these ...
//!     stream_io_methods! {
//!         setup: [r#"# let l = ..."#, r#"# let stream = ..."#],
//!     }
//!     // ... and after.
//! }
//! ```
//!
//! # How it works
//!
//! Called inside the stream's `impl` block, where the methods should appear in its docs. The
//! stream needs a field `io: IoSource<T>` where `&T` is `Read + Write` and has `shutdown` and
//! `take_error` like std's sockets. The doc examples are the same for both streams but for
//! the hidden lines that make `stream` (`setup`).

macro_rules! stream_io_methods {
    (setup: [$($setup:literal),* $(,)?] $(,)?) => {
        /// Shuts down the read side, the write side, or both.
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// stream.shutdown(std::net::Shutdown::Write).unwrap(); // the peer reads end of stream
        /// # });
        /// ```
        pub fn shutdown(&self, how: std::net::Shutdown) -> std::io::Result<()> {
            crate::sys::shutdown(self.io.raw_fd(), how)
        }

        /// Takes the socket's pending error (`SO_ERROR`).
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// assert!(stream.take_error().unwrap().is_none());
        /// # });
        /// ```
        pub fn take_error(&self) -> std::io::Result<Option<std::io::Error>> {
            crate::sys::take_error(self.io.raw_fd())
        }

        /// Waits until the stream may be readable (a read may still return `WouldBlock`).
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// stream.writable().await.unwrap();
        /// let _ = stream.try_read(&mut [0; 16]); // WouldBlock until the peer writes
        /// # });
        /// ```
        pub async fn readable(&self) -> std::io::Result<()> {
            let dir = crate::readiness::Direction::Read;
            std::future::poll_fn(|cx| self.io.poll_ready(dir, cx)).await
        }

        /// Waits until the stream may be writable (a write may still return `WouldBlock`).
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// stream.writable().await.unwrap();
        /// assert_eq!(stream.try_write(b"hi").unwrap(), 2);
        /// # });
        /// ```
        pub async fn writable(&self) -> std::io::Result<()> {
            let dir = crate::readiness::Direction::Write;
            std::future::poll_fn(|cx| self.io.poll_ready(dir, cx)).await
        }

        /// Reads what is available now, without waiting: `WouldBlock` if nothing is.
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// match stream.try_read(&mut [0; 16]) {
        ///     Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {} // nothing yet
        ///     r => { r.unwrap(); }
        /// }
        /// # });
        /// ```
        pub fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            let dir = crate::readiness::Direction::Read;
            self.io.try_io(dir, |s| std::io::Read::read(&mut &*s, buf))
        }

        /// Writes what fits now, without waiting: `WouldBlock` if nothing does.
        ///
        /// ```
        /// # spinpark::Runtime::new().unwrap().block_on(async {
        $(#[doc = $setup])*
        /// assert_eq!(stream.try_write(b"ping").unwrap(), 4);
        /// # });
        /// ```
        pub fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
            let dir = crate::readiness::Direction::Write;
            self.io.try_io(dir, |s| std::io::Write::write(&mut &*s, buf))
        }

        pub(crate) fn poll_read_priv(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut [u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            let len = buf.len();
            let dir = crate::readiness::Direction::Read;
            self.io
                .poll_transfer(dir, cx, len, |s| std::io::Read::read(&mut &*s, buf))
        }

        pub(crate) fn poll_write_vectored_priv(
            &self,
            cx: &mut std::task::Context<'_>,
            bufs: &[std::io::IoSlice<'_>],
        ) -> std::task::Poll<std::io::Result<usize>> {
            // sendmsg takes at most IOV_MAX slices. Offer only those, and judge a short count
            // against their length: bytes left in the slices past the limit are not a sign
            // that the socket buffer is full, and clearing WRITABLE for them would wait for an
            // edge that never comes.
            let bufs = &bufs[..bufs.len().min(crate::sys::IOV_MAX)];
            let len = bufs.iter().map(|b| b.len()).sum();
            let dir = crate::readiness::Direction::Write;
            self.io.poll_transfer(dir, cx, len, |s| {
                crate::sys::send_vectored(std::os::fd::AsRawFd::as_raw_fd(s), bufs)
            })
        }
    };
}
