//! The `tokio-compat` feature: tokio-bound code inside spinpark tasks, on blocking-pool
//! threads and in `block_on`, with no wrapping of futures.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The name tokio gives the background runtime's threads.
const TOKIO_THREAD: &str = "spinpark-tokio-compat";

fn compat_runtime() -> spinpark::Runtime {
    spinpark::Builder::new()
        .worker_threads(2)
        .tokio_compat()
        .build()
        .expect("build a spinpark runtime with the tokio-compat context")
}

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_string()
}

/// A spinpark echo server for `conns` connections, on 127.0.0.1 with a port of the OS's
/// choosing. It runs on spinpark's own sockets; the clients below use tokio's.
async fn spinpark_echo_server(conns: usize) -> SocketAddr {
    let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().unwrap();
    spinpark::spawn(async move {
        for _ in 0..conns {
            let (mut stream, _) = listener.accept().await.expect("accept");
            spinpark::spawn(async move {
                let mut buf = [0u8; 64];
                loop {
                    // Named in full: with the `tokio-io` feature the stream has tokio's
                    // methods of the same names too.
                    match AsyncReadExt::read(&mut stream, &mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if AsyncWriteExt::write_all(&mut stream, &buf[..n])
                                .await
                                .is_err()
                            {
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    addr
}

/// One round trip through a `tokio::net::TcpStream`: what a tokio-bound client does.
async fn tokio_round_trip(addr: SocketAddr, msg: &[u8]) -> Vec<u8> {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("tokio connect to the local echo server");
    stream.write_all(msg).await.expect("tokio write");
    let mut back = vec![0u8; msg.len()];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut back))
        .await
        .expect("the echo did not come back within 10 s")
        .expect("tokio read");
    back
}

#[test]
fn tokio_spawn_runs_on_the_background_runtime() {
    let rt = compat_runtime();
    let (spinpark_thread, tokio_thread, sum) = rt.block_on(async {
        let task = spinpark::spawn(async {
            let here = thread_name();
            let tokio_task = tokio::spawn(async { (thread_name(), 20 + 22) });
            // A tokio JoinHandle, awaited from a spinpark task.
            let (there, n) = tokio_task.await.expect("the tokio task failed");
            (here, there, n)
        });
        task.await.expect("the spinpark task failed")
    });
    assert!(
        spinpark_thread.starts_with("spinpark-worker"),
        "the spinpark task ran on {spinpark_thread:?}"
    );
    assert!(
        tokio_thread.starts_with(TOKIO_THREAD),
        "tokio::spawn ran its task on {tokio_thread:?}"
    );
    assert_eq!(sum, 42);
}

#[test]
fn tokio_time_sleep_and_timeout() {
    let rt = compat_runtime();
    let outcome = rt.block_on(rt.spawn(async {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let expired =
            tokio::time::timeout(Duration::from_millis(5), std::future::pending::<()>()).await;
        let in_time = tokio::time::timeout(Duration::from_secs(10), async { 7 }).await;
        (true, expired.is_err(), in_time.ok())
    }));
    let (slept, expired, in_time) = outcome.expect("the spinpark task failed");
    assert!(slept);
    assert!(expired, "a pending future did not time out");
    assert_eq!(in_time, Some(7));
}

#[test]
fn tokio_tcp_from_a_task_a_blocking_thread_and_block_on() {
    let rt = compat_runtime();
    let handle = rt.handle().clone();
    rt.block_on(async move {
        let addr = spinpark_echo_server(3).await;

        // From a spinpark task.
        let from_task = spinpark::spawn(tokio_round_trip(addr, b"task"));
        assert_eq!(from_task.await.expect("task"), b"task");

        // From a blocking-pool thread, which is inside the tokio context for its life.
        let from_blocking = spinpark::spawn_blocking(move || {
            assert!(
                tokio::runtime::Handle::try_current().is_ok(),
                "no tokio context on a blocking-pool thread"
            );
            handle.block_on(tokio_round_trip(addr, b"blocking"))
        });
        assert_eq!(from_blocking.await.expect("blocking"), b"blocking");

        // From block_on itself (this future).
        assert_eq!(tokio_round_trip(addr, b"block_on").await, b"block_on");
    });
}

#[test]
fn worker_thread_count_is_configurable() {
    let rt = spinpark::Builder::new()
        .worker_threads(1)
        .tokio_compat_threads(2)
        .build()
        .unwrap();
    let workers =
        rt.block_on(rt.spawn(async { tokio::runtime::Handle::current().metrics().num_workers() }));
    assert_eq!(workers.unwrap(), 2);
    let one = compat_runtime();
    let workers = one.block_on(async { tokio::runtime::Handle::current().metrics().num_workers() });
    assert_eq!(workers, 1, "the default is one tokio worker thread");
}

#[test]
fn without_the_option_there_is_no_tokio_context() {
    let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    let (in_block_on, in_task, in_blocking) = rt.block_on(async {
        let in_block_on = tokio::runtime::Handle::try_current().is_ok();
        let in_task = spinpark::spawn(async { tokio::runtime::Handle::try_current().is_ok() });
        let in_blocking =
            spinpark::spawn_blocking(|| tokio::runtime::Handle::try_current().is_ok());
        (
            in_block_on,
            in_task.await.unwrap(),
            in_blocking.await.unwrap(),
        )
    });
    assert!(!in_block_on && !in_task && !in_blocking);
    // And the caller's thread is left as it was after a compat block_on.
    compat_runtime().block_on(async {});
    assert!(tokio::runtime::Handle::try_current().is_err());
}

#[test]
fn the_background_runtime_stops_with_the_spinpark_runtime() {
    let rt = compat_runtime();
    let tokio_handle = rt.block_on(async {
        let addr = spinpark_echo_server(1).await;
        // Tasks left waiting on tokio's timer and on a tokio socket when the runtime drops:
        // they are dropped inside the context, before tokio stops.
        spinpark::spawn(tokio::time::sleep(Duration::from_secs(3600)));
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        spinpark::spawn(async move {
            let mut buf = [0u8; 8];
            let _ = stream.read(&mut buf).await;
        });
        tokio::runtime::Handle::current()
    });
    drop(rt);
    // The background runtime is gone: a task spawned on it now is cancelled, not run.
    let plain = spinpark::Builder::new().worker_threads(1).build().unwrap();
    let late = plain.block_on(tokio_handle.spawn(async { 1 }));
    assert!(
        late.as_ref().is_err_and(|e| e.is_cancelled()),
        "the tokio runtime still ran a task after spinpark shut down: {late:?}"
    );
}

#[spinpark::test(tokio_compat)]
async fn the_test_attribute_turns_it_on() {
    tokio::time::sleep(Duration::from_millis(1)).await;
    let n = tokio::spawn(async { thread_name() }).await.unwrap();
    assert!(n.starts_with(TOKIO_THREAD), "{n:?}");
}

#[spinpark::test(worker_threads = 1, tokio_compat, spin = "0")]
async fn the_flag_mixes_with_other_arguments() {
    let t =
        spinpark::spawn(async { tokio::time::timeout(Duration::from_secs(10), async { 5 }).await });
    assert_eq!(t.await.unwrap().unwrap(), 5);
}

#[test]
fn dropping_the_runtime_inside_a_tokio_runtime_does_not_panic() {
    // tokio panics when one of its runtimes is shut down with a wait from inside another
    // runtime's async context; spinpark stops its background runtime from a helper thread.
    let rt = compat_runtime();
    rt.block_on(rt.spawn(async { tokio::time::sleep(Duration::from_millis(1)).await }))
        .unwrap();
    let outer = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    outer.block_on(async move {
        let tokio_handle = rt.block_on(async { tokio::runtime::Handle::current() });
        drop(rt);
        // The background runtime is stopped: its timer and tasks are gone.
        assert!(tokio_handle.spawn(async {}).await.is_err());
    });
}

#[test]
fn tokio_block_in_place_after_queued_writes_gets_its_answer() {
    // A handler writes a request in two writes (the second is queued for the poll's end to
    // push), then waits for the answer inside tokio's own `block_in_place`, which spinpark
    // cannot see: the executor's late runner pushes the queued bytes, so the peer answers and
    // nothing hangs.
    let rt = compat_runtime();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = [0u8; 7];
        s.read_exact(&mut req).unwrap();
        assert_eq!(&req, b"request");
        s.write_all(b"answer").unwrap();
    });
    let answer = rt
        .block_on(rt.spawn(async move {
            let mut s = spinpark::net::TcpStream::connect(addr).await.unwrap();
            AsyncWriteExt::write_all(&mut s, b"req").await.unwrap();
            AsyncWriteExt::write_all(&mut s, b"uest").await.unwrap();
            // A blocking wait on the socket by other means than the stream (which stays
            // alive, its queued bytes not pushed): poll(2) on its fd, then a read.
            let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
            let got = tokio::task::block_in_place(move || {
                let mut pfd = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd on our stack; the fd stays open (`s` lives on).
                let ready = unsafe { libc::poll(&mut pfd, 1, 30_000) };
                let mut got = [0u8; 6];
                // SAFETY: reads at most 6 bytes into the array on our stack.
                let n = unsafe { libc::recv(fd, got.as_mut_ptr().cast(), 6, libc::MSG_WAITALL) };
                (ready, n, got)
            });
            drop(s);
            got
        }))
        .unwrap();
    peer.join().unwrap();
    let (ready, n, got) = answer;
    assert_eq!(
        (ready, n),
        (1, 6),
        "no answer within 30 s: the request was held"
    );
    assert_eq!(&got, b"answer");
}
