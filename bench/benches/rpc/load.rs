//! The load generator: the client side of each mode, using blocking sockets from plain
//! threads, so that both runtimes face exactly the same client.
//!
//! * sync: T threads, each with one connection and one request in flight;
//! * async: C connections, each keeping up to D requests in flight (pipelined, batched);
//! * gap: one connection, one request at a time, with a pause between a response and the next
//!   request, to see what a worker that went to sleep costs;
//! * poll gap: the gap mode with a nonblocking socket the client spins on (`poll_client.rs`),
//!   for `--only floor`.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::clock::{set_fine_timer_slack, wait_until};
use crate::echo_proto::{frame, Client};
use crate::poll_client::PollClient;

/// The payload size of every request (the reference experiment's 100-byte reads).
pub const PAYLOAD: usize = 100;

/// What one load run measured on the client side.
pub struct LoadResult {
    pub requests: u64,
    pub elapsed: Duration,
    /// Round-trip latencies in nanoseconds.
    pub latency: Histogram<u64>,
    /// For the gap mode: the mean pause actually achieved between requests.
    pub achieved_gap: Option<Duration>,
    /// For the pipelined load: the data segments the client's sockets received (`TCP_INFO`),
    /// so how many the server sent.
    pub segments_in: Option<u64>,
}

pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(100, 60_000_000_000, 3).unwrap()
}

pub fn request() -> Vec<u8> {
    frame(&[0xab; PAYLOAD])
}

fn check(resp: &[u8]) {
    assert_eq!(
        resp.len(),
        PAYLOAD,
        "the server answered with a wrong frame"
    );
}

/// T threads, one request in flight each, for `dur`.
pub fn sync(addr: SocketAddr, threads: usize, dur: Duration) -> LoadResult {
    let start = Instant::now();
    let deadline = start + dur;
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr).expect("connect");
                let req = request();
                let mut h = histogram();
                let mut n = 0u64;
                while Instant::now() < deadline {
                    let t = Instant::now();
                    check(c.call(&req).expect("round trip"));
                    h.record(t.elapsed().as_nanos() as u64).ok();
                    n += 1;
                }
                (n, h)
            })
        })
        .collect();
    collect(start, workers, None)
}

/// C connections with up to D requests in flight each, for `dur`.
///
/// Batched, so that the client is not the bottleneck: each connection reads whatever replies
/// have arrived (one `read`), and for the k complete ones sends k new requests in one `write`.
/// A slow client then sends fewer, larger writes instead of falling behind.
pub fn pipelined(addr: SocketAddr, conns: usize, depth: usize, dur: Duration) -> LoadResult {
    let start = Instant::now();
    let deadline = start + dur;
    let segments = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..conns)
        .map(|_| {
            let segments = segments.clone();
            std::thread::spawn(move || pipelined_conn(addr, depth, deadline, &segments))
        })
        .collect();
    let mut r = collect(start, workers, None);
    r.segments_in = Some(segments.load(Ordering::Relaxed));
    r
}

/// The data segments `s` has received (`TCP_INFO`'s `tcpi_data_segs_in`).
fn data_segments_in(s: &TcpStream) -> u64 {
    use std::os::fd::AsRawFd;
    // SAFETY: tcp_info is plain old data; zero is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `info` and updates `len`.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0, "TCP_INFO: {}", std::io::Error::last_os_error());
    u64::from(info.tcpi_data_segs_in)
}

fn pipelined_conn(
    addr: SocketAddr,
    depth: usize,
    deadline: Instant,
    segments: &AtomicU64,
) -> (u64, Histogram<u64>) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let req = request();
    let batch = req.repeat(depth);
    let mut h = histogram();
    let mut n = 0u64;
    let mut sent = VecDeque::with_capacity(depth);
    let now = Instant::now();
    sent.extend(std::iter::repeat_n(now, depth));
    s.write_all(&batch).expect("send");
    let mut buf = vec![0u8; 64 * 1024];
    let mut end = 0;
    while !sent.is_empty() {
        let got = s.read(&mut buf[end..]).expect("recv");
        assert!(got > 0, "the server closed a pipelined connection");
        end += got;
        let (k, used) = split_frames(&buf[..end]);
        buf.copy_within(used..end, 0);
        end -= used;
        let now = Instant::now();
        for t in sent.drain(..k) {
            h.record((now - t).as_nanos() as u64).ok();
        }
        n += k as u64;
        if k > 0 && now < deadline {
            sent.extend(std::iter::repeat_n(now, k));
            s.write_all(&batch[..k * req.len()]).expect("send");
        }
    }
    segments.fetch_add(data_segments_in(&s), Ordering::Relaxed);
    (n, h)
}

/// Counts the complete echo frames at the start of `buf`; returns the count and their bytes.
fn split_frames(buf: &[u8]) -> (usize, usize) {
    let (mut k, mut at) = (0, 0);
    while buf.len() - at >= 4 {
        let n = u32::from_be_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
        assert_eq!(n, PAYLOAD, "the server answered with a wrong frame");
        if buf.len() - at < 4 + n {
            break;
        }
        at += 4 + n;
        k += 1;
    }
    (k, at)
}

/// One client, requests spaced by `gap` (from a response to the next request), `count` of them.
/// With `spin` (the remote layout) each gap ends precisely: see `clock::wait_until`.
pub fn gap(addr: SocketAddr, gap: Duration, count: usize, spin: bool) -> LoadResult {
    let mut c = Client::connect(addr).expect("connect");
    let req = request();
    spaced(
        || check(c.call(&req).expect("round trip")),
        gap,
        count,
        spin,
    )
}

/// [`gap`] with a client that busy-polls: a nonblocking socket it spins on until the whole
/// reply is in, and gaps that always end precisely (spinning for their last part), so that
/// the client adds no wake-up of its own to a round trip.
pub fn poll_gap(addr: SocketAddr, gap: Duration, count: usize) -> LoadResult {
    let mut c = PollClient::connect(addr)
        .expect("connect")
        .max_frame(PAYLOAD);
    let req = request();
    spaced(
        || check(c.call(&req).expect("round trip")),
        gap,
        count,
        true,
    )
}

/// `count` checked round trips (after 10 that warm the connection and the server's caches
/// up), each `gap` after the previous reply, ending precisely with `spin`.
fn spaced(mut round_trip: impl FnMut(), gap: Duration, count: usize, spin: bool) -> LoadResult {
    set_fine_timer_slack();
    let mut h = histogram();
    for _ in 0..10 {
        round_trip();
    }
    let start = Instant::now();
    let mut paused = Duration::ZERO;
    for _ in 0..count {
        if !gap.is_zero() {
            let t = Instant::now();
            wait_until(t + gap, spin);
            paused += t.elapsed();
        }
        let t = Instant::now();
        round_trip();
        h.record(t.elapsed().as_nanos() as u64).ok();
    }
    LoadResult {
        requests: count as u64,
        elapsed: start.elapsed(),
        latency: h,
        achieved_gap: Some(paused / count.max(1) as u32),
        segments_in: None,
    }
}

fn collect(
    start: Instant,
    workers: Vec<std::thread::JoinHandle<(u64, Histogram<u64>)>>,
    achieved_gap: Option<Duration>,
) -> LoadResult {
    let mut total = 0;
    let mut hist = histogram();
    for w in workers {
        let (n, h) = w.join().expect("client thread");
        total += n;
        hist.add(h).unwrap();
    }
    LoadResult {
        requests: total,
        elapsed: start.elapsed(),
        latency: hist,
        achieved_gap,
        segments_in: None,
    }
}
