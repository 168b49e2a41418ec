//! `UnixSocket`: made, bound and then turned into a listener, a stream or a datagram socket;
//! a call that does not fit the socket's type is an `InvalidInput` error (tokio's texts).

use std::io::ErrorKind;
use std::path::PathBuf;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::UnixSocket;

fn rt() -> Runtime {
    Builder::new_current_thread().build().unwrap()
}

/// A fresh directory for this test's socket files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spinpark-usock-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_bound_stream_socket_listens_and_a_bound_client_connects_from_its_path() {
    let d = dir("stream");
    let (listen_path, peer_path) = (d.join("listen.sock"), d.join("peer.sock"));
    rt().block_on(async {
        let listener = {
            let s = UnixSocket::new_stream().unwrap();
            s.bind(&listen_path).unwrap();
            s.listen(16).unwrap()
        };
        let client = {
            let s = UnixSocket::new_stream().unwrap();
            s.bind(&peer_path).unwrap();
            s.connect(&listen_path)
        };
        let accepted = spawn(async move { listener.accept().await.unwrap() });
        let mut client = client.await.unwrap();
        let (mut server, _) = accepted.await.unwrap();
        let peer = server.peer_addr().unwrap();
        assert_eq!(peer.as_pathname(), Some(peer_path.as_path()));
        client.write_all(b"hello").await.unwrap();
        drop(client);
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"hello");
    });
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_bound_datagram_socket_echoes() {
    let d = dir("dgram");
    let (server_path, client_path) = (d.join("server.sock"), d.join("client.sock"));
    rt().block_on(async {
        let server = {
            let s = UnixSocket::new_datagram().unwrap();
            s.bind(&server_path).unwrap();
            s.datagram().unwrap()
        };
        let echo = spawn(async move {
            let mut buf = [0u8; 64];
            let (n, from) = server.recv_from(&mut buf).await.unwrap();
            let to = from.as_pathname().unwrap().to_path_buf();
            server.send_to(&buf[..n], to).await.unwrap();
        });
        let client = {
            let s = UnixSocket::new_datagram().unwrap();
            s.bind(&client_path).unwrap();
            s.datagram().unwrap()
        };
        client.connect(&server_path).unwrap();
        client.send(b"ECHO").await.unwrap();
        let mut buf = [0u8; 16];
        let n = client.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"ECHO");
        echo.await.unwrap();
    });
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn calls_that_do_not_fit_the_sockets_type_are_errors() {
    rt().block_on(async {
        let e = UnixSocket::new_datagram()
            .unwrap()
            .connect("nowhere.sock")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "connect cannot be called on a datagram socket"
        );
        let e = UnixSocket::new_datagram().unwrap().listen(8).unwrap_err();
        assert_eq!(
            e.to_string(),
            "listen cannot be called on a datagram socket"
        );
        let e = UnixSocket::new_stream().unwrap().datagram().unwrap_err();
        assert_eq!(
            e.to_string(),
            "datagram cannot be called on a stream socket"
        );
    });
}

#[test]
fn bind_addr_and_connect_addr_take_paths_and_abstract_names() {
    use spinpark_net::{UnixListener, UnixStream};
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::SocketAddr;
    let d = dir("addr");
    let by_path = SocketAddr::from_pathname(d.join("l.sock")).unwrap();
    let name = format!("spinpark-test-addr-{}", std::process::id());
    let by_name = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    rt().block_on(async {
        for addr in [&by_path, &by_name] {
            let listener = UnixListener::bind_addr(addr).unwrap();
            let accepted = spawn(async move { listener.accept().await.unwrap() });
            let mut client = UnixStream::connect_addr(addr).await.unwrap();
            let (mut server, _) = accepted.await.unwrap();
            client.write_all(b"x").await.unwrap();
            let mut b = [0u8; 1];
            server.read_exact(&mut b).await.unwrap();
            assert_eq!(&b, b"x");
        }
        let unnamed = std::os::unix::net::UnixDatagram::unbound()
            .unwrap()
            .local_addr()
            .unwrap();
        let e = UnixStream::connect_addr(&unnamed).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
    });
    std::fs::remove_dir_all(&d).unwrap();
}
