//! UDP over the reactor, on the model of `tcp.rs`: round trips, many sockets, connected
//! sockets, truncation, faults. 127.0.0.1 and port 0 only.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::time::timeout;
use spinpark_net::UdpSocket;

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

async fn guard<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match timeout(Duration::from_secs(60), f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: no progress in 60 s"),
    }
}

/// Echoes every datagram back to its sender until dropped.
async fn echo_server() -> (std::net::SocketAddr, spinpark_executor::JoinHandle<()>) {
    let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = s.local_addr().unwrap();
    let h = spawn(async move {
        let mut buf = [0u8; 2048];
        loop {
            let (n, from) = s.recv_from(&mut buf).await.unwrap();
            s.send_to(&buf[..n], from).await.unwrap();
        }
    });
    (addr, h)
}

/// Sends until the echo comes back: loopback UDP does not drop under this load, but a
/// retry (bounded) keeps the test honest about UDP's contract.
async fn round_trip(c: &UdpSocket, msg: &[u8]) -> Vec<u8> {
    let mut buf = [0u8; 2048];
    for _ in 0..10 {
        c.send(msg).await.unwrap();
        if let Ok(r) = timeout(Duration::from_secs(5), c.recv(&mut buf)).await {
            return buf[..r.unwrap()].to_vec();
        }
    }
    panic!("no echo after 10 tries");
}

#[test]
fn echo_round_trips() {
    rt().block_on(guard("udp echo", async {
        let (addr, server) = echo_server().await;
        let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        c.connect(addr).await.unwrap();
        assert_eq!(c.peer_addr().unwrap(), addr);
        for i in 0..1000u32 {
            let msg = i.to_be_bytes();
            assert_eq!(round_trip(&c, &msg).await, msg);
        }
        server.abort();
    }));
}

#[test]
fn many_sockets_at_once() {
    rt().block_on(guard("udp many", async {
        let (addr, server) = echo_server().await;
        let mut clients = Vec::new();
        for i in 0..100u32 {
            clients.push(spawn(async move {
                let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                c.connect(addr).await.unwrap();
                for j in 0..20u32 {
                    let msg = (i * 1000 + j).to_le_bytes();
                    assert_eq!(round_trip(&c, &msg).await, msg);
                }
            }));
        }
        for c in clients {
            c.await.unwrap();
        }
        server.abort();
    }));
}

#[test]
fn send_to_recv_from_peek_and_try() {
    rt().block_on(guard("udp unconnected", async {
        let a = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let mut buf = [0u8; 16];
        assert_eq!(
            b.try_recv_from(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        // A receiving task and the sender share `a`.
        let receiver = {
            let a = a.clone();
            spawn(async move {
                let mut buf = [0u8; 16];
                let (n, from) = a.recv_from(&mut buf).await.unwrap();
                (buf[..n].to_vec(), from)
            })
        };
        b.send_to(b"to a", a_addr).await.unwrap();
        assert_eq!(receiver.await.unwrap(), (b"to a".to_vec(), b_addr));

        a.send_to(b"peek", b_addr).await.unwrap();
        let (n, from) = b.peek_from(&mut buf).await.unwrap();
        assert_eq!((&buf[..n], from), (&b"peek"[..], a_addr));
        // Still queued after the peek.
        b.readable().await.unwrap();
        let (n, _) = b.try_recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"peek");

        // A datagram longer than the buffer is truncated, and the next one is intact.
        a.send_to(&[7u8; 100], b_addr).await.unwrap();
        a.send_to(b"next", b_addr).await.unwrap();
        let mut small = [0u8; 10];
        assert_eq!(b.recv_from(&mut small).await.unwrap().0, 10);
        assert_eq!(small, [7u8; 10]);
        let (n, _) = b.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"next");
    }));
}

#[test]
fn faults_are_clear_errors() {
    rt().block_on(guard("udp faults", async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let taken = a.local_addr().unwrap();
        let e = UdpSocket::bind(taken).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert_eq!(e.raw_os_error(), Some(libc::EADDRINUSE), "{e}");
        // send on an unconnected socket.
        assert!(a.send(b"x").await.is_err());
        // A connected socket learns that nobody listens at the peer (ICMP port unreachable).
        let gone = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let gone_addr = gone.local_addr().unwrap();
        drop(gone);
        a.connect(gone_addr).await.unwrap();
        a.send(b"anyone?").await.unwrap();
        let mut buf = [0u8; 8];
        let e = a.recv(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        a.set_broadcast(true).unwrap();
        assert!(a.broadcast().unwrap());
        a.set_ttl(9).unwrap();
        assert_eq!(a.ttl().unwrap(), 9);
    }));
}

/// Runs `f` on its own thread and fails the test if it has not finished within `secs`: a
/// task that spins inside one poll stalls its worker, and a runtime timeout around it would
/// never be polled again.
fn within(secs: u64, what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung for {secs} s"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// A connected socket whose peer port is closed: after `send`, the kernel queues
/// `ECONNREFUSED` (ICMP port unreachable) and epoll reports `EPOLLERR`.
async fn refused_socket() -> UdpSocket {
    let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    s.connect(closed_addr).await.unwrap();
    s.send(b"anyone?").await.unwrap();
    s
}

/// The error is reported once; the next `recv` waits. (The error bit used to stay set, so
/// that `recv` retried `WouldBlock` inside one poll for ever: its timeout never fired
/// and the worker was lost to every other task). Here the second `recv` runs in a task of its
/// own while this one does a timer and a UDP round trip on the same runtime, then the second
/// `recv` must still be waiting, and a timeout around a third must fire.
#[test]
fn a_socket_error_is_reported_once_then_recv_waits() {
    within(60, "recv after ECONNREFUSED", || {
        rt().block_on(async {
            let s = Arc::new(refused_socket().await);
            let mut buf = [0u8; 8];
            let e = s.recv(&mut buf).await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);

            let waiting = {
                let s = s.clone();
                spawn(async move {
                    let mut buf = [0u8; 8];
                    s.recv(&mut buf).await.map(|n| buf[..n].to_vec())
                })
            };
            // Other tasks run meanwhile: a timer and an echo round trip.
            spinpark_net::time::sleep(Duration::from_millis(20)).await;
            let (addr, server) = echo_server().await;
            let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            c.connect(addr).await.unwrap();
            assert_eq!(round_trip(&c, b"ping").await, b"ping");
            server.abort();
            assert!(
                !waiting.is_finished(),
                "nothing was sent to the socket, yet its second recv returned"
            );
            waiting.abort();

            let r = timeout(Duration::from_millis(200), s.recv(&mut buf)).await;
            assert!(r.is_err(), "the recv should have timed out, got {r:?}");
        })
    });
}
