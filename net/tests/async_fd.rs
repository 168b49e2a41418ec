//! `AsyncFd`: any non-blocking fd on the reactor, with tokio-style readiness guards.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::io::AsyncFd;
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

async fn read_some(fd: &AsyncFd<UnixStream>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        let mut guard = fd.readable().await?;
        match guard.try_io(|inner| inner.get_ref().read(buf)) {
            Ok(r) => return r,
            Err(_would_block) => continue,
        }
    }
}

#[test]
fn readable_guard_round_trips_through_another_task() {
    rt().block_on(async {
        let (a, b) = pair();
        let a = AsyncFd::new(a).unwrap();
        let b = AsyncFd::new(b).unwrap();
        let echo = spawn(async move {
            let mut buf = [0u8; 64];
            loop {
                let n = read_some(&b, &mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                let mut w = b.writable().await.unwrap();
                w.get_inner().write_all(&buf[..n]).unwrap();
                w.retain_ready();
            }
        });
        for i in 0..500u32 {
            let msg = i.to_be_bytes();
            a.get_ref().write_all(&msg).unwrap();
            let mut back = [0u8; 4];
            let mut got = 0;
            while got < 4 {
                let n = timeout(Duration::from_secs(60), read_some(&a, &mut back[got..]))
                    .await
                    .expect("no echo")
                    .unwrap();
                assert!(n > 0);
                got += n;
            }
            assert_eq!(back, msg);
        }
        drop(a);
        echo.await.unwrap();
    });
}

/// Lets pending events be processed, then checks that `readable()` is still pending. No
/// timer: a late timer (were the reactor's wake-up ever lost again) cannot slow this down or
/// hang it.
async fn not_readable(fd: &AsyncFd<UnixStream>) -> bool {
    for _ in 0..100 {
        spinpark_executor::yield_now().await;
    }
    futures_util::poll!(std::pin::pin!(fd.readable())).is_pending()
}

#[test]
fn cleared_readiness_waits_for_the_next_event() {
    rt().block_on(async {
        let (a, mut b) = pair();
        let a = AsyncFd::new(a).unwrap();
        assert!(
            not_readable(&a).await,
            "readable() returned with nothing to read"
        );
        b.write_all(b"xy").unwrap();
        let mut buf = [0u8; 1];
        // Read one byte and keep the readiness: the other byte is still there.
        let mut g = timeout(Duration::from_secs(60), a.readable())
            .await
            .expect("the write was not seen")
            .unwrap();
        assert_eq!(
            g.try_io(|i| i.get_ref().read(&mut buf)).unwrap().unwrap(),
            1
        );
        drop(g);
        let mut g = timeout(Duration::from_secs(60), a.readable())
            .await
            .expect("retained readiness was lost")
            .unwrap();
        assert_eq!(
            g.try_io(|i| i.get_ref().read(&mut buf)).unwrap().unwrap(),
            1
        );
        // Drained: the next try would block, which clears the readiness.
        assert!(g.try_io(|i| i.get_ref().read(&mut buf)).is_err());
        drop(g);
        assert!(
            not_readable(&a).await,
            "readable() returned after the readiness was cleared"
        );
        b.write_all(b"z").unwrap();
        let mut g = timeout(Duration::from_secs(60), a.readable())
            .await
            .expect("the second write was not seen")
            .unwrap();
        assert_eq!(
            g.try_io(|i| i.get_ref().read(&mut buf)).unwrap().unwrap(),
            1
        );
        assert_eq!(&buf, b"z");
        g.clear_ready();
        drop(a.into_inner());
    });
}

#[test]
fn blocking_fds_and_no_runtime_are_refused() {
    let (a, _b) = UnixStream::pair().unwrap();
    rt().block_on(async {
        let e = AsyncFd::new(a).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("blocking mode"), "{e}");
    });
    let (a, _b) = pair();
    assert!(
        AsyncFd::new(a).is_err(),
        "no runtime, yet AsyncFd::new worked"
    );
}

#[test]
fn a_regular_file_is_refused_with_eperm_in_either_mode() {
    // epoll does not take regular files: the answer is EPERM whatever the fd's mode (a
    // user told "set O_NONBLOCK" would do it and then get EPERM anyway), as tokio's.
    let path = std::env::temp_dir().join(format!("spinpark-asyncfd-{}", std::process::id()));
    rt().block_on(async {
        for nonblocking in [false, true] {
            let file = std::fs::File::create(&path).unwrap();
            if nonblocking {
                use std::os::fd::AsRawFd;
                // SAFETY: F_SETFL on an fd `file` keeps open; no pointers.
                let ok = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
                assert_eq!(ok, 0);
            }
            let e = AsyncFd::new(file).unwrap_err();
            assert_eq!(
                e.raw_os_error(),
                Some(libc::EPERM),
                "nonblocking {nonblocking}: {e}"
            );
            let dir = std::fs::File::open(std::env::temp_dir()).unwrap();
            let e = AsyncFd::new(dir).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EPERM), "a directory: {e}");
        }
    });
    let _ = std::fs::remove_file(&path);
}

/// `EPOLLERR` on an `AsyncFd`. The guard's operation reads the error once; a
/// `WouldBlock` after it clears the readiness, error bit included, so the next `readable()`
/// waits (it used to return at once, a million times a second, with nothing to read).
#[test]
fn an_error_is_read_once_then_readable_waits() {
    rt().block_on(async {
        let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let closed_addr = closed.local_addr().unwrap();
        drop(closed);
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_nonblocking(true).unwrap();
        s.connect(closed_addr).unwrap();
        let fd = AsyncFd::new(s).unwrap();
        fd.get_ref().send(b"anyone?").unwrap();
        let mut buf = [0u8; 8];
        // Wait for the error (ICMP port unreachable), then read it.
        let err = loop {
            let mut g = timeout(Duration::from_secs(60), fd.readable())
                .await
                .expect("the error was never reported")
                .unwrap();
            match g.try_io(|i| i.get_ref().recv(&mut buf)) {
                Ok(r) => break r.unwrap_err(),
                Err(_would_block) => continue,
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
        // The error is gone from the socket: the next try would block, which clears.
        let mut g = timeout(Duration::from_secs(60), fd.readable())
            .await
            .expect("readiness kept after the error was lost")
            .unwrap();
        assert!(g.try_io(|i| i.get_ref().recv(&mut buf)).is_err());
        drop(g);
        assert!(
            timeout(Duration::from_millis(200), fd.readable())
                .await
                .is_err(),
            "readable() returned with nothing to read and no new error"
        );
    });
}
