//! `Ok` from a write means the kernel has the bytes, whatever happens next, and no reply waits
//! for the work its task does after it: five ways a program can end or stall right after
//! writing, each compared with what tokio does with the same code.
//!
//! 1. The process ends with `exit`, `abort`, or a panic that aborts (what `panic = "abort"`
//!    does: no unwinding, no destructor) right after a poll wrote a header and a body.
//! 2. A per-socket `TCP_NOTSENT_LOWAT` and slow readers, then the streams or the runtime
//!    dropped.
//! 3. A short write that clears the write readiness, CPU work while the peer drains, tails,
//!    then the stream dropped.
//! 4. A handler that replies, then blocks its thread until the peer answers the reply.
//! 5. Writes to two peers in one poll reach them in program order (two TCP connections; a TCP
//!    connection and a UDP socket).
//!
//! Each runs on current-thread, one-worker and two-worker runtimes. Every wait has a bound,
//! so a hang fails the test; no assertion is about speed.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{Builder, Runtime};
use spinpark_net::{TcpListener, TcpStream};

const BOUND: Duration = Duration::from_secs(20);

const FLAVOURS: [(&str, usize); 3] = [("current-thread", 0), ("1 worker", 1), ("2 workers", 2)];

fn runtime(workers: usize) -> Runtime {
    match workers {
        0 => Builder::new_current_thread().build().unwrap(),
        n => Builder::new().worker_threads(n).build().unwrap(),
    }
}

/// A TCP connection: the spinpark side from `accept`, the std peer (blocking, with the bound).
async fn tcp_pair() -> (TcpStream, std::net::TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let (ours, _) = listener.accept().await.unwrap();
    ours.set_nodelay(true).unwrap();
    (ours, peer)
}

/// Everything the peer reads until end of stream, or the error that ended it.
fn read_all(peer: &mut std::net::TcpStream) -> (Vec<u8>, Option<ErrorKind>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match peer.read(&mut buf) {
            Ok(0) => return (got, None),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return (got, Some(e.kind())),
        }
    }
}

/// Sets an int socket option.
fn set_int(fd: &impl AsRawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) {
    // SAFETY: setsockopt reads the int on our stack.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "setsockopt: {}", std::io::Error::last_os_error());
}

// 1. exit, abort, panic = "abort" ---------------------------------------------------------

const HEADER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\n";
const BODY: &[u8] = b"Hello, world!";

/// The child's instructions: `workers:ending:port`.
const EXIT_CHILD: &str = "SPINPARK_WRITE_PROMISE_EXIT_CHILD";

#[test]
fn bytes_written_before_exit_abort_or_an_aborting_panic_reach_the_peer() {
    assert_eq!(HEADER.len(), 58);
    for (flavour, workers) in FLAVOURS {
        for ending in ["exit", "abort", "panic"] {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let mut child = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "exit_child", "--nocapture", "--test-threads=1"])
                .env(EXIT_CHILD, format!("{workers}:{ending}:{port}"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let (mut peer, _) = listener.accept().unwrap();
            peer.set_read_timeout(Some(BOUND)).unwrap();
            let (got, error) = read_all(&mut peer);
            let status = child.wait().unwrap();
            assert_eq!(
                error, None,
                "{flavour}, {ending}: the connection ended in an error"
            );
            assert_eq!(
                got.len(),
                HEADER.len() + BODY.len(),
                "{flavour}, {ending} ({status}): bytes before end of stream"
            );
            assert_eq!(&got[HEADER.len()..], BODY);
            if ending == "exit" {
                assert!(
                    status.success(),
                    "{flavour}: the child did not exit: {status}"
                );
            }
        }
    }
}

/// The child of the test above: writes a response in two writes in one poll, then ends the
/// process as told. Does nothing when run as a test of its own.
#[test]
fn exit_child() {
    let Ok(spec) = std::env::var(EXIT_CHILD) else {
        return;
    };
    let mut parts = spec.split(':');
    let workers: usize = parts.next().unwrap().parse().unwrap();
    let ending = parts.next().unwrap().to_string();
    let port: u16 = parts.next().unwrap().parse().unwrap();
    if ending == "panic" {
        // What `panic = "abort"` does: the process aborts where it panics, without unwinding,
        // so no destructor and no poll's end runs.
        std::panic::set_hook(Box::new(|_| std::process::abort()));
    }
    let rt = runtime(workers);
    rt.block_on(rt.spawn(async move {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.set_nodelay(true).unwrap();
        s.write_all(HEADER).await.unwrap();
        s.write_all(BODY).await.unwrap();
        match ending.as_str() {
            "exit" => std::process::exit(0),
            "abort" => std::process::abort(),
            _ => panic!("the handler fails after answering"),
        }
    }))
    .unwrap();
}

// 2. A per-socket TCP_NOTSENT_LOWAT ----------------------------------------------------------

#[test]
fn every_byte_reaches_slow_readers_through_a_per_socket_notsent_lowat() {
    const READERS: usize = 8;
    const TOTAL: usize = 512 << 10;
    for (flavour, workers) in FLAVOURS {
        for drop_runtime in [false, true] {
            let rt = runtime(workers);
            let listener = rt
                .block_on(async { TcpListener::bind("127.0.0.1:0").await })
                .unwrap();
            let addr = listener.local_addr().unwrap();
            let readers: Vec<_> = (0..READERS)
                .map(|_| {
                    let mut peer = std::net::TcpStream::connect(addr).unwrap();
                    peer.set_read_timeout(Some(BOUND)).unwrap();
                    std::thread::spawn(move || {
                        // 1 KiB a millisecond, until end of stream or an error.
                        let mut n = 0;
                        let mut buf = [0u8; 1024];
                        loop {
                            std::thread::sleep(Duration::from_millis(1));
                            match peer.read(&mut buf) {
                                Ok(0) => return Ok(n),
                                Ok(k) => n += k,
                                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                                Err(e) => return Err(format!("{e} after {n} bytes")),
                            }
                        }
                    })
                })
                .collect();
            let server = rt.spawn(async move {
                let mut writers = Vec::new();
                for _ in 0..READERS {
                    let (mut s, _) = listener.accept().await.unwrap();
                    set_int(&s, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, 16 << 10);
                    writers.push(spinpark_executor::spawn(async move {
                        let chunk = [0x42u8; 1024];
                        for _ in 0..TOTAL / chunk.len() {
                            s.write_all(&chunk).await.unwrap();
                        }
                        // Returns: the stream is dropped.
                    }));
                }
                for w in writers {
                    w.await.unwrap();
                }
            });
            rt.block_on(server).unwrap();
            if drop_runtime {
                drop(rt);
            }
            for r in readers {
                assert_eq!(
                    r.join().unwrap(),
                    Ok(TOTAL),
                    "{flavour}, runtime dropped: {drop_runtime}"
                );
            }
        }
    }
}

// 3. A short write, CPU work, tails, drop ---------------------------------------------------

#[test]
fn tails_written_after_a_short_write_and_cpu_work_all_arrive() {
    const CONNECTIONS: usize = 6;
    for (flavour, workers) in FLAVOURS {
        let rt = runtime(workers);
        for c in 0..CONNECTIONS {
            let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
            let (drain, drained) = mpsc::channel::<()>();
            let reader = std::thread::spawn(move || {
                // Not reading until the writer has filled the socket.
                drained.recv_timeout(BOUND).unwrap();
                read_all(&mut peer)
            });
            let written = rt
                .block_on(rt.spawn(async move {
                    let mut s = ours;
                    s.write_all(b"x").await.unwrap();
                    let mut written = 1;
                    let chunk = vec![7u8; 64 << 10];
                    // Until a write comes out short or would wait: the socket is full, and its
                    // write readiness is cleared.
                    while let Some(n) = polled_once(s.write(&chunk)).await {
                        let n = n.unwrap();
                        written += n;
                        if n < chunk.len() {
                            break;
                        }
                    }
                    drain.send(()).unwrap();
                    // CPU work while the peer drains.
                    let start = std::time::Instant::now();
                    while start.elapsed() < Duration::from_millis(30) {
                        std::hint::spin_loop();
                    }
                    for _ in 0..5 {
                        s.write_all(&[9u8; 1000]).await.unwrap();
                        written += 1000;
                    }
                    written // the stream is dropped
                }))
                .unwrap();
            let (got, error) = reader.join().unwrap();
            assert_eq!(
                error, None,
                "{flavour}, connection {c}: the peer saw an error"
            );
            assert_eq!(got.len(), written, "{flavour}, connection {c}");
            assert!(got.ends_with(&[9u8; 5000]));
        }
    }
}

/// Polls `fut` once: its output if it finished.
async fn polled_once<F: std::future::Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        std::task::Poll::Ready(out) => std::task::Poll::Ready(Some(out)),
        std::task::Poll::Pending => std::task::Poll::Ready(None),
    })
    .await
}

// 4. A reply, then a blocking call that waits for the peer's answer --------------------------

#[test]
fn a_reply_reaches_the_peer_while_its_handler_blocks_waiting_for_the_answer() {
    for (flavour, workers) in FLAVOURS {
        // "two writes": the reply in two writes. "one write after two": the connection's
        // previous poll wrote twice (a pipelining peer, whose next reply is queued too).
        for case in ["two writes", "one write after two"] {
            let rt = runtime(workers);
            let (mut ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
            let (answer, answered) = mpsc::channel::<()>();
            let client = std::thread::spawn(move || {
                let mut reply = [0u8; 5];
                if case == "one write after two" {
                    peer.write_all(b"?").unwrap();
                    peer.read_exact(&mut reply).unwrap();
                    assert_eq!(&reply, b"reply");
                }
                peer.write_all(b"?").unwrap();
                peer.read_exact(&mut reply).unwrap();
                assert_eq!(&reply, b"reply");
                // The answer the handler waits for, sent only once the reply is here.
                answer.send(()).unwrap();
                peer
            });
            let waited = rt
                .block_on(rt.spawn(async move {
                    let mut req = [0u8; 1];
                    if case == "one write after two" {
                        ours.read_exact(&mut req).await.unwrap();
                        ours.write_all(b"re").await.unwrap();
                        ours.write_all(b"ply").await.unwrap();
                        ours.read_exact(&mut req).await.unwrap();
                        ours.write_all(b"reply").await.unwrap();
                    } else {
                        ours.read_exact(&mut req).await.unwrap();
                        ours.write_all(b"re").await.unwrap();
                        ours.write_all(b"ply").await.unwrap();
                    }
                    // A synchronous call that blocks the thread until the peer answers.
                    let waited = answered.recv_timeout(BOUND);
                    (waited, ours)
                }))
                .unwrap();
            assert!(
                waited.0.is_ok(),
                "{flavour}, {case}: the reply waited for the handler's blocking call"
            );
            drop(client.join().unwrap());
        }
    }
}

/// Bytes waiting to be read on `fd` (`FIONREAD`).
fn unread(fd: &impl AsRawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int, on our stack.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(r, 0, "FIONREAD: {}", std::io::Error::last_os_error());
    n as usize
}

// 5. Program order across sockets -------------------------------------------------------------

#[test]
fn writes_to_two_peers_in_one_poll_arrive_in_program_order() {
    const ROUNDS: u64 = 2000;
    for (flavour, workers) in [("current-thread", 0), ("2 workers", 2)] {
        let rt = runtime(workers);
        let (a, mut peer_a) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let (b, mut peer_b) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let checker = std::thread::spawn(move || {
            let mut inversions = 0;
            for round in 0..ROUNDS {
                let mut got_b = [0u8; 16];
                peer_b.read_exact(&mut got_b).unwrap();
                assert_eq!(got_b[..8], round.to_le_bytes());
                // Everything written to A before B's last write is there already.
                if unread(&peer_a) < 16 {
                    inversions += 1;
                }
                let mut got_a = [0u8; 16];
                peer_a.read_exact(&mut got_a).unwrap();
                assert_eq!(got_a[8..], round.to_le_bytes());
                peer_a.write_all(b"+").unwrap();
            }
            inversions
        });
        rt.block_on(rt.spawn(async move {
            let (mut a, mut b) = (a, b);
            let mut go = [0u8; 1];
            for round in 0..ROUNDS {
                let r = round.to_le_bytes();
                a.write_all(&r).await.unwrap();
                b.write_all(&r).await.unwrap();
                a.write_all(&r).await.unwrap();
                b.write_all(&r).await.unwrap();
                a.read_exact(&mut go).await.unwrap(); // ends the poll
            }
        }))
        .unwrap();
        assert_eq!(
            checker.join().unwrap(),
            0,
            "{flavour}: B's bytes before A's"
        );
    }
}

#[test]
fn a_datagram_sent_after_stream_writes_in_one_poll_comes_after_them() {
    // A task writes twice on a TCP connection (the second write queued for the poll's end),
    // then sends a UDP datagram: whoever receives the datagram can already read both writes.
    const ROUNDS: u64 = 500;
    for (flavour, workers) in [("current-thread", 0), ("2 workers", 2)] {
        let rt = runtime(workers);
        let (a, mut peer_a) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let receiver = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        receiver.set_read_timeout(Some(BOUND)).unwrap();
        let to = receiver.local_addr().unwrap();
        let checker = std::thread::spawn(move || {
            let mut inversions = 0;
            for round in 0..ROUNDS {
                let mut dgram = [0u8; 8];
                assert_eq!(receiver.recv(&mut dgram).unwrap(), 8);
                assert_eq!(dgram, round.to_le_bytes());
                if unread(&peer_a) < 16 {
                    inversions += 1;
                }
                let mut got = [0u8; 16];
                peer_a.read_exact(&mut got).unwrap();
                assert_eq!(got[8..], round.to_le_bytes());
                peer_a.write_all(b"+").unwrap();
            }
            inversions
        });
        rt.block_on(rt.spawn(async move {
            let mut a = a;
            let udp = spinpark_net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let mut go = [0u8; 1];
            for round in 0..ROUNDS {
                let r = round.to_le_bytes();
                a.write_all(&r).await.unwrap();
                a.write_all(&r).await.unwrap(); // queued
                udp.send_to(&r, to).await.unwrap();
                a.read_exact(&mut go).await.unwrap(); // ends the poll
            }
        }))
        .unwrap();
        assert_eq!(
            checker.join().unwrap(),
            0,
            "{flavour}: the datagram before the stream's bytes"
        );
    }
}
