//! Write combining (`net/src/outbox.rs`): small writes a task makes during one poll are held
//! until the poll ends, and every promise around that holds: order, `flush`, the direct paths,
//! the task's end by completion, panic or abort, deferred errors, the bound against a peer that
//! never reads, lingering after drop, `block_in_place`, and nested executors.
//!
//! "Not sent yet" is observed on Unix socket pairs, where a `send` puts the bytes in the peer's
//! queue before it returns: a non-blocking read on the peer's std socket that finds nothing
//! means nothing was sent. Every wait has a bound, so a hang fails the test.

use std::io::{ErrorKind, Read, Write};
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

/// Reads `peer` (blocking, with a timeout) until end of stream or an error; returns the bytes
/// and the error, if one ended it.
fn read_all_blocking(peer: &mut std::net::TcpStream) -> (Vec<u8>, Option<std::io::Error>) {
    peer.set_nonblocking(false).unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match peer.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                panic!("no end of stream nor error within {BOUND:?}")
            }
            Err(e) => return (out, Some(e)),
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

#[test]
fn small_writes_wait_for_the_poll_to_end_then_arrive_in_order() {
    let rt = rt();
    let (ours, mut peer) = pair();
    let got = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            for i in 0..16u8 {
                s.write_all(&[i; 10]).await.unwrap();
            }
            let during = arrived(&mut peer);
            end_poll().await;
            let after = arrived(&mut peer);
            (during, after, s)
        }))
        .unwrap();
    let (during, after, _s) = got;
    assert!(during.is_empty(), "sent before the poll ended: {during:?}");
    let want: Vec<u8> = (0..16u8).flat_map(|i| [i; 10]).collect();
    assert_eq!(after, want);
}

#[test]
fn a_large_write_goes_after_what_was_gathered_before_it() {
    let rt = rt();
    let (ours, mut peer) = pair();
    let (during, after) = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            s.write_all(b"first").await.unwrap();
            s.write_all(&[7u8; 20_000]).await.unwrap(); // over the gathering size
            s.write_all(b"last").await.unwrap();
            let during = arrived(&mut peer);
            end_poll().await;
            (during, arrived(&mut peer))
        }))
        .unwrap();
    let mut want = b"first".to_vec();
    want.extend_from_slice(&[7u8; 20_000]);
    assert_eq!(
        during, want,
        "the large write and what preceded it go at once, in order"
    );
    assert_eq!(after, b"last");
}

#[test]
fn flush_try_write_and_into_std_send_what_was_gathered() {
    let rt = rt();
    let (ours, mut peer) = pair();
    let out = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            s.write_all(b"a").await.unwrap();
            s.flush().await.unwrap();
            let after_flush = arrived(&mut peer);
            s.write_all(b"b").await.unwrap();
            s.try_write(b"c").unwrap();
            let after_try = arrived(&mut peer);
            s.write_all(b"d").await.unwrap();
            let std = s.into_std().unwrap();
            let after_into = arrived(&mut peer);
            drop(std);
            (after_flush, after_try, after_into)
        }))
        .unwrap();
    assert_eq!(out.0, b"a");
    assert_eq!(out.1, b"bc");
    assert_eq!(out.2, b"d");
}

#[test]
fn close_sends_the_gathered_bytes_before_end_of_stream() {
    let rt = rt();
    let (ours, mut peer) = pair();
    let got = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            s.write_all(b"bye").await.unwrap();
            s.close().await.unwrap();
            let mut buf = [0u8; 8];
            let n = peer.read(&mut buf).unwrap();
            let eof = peer.read(&mut buf).unwrap();
            (buf[..n].to_vec(), eof, s)
        }))
        .unwrap();
    assert_eq!(got.0, b"bye");
    assert_eq!(got.1, 0, "end of stream after the bytes");
}

#[test]
fn a_task_that_completes_panics_or_is_aborted_has_sent_its_bytes() {
    let rt = rt();
    // Completes: the stream is dropped with the future.
    let (ours, mut peer) = pair();
    rt.block_on(rt.spawn(async move {
        let mut s = UnixStream::from_std(ours).unwrap();
        s.write_all(b"done").await.unwrap();
    }))
    .unwrap();
    assert_eq!(arrived(&mut peer), b"done");

    // Panics after writing on a stream that outlives it.
    let (ours, mut peer) = pair();
    let shared = rt.block_on(async { Arc::new(UnixStream::from_std(ours).unwrap()) });
    let s = shared.clone();
    let r = rt.block_on(rt.spawn(async move {
        (&*s).write_all(b"before the panic").await.unwrap();
        panic!("the handler fails");
    }));
    assert!(r.unwrap_err().is_panic());
    assert_eq!(arrived(&mut peer), b"before the panic");

    // Aborted while waiting, after writing.
    let (ours, mut peer) = pair();
    let shared = rt.block_on(async { Arc::new(UnixStream::from_std(ours).unwrap()) });
    let s = shared.clone();
    let (tx, rx) = mpsc::channel();
    let task = rt.spawn(async move {
        (&*s).write_all(b"then wait").await.unwrap();
        tx.send(()).unwrap();
        std::future::pending::<()>().await
    });
    rx.recv_timeout(BOUND).unwrap();
    task.abort();
    assert!(rt.block_on(task).unwrap_err().is_cancelled());
    assert_eq!(arrived(&mut peer), b"then wait");
    drop(shared);
}

#[test]
fn a_deferred_error_is_returned_by_the_next_operation() {
    let rt = rt();
    let (ours, peer) = pair();
    drop(peer); // writes now fail with EPIPE
    let (first, second) = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            // Gathered: the failure is not known yet.
            let first = s.write_all(b"lost").await;
            end_poll().await;
            let second = s.write_all(b"x").await;
            (first, second)
        }))
        .unwrap();
    assert!(first.is_ok(), "{first:?}");
    assert_eq!(second.unwrap_err().kind(), ErrorKind::BrokenPipe);
}

#[test]
fn writes_to_a_peer_that_never_reads_stop_at_a_bound_and_all_arrive_later() {
    const TOTAL: usize = 32 << 20; // far more than socket buffers and the outbox together
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

/// Fills `s` until the kernel refuses more (the peer does not read), then gathers `tail` and
/// drops `s` with it unsent, from a task.
async fn drop_with_unsent(mut s: TcpStream, tail: &[u8]) -> usize {
    let filled = fill(|b| s.try_write(b));
    s.write_all(tail).await.unwrap(); // gathered, and the kernel has no room
    drop(s);
    filled
}

#[test]
fn a_dropped_socket_lingers_until_a_late_reader_has_every_byte() {
    let rt = rt();
    let (filled, mut peer) = rt
        .block_on(rt.spawn(async {
            let (ours, peer) = tcp_pair().await;
            (drop_with_unsent(ours, b"the end").await, peer)
        }))
        .unwrap();
    // Read late (the task that wrote is long gone): everything, then a clean end of stream.
    let (got, err) = read_all_blocking(&mut peer);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), filled + 7);
    assert!(got.ends_with(b"the end"));
}

#[test]
fn a_lingering_socket_is_reset_when_its_linger_time_passes_or_its_runtime_ends() {
    // SO_LINGER of 1 s, peer silent for longer: reset, not a clean (truncated) end.
    let rt = rt();
    let mut peer = rt
        .block_on(rt.spawn(async {
            let (ours, peer) = tcp_pair().await;
            ours.set_linger(Some(Duration::from_secs(1))).unwrap();
            drop_with_unsent(ours, b"tail").await;
            peer
        }))
        .unwrap();
    rt.block_on(spinpark_net::time::sleep(Duration::from_secs(3)));
    let (_, err) = read_all_blocking(&mut peer);
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::ConnectionReset));

    // The runtime shuts down while the socket lingers: reset as well.
    let rt2 = self::rt();
    let mut peer = rt2
        .block_on(rt2.spawn(async {
            let (ours, peer) = tcp_pair().await;
            drop_with_unsent(ours, b"tail").await;
            peer
        }))
        .unwrap();
    drop(rt2);
    let (_, err) = read_all_blocking(&mut peer);
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::ConnectionReset));
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
    let (ours, mut peer) = pair();
    rt.block_on(rt.spawn(async move {
        let s = UnixStream::from_std(ours).unwrap();
        let (_read, mut write) = s.into_split();
        write.write_all(b"last words").await.unwrap();
        drop(write); // in the same poll: the bytes are still gathered
    }))
    .unwrap();
    assert_eq!(arrived(&mut peer), b"last words");
    let mut buf = [0u8; 1];
    assert_eq!(
        peer.read(&mut buf).unwrap(),
        0,
        "end of stream after the bytes"
    );
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
    // (gathered) and large (direct) writes, vectored writes, flushes, try_writes and yields;
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
fn a_write_after_a_shutdown_that_waits_for_gathered_bytes_is_refused() {
    let rt = rt();
    let (ours, mut peer) = pair();
    let (late, filled) = rt
        .block_on(rt.spawn(async move {
            let mut s = UnixStream::from_std(ours).unwrap();
            // Fill the peer's queue (it does not read yet), then gather a tail the kernel
            // cannot take: the shutdown must wait for it.
            let filled = fill(|b| s.try_write(b));
            s.write_all(b"tail").await.unwrap();
            s.shutdown_with(std::net::Shutdown::Write).unwrap();
            let late = s.write_all(b"after").await;
            (late.map_err(|e| e.kind()), filled)
        }))
        .unwrap();
    assert_eq!(late, Err(ErrorKind::BrokenPipe));
    // The peer reads everything written before the shutdown, then end of stream.
    peer.set_nonblocking(false).unwrap();
    peer.set_read_timeout(Some(BOUND)).unwrap();
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    assert_eq!(got.len(), filled + 4);
    assert!(got.ends_with(b"tail"));
}
