//! The current-thread flavour through the facade: the macros' `flavor`, TCP and timers on the
//! `block_on` thread, wake-ups from other threads while it waits in the reactor, and the sync
//! facade over an async client that owns a small runtime.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark::net::{TcpListener, TcpStream};
use spinpark::runtime::RuntimeFlavor;
use spinpark::time::{sleep, timeout, Instant};

/// Runs `f` on a thread of its own and fails if it does not finish in time.
fn within_watchdog<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung for 60 s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: failed (see above)"),
    }
}

#[spinpark::test]
async fn spinpark_test_is_current_thread_by_default() {
    let handle = spinpark::Handle::current();
    assert_eq!(handle.runtime_flavor(), RuntimeFlavor::CurrentThread);
    let me = thread::current().id();
    let there = spinpark::spawn(async { thread::current().id() })
        .await
        .unwrap();
    assert_eq!(there, me, "the task ran on another thread than the test's");
}

#[spinpark::test(flavor = "current_thread")]
async fn flavor_current_thread() {
    assert_eq!(
        spinpark::Handle::current().runtime_flavor(),
        RuntimeFlavor::CurrentThread
    );
}

#[spinpark::test(flavor = "multi_thread", worker_threads = 2)]
async fn flavor_multi_thread() {
    let handle = spinpark::Handle::current();
    assert_eq!(handle.runtime_flavor(), RuntimeFlavor::MultiThread);
    assert_eq!(handle.worker_threads(), 2);
}

#[spinpark::test(worker_threads = 2)]
async fn worker_threads_alone_asks_for_worker_threads() {
    assert_eq!(
        spinpark::Handle::current().runtime_flavor(),
        RuntimeFlavor::MultiThread
    );
}

#[spinpark::test(flavor = "current_thread", spin = "20us")]
async fn a_current_thread_runtime_may_spin_when_asked() {
    assert_eq!(
        spinpark::Handle::current().metrics().spin_window(),
        Duration::from_micros(20)
    );
}

#[spinpark::test]
async fn tcp_echo_and_timers_on_the_block_on_thread() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = spinpark::spawn(async move {
        let mut served = 0;
        while served < 3 {
            let (mut s, _) = listener.accept().await.unwrap();
            spinpark::spawn(async move {
                let mut buf = vec![0; 64];
                loop {
                    let n = s.read(&mut buf).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    s.write_all(&buf[..n]).await.unwrap();
                }
            });
            served += 1;
        }
    });
    let clients: Vec<_> = (0..3u8)
        .map(|i| {
            spinpark::spawn(async move {
                let mut c = TcpStream::connect(addr).await.unwrap();
                for round in 0..10u8 {
                    c.write_all(&[i, round]).await.unwrap();
                    let mut buf = [0; 2];
                    c.read_exact(&mut buf).await.unwrap();
                    assert_eq!(buf, [i, round]);
                }
            })
        })
        .collect();
    for c in clients {
        c.await.unwrap();
    }
    server.await.unwrap();

    let start = Instant::now();
    sleep(Duration::from_millis(20)).await;
    assert!(start.elapsed() >= Duration::from_millis(20));
    let r = timeout(Duration::from_millis(5), std::future::pending::<()>()).await;
    assert!(r.is_err());
}

#[test]
fn a_wake_from_another_thread_reaches_the_thread_parked_in_the_reactor() {
    within_watchdog("remote wake into the reactor", || {
        let rt = spinpark::Builder::new_current_thread().build().unwrap();
        for _ in 0..20 {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let got = rt.block_on(async move {
                // A far timer installs the reactor: the thread then parks in it, blocking until
                // the timer or a wake-up.
                let far = sleep(Duration::from_secs(3600));
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis(2));
                    tx.send(7).unwrap();
                });
                tokio::select! {
                    v = rx => v.unwrap(),
                    _ = far => panic!("the hour passed"),
                }
            });
            assert_eq!(got, 7);
        }
        // A task spawned from another thread while the caller is parked in the reactor.
        let handle = rt.handle().clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let got = rt.block_on(async move {
            let _far = spinpark::spawn(sleep(Duration::from_secs(3600)));
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(2));
                let t = handle.spawn(async { thread::current().id() });
                tx.send(t).unwrap();
            });
            rx.await.unwrap().await.unwrap()
        });
        assert_eq!(got, thread::current().id());
    });
}

/// A common pattern: a synchronous client that owns a small runtime and blocks on it
/// for each call (as mini-redis's blocking client does with tokio's current-thread runtime).
struct BlockingClient {
    rt: spinpark::Runtime,
    conn: TcpStream,
}

impl BlockingClient {
    fn connect(addr: std::net::SocketAddr) -> std::io::Result<BlockingClient> {
        let rt = spinpark::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let conn = rt.block_on(TcpStream::connect(addr))?;
        Ok(BlockingClient { rt, conn })
    }

    fn echo(&mut self, msg: &[u8]) -> std::io::Result<Vec<u8>> {
        let conn = &mut self.conn;
        self.rt.block_on(async move {
            conn.write_all(msg).await?;
            let mut buf = vec![0; msg.len()];
            timeout(Duration::from_secs(30), conn.read_exact(&mut buf)).await??;
            Ok(buf)
        })
    }
}

#[test]
fn a_blocking_client_over_a_current_thread_runtime() {
    within_watchdog("blocking client", || {
        // The server on a multi-thread runtime of its own.
        let server_rt = spinpark::Runtime::new().unwrap();
        let listener = server_rt
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        server_rt.spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = vec![0; 64];
            loop {
                let n = s.read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                s.write_all(&buf[..n]).await.unwrap();
            }
        });
        let mut client = BlockingClient::connect(addr).unwrap();
        for i in 0..20u8 {
            assert_eq!(client.echo(&[i; 3]).unwrap(), vec![i; 3]);
        }
    });
}
