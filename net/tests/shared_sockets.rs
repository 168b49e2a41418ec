//! Sockets shared by several tasks, and writes the kernel only takes part of: every waiting
//! task is woken, and readiness is cleared only when the kernel really refused bytes.
//! Everything runs on 127.0.0.1 with port 0 and stops by itself.

use std::future::Future;
use std::io::{IoSlice, Read};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::time::{sleep, timeout};
use spinpark_net::{TcpListener, TcpStream, UdpSocket};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// Fails the test with a message instead of hanging CI.
async fn guard<T>(what: &str, f: impl Future<Output = T>) -> T {
    match timeout(Duration::from_secs(30), f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: no progress in 30 s"),
    }
}

/// A future that counts the polls of `F` that returned `Pending`.
struct CountPending<F> {
    fut: Pin<Box<F>>,
    pending: Arc<AtomicUsize>,
}

impl<F: Future> Future for CountPending<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let r = self.fut.as_mut().poll(cx);
        if r.is_pending() {
            self.pending.fetch_add(1, SeqCst);
        }
        r
    }
}

/// Spawns `fut` and returns once it has been polled and is waiting.
async fn spawn_waiting<F>(fut: F) -> spinpark_executor::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let pending = Arc::new(AtomicUsize::new(0));
    let h = spawn(CountPending {
        fut: Box::pin(fut),
        pending: pending.clone(),
    });
    for _ in 0..30_000 {
        if pending.load(SeqCst) > 0 {
            return h;
        }
        sleep(Duration::from_millis(1)).await;
    }
    panic!("the spawned task never got to wait");
}

#[test]
fn aborting_one_of_two_acceptors_leaves_the_other_woken() {
    rt().block_on(async {
        let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await.unwrap());
        let addr = listener.local_addr().unwrap();
        let l = listener.clone();
        let first = spawn_waiting(async move { l.accept().await.map(|(s, _)| s) }).await;
        let l = listener.clone();
        let second = spawn_waiting(async move { l.accept().await.map(|(s, _)| s) }).await;
        second.abort();
        assert!(second.await.unwrap_err().is_cancelled());
        let _client = TcpStream::connect(addr).await.unwrap();
        let accepted = guard("the remaining acceptor", first).await.unwrap();
        accepted.unwrap();
    });
}

#[test]
fn aborting_one_of_two_readers_leaves_the_other_woken() {
    rt().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let server = Arc::new(server);
        let read_one = |s: Arc<TcpStream>| async move {
            let mut buf = [0u8; 16];
            let n = (&*s).read(&mut buf).await?;
            Ok::<_, std::io::Error>(buf[..n].to_vec())
        };
        let first = spawn_waiting(read_one(server.clone())).await;
        let second = spawn_waiting(read_one(server.clone())).await;
        second.abort();
        assert!(second.await.unwrap_err().is_cancelled());
        client.write_all(b"hello").await.unwrap();
        let got = guard("the remaining reader", first).await.unwrap();
        assert_eq!(got.unwrap(), b"hello");
    });
}

#[test]
fn aborting_one_of_two_udp_receivers_leaves_the_other_woken() {
    rt().block_on(async {
        let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let addr = socket.local_addr().unwrap();
        let recv_one = |s: Arc<UdpSocket>| async move {
            let mut buf = [0u8; 16];
            let (n, _) = s.recv_from(&mut buf).await?;
            Ok::<_, std::io::Error>(buf[..n].to_vec())
        };
        let first = spawn_waiting(recv_one(socket.clone())).await;
        let second = spawn_waiting(recv_one(socket.clone())).await;
        second.abort();
        assert!(second.await.unwrap_err().is_cancelled());
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        sender.send_to(b"hello", addr).await.unwrap();
        let got = guard("the remaining receiver", first).await.unwrap();
        assert_eq!(got.unwrap(), b"hello");
    });
}

#[test]
fn two_readers_both_finish_when_data_then_end_of_stream_arrive() {
    rt().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let server = Arc::new(server);
        let read_one = |s: Arc<TcpStream>| async move {
            let mut buf = [0u8; 16];
            (&*s).read(&mut buf).await
        };
        let a = spawn_waiting(read_one(server.clone())).await;
        let b = spawn_waiting(read_one(server.clone())).await;
        client.write_all(b"x").await.unwrap();
        client.close().await.unwrap();
        let mut got = vec![
            guard("reader a", a).await.unwrap().unwrap(),
            guard("reader b", b).await.unwrap().unwrap(),
        ];
        got.sort();
        // One read the byte; the other read it or, after it was taken, the end of stream.
        assert!(got == [0, 1] || got == [1, 1], "{got:?}");
    });
}

#[test]
fn a_vectored_write_of_more_slices_than_iov_max_does_not_stall_the_next_write() {
    rt().block_on(async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        const SLICES: usize = 2000;
        let total = SLICES + 4;
        // The peer only reads (it never sends anything that could make the socket writable
        // again by accident), until it has every byte.
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while got.len() < total {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            got
        });
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let bytes: Vec<u8> = (0..SLICES).map(|i| i as u8).collect();
        let slices: Vec<IoSlice<'_>> = bytes.chunks(1).map(IoSlice::new).collect();
        let mut sent = 0;
        while sent < SLICES {
            let n = guard("write_vectored", stream.write_vectored(&slices[sent..]))
                .await
                .unwrap();
            assert!(n > 0 && n <= 1024, "{n} bytes from 1-byte slices");
            sent += n;
        }
        guard(
            "the write after a clamped vectored write",
            stream.write_all(b"tail"),
        )
        .await
        .unwrap();
        let got = peer.join().unwrap();
        let mut want = bytes.clone();
        want.extend_from_slice(b"tail");
        assert_eq!(got, want);
    });
}
