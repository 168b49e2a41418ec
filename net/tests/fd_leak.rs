//! No descriptor leaks: 10^4 connect/close cycles leave the process's fd count where it was.
//! (Its own test binary, so no other test opens descriptors meanwhile.)

use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder};
use spinpark_net::time::timeout;
use spinpark_net::{TcpListener, TcpStream};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn ten_thousand_connect_close_cycles_leak_no_descriptor() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spawn(async move {
            loop {
                let (mut s, _) = listener.accept().await.unwrap();
                spawn(async move {
                    let mut b = [0u8; 1];
                    if s.read_exact(&mut b).await.is_ok() {
                        let _ = s.write_all(&b).await;
                    }
                });
            }
        });
        // Warm up: the reactor's epoll fd and eventfd exist before we count.
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(b"w").await.unwrap();
        let mut b = [0u8; 1];
        c.read_exact(&mut b).await.unwrap();
        drop(c);
        spinpark_net::time::sleep(Duration::from_millis(50)).await;
        let before = open_fds();
        let cycles = async {
            for i in 0..10_000u32 {
                let mut c = TcpStream::connect(addr).await.unwrap();
                if i % 2 == 0 {
                    // Half of them exchange a byte; the others close at once.
                    c.write_all(&[i as u8]).await.unwrap();
                    c.read_exact(&mut b).await.unwrap();
                    assert_eq!(b[0], i as u8);
                }
            }
        };
        timeout(Duration::from_secs(300), cycles)
            .await
            .expect("cycles stalled");
        // The server's tasks see end of stream and drop their sockets; wait for that.
        let mut after = open_fds();
        for _ in 0..500 {
            if after <= before {
                break;
            }
            spinpark_net::time::sleep(Duration::from_millis(10)).await;
            after = open_fds();
        }
        assert!(
            after <= before,
            "descriptors leaked: {before} before, {after} after"
        );
        server.abort();
    });
}
