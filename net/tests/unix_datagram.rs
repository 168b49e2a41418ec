//! `UnixDatagram`: paths, pairs, the try_ family, buffers and readiness.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::io::Interest;
use spinpark_net::time::timeout;
use spinpark_net::UnixDatagram;

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// A directory of its own for a test's socket files, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("spinpark-dgram-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn an_echo_server_answers_each_client_at_its_path() {
    rt().block_on(async {
        let dir = Dir::new("echo");
        let server_path = dir.0.join("server");
        let server = Arc::new(UnixDatagram::bind(&server_path).unwrap());
        let echo = {
            let server = server.clone();
            spawn(async move {
                let mut buf = [0u8; 64];
                for _ in 0..3 {
                    let (n, from) = server.recv_from(&mut buf).await.unwrap();
                    let to = from.as_pathname().expect("a bound client").to_owned();
                    server.send_to(&buf[..n], to).await.unwrap();
                }
            })
        };
        for i in 0..3u8 {
            let client = UnixDatagram::bind(dir.0.join(format!("client{i}"))).unwrap();
            client.connect(&server_path).unwrap();
            client.send(&[i; 4]).await.unwrap();
            let mut buf = [0u8; 8];
            let n = timeout(Duration::from_secs(30), client.recv(&mut buf))
                .await
                .expect("no echo")
                .unwrap();
            assert_eq!(&buf[..n], &[i; 4]);
        }
        echo.await.unwrap();
    });
}

#[test]
fn try_recv_is_would_block_when_empty_and_takes_whole_datagrams() {
    rt().block_on(async {
        let (a, b) = UnixDatagram::pair().unwrap();
        let e = b.try_recv(&mut [0; 8]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        a.writable().await.unwrap();
        a.try_send(b"one").unwrap();
        a.try_send(b"two!").unwrap();
        let mut got = Vec::new();
        for _ in 0..100 {
            if got.len() == 2 {
                break;
            }
            timeout(Duration::from_secs(30), b.readable())
                .await
                .expect("never readable")
                .unwrap();
            let mut buf = Vec::with_capacity(16);
            match b.try_recv_buf(&mut buf) {
                Ok(_) => got.push(buf),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, vec![b"one".to_vec(), b"two!".to_vec()]);
    });
}

#[test]
fn ready_and_recv_buf_from_name_the_sender() {
    rt().block_on(async {
        let dir = Dir::new("from");
        let rx = UnixDatagram::bind(dir.0.join("rx")).unwrap();
        let tx = UnixDatagram::bind(dir.0.join("tx")).unwrap();
        let ready = tx.ready(Interest::WRITABLE).await.unwrap();
        assert!(ready.is_writable());
        tx.send_to(b"hello", dir.0.join("rx")).await.unwrap();
        let mut buf = Vec::with_capacity(16);
        let (n, from) = timeout(Duration::from_secs(30), rx.recv_buf_from(&mut buf))
            .await
            .expect("nothing came")
            .unwrap();
        assert_eq!((n, &buf[..]), (5, &b"hello"[..]));
        assert_eq!(from.as_pathname(), Some(dir.0.join("tx").as_path()));
    });
}

#[test]
fn a_send_to_a_missing_path_keeps_its_errno() {
    rt().block_on(async {
        let s = UnixDatagram::unbound().unwrap();
        let e = s
            .send_to(b"x", "/nonexistent-spinpark/sock")
            .await
            .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    });
}
