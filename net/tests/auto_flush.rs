//! `AutoFlush` (`net/src/auto_flush.rs`): buffered writes that flush themselves. Every path
//! that ends a poll or a stream sends the buffer without a `flush`: the poll returning
//! `Pending`, completing, panicking or being aborted; a poll that runs long (the late runner);
//! a full buffer; `flush`, `close`, the writer's drop; a socket with no room (the rest goes at
//! its next write event, with the task parked elsewhere); program order against a plain
//! socket written in the same poll; errors reported by the next write or flush. Each on
//! current-thread, 1 worker and 2 workers where the flavour matters. Every wait is bounded.

use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use spinpark_executor::{Builder, Runtime};
use spinpark_net::io::AutoFlush;
use spinpark_net::{TcpListener, TcpStream};

const BOUND: Duration = Duration::from_secs(30);

fn flavours() -> Vec<(&'static str, Runtime)> {
    vec![
        (
            "current-thread",
            Builder::new_current_thread().build().unwrap(),
        ),
        (
            "1 worker",
            Builder::new().worker_threads(1).build().unwrap(),
        ),
        (
            "2 workers",
            Builder::new().worker_threads(2).build().unwrap(),
        ),
    ]
}

/// A spinpark stream and its std peer (blocking, with a read timeout of `BOUND`).
async fn tcp_pair() -> (TcpStream, std::net::TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (ours, _) = listener.accept().await.unwrap();
    ours.set_nodelay(true).unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    (ours, peer)
}

fn read_n(peer: &mut std::net::TcpStream, n: usize) -> Vec<u8> {
    let mut got = vec![0u8; n];
    peer.read_exact(&mut got).unwrap();
    got
}

/// A future that returns `Pending` once (waking itself), ending the task's poll.
async fn end_poll() {
    let mut once = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut once, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}

/// Bytes `0..n` as a pattern.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[test]
fn writes_are_buffered_in_the_poll_and_sent_when_it_ends() {
    for (flavour, rt) in flavours() {
        let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let (buffered_in_poll, ours) = rt
            .block_on(rt.spawn(async move {
                let mut out = AutoFlush::new(ours);
                for i in 0..16u8 {
                    out.write_all(&[i; 10]).await.unwrap();
                }
                let buffered = out.buffered();
                end_poll().await;
                (buffered, out)
            }))
            .unwrap();
        // Buffered until the poll ended, unless the late runner sent it (a slow poll).
        assert!(
            buffered_in_poll == 160 || buffered_in_poll == 0,
            "{flavour}: {buffered_in_poll} buffered"
        );
        assert_eq!(ours.buffered(), 0, "{flavour}: the poll's end sent it");
        let want: Vec<u8> = (0..16u8).flat_map(|i| [i; 10]).collect();
        assert_eq!(read_n(&mut peer, 160), want, "{flavour}");
        drop(ours);
    }
}

#[test]
fn a_handler_that_never_flushes_answers_one_request_at_a_time_and_pipelined() {
    for (flavour, rt) in flavours() {
        let listener = rt
            .block_on(rt.spawn(async { TcpListener::bind("127.0.0.1:0").await.unwrap() }))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let server = rt.spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            // As the users write it: one write_all per reply, no flush anywhere.
            let mut conn = BufReader::new(AutoFlush::new(stream));
            let mut line = String::new();
            let mut served = 0;
            while conn.read_line(&mut line).await.unwrap() > 0 {
                conn.get_mut().write_all(b"+").await.unwrap();
                conn.get_mut().write_all(line.as_bytes()).await.unwrap();
                line.clear();
                served += 1;
            }
            served
        });
        // The client on a thread of its own: a current-thread runtime runs its tasks only
        // inside block_on, below.
        let client = std::thread::spawn(move || {
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            client.set_read_timeout(Some(BOUND)).unwrap();
            // One in flight: each reply must arrive with nobody flushing.
            for i in 0..50 {
                let req = format!("one {i}\n");
                client.write_all(req.as_bytes()).unwrap();
                assert_eq!(
                    read_n(&mut client, req.len() + 1),
                    format!("+{req}").into_bytes()
                );
            }
            // Pipelined: 64 requests in one write.
            let reqs: String = (0..64).map(|i| format!("p {i}\n")).collect();
            client.write_all(reqs.as_bytes()).unwrap();
            let want: String = (0..64).map(|i| format!("+p {i}\n")).collect();
            String::from_utf8(read_n(&mut client, want.len())).unwrap() == want
        });
        assert_eq!(rt.block_on(server).unwrap(), 114, "{flavour}");
        assert!(client.join().unwrap(), "{flavour}: pipelined replies");
    }
}

#[test]
fn a_poll_that_computes_after_writing_has_its_buffer_sent_by_the_late_runner() {
    for (flavour, rt) in flavours() {
        let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let got = Arc::new(AtomicBool::new(false));
        let g = got.clone();
        let watcher = std::thread::spawn(move || {
            assert_eq!(read_n(&mut peer, 5), b"reply");
            g.store(true, Ordering::SeqCst);
            peer
        });
        let in_time = rt
            .block_on(rt.spawn(async move {
                let mut out = AutoFlush::new(ours);
                out.write_all(b"re").await.unwrap();
                out.write_all(b"ply").await.unwrap();
                // CPU work without yielding, until the peer has the reply or the bound.
                let start = Instant::now();
                while !got.load(Ordering::SeqCst) && start.elapsed() < BOUND {
                    std::hint::spin_loop();
                }
                got.load(Ordering::SeqCst)
            }))
            .unwrap();
        assert!(in_time, "{flavour}: the buffer waited for the poll's end");
        drop(watcher.join().unwrap());
    }
}

#[test]
fn a_task_that_completes_panics_or_is_aborted_has_sent_its_buffer() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    for how in ["completes", "panics", "is aborted"] {
        let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let task = rt.spawn(async move {
            let mut out = AutoFlush::new(ours);
            out.write_all(b"last").await.unwrap();
            out.write_all(b" words").await.unwrap();
            match how {
                "panics" => panic!("the handler panics after writing"),
                // Never ends by itself: aborted below, after its first poll wrote.
                "is aborted" => std::future::pending::<()>().await,
                _ => {}
            }
            drop(out);
        });
        // The bytes arrive whatever became of the task.
        assert_eq!(read_n(&mut peer, 10), b"last words", "{how}");
        task.abort();
        let _ = rt.block_on(task);
    }
}

#[test]
fn writes_past_the_capacity_and_large_writes_arrive_whole_and_in_order() {
    for (flavour, rt) in flavours() {
        let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let data = pattern(200_000);
        let d = data.clone();
        let reader = std::thread::spawn(move || read_n(&mut peer, 200_000));
        rt.block_on(rt.spawn(async move {
            let mut out = AutoFlush::with_capacity(1000, ours);
            // Small, medium (over the capacity) and large writes, mixed, in one poll.
            let mut at = 0;
            for (i, len) in [10, 700, 5000, 1, 999, 1000, 60_000]
                .iter()
                .cycle()
                .enumerate()
            {
                let end = (at + len).min(d.len());
                out.write_all(&d[at..end]).await.unwrap();
                at = end;
                if at == d.len() {
                    break;
                }
                if i % 5 == 0 {
                    end_poll().await;
                }
            }
            end_poll().await;
            out
        }))
        .unwrap();
        assert_eq!(reader.join().unwrap(), data, "{flavour}");
    }
}

#[test]
fn flush_and_close_send_the_buffer_before_they_return() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
    let peer_after = rt
        .block_on(rt.spawn(async move {
            let mut out = AutoFlush::new(ours);
            out.write_all(b"flushed").await.unwrap();
            out.flush().await.unwrap();
            assert_eq!(out.buffered(), 0);
            // The peer has it now, in the same poll.
            let got = read_n(&mut peer, 7);
            out.write_all(b" then closed").await.unwrap();
            out.close().await.unwrap();
            let mut rest = Vec::new();
            peer.read_to_end(&mut rest).unwrap();
            (got, rest)
        }))
        .unwrap();
    assert_eq!(peer_after.0, b"flushed");
    assert_eq!(
        peer_after.1, b" then closed",
        "the bytes, then end of stream"
    );
}

#[test]
fn a_full_socket_gets_the_rest_of_the_buffer_while_the_task_waits_elsewhere() {
    for (flavour, rt) in flavours() {
        let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        // Kernel buffers far smaller than what is buffered, so it cannot go in one send. (Not
        // tiny: with a window of a few KiB, delayed acks make every step take 40 ms.)
        for (fd, opt) in [
            (std::os::fd::AsRawFd::as_raw_fd(&ours), libc::SO_SNDBUF),
            (std::os::fd::AsRawFd::as_raw_fd(&peer), libc::SO_RCVBUF),
        ] {
            let v: libc::c_int = 32 * 1024;
            // SAFETY: a valid socket and an int option of the right size.
            let r = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    (&v as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            assert_eq!(r, 0);
        }
        let data = pattern(1_500_000);
        let d = data.clone();
        let (done_tx, done_rx) = futures_channel_oneshot();
        let task = rt.spawn(async move {
            let mut out = AutoFlush::with_capacity(2 << 20, ours);
            out.write_all(&d[..1_000_000]).await.unwrap();
            // Buffered (it fits the capacity); the task now waits for something else and
            // never touches the writer until the peer has read everything.
            done_rx.await;
            out
        });
        // The peer on a thread of its own (a current-thread runtime runs the task only inside
        // block_on): it reads everything, then lets the task end.
        let reader = std::thread::spawn(move || {
            let got = read_n(&mut peer, 1_000_000);
            done_tx();
            (got, peer)
        });
        let mut out = rt.block_on(task).unwrap();
        let (got, mut peer) = reader.join().unwrap();
        assert_eq!(got, data[..1_000_000], "{flavour}");
        // And the writer still works afterwards (a flush that waits for the peer to read).
        let reader = std::thread::spawn(move || read_n(&mut peer, 500_000));
        rt.block_on(rt.spawn(async move {
            out.write_all(&data[1_000_000..]).await.unwrap();
            out.flush().await.unwrap();
            out
        }))
        .unwrap();
        assert_eq!(
            reader.join().unwrap(),
            pattern(1_500_000)[1_000_000..],
            "{flavour}"
        );
    }
}

/// A one-shot signal from a plain thread to a task: (fire, wait).
fn futures_channel_oneshot() -> (impl FnOnce(), impl std::future::Future<Output = ()>) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    (
        move || {
            let _ = tx.send(());
        },
        async move { rx.await.unwrap() },
    )
}

#[test]
fn a_plain_socket_written_after_buffered_bytes_in_one_poll_sends_after_them() {
    // Program order across sockets: the task buffers a "cause" on connection A, then writes
    // its "effect" plainly on connection B; a peer that has the effect must have the cause.
    let rt = Builder::new().worker_threads(2).build().unwrap();
    for round in 0..200 {
        let (a, mut peer_a) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let (b, mut peer_b) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
        let task = rt.spawn(async move {
            let mut a = AutoFlush::new(a);
            let mut b = b;
            a.write_all(b"cause").await.unwrap();
            b.write_all(b"effect").await.unwrap();
            // Stay in the poll a while: A's buffer must not wait for its end.
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(1) {
                std::hint::spin_loop();
            }
            (a, b)
        });
        assert_eq!(read_n(&mut peer_b, 6), b"effect");
        peer_a.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 5];
        let n = peer_a.read(&mut buf).unwrap_or(0);
        let n = if n < 5 {
            // The kernel may still be delivering what it was handed before "effect".
            peer_a.set_nonblocking(false).unwrap();
            n + peer_a.read(&mut buf[n..]).unwrap()
        } else {
            n
        };
        assert_eq!(&buf[..n], b"cause", "round {round}");
        drop(rt.block_on(task).unwrap());
    }
}

#[test]
fn an_error_from_a_flush_is_returned_by_the_next_write_or_flush() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let (ours, peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
    // The peer resets the connection (linger 0, then close).
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a linger of the right size.
    let r = unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(&peer),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
    drop(peer);
    let outcome = rt
        .block_on(rt.spawn(async move {
            let mut out = AutoFlush::new(ours);
            // Bounded: within a few polls a flush meets the reset, and a later call says so.
            for _ in 0..1000 {
                if let Err(e) = out.write_all(b"into a reset connection").await {
                    return Some(e.kind());
                }
                end_poll().await;
                if let Err(e) = out.flush().await {
                    return Some(e.kind());
                }
            }
            None
        }))
        .unwrap();
    let kind = outcome.expect("no write or flush reported the reset");
    assert!(
        matches!(
            kind,
            ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::NotConnected
        ),
        "{kind:?}"
    );
}

#[test]
fn dropping_the_writer_sends_what_the_socket_takes_and_ends_the_stream() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let (ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
    rt.block_on(rt.spawn(async move {
        let mut out = AutoFlush::new(ours);
        out.write_all(b"goodbye").await.unwrap();
        drop(out);
    }))
    .unwrap();
    let mut all = Vec::new();
    peer.read_to_end(&mut all).unwrap();
    assert_eq!(all, b"goodbye");
}

#[test]
fn outside_a_task_writes_go_out_at_once() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    rt.block_on(async {
        let (ours, mut peer) = tcp_pair().await;
        let mut out = AutoFlush::new(ours);
        out.write_all(b"now").await.unwrap();
        assert_eq!(out.buffered(), 0);
        // block_on's future is no task: nothing would end its poll, so nothing waits.
        assert_eq!(read_n(&mut peer, 3), b"now");
    });
}

#[test]
fn write_halves_and_unix_streams_take_it_too() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    rt.block_on(rt.spawn(async {
        let (ours, mut peer) = tcp_pair().await;
        let (_read, write) = ours.into_split();
        let mut out = AutoFlush::new(write);
        out.write_all(b"half").await.unwrap();
        end_poll().await;
        assert_eq!(read_n(&mut peer, 4), b"half");

        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let mut out = AutoFlush::new(spinpark_net::UnixStream::from_std(a).unwrap());
        let mut b = b;
        b.set_read_timeout(Some(BOUND)).unwrap();
        out.write_all(b"unix").await.unwrap();
        end_poll().await;
        let mut got = [0u8; 4];
        b.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"unix");
        // Reads pass through.
        b.write_all(b"back").unwrap();
        let mut back = [0u8; 4];
        out.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"back");
    }))
    .unwrap();
}

#[cfg(feature = "tokio-io")]
#[test]
fn tokio_s_traits_buffer_and_flush_the_same_way() {
    use tokio::io::AsyncWriteExt as _;
    let rt = Builder::new().worker_threads(1).build().unwrap();
    rt.block_on(rt.spawn(async {
        let (ours, mut peer) = tcp_pair().await;
        let mut out = AutoFlush::new(ours);
        tokio::io::AsyncWriteExt::write_all(&mut out, b"tokio")
            .await
            .unwrap();
        end_poll().await;
        assert_eq!(read_n(&mut peer, 5), b"tokio");
        peer.write_all(b"in").unwrap();
        let mut back = [0u8; 2];
        tokio::io::AsyncReadExt::read_exact(&mut out, &mut back)
            .await
            .unwrap();
        assert_eq!(&back, b"in");
        tokio::io::AsyncWriteExt::write_all(&mut out, b"bye")
            .await
            .unwrap();
        out.shutdown().await.unwrap();
        let mut rest = Vec::new();
        peer.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"bye");
    }))
    .unwrap();
}
