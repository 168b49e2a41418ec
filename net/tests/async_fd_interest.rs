//! `AsyncFd` with tokio's `Interest`/`Ready`: `ready`, `clear_ready_matching`, `try_io`,
//! `register`'s error, priority (out-of-band) readiness.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use spinpark_executor::{Builder, Runtime};
use spinpark_net::io::{AsyncFd, Interest, Ready};
use spinpark_net::time::timeout;

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

fn pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    (a, b)
}

#[test]
fn ready_reports_both_directions_and_clears_one_at_a_time() {
    rt().block_on(async {
        let (a, mut b) = pair();
        let fd = AsyncFd::new(a).unwrap();
        b.write_all(b"x").unwrap();
        let both = Interest::READABLE | Interest::WRITABLE;
        // The first events arrive from the reactor; wait until both are in.
        let mut guard = loop {
            let g = timeout(Duration::from_secs(30), fd.ready(both))
                .await
                .expect("no readiness")
                .unwrap();
            if g.ready() == Ready::READABLE | Ready::WRITABLE {
                break g;
            }
            drop(g);
            spinpark_executor::yield_now().await;
        };
        guard.clear_ready_matching(Ready::READABLE);
        assert_eq!(guard.ready(), Ready::WRITABLE);
        guard.clear_ready_matching(Ready::WRITABLE);
        assert_eq!(guard.ready(), Ready::EMPTY);
        drop(guard);
        // Cleared for real: try_io does not run its closure for a cleared direction.
        let mut called = false;
        let r = fd.try_io(Interest::READABLE, |_| {
            called = true;
            Ok(())
        });
        assert!(!called && r.is_err(), "readable was not cleared");
    });
}

#[test]
fn try_io_clears_on_would_block_only() {
    rt().block_on(async {
        let (a, _b) = pair();
        let fd = AsyncFd::new(a).unwrap();
        drop(fd.writable().await.unwrap());
        assert!(fd.try_io(Interest::WRITABLE, |_| Ok(())).is_ok());
        let e = fd
            .try_io(Interest::WRITABLE, |_| {
                Err::<(), _>(std::io::ErrorKind::WouldBlock.into())
            })
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
        let mut called = false;
        let _ = fd.try_io(Interest::WRITABLE, |_| {
            called = true;
            Ok(())
        });
        assert!(!called, "the WouldBlock did not clear writable");
    });
}

#[test]
fn async_io_reads_what_the_peer_sent() {
    rt().block_on(async {
        let (a, mut b) = pair();
        let fd = AsyncFd::new(a).unwrap();
        let writer = std::thread::spawn(move || b.write_all(b"hello").unwrap());
        let mut buf = [0u8; 5];
        let mut got = 0;
        while got < 5 {
            let n = timeout(
                Duration::from_secs(30),
                fd.async_io(Interest::READABLE, |mut s| s.read(&mut buf[got..])),
            )
            .await
            .expect("no data")
            .unwrap();
            assert!(n > 0);
            got += n;
        }
        assert_eq!(&buf, b"hello");
        writer.join().unwrap();
    });
}

#[derive(Debug)]
struct Invalid;

impl AsRawFd for Invalid {
    fn as_raw_fd(&self) -> RawFd {
        -1
    }
}

#[test]
fn a_failed_registration_hands_the_object_back_with_the_os_error() {
    rt().block_on(async {
        let original = Arc::new(Invalid);
        // SAFETY: the fd is invalid, so registering it fails; nothing is ever done with it.
        let e = unsafe { AsyncFd::register(original.clone()) }.unwrap_err();
        let (back, cause) = e.into_parts();
        assert!(Arc::ptr_eq(&original, &back));
        assert_eq!(cause.raw_os_error(), Some(libc::EBADF));
        let e = AsyncFd::try_with_interest(original.clone(), Interest::READABLE).unwrap_err();
        assert!(Arc::ptr_eq(&original, &e.into_parts().0));
    });
}

#[test]
fn out_of_band_data_is_priority_readiness() {
    rt().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        client.set_nonblocking(true).unwrap();
        let fd = AsyncFd::with_interest(client, Interest::PRIORITY).unwrap();
        let (server, _) = listener.accept().unwrap();
        // SAFETY: a valid buffer of the length given, on a connected socket we own.
        let n = unsafe { libc::send(server.as_raw_fd(), b"!".as_ptr().cast(), 1, libc::MSG_OOB) };
        assert_eq!(n, 1);
        let guard = timeout(Duration::from_secs(30), fd.ready(Interest::PRIORITY))
            .await
            .expect("no priority event")
            .unwrap();
        assert!(guard.ready().is_priority());
    });
}

#[test]
fn with_interest_readable_never_reports_writable() {
    rt().block_on(async {
        let (a, mut b) = pair();
        let fd = AsyncFd::with_interest(a, Interest::READABLE).unwrap();
        b.write_all(b"x").unwrap();
        let guard = timeout(Duration::from_secs(30), fd.readable())
            .await
            .expect("no readiness")
            .unwrap();
        assert!(guard.ready().is_readable());
        assert!(!guard.ready().is_writable());
    });
}
