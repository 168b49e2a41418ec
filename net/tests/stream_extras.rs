//! tokio's extra stream methods on `TcpStream` and `UnixStream`: `ready(Interest)`, `peek`,
//! vectored and `BufMut` reads, `try_io`, linger and quick ack.

use std::io::{self, IoSlice, IoSliceMut};
use std::time::Duration;

use spinpark_executor::{Builder, Runtime};
use spinpark_net::io::Interest;
use spinpark_net::time::timeout;
use spinpark_net::{TcpListener, TcpSocket, TcpStream, UnixStream};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

async fn tcp_pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    let (b, _) = l.accept().await.unwrap();
    (a, b)
}

#[test]
fn peek_leaves_the_bytes_for_the_next_read() {
    rt().block_on(async {
        let (a, b) = tcp_pair().await;
        b.writable().await.unwrap();
        b.try_write(b"hello").unwrap();
        let mut buf = [0u8; 16];
        let n = timeout(Duration::from_secs(30), a.peek(&mut buf))
            .await
            .expect("no data")
            .unwrap();
        assert_eq!(&buf[..n], &b"hello"[..n]);
        let mut again = [0u8; 16];
        let m = a.try_read(&mut again).unwrap();
        assert!(m >= n, "peeked bytes were consumed");
        assert_eq!(&again[..n], &buf[..n]);
    });
}

#[test]
fn vectored_and_bufmut_reads_see_what_was_written() {
    rt().block_on(async {
        let (a, b) = UnixStream::pair().unwrap();
        a.writable().await.unwrap();
        let n = a
            .try_write_vectored(&[IoSlice::new(b"ab"), IoSlice::new(b"cd")])
            .unwrap();
        assert_eq!(n, 4);
        let ready = timeout(Duration::from_secs(30), b.ready(Interest::READABLE))
            .await
            .expect("never readable")
            .unwrap();
        assert!(ready.is_readable());
        let (mut x, mut y) = ([0u8; 1], [0u8; 1]);
        let got = b
            .try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
            .unwrap();
        assert_eq!((got, x, y), (2, *b"a", *b"b"));
        let mut rest = Vec::with_capacity(8);
        assert_eq!(b.try_read_buf(&mut rest).unwrap(), 2);
        assert_eq!(rest, b"cd");
        let e = b.try_read_buf(&mut rest).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    });
}

#[test]
fn try_io_would_block_clears_until_the_next_event() {
    // A current-thread runtime: its reactor turns only when this thread waits, never between
    // the two `try_io`s below. On a multi-thread runtime a spinning worker may deliver an event
    // for `a` (its registration's, or the write's) in between, which rightly keeps the
    // readiness set: the test failed that way about once in ten runs.
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let (a, b) = UnixStream::pair().unwrap();
        b.try_write(b"x").unwrap();
        timeout(Duration::from_secs(30), a.readable())
            .await
            .expect("never readable")
            .unwrap();
        let r = a.try_io(Interest::READABLE, || {
            Err::<(), _>(io::ErrorKind::WouldBlock.into())
        });
        assert!(r.is_err());
        let mut called = false;
        let _ = a.try_io(Interest::READABLE, || {
            called = true;
            Ok(())
        });
        assert!(!called, "readiness survived the WouldBlock");
    });
}

#[test]
fn linger_round_trips_on_streams_and_sockets() {
    rt().block_on(async {
        let (a, _b) = tcp_pair().await;
        assert_eq!(a.linger().unwrap(), None);
        a.set_zero_linger().unwrap();
        assert_eq!(a.linger().unwrap(), Some(Duration::ZERO));
        a.set_quickack(true).unwrap();
        let s = TcpSocket::new_v4().unwrap();
        s.set_linger(Some(Duration::from_secs(3))).unwrap();
        assert_eq!(s.linger().unwrap(), Some(Duration::from_secs(3)));
        s.set_tos_v4(0x10).unwrap();
        assert_eq!(s.tos_v4().unwrap(), 0x10);
    });
}

#[test]
fn std_streams_convert_with_try_from() {
    rt().block_on(async {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let l = TcpListener::try_from(l).unwrap();
        let c = std::net::TcpStream::connect(addr).unwrap();
        let c = TcpStream::try_from(c).unwrap();
        let (s, _) = l.accept().await.unwrap();
        assert_eq!(s.peer_addr().unwrap(), c.local_addr().unwrap());
    });
}
