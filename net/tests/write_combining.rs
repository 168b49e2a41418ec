//! Write coalescing (`net/src/cork.rs`): on TCP, the small writes a task makes during one
//! poll after its first are queued in the kernel with `MSG_MORE` and pushed once the poll
//! ends, and every promise around that holds: tokio's "`Ok` means the kernel has the bytes"
//! (checked right after each write, and through runtime drop, plain-thread drop, `into_std`
//! and peers that stop reading), order, `flush`, the direct paths, the task's end by
//! completion, panic or abort, errors, a peer that never reads, fds bounded by live
//! connections, a reply not held by the work its task does next, `block_in_place`, and nested
//! executors. Unix streams send every write as it is made; the tests that use them check the
//! same promises there.
//!
//! "In the kernel" is read from the kernel: what our socket holds (`SIOCOUTQ`) plus what the
//! peer's holds unread (`FIONREAD`); "pushed" is our socket holding nothing unsent
//! (`SIOCOUTQNSD`). Every wait has a bound, so a hang fails the test.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream as StdUnix;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::Poll;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{Builder, Runtime};
use spinpark_net::{TcpListener, TcpStream, UnixStream};

const BOUND: Duration = Duration::from_secs(30);

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// A spinpark Unix stream (to be made inside the runtime from the std half) and its std peer,
/// non-blocking, for "has anything arrived?" checks.
fn pair() -> (StdUnix, StdUnix) {
    let (a, b) = StdUnix::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    (a, b)
}

/// What has arrived at `peer` so far, without waiting.
fn arrived(peer: &mut StdUnix) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match peer.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return out,
            Err(e) => panic!("reading the peer: {e}"),
        }
    }
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

/// An `ioctl` that reads an int about `fd`.
fn ioctl_int(fd: &impl AsRawFd, request: libc::Ioctl) -> usize {
    let mut v: libc::c_int = 0;
    // SAFETY: these requests write one int, on our stack.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), request, &mut v) };
    assert_eq!(r, 0, "ioctl: {}", std::io::Error::last_os_error());
    v as usize
}

/// Bytes our socket holds, sent but unacknowledged or not sent yet (`SIOCOUTQ`).
fn held(fd: &impl AsRawFd) -> usize {
    ioctl_int(fd, libc::TIOCOUTQ)
}

/// Bytes our socket holds that it has not sent yet (`SIOCOUTQNSD`, `linux/sockios.h`).
fn unsent(fd: &impl AsRawFd) -> usize {
    const SIOCOUTQNSD: libc::Ioctl = 0x894B;
    ioctl_int(fd, SIOCOUTQNSD)
}

/// Bytes waiting to be read (`FIONREAD`).
fn unread(fd: &impl AsRawFd) -> usize {
    ioctl_int(fd, libc::FIONREAD)
}

/// Data segments a TCP socket has sent (`TCP_INFO`'s `tcpi_data_segs_out`).
fn data_segments(fd: &impl AsRawFd) -> u32 {
    // SAFETY: tcp_info is plain old data; zero is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `info` and updates `len`.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0);
    info.tcpi_data_segs_out
}

/// Reads exactly `n` bytes from the std peer, within the bound.
fn read_n(peer: &mut std::net::TcpStream, n: usize) -> Vec<u8> {
    peer.set_nonblocking(false).unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut got = vec![0u8; n];
    peer.read_exact(&mut got).unwrap();
    got
}

#[test]
fn a_poll_s_small_writes_are_in_the_kernel_when_ok_and_leave_together_in_order() {
    let rt = rt();
    let (kept, segments, unsent_after, got) = rt
        .block_on(rt.spawn(async {
            let (mut ours, mut peer) = tcp_pair().await;
            ours.set_nodelay(true).unwrap();
            let before = data_segments(&ours);
            let mut kept = Vec::new();
            for i in 0..16u8 {
                ours.write_all(&[i; 10]).await.unwrap();
                // Every acknowledged byte is the kernel's: ours to send or the peer's to read.
                kept.push(held(&ours) + unread(&peer));
            }
            end_poll().await;
            let unsent_after = unsent(&ours);
            let got = read_n(&mut peer, 160);
            (kept, data_segments(&ours) - before, unsent_after, got)
        }))
        .unwrap();
    for (i, &k) in kept.iter().enumerate() {
        assert!(
            k >= 10 * (i + 1),
            "after write {i}: the kernel had {k} bytes"
        );
    }
    assert_eq!(unsent_after, 0, "the poll's end pushed what it queued");
    let want: Vec<u8> = (0..16u8).flat_map(|i| [i; 10]).collect();
    assert_eq!(got, want);
    // The first write, then one push: 2 segments, not a segment a write. A poll that lasts
    // long (a loaded or instrumented machine) also gets a push from the late runner every
    // 500 µs, hence the margin.
    assert!(segments <= 8, "16 writes in {segments} segments");
}

#[test]
fn a_large_write_goes_after_what_was_queued_before_it() {
    let rt = rt();
    let got = rt
        .block_on(rt.spawn(async {
            let (mut ours, mut peer) = tcp_pair().await;
            ours.write_all(b"first").await.unwrap();
            ours.write_all(b"second").await.unwrap(); // queued
            ours.write_all(&[7u8; 20_000]).await.unwrap(); // over the coalescing size: pushed
            ours.write_all(b"last").await.unwrap();
            end_poll().await;
            read_n(&mut peer, 5 + 6 + 20_000 + 4)
        }))
        .unwrap();
    let mut want = b"firstsecond".to_vec();
    want.extend_from_slice(&[7u8; 20_000]);
    want.extend_from_slice(b"last");
    assert_eq!(got, want);
}

#[test]
fn flush_try_write_and_into_std_push_what_was_queued() {
    let rt = rt();
    let (pushed, got) = rt
        .block_on(rt.spawn(async {
            let (mut ours, mut peer) = tcp_pair().await;
            ours.set_nodelay(true).unwrap();
            ours.write_all(b"a").await.unwrap();
            ours.write_all(b"b").await.unwrap(); // queued
            ours.flush().await.unwrap();
            let after_flush = unsent(&ours);
            ours.write_all(b"c").await.unwrap(); // queued
            ours.try_write(b"d").unwrap(); // an ordinary send: pushes
            let after_try = unsent(&ours);
            ours.write_all(b"e").await.unwrap(); // queued
            let std = ours.into_std().unwrap();
            let after_into = unsent(&std);
            let got = read_n(&mut peer, 5);
            drop(std);
            ((after_flush, after_try, after_into), got)
        }))
        .unwrap();
    assert_eq!(
        pushed,
        (0, 0, 0),
        "(flush, try_write, into_std) left bytes unsent"
    );
    assert_eq!(got, b"abcde");
}

#[test]
fn close_pushes_the_queued_bytes_before_end_of_stream() {
    let rt = rt();
    let got = rt
        .block_on(rt.spawn(async {
            let (mut s, mut peer) = tcp_pair().await;
            s.write_all(b"by").await.unwrap();
            s.write_all(b"e").await.unwrap(); // queued
            s.close().await.unwrap();
            peer.set_read_timeout(Some(BOUND)).unwrap();
            let mut got = Vec::new();
            peer.read_to_end(&mut got).unwrap();
            (got, s)
        }))
        .unwrap();
    assert_eq!(got.0, b"bye", "every byte, then end of stream");
}

#[test]
fn a_task_that_completes_panics_or_is_aborted_has_sent_its_bytes() {
    let rt = rt();
    let pair = || rt.block_on(rt.spawn(tcp_pair())).unwrap();
    // Completes: the stream is dropped with the future.
    let (ours, mut peer) = pair();
    rt.block_on(rt.spawn(async move {
        let mut s = ours;
        s.write_all(b"do").await.unwrap();
        s.write_all(b"ne").await.unwrap(); // queued
    }))
    .unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"done");

    // Panics after writing on a stream that outlives it.
    let (ours, mut peer) = pair();
    let shared = Arc::new(ours);
    let s = shared.clone();
    let r = rt.block_on(rt.spawn(async move {
        (&*s).write_all(b"before ").await.unwrap();
        (&*s).write_all(b"the panic").await.unwrap(); // queued
        panic!("the handler fails");
    }));
    assert!(r.unwrap_err().is_panic());
    assert_eq!(read_n(&mut peer, 16), b"before the panic");

    // Aborted while waiting, after writing.
    let (ours, mut peer) = pair();
    let shared = Arc::new(ours);
    let s = shared.clone();
    let (tx, rx) = mpsc::channel();
    let task = rt.spawn(async move {
        (&*s).write_all(b"then ").await.unwrap();
        (&*s).write_all(b"wait").await.unwrap(); // queued
        tx.send(()).unwrap();
        std::future::pending::<()>().await
    });
    rx.recv_timeout(BOUND).unwrap();
    task.abort();
    assert!(rt.block_on(task).unwrap_err().is_cancelled());
    assert_eq!(read_n(&mut peer, 9), b"then wait");
    drop(shared);
}

#[test]
fn writes_to_a_peer_that_never_reads_stop_at_a_bound_and_all_arrive_later() {
    const TOTAL: usize = 32 << 20; // far more than the socket buffers
    let rt = rt();
    let (ours, peer) = pair();
    let accepted = Arc::new(AtomicUsize::new(0));
    let a = accepted.clone();
    let writer = rt.spawn(async move {
        let mut s = UnixStream::from_std(ours).unwrap();
        let chunk = [0x5au8; 1000];
        let mut n = 0;
        while n < TOTAL {
            let len = chunk.len().min(TOTAL - n);
            s.write_all(&chunk[..len]).await.unwrap();
            n += len;
            a.store(n, Ordering::Relaxed);
        }
        s.flush().await.unwrap();
    });
    // Wait until the writer stops making progress (bounded: 200 checks).
    let mut last = usize::MAX;
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(20));
        let now = accepted.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        last = now;
    }
    let held = accepted.load(Ordering::Relaxed);
    assert!(
        held < TOTAL,
        "a peer that never reads must stop the writer (took {held})"
    );
    // Now read everything: it all arrives, and the writer finishes.
    let mut peer = peer;
    peer.set_nonblocking(false).unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut n = 0;
    let mut buf = vec![0u8; 1 << 16];
    while n < TOTAL {
        let k = peer.read(&mut buf).expect("all bytes arrive");
        assert!(k > 0, "end of stream after {n} of {TOTAL} bytes");
        assert!(buf[..k].iter().all(|&b| b == 0x5a));
        n += k;
    }
    rt.block_on(writer).unwrap();
}

/// A TCP connection: the spinpark side from `accept`, the std peer.
async fn tcp_pair() -> (TcpStream, std::net::TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (ours, _) = listener.accept().await.unwrap();
    (ours, peer)
}

/// Writes with `try_write` until the kernel refuses more (the peer does not read); returns
/// how many bytes it took.
fn fill(mut try_write: impl FnMut(&[u8]) -> std::io::Result<usize>) -> usize {
    let junk = vec![1u8; 1 << 16];
    let mut filled = 0;
    loop {
        match try_write(&junk) {
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return filled,
            Err(e) => panic!("{e}"),
        }
    }
}

/// Polls `fut` once: its output if it finished.
async fn polled_once<F: std::future::Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        Poll::Ready(out) => Poll::Ready(Some(out)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}

#[test]
fn a_small_write_the_kernel_has_no_room_for_is_not_acknowledged() {
    let rt = rt();
    let (taken, filled, mut peer, _s) = rt
        .block_on(rt.spawn(async {
            let (mut ours, peer) = tcp_pair().await;
            ours.write_all(b"first").await.unwrap(); // the poll's first write: direct
            let filled = fill(|b| ours.try_write(b));
            // A later small write in the same poll, queued with MSG_MORE where the kernel has
            // room: it has none, so it waits as a write to a full socket does.
            let taken = polled_once(ours.write(b"tail")).await;
            (taken.map(|r| r.unwrap()), filled, peer, ours)
        }))
        .unwrap();
    assert_eq!(taken, None, "acknowledged bytes the kernel had no room for");
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut got = vec![0u8; 5 + filled];
    peer.read_exact(&mut got).unwrap();
    assert_eq!(&got[..5], b"first");
}

/// 4 MiB in small and large writes, the pattern `i % 251`.
const BIG: usize = 4 << 20;

async fn write_big<W: futures_util::AsyncWrite + Unpin>(w: &mut W) {
    let data: Vec<u8> = (0..BIG).map(|i| (i % 251) as u8).collect();
    let mut at = 0;
    let mut step = 0;
    while at < BIG {
        // Mostly small writes (queued after a poll's first), now and then a large one.
        let len = if step % 7 == 6 {
            40_000
        } else {
            100 + step % 900
        };
        let len = len.min(BIG - at);
        w.write_all(&data[at..at + len]).await.unwrap();
        at += len;
        step += 1;
    }
}

/// Sets an int socket option (a small buffer, so that a slow reader keeps the writer waiting).
fn set_buffer(fd: &impl std::os::fd::AsRawFd, opt: libc::c_int, bytes: libc::c_int) {
    // SAFETY: setsockopt reads the int on our stack.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&bytes as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
}

/// A reader slower than the writer all along: 16 KiB a millisecond, every byte checked.
fn slow_reader(
    mut peer: impl Read + Send + 'static,
) -> std::thread::JoinHandle<Result<usize, String>> {
    std::thread::spawn(move || {
        let mut n = 0;
        let mut buf = vec![0u8; 16 << 10];
        loop {
            std::thread::sleep(Duration::from_millis(1));
            match peer.read(&mut buf) {
                Ok(0) => return Ok(n),
                Ok(k) => {
                    for (i, &b) in buf[..k].iter().enumerate() {
                        assert_eq!(b, ((n + i) % 251) as u8, "byte {}", n + i);
                    }
                    n += k;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("{e} after {n} bytes")),
            }
        }
    })
}

#[test]
fn acknowledged_bytes_survive_the_runtime_dropped_while_a_slow_reader_lags() {
    // TCP: the task writes 4 MiB to a reader slower than it, returns, and the runtime is
    // dropped at once: the reader gets every byte, then end of stream (as on tokio).
    let rt = rt();
    let (listener, addr) = rt.block_on(async {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = l.local_addr().unwrap();
        (l, a)
    });
    let peer = std::net::TcpStream::connect(addr).unwrap();
    set_buffer(&peer, libc::SO_RCVBUF, 32 << 10);
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let reader = slow_reader(peer);
    rt.block_on(rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        set_buffer(&s, libc::SO_SNDBUF, 32 << 10);
        write_big(&mut s).await;
    }))
    .unwrap();
    drop(rt);
    assert_eq!(reader.join().unwrap(), Ok(BIG));

    // Unix, and the stream dropped on a plain thread after the runtime is gone.
    let rt = self::rt();
    let (ours, peer) = StdUnix::pair().unwrap();
    set_buffer(&ours, libc::SO_SNDBUF, 32 << 10);
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let reader = slow_reader(peer);
    let s = rt
        .block_on(rt.spawn(async move {
            ours.set_nonblocking(true).unwrap();
            let mut s = UnixStream::from_std(ours).unwrap();
            write_big(&mut s).await;
            s
        }))
        .unwrap();
    drop(rt);
    std::thread::spawn(move || drop(s)).join().unwrap();
    assert_eq!(reader.join().unwrap(), Ok(BIG));
}

#[test]
fn into_std_after_writes_to_a_full_socket_returns_at_once_with_every_byte_kept() {
    let rt = rt();
    let (tx, rx) = mpsc::channel();
    let (mut peer, filled) = rt
        .block_on(rt.spawn(async move {
            let (mut ours, peer) = tcp_pair().await;
            ours.write_all(b"x").await.unwrap();
            let filled = fill(|b| ours.try_write(b));
            // Small writes the kernel has no room for: not taken.
            assert!(polled_once(ours.write_all(b"more")).await.is_none());
            // `into_std` on a plain thread: it must not wait for the peer.
            std::thread::spawn(move || tx.send(ours.into_std().map(drop)).unwrap());
            (peer, filled)
        }))
        .unwrap();
    // A hang fails the test (the old behaviour waited 30 s in poll(2)); the bound is not a
    // measure of speed.
    rx.recv_timeout(Duration::from_secs(10))
        .expect("into_std waited for a peer that does not read")
        .unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    assert_eq!(
        got.len(),
        1 + filled,
        "every acknowledged byte, then end of stream"
    );
}

#[test]
fn a_reply_is_not_held_by_the_work_its_task_does_next_in_the_same_poll() {
    // The handler writes its reply, then (in the same poll) keeps its thread busy until the
    // peer has the reply, or gives up after the bound. Held until the poll ends, the reply
    // would arrive only after the bound: the handler reports whether the peer had it first.
    // What a poll queued and did not push is pushed by the executor's late runner, on every
    // flavour, current-thread included (where no other worker exists).
    for (flavour, workers) in [("current-thread", 0), ("1 worker", 1), ("2 workers", 2)] {
        for (name, writes) in [
            ("one write", 1),
            ("header then body, flushed", 2),
            ("header then body, not flushed", 3),
        ] {
            let rt = match workers {
                0 => Builder::new_current_thread().build().unwrap(),
                n => Builder::new().worker_threads(n).build().unwrap(),
            };
            let (mut ours, mut peer) = rt.block_on(rt.spawn(tcp_pair())).unwrap();
            let got = Arc::new(AtomicUsize::new(0));
            let g = got.clone();
            let watcher = std::thread::spawn(move || {
                assert_eq!(read_n(&mut peer, 5), b"reply");
                g.store(5, Ordering::SeqCst);
                peer
            });
            let in_time = rt
                .block_on(rt.spawn(async move {
                    if writes == 1 {
                        ours.write_all(b"reply").await.unwrap();
                    } else {
                        ours.write_all(b"re").await.unwrap();
                        ours.write_all(b"ply").await.unwrap();
                        if writes == 2 {
                            ours.flush().await.unwrap();
                        }
                    }
                    // CPU work (here: waiting without yielding), bounded.
                    let start = std::time::Instant::now();
                    while got.load(Ordering::SeqCst) == 0 && start.elapsed() < BOUND {
                        std::hint::spin_loop();
                    }
                    (got.load(Ordering::SeqCst) > 0, ours)
                }))
                .unwrap();
            assert!(
                in_time.0,
                "{flavour}, {name}: the reply waited for the poll's end"
            );
            drop(watcher.join().unwrap());
        }
    }
}

#[test]
fn writes_after_the_peer_reset_the_connection_fail_in_the_same_poll() {
    let rt = rt();
    let results = rt
        .block_on(rt.spawn(async {
            let (mut ours, peer) = tcp_pair().await;
            // SO_LINGER 0: the close resets the connection.
            let zero = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            // SAFETY: setsockopt reads the struct on our stack.
            let r = unsafe {
                libc::setsockopt(
                    std::os::fd::AsRawFd::as_raw_fd(&peer),
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    (&zero as *const libc::linger).cast(),
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                )
            };
            assert_eq!(r, 0);
            drop(peer); // a reset
                        // Wait until the reset has arrived (a read sees it).
            let mut buf = [0u8; 8];
            let read = ours.read(&mut buf).await;
            assert!(read.is_err() || read.unwrap() == 0);
            // Ten small writes in one poll: the first already fails, as on tokio.
            let mut results = Vec::new();
            for _ in 0..10 {
                results.push(ours.write(b"late").await.map_err(|e| e.kind()));
            }
            results
        }))
        .unwrap();
    assert!(results[0].is_err(), "{results:?}");
}

/// The server of `dropped_sockets_with_peers_that_never_read_hold_no_fd`, run in a child
/// process (this test binary again) under a low fd limit.
const FD_CHILD: &str = "SPINPARK_WC_FD_CHILD";
/// Connections the child serves; more than its fd limit.
const FD_CONNECTIONS: usize = 150;

#[test]
fn dropped_sockets_with_peers_that_never_read_hold_no_fd() {
    if std::env::var_os(FD_CHILD).is_some() {
        return fd_child();
    }
    // The child serves one connection at a time: it writes to a peer that never reads until
    // the kernel takes no more and a short give-up timer fires, then drops the socket. Under
    // an fd limit of 64, with this process holding every peer open, it must accept all of
    // them and hold no fd past the live connection.
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "dropped_sockets_with_peers_that_never_read_hold_no_fd",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(FD_CHILD, "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let port: u16 = loop {
        let line = lines.next().expect("the child names its port").unwrap();
        // (The test harness prints the test's name on the same line, before it.)
        if let Some((_, p)) = line.split_once("port ") {
            break p.trim().parse().unwrap();
        }
    };
    let peers: Vec<_> = (0..FD_CONNECTIONS)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    let report = loop {
        let line = lines.next().expect("the child reports").unwrap();
        if let Some((_, r)) = line.split_once("report ") {
            break r.trim().to_string();
        }
    };
    drop(peers);
    assert!(child.wait().unwrap().success());
    let nums: Vec<usize> = report.split(' ').map(|n| n.parse().unwrap()).collect();
    let (served, errors, base, most) = (nums[0], nums[1], nums[2], nums[3]);
    assert_eq!(
        (served, errors),
        (FD_CONNECTIONS, 0),
        "accept failed: {report}"
    );
    assert!(
        most <= base + 4,
        "fds grew from {base} to {most} with one live connection at a time"
    );
}

fn fd_child() {
    let limit = libc::rlimit {
        rlim_cur: 64,
        rlim_max: 64,
    };
    // SAFETY: setrlimit reads the struct on our stack.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    let rt = rt();
    // A task, as a server's accept loop is (a `block_on` future's writes are never queued).
    rt.block_on(rt.spawn(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("port {}", listener.local_addr().unwrap().port());
        let base = fds();
        let (mut served, mut errors, mut most) = (0, 0, 0);
        while served < FD_CONNECTIONS && errors < 100 {
            let mut s = match listener.accept().await {
                Ok((s, _)) => s,
                Err(_) => {
                    errors += 1;
                    spinpark_net::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            served += 1;
            let chunk = [7u8; 1000];
            let write = async {
                for _ in 0..(8 << 10) {
                    if s.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
            };
            let give_up = spinpark_net::time::sleep(Duration::from_millis(20));
            futures_util::future::select(std::pin::pin!(write), std::pin::pin!(give_up)).await;
            drop(s);
            most = most.max(fds());
        }
        println!("report {served} {errors} {base} {most}");
    }))
    .unwrap();
}

#[test]
fn block_in_place_sends_what_was_written_before_it() {
    let rt = rt();
    let (ours, mut peer) = pair();
    // The peer answers once it has the request; the task blocks its thread waiting.
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let answerer = std::thread::spawn(move || {
        peer.set_nonblocking(false).unwrap();
        peer.set_read_timeout(Some(BOUND)).unwrap();
        let mut buf = [0u8; 3];
        peer.read_exact(&mut buf).unwrap();
        tx.send(buf.to_vec()).unwrap();
    });
    let got = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            s.write_all(b"req").await.unwrap();
            let got = spinpark_executor::block_in_place(|| rx.recv_timeout(BOUND));
            (got, s)
        }))
        .unwrap();
    answerer.join().unwrap();
    assert_eq!(got.0.expect("the request reached the peer"), b"req");
}

#[test]
fn a_future_polled_by_a_nested_executor_writes_at_once() {
    let rt = rt();
    let (ours, mut peer) = pair();
    let during = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            // Another executor's waker: the write must not wait for this task's poll.
            futures_executor_block_on(async { s.write_all(b"now").await.unwrap() });
            arrived(&mut peer)
        }))
        .unwrap();
    assert_eq!(during, b"now");
}

/// A minimal `block_on` (with a waker of its own), as a nested executor in a handler would be.
fn futures_executor_block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    for _ in 0..10_000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(Duration::from_millis(10));
    }
    panic!("the nested future did not complete");
}

#[test]
fn echo_with_pipelined_requests_replies_to_each_in_order() {
    // The idiomatic handler (read a request, write its reply, in a loop) with many requests
    // in flight: every reply arrives, in order.
    let rt = rt();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spinpark_executor::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut req = [0u8; 8];
            loop {
                match s.read_exact(&mut req).await {
                    Ok(()) => s.write_all(&req).await.unwrap(),
                    Err(_) => return,
                }
            }
        });
        let mut c = TcpStream::connect(addr).await.unwrap();
        let mut expected = Vec::new();
        for round in 0..50u64 {
            let mut batch = Vec::new();
            for i in 0..16u64 {
                batch.extend_from_slice(&(round * 16 + i).to_le_bytes());
            }
            c.write_all(&batch).await.unwrap();
            expected.extend_from_slice(&batch);
        }
        c.flush().await.unwrap();
        let mut got = vec![0u8; expected.len()];
        spinpark_net::time::timeout(BOUND, c.read_exact(&mut got))
            .await
            .expect("every reply within the bound")
            .unwrap();
        assert_eq!(got, expected);
        drop(c);
        server.await.unwrap();
    });
}

#[test]
fn the_premise_a_send_on_a_unix_pair_arrives_before_it_returns() {
    // A guard for the tests above: std's blocking peer really sees bytes synchronously on a
    // Unix pair (the premise of every "not sent yet" check).
    let (mut a, mut b) = pair();
    a.write_all(b"x").unwrap();
    assert_eq!(arrived(&mut b), b"x");
}

#[test]
fn an_owned_write_half_dropped_after_writing_shuts_down_after_the_bytes() {
    let rt = rt();
    let mut peer = rt
        .block_on(rt.spawn(async {
            let (s, peer) = tcp_pair().await;
            let (_read, mut write) = s.into_split();
            write.write_all(b"last ").await.unwrap();
            write.write_all(b"words").await.unwrap(); // queued
            drop(write); // in the same poll
            peer
        }))
        .unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"last words", "every byte, then end of stream");
}

/// A small deterministic generator (xorshift64*), so that a failing case can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn random_mixes_of_write_paths_keep_every_byte_in_order() {
    // Many connections on two workers; each server task writes a seeded random mix of small
    // (queued) and large (pushed) writes, vectored writes, flushes, try_writes and yields;
    // each client reads everything and checks it byte for byte.
    const CONNS: u64 = 16;
    const BYTES: usize = 1 << 20;
    let rt = rt();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut servers = Vec::new();
        let mut clients = Vec::new();
        for seed in 1..=CONNS {
            // One at a time, so that the accepted stream is this connect's.
            clients.push((seed, TcpStream::connect(addr).await.unwrap()));
            let (mut s, _) = listener.accept().await.unwrap();
            servers.push(spinpark_executor::spawn(async move {
                let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let mut n = 0usize;
                let byte = |i: usize| (i as u64).wrapping_mul(seed) as u8;
                while n < BYTES {
                    let len = match rng.below(4) {
                        0 => 1 + rng.below(64) as usize,
                        1 => 1 + rng.below(4096) as usize,
                        2 => 16_384 + rng.below(40_000) as usize,
                        _ => 1 + rng.below(20_000) as usize,
                    }
                    .min(BYTES - n);
                    let chunk: Vec<u8> = (n..n + len).map(byte).collect();
                    match rng.below(8) {
                        0 => {
                            let (a, b) = chunk.split_at(len / 2);
                            let mut bufs = [std::io::IoSlice::new(a), std::io::IoSlice::new(b)];
                            let mut bufs = &mut bufs[..];
                            while !bufs.is_empty() {
                                let k = s.write_vectored(bufs).await.unwrap();
                                std::io::IoSlice::advance_slices(&mut bufs, k);
                            }
                        }
                        1 => {
                            let mut done = 0;
                            while done < len {
                                match s.try_write(&chunk[done..]) {
                                    Ok(k) => done += k,
                                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                                        s.write_all(&chunk[done..]).await.unwrap();
                                        done = len;
                                    }
                                    Err(e) => panic!("try_write: {e}"),
                                }
                            }
                        }
                        _ => s.write_all(&chunk).await.unwrap(),
                    }
                    n += len;
                    match rng.below(6) {
                        0 => s.flush().await.unwrap(),
                        1 => spinpark_executor::yield_now().await,
                        _ => {}
                    }
                }
                s.close().await.unwrap();
            }));
        }
        let mut checks = Vec::new();
        for (seed, mut c) in clients {
            checks.push(spinpark_executor::spawn(async move {
                let mut got = Vec::with_capacity(BYTES);
                spinpark_net::time::timeout(BOUND, c.read_to_end(&mut got))
                    .await
                    .expect("every byte within the bound")
                    .unwrap();
                assert_eq!(got.len(), BYTES, "connection {seed}");
                if let Some(i) = (0..BYTES).find(|&i| got[i] != (i as u64).wrapping_mul(seed) as u8)
                {
                    panic!("connection {seed}: byte {i} out of order");
                }
            }));
        }
        for t in servers.into_iter().chain(checks) {
            t.await.unwrap();
        }
    });
}

#[test]
fn a_write_after_shutdown_is_refused_and_the_queued_bytes_go_before_it() {
    let rt = rt();
    let (late, mut peer) = rt
        .block_on(rt.spawn(async {
            let (mut s, peer) = tcp_pair().await;
            s.write_all(b"head").await.unwrap(); // pushed
            s.write_all(b"tail").await.unwrap(); // queued
            s.shutdown_with(std::net::Shutdown::Write).unwrap();
            // Refused, as the socket refuses it.
            let late = s.write_all(b"after").await;
            drop(s);
            (late.map_err(|e| e.kind()), peer)
        }))
        .unwrap();
    assert_eq!(late, Err(ErrorKind::BrokenPipe));
    // The peer reads everything written before the shutdown, then end of stream.
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"headtail");
}
