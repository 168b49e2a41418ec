//! No descriptor leaks from the newer I/O types: Unix connect/close cycles, UDP sockets,
//! `AsyncFd`s and `Signal`s leave the process's fd count where it was. (Its own test binary,
//! so no other test opens descriptors meanwhile.)

use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder};
use spinpark_net::io::AsyncFd;
use spinpark_net::signal::{signal, SignalKind};
use spinpark_net::time::{sleep, timeout};
use spinpark_net::{UdpSocket, UnixListener, UnixStream};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn unix_udp_asyncfd_and_signal_cycles_leak_no_descriptor() {
    let dir = std::env::temp_dir().join(format!("spinpark-fdleak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let listener = UnixListener::bind(&path).unwrap();
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
        // Warm up: the reactor's fds and the signal eventfd exist before we count.
        drop(signal(SignalKind::user_defined2()).unwrap());
        drop(UnixStream::connect(&path).await.unwrap());
        sleep(Duration::from_millis(50)).await;
        let before = open_fds();
        let cycles = async {
            let mut b = [0u8; 1];
            for i in 0..2_000u32 {
                let mut c = UnixStream::connect(&path).await.unwrap();
                if i % 2 == 0 {
                    c.write_all(&[i as u8]).await.unwrap();
                    c.read_exact(&mut b).await.unwrap();
                    assert_eq!(b[0], i as u8);
                }
                let u = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                u.send_to(b"x", u.local_addr().unwrap()).await.unwrap();
                drop(u);
                let (x, y) = std::os::unix::net::UnixStream::pair().unwrap();
                x.set_nonblocking(true).unwrap();
                drop(AsyncFd::new(x).unwrap());
                drop(y);
                drop(UnixStream::pair().unwrap());
                if i % 10 == 0 {
                    drop(signal(SignalKind::user_defined2()).unwrap());
                }
            }
        };
        timeout(Duration::from_secs(300), cycles)
            .await
            .expect("cycles stalled");
        let mut after = open_fds();
        for _ in 0..500 {
            if after <= before {
                break;
            }
            sleep(Duration::from_millis(10)).await;
            after = open_fds();
        }
        assert!(
            after <= before,
            "descriptors leaked: {before} before, {after} after"
        );
        server.abort();
    });
    let _ = std::fs::remove_dir_all(&dir);
}
