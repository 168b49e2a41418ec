//! TCP over the reactor: round trips, many connections, bulk transfer, halves, faults.
//! Everything runs on 127.0.0.1 with port 0 and stops by itself.

use std::io;
use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt, StreamExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::time::timeout;
use spinpark_net::{TcpListener, TcpStream};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// Fails the test with a message instead of hanging CI.
async fn guard<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match timeout(Duration::from_secs(60), f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: no progress in 60 s"),
    }
}

fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write a valid rlimit struct on our stack.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max.min(65536);
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}

async fn echo_server() -> (SocketAddr, spinpark_executor::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let h = spawn(async move {
        let mut incoming = listener.incoming();
        while let Some(s) = incoming.next().await {
            let mut s = s.unwrap();
            spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    (addr, h)
}

#[test]
fn echo_round_trips() {
    let rt = rt();
    rt.block_on(guard("echo", async {
        let (addr, server) = echo_server().await;
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.set_nodelay(true).unwrap();
        assert!(c.nodelay().unwrap());
        assert_eq!(c.peer_addr().unwrap(), addr);
        assert_eq!(c.local_addr().unwrap().ip(), addr.ip());
        for i in 0..1000u32 {
            let msg = i.to_be_bytes();
            c.write_all(&msg).await.unwrap();
            let mut back = [0u8; 4];
            c.read_exact(&mut back).await.unwrap();
            assert_eq!(back, msg);
        }
        server.abort();
    }));
}

#[test]
fn a_thousand_concurrent_connections_every_byte_verified() {
    raise_fd_limit();
    let rt = rt();
    rt.block_on(guard("1000 connections", async {
        let (addr, server) = echo_server().await;
        let clients: Vec<_> = (0..1000u32)
            .map(|i| {
                spawn(async move {
                    let mut c = TcpStream::connect(addr).await.unwrap();
                    let msg: Vec<u8> = (0..1024u32).map(|k| (k * 31 + i) as u8).collect();
                    for _ in 0..4 {
                        c.write_all(&msg).await.unwrap();
                        let mut back = vec![0u8; msg.len()];
                        c.read_exact(&mut back).await.unwrap();
                        assert_eq!(back, msg, "connection {i} got corrupted bytes");
                    }
                    i
                })
            })
            .collect();
        let mut sum = 0u64;
        for c in clients {
            sum += c.await.unwrap() as u64;
        }
        assert_eq!(sum, 999 * 1000 / 2);
        server.abort();
    }));
    let m = rt.metrics();
    assert!(
        m.workers().iter().all(|w| w.polls() > 0),
        "work spread over both workers: {m:?}"
    );
}

#[test]
fn sixty_four_mib_through_one_connection_checksummed() {
    const TOTAL: usize = 64 << 20;
    fn fnv(h: &mut u64, data: &[u8]) {
        for &b in data {
            *h = (*h ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    let rt = rt();
    rt.block_on(guard("64 MiB", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let receiver = spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut h = 0xcbf29ce484222325u64;
            let mut got = 0;
            let mut buf = vec![0u8; 256 * 1024];
            loop {
                let n = s.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                fnv(&mut h, &buf[..n]);
                got += n;
            }
            (got, h)
        });
        let mut c = TcpStream::connect(addr).await.unwrap();
        let mut h = 0xcbf29ce484222325u64;
        let mut chunk = vec![0u8; 1 << 20];
        for i in 0..(TOTAL >> 20) {
            for (k, b) in chunk.iter_mut().enumerate() {
                *b = (k.wrapping_mul(7) ^ i) as u8;
            }
            fnv(&mut h, &chunk);
            c.write_all(&chunk).await.unwrap();
        }
        c.close().await.unwrap();
        let (got, rh) = receiver.await.unwrap();
        assert_eq!(got, TOTAL);
        assert_eq!(rh, h, "checksum mismatch");
    }));
}

#[test]
fn split_halves_work_from_two_tasks_and_reunite() {
    let rt = rt();
    rt.block_on(guard("split", async {
        let (addr, server) = echo_server().await;
        let c = TcpStream::connect(addr).await.unwrap();
        let (mut r, mut w) = c.into_split();
        let writer = spawn(async move {
            for i in 0..100u8 {
                w.write_all(&[i; 100]).await.unwrap();
            }
            w
        });
        let mut back = vec![0u8; 100 * 100];
        r.read_exact(&mut back).await.unwrap();
        for (i, chunk) in back.chunks(100).enumerate() {
            assert!(chunk.iter().all(|&b| b == i as u8));
        }
        let w = writer.await.unwrap();
        let mut c = r.reunite(w).unwrap();
        // Called as a path: `AsyncReadExt::split` (by value) would win method resolution.
        let (mut r, mut w) = TcpStream::split(&mut c);
        w.write_all(b"xy").await.unwrap();
        let mut two = [0u8; 2];
        r.read_exact(&mut two).await.unwrap();
        assert_eq!(&two, b"xy");
        server.abort();
    }));
}

#[test]
fn vectored_writes_and_try_read_write() {
    let rt = rt();
    rt.block_on(guard("vectored", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut c = TcpStream::connect(addr).await.unwrap();
        let (s, _) = listener.accept().await.unwrap();
        let bufs = [io::IoSlice::new(b"hello "), io::IoSlice::new(b"world")];
        let n = c.write_vectored(&bufs).await.unwrap();
        assert_eq!(n, 11);
        s.readable().await.unwrap();
        let mut buf = [0u8; 32];
        let mut got = 0;
        while got < 11 {
            match s.try_read(&mut buf[got..]) {
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => s.readable().await.unwrap(),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(&buf[..11], b"hello world");
        // Nothing more to read: try_read says WouldBlock instead of waiting.
        assert_eq!(
            s.try_read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        s.writable().await.unwrap();
        assert_eq!(s.try_write(b"!").unwrap(), 1);
        let mut one = [0u8; 1];
        c.read_exact(&mut one).await.unwrap();
        assert_eq!(&one, b"!");
    }));
}

#[test]
fn half_close_read_returns_zero_and_writing_still_works() {
    let rt = rt();
    rt.block_on(guard("half close", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut c = TcpStream::connect(addr).await.unwrap();
        let (mut s, _) = listener.accept().await.unwrap();
        c.write_all(b"last words").await.unwrap();
        c.shutdown_with(Shutdown::Write).unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"last words");
        // End of stream is sticky.
        let mut buf = [0u8; 8];
        assert_eq!(s.read(&mut buf).await.unwrap(), 0);
        assert!(s.is_read_closed());
        // The other direction still works.
        s.write_all(b"reply").await.unwrap();
        let mut reply = [0u8; 5];
        c.read_exact(&mut reply).await.unwrap();
        assert_eq!(&reply, b"reply");
    }));
}

#[test]
fn peer_reset_and_write_after_close_are_errors() {
    let rt = rt();
    rt.block_on(guard("reset", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut c = TcpStream::connect(addr).await.unwrap();
        let (s, _) = listener.accept().await.unwrap();
        // Closing with unread data makes the kernel send a reset.
        c.write_all(b"unread").await.unwrap();
        let std = s.into_std().unwrap();
        std.set_nonblocking(false).unwrap();
        let mut probe = [0u8; 1];
        std.peek(&mut probe).unwrap();
        drop(std);
        // Reads see the reset (or end of stream), and writes soon fail with a clear error.
        let mut buf = [0u8; 16];
        let r = c.read(&mut buf).await;
        assert!(
            matches!(&r, Err(e) if e.kind() == io::ErrorKind::ConnectionReset)
                || matches!(r, Ok(0)),
            "{r:?}"
        );
        let mut err = None;
        for _ in 0..100 {
            if let Err(e) = c.write_all(&[0u8; 1024]).await {
                err = Some(e);
                break;
            }
            spinpark_net::time::sleep(Duration::from_millis(1)).await;
        }
        let err = err.expect("writing to a closed peer kept succeeding");
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ),
            "{err}"
        );
    }));
}

#[test]
fn connect_to_a_closed_port_is_refused() {
    let rt = rt();
    rt.block_on(guard("refused", async {
        // Bind, learn the port, close it: nothing listens there now.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let err = TcpStream::connect(addr).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused, "{err}");
        assert_eq!(err.raw_os_error(), Some(libc::ECONNREFUSED), "{err}");
    }));
}

#[test]
fn timeout_around_a_peer_that_never_answers() {
    let rt = rt();
    rt.block_on(guard("silent peer", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut c = TcpStream::connect(addr).await.unwrap();
        let (_silent, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1];
        let r = timeout(Duration::from_millis(50), c.read(&mut buf)).await;
        assert!(r.is_err(), "a read from a silent peer finished: {r:?}");
        let e: io::Error = r.unwrap_err().into();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }));
}

#[test]
fn io_wakes_workers_that_are_all_parked() {
    // Spinning off: every worker parks at once; only the reactor can wake them.
    let rt = Builder::new()
        .worker_threads(2)
        .spin(Duration::ZERO)
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let (addr, server) = rt.block_on(echo_server());
    for round in 0..50u8 {
        // Let every worker park.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let (sleepers, spinners, driver) = handle.idle_state();
            if sleepers + driver as u32 == 2 && spinners == 0 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "workers never parked");
            std::thread::sleep(Duration::from_millis(1));
        }
        // A plain blocking client from this thread: its bytes arrive while all are parked.
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        use std::io::{Read, Write};
        c.write_all(&[round; 3]).unwrap();
        let mut back = [0u8; 3];
        c.read_exact(&mut back).expect("echo never came back");
        assert_eq!(back, [round; 3]);
    }
    assert!(rt.metrics().total().parks() > 0);
    server.abort();
}

#[test]
fn net_outside_a_runtime_is_an_error_not_a_hang() {
    let r = futures_util::FutureExt::now_or_never(TcpListener::bind("127.0.0.1:0"));
    let err = r.expect("bind does not wait").unwrap_err();
    assert!(err.to_string().contains("spinpark runtime"), "{err}");
}

#[test]
fn a_stream_that_outlives_its_runtime_fails_instead_of_hanging() {
    let a = rt();
    let (mut client, _server) = a.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (s, _) = listener.accept().await.unwrap();
        (c, s)
    });
    drop(a);
    // Awaited on another runtime: the read fails at once rather than waiting forever for an
    // event from a reactor that no longer runs.
    let b = rt();
    let r = b.block_on(guard("read after shutdown", async {
        let mut buf = [0u8; 4];
        client.read(&mut buf).await
    }));
    let e = r.expect_err("reading from a stream of a dropped runtime succeeded");
    assert!(e.to_string().contains("shut down"), "{e}");
    assert!(b.block_on(client.write_all(b"x")).is_err());
}
