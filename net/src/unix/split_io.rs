//! What tokio's halves of a [`UnixStream`] have beside the I/O traits: readiness (`ready`,
//! `readable`, `writable`), the `try_*` reads and writes, the addresses on the
//! borrowed halves, and `reunite` and `forget` on the owned write half. Each delegates to the
//! stream's own method of the same name, so a half behaves as the stream would.

use std::io;

use bytes::BufMut;

use crate::io::{Interest, Ready};

use super::split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
use super::{SocketAddr, UnixStream};

impl ReadHalf<'_> {
    /// Waits until the stream is ready for any of `interest` and says how (the stream's
    /// [`ready`](UnixStream::ready)).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// use spinpark::io::Interest;
    /// peer.try_write(b"x").unwrap();
    /// let ready = read.ready(Interest::READABLE).await.unwrap();
    /// assert!(ready.is_readable());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }

    /// Waits until the stream may be readable (a read may still return `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// peer.try_write(b"x").unwrap();
    /// read.readable().await.unwrap();
    /// assert_eq!(read.try_read(&mut [0; 4]).unwrap(), 1);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.0.readable().await
    }

    /// Reads what is available now, without waiting: `WouldBlock` if nothing is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// let mut buf = [0; 16];
    /// let e = read.try_read(&mut buf).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock); // nothing sent yet
    /// peer.try_write(b"hi").unwrap();
    /// read.readable().await.unwrap();
    /// assert_eq!(read.try_read(&mut buf).unwrap(), 2);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }

    /// Reads what is available now into several buffers: `WouldBlock` if nothing is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// peer.try_write(b"abcd").unwrap();
    /// read.readable().await.unwrap();
    /// let (mut x, mut y) = ([0; 2], [0; 2]);
    /// let mut bufs = [std::io::IoSliceMut::new(&mut x), std::io::IoSliceMut::new(&mut y)];
    /// assert_eq!(read.try_read_vectored(&mut bufs).unwrap(), 4);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.0.try_read_vectored(bufs)
    }

    /// Reads what is available now into a `BufMut`'s spare capacity, advancing it:
    /// `WouldBlock` if nothing is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// peer.try_write(b"hi").unwrap();
    /// read.readable().await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// assert_eq!(read.try_read_buf(&mut buf).unwrap(), 2);
    /// assert_eq!(buf, b"hi");
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.0.try_read_buf(buf)
    }

    /// The remote address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// assert!(read.peer_addr().is_ok());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }

    /// The local address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// assert!(read.local_addr().is_ok());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl WriteHalf<'_> {
    /// Waits until the stream is ready for any of `interest` and says how (the stream's
    /// [`ready`](UnixStream::ready)).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// use spinpark::io::Interest;
    /// let ready = write.ready(Interest::WRITABLE).await.unwrap();
    /// assert!(ready.is_writable());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }

    /// Waits until the stream may be writable (a write may still return `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// write.writable().await.unwrap();
    /// assert_eq!(write.try_write(b"hi").unwrap(), 2);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.0.writable().await
    }

    /// Writes what fits now, without waiting: `WouldBlock` if nothing does.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// assert_eq!(write.try_write(b"ping").unwrap(), 4);
    /// let mut buf = [0; 4];
    /// peer.readable().await.unwrap();
    /// assert_eq!(peer.try_read(&mut buf).unwrap(), 4);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    /// Writes what fits now from several buffers: `WouldBlock` if nothing does.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// use std::io::IoSlice;
    /// write.writable().await.unwrap();
    /// assert_eq!(write.try_write_vectored(&[IoSlice::new(b"a"), IoSlice::new(b"b")]).unwrap(), 2);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }

    /// The remote address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// assert!(write.peer_addr().is_ok());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }

    /// The local address.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let mut stream = stream;
    /// let (read, write) = stream.split();
    /// assert!(write.local_addr().is_ok());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl OwnedReadHalf {
    /// Waits until the stream is ready for any of `interest` and says how (the stream's
    /// [`ready`](UnixStream::ready)).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// use spinpark::io::Interest;
    /// peer.try_write(b"x").unwrap();
    /// let ready = read.ready(Interest::READABLE).await.unwrap();
    /// assert!(ready.is_readable());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }

    /// Waits until the stream may be readable (a read may still return `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// peer.try_write(b"x").unwrap();
    /// read.readable().await.unwrap();
    /// assert_eq!(read.try_read(&mut [0; 4]).unwrap(), 1);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.0.readable().await
    }

    /// Reads what is available now, without waiting: `WouldBlock` if nothing is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// let mut buf = [0; 16];
    /// let e = read.try_read(&mut buf).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock); // nothing sent yet
    /// peer.try_write(b"hi").unwrap();
    /// read.readable().await.unwrap();
    /// assert_eq!(read.try_read(&mut buf).unwrap(), 2);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }

    /// Reads what is available now into several buffers: `WouldBlock` if nothing is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// peer.try_write(b"abcd").unwrap();
    /// read.readable().await.unwrap();
    /// let (mut x, mut y) = ([0; 2], [0; 2]);
    /// let mut bufs = [std::io::IoSliceMut::new(&mut x), std::io::IoSliceMut::new(&mut y)];
    /// assert_eq!(read.try_read_vectored(&mut bufs).unwrap(), 4);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.0.try_read_vectored(bufs)
    }

    /// Reads what is available now into a `BufMut`'s spare capacity, advancing it:
    /// `WouldBlock` if nothing is.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// peer.try_write(b"hi").unwrap();
    /// read.readable().await.unwrap();
    /// let mut buf = Vec::with_capacity(8);
    /// assert_eq!(read.try_read_buf(&mut buf).unwrap(), 2);
    /// assert_eq!(buf, b"hi");
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.0.try_read_buf(buf)
    }
}

impl OwnedWriteHalf {
    /// Puts the stream back together with its read half (as
    /// [`OwnedReadHalf::reunite`]).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// let stream = write.reunite(read).unwrap();
    /// # drop((stream, peer));
    /// # });
    /// ```
    pub fn reunite(self, read: OwnedReadHalf) -> Result<UnixStream, ReuniteError> {
        read.reunite(self)
    }

    /// Drops the write half without shutting down the write side: the connection stays
    /// open for writing (the peer does not read end of stream) until the read half is dropped
    /// too, which closes it (tokio's `forget`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// write.forget();
    /// let e = peer.try_read(&mut [0; 1]).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock); // no end of stream
    /// drop(read); // now the stream closes
    /// # });
    /// ```
    pub fn forget(self) {
        self.0.forget();
    }

    /// Waits until the stream is ready for any of `interest` and says how (the stream's
    /// [`ready`](UnixStream::ready)).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// use spinpark::io::Interest;
    /// let ready = write.ready(Interest::WRITABLE).await.unwrap();
    /// assert!(ready.is_writable());
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.stream().ready(interest).await
    }

    /// Waits until the stream may be writable (a write may still return `WouldBlock`).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// write.writable().await.unwrap();
    /// assert_eq!(write.try_write(b"hi").unwrap(), 2);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.0.stream().writable().await
    }

    /// Writes what fits now, without waiting: `WouldBlock` if nothing does.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// assert_eq!(write.try_write(b"ping").unwrap(), 4);
    /// let mut buf = [0; 4];
    /// peer.readable().await.unwrap();
    /// assert_eq!(peer.try_read(&mut buf).unwrap(), 4);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.stream().try_write(buf)
    }

    /// Writes what fits now from several buffers: `WouldBlock` if nothing does.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// # let (stream, peer) = spinpark::net::UnixStream::pair().unwrap();
    /// let (read, write) = stream.into_split();
    /// use std::io::IoSlice;
    /// write.writable().await.unwrap();
    /// assert_eq!(write.try_write_vectored(&[IoSlice::new(b"a"), IoSlice::new(b"b")]).unwrap(), 2);
    /// # drop((read, write, peer));
    /// # });
    /// ```
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.stream().try_write_vectored(bufs)
    }
}
