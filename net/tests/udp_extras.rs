//! tokio's extra `UdpSocket` methods: peeking at the sender, `BufMut` receives, readiness.

use std::io;
use std::time::Duration;

use spinpark_executor::{Builder, Runtime};
use spinpark_net::io::Interest;
use spinpark_net::time::timeout;
use spinpark_net::UdpSocket;

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

#[test]
fn peek_sender_then_recv_buf_from_agree() {
    rt().block_on(async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let e = b.try_peek_sender().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        a.send_to(b"hello", b.local_addr().unwrap()).await.unwrap();
        let from = timeout(Duration::from_secs(30), b.peek_sender())
            .await
            .expect("nothing came")
            .unwrap();
        assert_eq!(from, a.local_addr().unwrap());
        let mut buf = Vec::with_capacity(16);
        let (n, from2) = b.recv_buf_from(&mut buf).await.unwrap();
        assert_eq!((n, from2, &buf[..]), (5, from, &b"hello"[..]));
        let mut more = Vec::with_capacity(16);
        let e = b.try_recv_buf(&mut more).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    });
}

#[test]
fn ready_and_socket_options() {
    rt().block_on(async {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let r = timeout(Duration::from_secs(30), s.ready(Interest::WRITABLE))
            .await
            .expect("never writable")
            .unwrap();
        assert!(r.is_writable());
        s.set_multicast_ttl_v4(4).unwrap();
        assert_eq!(s.multicast_ttl_v4().unwrap(), 4);
        s.set_multicast_loop_v4(false).unwrap();
        assert!(!s.multicast_loop_v4().unwrap());
        s.set_tos_v4(0x08).unwrap();
        assert_eq!(s.tos_v4().unwrap(), 0x08);
    });
}
