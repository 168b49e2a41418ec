//! `TcpSocket` options before bind/listen/connect, and host names resolved off the workers.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::time::timeout;
use spinpark_net::{lookup_host, TcpListener, TcpSocket, TcpStream, UdpSocket};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

fn local() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

#[test]
fn options_are_set_before_listen_and_connect() {
    rt().block_on(async {
        let s = TcpSocket::new_v4().unwrap();
        s.set_reuseaddr(true).unwrap();
        assert!(s.reuseaddr().unwrap());
        s.set_recv_buffer_size(128 * 1024).unwrap();
        // Linux doubles the value (for its bookkeeping) within its limits.
        assert!(s.recv_buffer_size().unwrap() >= 128 * 1024);
        s.set_keepalive(true).unwrap();
        assert!(s.keepalive().unwrap());
        s.bind(local()).unwrap();
        let addr = s.local_addr().unwrap();
        assert_ne!(addr.port(), 0);
        let listener = s.listen(16).unwrap();
        assert_eq!(listener.local_addr().unwrap(), addr);

        let c = TcpSocket::new_for(&addr).unwrap();
        c.set_send_buffer_size(64 * 1024).unwrap();
        assert!(c.send_buffer_size().unwrap() >= 64 * 1024);
        c.set_nodelay(true).unwrap();
        let server = spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut b = [0u8; 3];
            s.read_exact(&mut b).await.unwrap();
            s.write_all(&b).await.unwrap();
        });
        let mut stream = c.connect(addr).await.unwrap();
        assert!(
            stream.nodelay().unwrap(),
            "TCP_NODELAY set before connect was lost"
        );
        stream.write_all(b"abc").await.unwrap();
        let mut b = [0u8; 3];
        stream.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"abc");
        server.await.unwrap();
    });
}

#[test]
fn reuseport_lets_two_listeners_share_a_port() {
    rt().block_on(async {
        let a = TcpSocket::new_v4().unwrap();
        a.set_reuseport(true).unwrap();
        assert!(a.reuseport().unwrap());
        a.bind(local()).unwrap();
        let addr = a.local_addr().unwrap();
        let _la = a.listen(8).unwrap();
        // Without SO_REUSEPORT the port is taken: the OS error, as std gives it.
        let plain = TcpSocket::new_v4().unwrap();
        let e = plain.bind(addr).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert_eq!(e.raw_os_error(), Some(libc::EADDRINUSE), "{e}");
        let b = TcpSocket::new_v4().unwrap();
        b.set_reuseport(true).unwrap();
        b.bind(addr).unwrap();
        let _lb = b.listen(8).unwrap();
    });
}

#[test]
fn connect_errors_are_the_os_error() {
    rt().block_on(async {
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let e = TcpSocket::new_v4()
            .unwrap()
            .connect(closed)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        assert_eq!(e.raw_os_error(), Some(libc::ECONNREFUSED), "{e}");
    });
}

#[test]
fn host_names_are_resolved_on_the_blocking_pool() {
    let rt = rt();
    assert_eq!(rt.handle().blocking_threads(), 0);
    rt.block_on(async {
        // Literal addresses need no lookup, so no blocking thread.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        assert_eq!(spinpark_executor::Handle::current().blocking_threads(), 0);
        let port = listener.local_addr().unwrap().port();
        let accept = spawn(async move { listener.accept().await.map(drop) });
        // "localhost" is a name: looked up on the blocking pool.
        let c = timeout(
            Duration::from_secs(60),
            TcpStream::connect(("localhost", port)),
        )
        .await
        .unwrap()
        .unwrap();
        assert!(c.peer_addr().unwrap().ip().is_loopback());
        assert!(spinpark_executor::Handle::current().blocking_threads() >= 1);
        accept.await.unwrap().unwrap();

        let addrs: Vec<_> = lookup_host("localhost:9").await.unwrap().collect();
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.port() == 9));
        let l = TcpListener::bind("localhost:0").await.unwrap();
        assert!(l.local_addr().unwrap().ip().is_loopback());
        let u = UdpSocket::bind(("localhost", 0)).await.unwrap();
        assert!(u.local_addr().unwrap().ip().is_loopback());
        // A host:port string that is neither an address nor resolvable says which it was.
        let e = TcpStream::connect("not a host").await.unwrap_err();
        assert!(e.to_string().contains("not a host"), "{e}");
    });
}
