//! The readiness and `try_*` methods tokio's `TcpStream` and `UnixStream` share (`ready`,
//! `poll_read_ready`, `peek`, `try_read_vectored`, `try_io`, ...), written once as a macro
//! that each type invokes with a doc-example line making a connected pair `(a, b)`.

/// The shared methods, for a type with a `core: StreamCore<_>` field. `$pair` is Rust code
/// (inside an `async` block) that binds two connected streams `a` and `b`.
macro_rules! impl_stream_api {
    ($t:ty, $pair:literal) => {
        impl $t {
            #[doc = "Waits until the stream is ready for any of `interest` and says how."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = "use spinpark::io::Interest;"]
            #[doc = $pair]
            #[doc = "let ready = a.ready(Interest::WRITABLE).await.unwrap();"]
            #[doc = "assert!(ready.is_writable());"]
            #[doc = "# drop(b);"]
            #[doc = "# });"]
            #[doc = "```"]
            pub async fn ready(
                &self,
                interest: $crate::io::Interest,
            ) -> std::io::Result<$crate::io::Ready> {
                self.core.io().ready(interest).await
            }

            #[doc = "Polls for read readiness; only the latest caller's waker is kept."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = $pair]
            #[doc = "b.try_write(b\"x\").unwrap();"]
            #[doc = "std::future::poll_fn(|cx| a.poll_read_ready(cx)).await.unwrap();"]
            #[doc = "# });"]
            #[doc = "```"]
            pub fn poll_read_ready(
                &self,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.core
                    .io()
                    .poll_ready_latest($crate::readiness::Direction::Read, cx)
            }

            #[doc = "Polls for write readiness; only the latest caller's waker is kept."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = $pair]
            #[doc = "std::future::poll_fn(|cx| a.poll_write_ready(cx)).await.unwrap();"]
            #[doc = "# drop(b);"]
            #[doc = "# });"]
            #[doc = "```"]
            pub fn poll_write_ready(
                &self,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.core
                    .io()
                    .poll_ready_latest($crate::readiness::Direction::Write, cx)
            }

            #[doc = "Reads without taking the bytes out of the queue, waiting until there"]
            #[doc = "are some: the next read returns them again."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = $pair]
            #[doc = "b.try_write(b\"hi\").unwrap();"]
            #[doc = "let mut buf = [0; 8];"]
            #[doc = "let n = a.peek(&mut buf).await.unwrap();"]
            #[doc = "assert_eq!(&buf[..n], b\"hi\");"]
            #[doc = "a.readable().await.unwrap();"]
            #[doc = "assert_eq!(a.try_read(&mut buf).unwrap(), n); // still there"]
            #[doc = "# });"]
            #[doc = "```"]
            pub async fn peek(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                std::future::poll_fn(|cx| self.core.poll_peek(cx, buf)).await
            }

            #[doc = "Reads what is available now into several buffers: `WouldBlock` if"]
            #[doc = "nothing is."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = $pair]
            #[doc = "b.try_write(b\"abcd\").unwrap();"]
            #[doc = "a.readable().await.unwrap();"]
            #[doc = "let (mut x, mut y) = ([0; 2], [0; 2]);"]
            #[doc = "let mut bufs = [std::io::IoSliceMut::new(&mut x), std::io::IoSliceMut::new(&mut y)];"]
            #[doc = "assert_eq!(a.try_read_vectored(&mut bufs).unwrap(), 4);"]
            #[doc = "# });"]
            #[doc = "```"]
            pub fn try_read_vectored(
                &self,
                bufs: &mut [std::io::IoSliceMut<'_>],
            ) -> std::io::Result<usize> {
                self.core.try_read_vectored(bufs)
            }

            #[doc = "Writes what fits now from several buffers: `WouldBlock` if nothing does."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = $pair]
            #[doc = "use std::io::IoSlice;"]
            #[doc = "a.writable().await.unwrap();"]
            #[doc = "assert_eq!(a.try_write_vectored(&[IoSlice::new(b\"a\"), IoSlice::new(b\"b\")]).unwrap(), 2);"]
            #[doc = "# drop(b);"]
            #[doc = "# });"]
            #[doc = "```"]
            pub fn try_write_vectored(
                &self,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::io::Result<usize> {
                self.core.try_write_vectored(bufs)
            }

            #[doc = "Reads what is available now into a `BufMut`'s spare capacity, advancing"]
            #[doc = "it: `WouldBlock` if nothing is."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = $pair]
            #[doc = "b.try_write(b\"hi\").unwrap();"]
            #[doc = "a.readable().await.unwrap();"]
            #[doc = "let mut buf = Vec::with_capacity(8);"]
            #[doc = "assert_eq!(a.try_read_buf(&mut buf).unwrap(), 2);"]
            #[doc = "# });"]
            #[doc = "```"]
            pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
                $crate::buf::read_into(buf, |dst| self.core.try_read_uninit(dst))
            }

            #[doc = "Runs `f` (the caller's own syscall on the fd) if the stream looks ready"]
            #[doc = "for `interest`, clearing that readiness if it returns `WouldBlock`."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = "use spinpark::io::Interest;"]
            #[doc = $pair]
            #[doc = "a.writable().await.unwrap();"]
            #[doc = "assert!(a.try_io(Interest::WRITABLE, || Ok(())).is_ok());"]
            #[doc = "# drop(b);"]
            #[doc = "# });"]
            #[doc = "```"]
            pub fn try_io<R>(
                &self,
                interest: $crate::io::Interest,
                f: impl FnOnce() -> std::io::Result<R>,
            ) -> std::io::Result<R> {
                if interest.is_writable() {
                    // `f` writes on the socket itself: what the poll queued goes first.
                    self.core.before_foreign_write();
                }
                self.core.io().try_io_mask(interest.mask(), f)
            }

            #[doc = "Waits for `interest` and runs `f` until it does not return `WouldBlock`."]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "# spinpark::Runtime::new().unwrap().block_on(async {"]
            #[doc = "use spinpark::io::Interest;"]
            #[doc = $pair]
            #[doc = "a.async_io(Interest::WRITABLE, || Ok(())).await.unwrap();"]
            #[doc = "# drop(b);"]
            #[doc = "# });"]
            #[doc = "```"]
            pub async fn async_io<R>(
                &self,
                interest: $crate::io::Interest,
                mut f: impl FnMut() -> std::io::Result<R>,
            ) -> std::io::Result<R> {
                std::future::poll_fn(|cx| {
                    if interest.is_writable() {
                        self.core.before_foreign_write();
                    }
                    self.core.io().poll_io_mask(interest.mask(), cx, &mut f)
                })
                .await
            }
        }

        impl std::os::fd::AsFd for $t {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                self.core.get().as_fd()
            }
        }
    };
}

pub(crate) use impl_stream_api;
