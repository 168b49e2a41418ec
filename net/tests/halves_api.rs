//! The halves of TCP and Unix streams have tokio's readiness and `try_*` methods, `peek` (TCP),
//! the addresses, and `reunite`/`forget` on the owned write half: each does what the stream's
//! own method does, and `forget` leaves the write side open where a drop shuts it down.

use std::io::{self, IoSlice, IoSliceMut};

use spinpark_executor::Runtime;
use spinpark_net::io::Interest;
use spinpark_net::{tcp, unix, TcpListener, TcpStream, UnixStream};

fn rt() -> Runtime {
    spinpark_executor::Builder::new_current_thread()
        .build()
        .unwrap()
}

async fn tcp_pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    let (b, _) = l.accept().await.unwrap();
    (a, b)
}

/// Reads exactly `n` bytes from `peer` with `readable` + `try_read` (bounded).
macro_rules! read_n {
    ($peer:expr, $n:expr) => {{
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        for _ in 0..1000 {
            if got.len() >= $n {
                break;
            }
            $peer.readable().await.unwrap();
            match $peer.try_read(&mut buf) {
                Ok(0) => break,
                Ok(k) => got.extend_from_slice(&buf[..k]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        got
    }};
}

/// Waits for end of stream on `peer` (bounded): whether it came.
macro_rules! sees_eof {
    ($peer:expr) => {{
        let mut eof = false;
        for _ in 0..1000 {
            $peer.readable().await.unwrap();
            match $peer.try_read(&mut [0u8; 16]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(_) => panic!("unexpected bytes"),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        eof
    }};
}

/// Exercises a read half `$r` and write half `$w` of one stream whose other end is `$peer`.
macro_rules! exercise {
    ($r:expr, $w:expr, $peer:expr) => {{
        // Write side: ready, writable, try_write, try_write_vectored.
        assert!($w.ready(Interest::WRITABLE).await.unwrap().is_writable());
        $w.writable().await.unwrap();
        assert_eq!($w.try_write(b"abc").unwrap(), 3);
        let n = $w
            .try_write_vectored(&[IoSlice::new(b"de"), IoSlice::new(b"f")])
            .unwrap();
        assert_eq!(n, 3);
        assert_eq!(read_n!($peer, 6), b"abcdef");

        // Read side: nothing yet, then ready, readable, try_read, vectored, buf.
        let e = $r.try_read(&mut [0; 4]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        assert_eq!($peer.try_write(b"0123456789").unwrap(), 10);
        assert!($r.ready(Interest::READABLE).await.unwrap().is_readable());
        $r.readable().await.unwrap();
        let mut one = [0; 2];
        assert_eq!($r.try_read(&mut one).unwrap(), 2);
        assert_eq!(&one, b"01");
        let (mut x, mut y) = ([0; 2], [0; 2]);
        let n = $r
            .try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
            .unwrap();
        assert_eq!((n, &x, &y), (4, b"23", b"45"));
        let mut rest = Vec::with_capacity(16);
        assert_eq!($r.try_read_buf(&mut rest).unwrap(), 4);
        assert_eq!(rest, b"6789");
    }};
}

#[test]
fn tcp_owned_halves() {
    rt().block_on(async {
        let (a, peer) = tcp_pair().await;
        let (mut r, w): (tcp::OwnedReadHalf, tcp::OwnedWriteHalf) = a.into_split();
        exercise!(r, w, peer);
        peer.try_write(b"pk").unwrap();
        let mut buf = [0; 4];
        assert_eq!(r.peek(&mut buf).await.unwrap(), 2);
        assert_eq!(r.try_read(&mut buf).unwrap(), 2, "peek left the bytes");
        let stream = w.reunite(r).unwrap();
        assert_eq!(stream.peer_addr().unwrap(), peer.local_addr().unwrap());
    });
}

#[test]
fn tcp_borrowed_halves() {
    rt().block_on(async {
        let (mut a, peer) = tcp_pair().await;
        let (mut r, w) = a.split();
        exercise!(r, w, peer);
        assert_eq!(r.peer_addr().unwrap(), peer.local_addr().unwrap());
        assert_eq!(w.local_addr().unwrap(), peer.peer_addr().unwrap());
        assert_eq!(r.local_addr().unwrap(), w.local_addr().unwrap());
        assert_eq!(w.peer_addr().unwrap(), r.peer_addr().unwrap());
        peer.try_write(b"pk").unwrap();
        let mut buf = [0; 4];
        assert_eq!(r.peek(&mut buf).await.unwrap(), 2);
        assert_eq!(r.try_read(&mut buf).unwrap(), 2, "peek left the bytes");
    });
}

#[test]
fn tcp_forget_leaves_the_write_side_open_and_drop_shuts_it() {
    rt().block_on(async {
        let (a, peer) = tcp_pair().await;
        let (r, w) = a.into_split();
        w.forget();
        // The read half still works, and the peer can still write to us.
        peer.try_write(b"hi").unwrap();
        assert_eq!(read_n!(r, 2), b"hi");
        // No end of stream for the peer while the read half lives.
        let e = peer.try_read(&mut [0; 4]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        drop(r);
        assert!(sees_eof!(peer));

        // Whereas dropping the write half shuts the write side down at once.
        let (a, peer) = tcp_pair().await;
        let (r, w) = a.into_split();
        drop(w);
        assert!(sees_eof!(peer));
        drop(r);
    });
}

#[test]
fn unix_owned_halves() {
    rt().block_on(async {
        let (a, peer) = UnixStream::pair().unwrap();
        let (r, w): (unix::OwnedReadHalf, unix::OwnedWriteHalf) = a.into_split();
        exercise!(r, w, peer);
        let stream = w.reunite(r).unwrap();
        drop(stream);
    });
}

#[test]
fn unix_borrowed_halves() {
    rt().block_on(async {
        let (mut a, peer) = UnixStream::pair().unwrap();
        let (r, w) = a.split();
        exercise!(r, w, peer);
        assert!(r.peer_addr().unwrap().is_unnamed());
        assert!(w.local_addr().unwrap().is_unnamed());
    });
}

#[test]
fn unix_forget_leaves_the_write_side_open() {
    rt().block_on(async {
        let (a, peer) = UnixStream::pair().unwrap();
        let (r, w) = a.into_split();
        w.forget();
        let e = peer.try_read(&mut [0; 4]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        drop(r);
        assert!(sees_eof!(peer));
    });
}
