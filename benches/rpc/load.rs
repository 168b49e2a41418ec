//! The load generator: the client side of each mode, using blocking sockets from plain
//! threads, so that both runtimes face exactly the same client.
//!
//! * sync: T threads, each with one connection and one request in flight;
//! * async: C connections, each keeping D requests in flight (pipelined);
//! * gap: one connection, one request at a time, with a pause between a response and the next
//!   request, to see what a worker that went to sleep costs.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::echo_proto::{frame, Client};

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
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(100, 60_000_000_000, 3).unwrap()
}

fn request() -> Vec<u8> {
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

/// C connections with D requests in flight each, for `dur`.
pub fn pipelined(addr: SocketAddr, conns: usize, depth: usize, dur: Duration) -> LoadResult {
    let start = Instant::now();
    let deadline = start + dur;
    let workers: Vec<_> = (0..conns)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr).expect("connect");
                let req = request();
                let mut h = histogram();
                let mut sent = VecDeque::with_capacity(depth);
                let mut n = 0u64;
                for _ in 0..depth {
                    sent.push_back(Instant::now());
                    c.send(&req).expect("send");
                }
                while let Some(t) = sent.pop_front() {
                    check(c.recv().expect("recv"));
                    h.record(t.elapsed().as_nanos() as u64).ok();
                    n += 1;
                    if Instant::now() < deadline {
                        sent.push_back(Instant::now());
                        c.send(&req).expect("send");
                    }
                }
                (n, h)
            })
        })
        .collect();
    collect(start, workers, None)
}

/// One client, requests spaced by `gap` (from a response to the next request), `count` of them.
pub fn gap(addr: SocketAddr, gap: Duration, count: usize) -> LoadResult {
    set_fine_timer_slack();
    let mut c = Client::connect(addr).expect("connect");
    let req = request();
    let mut h = histogram();
    // Warm the connection (and the server's caches) up.
    for _ in 0..10 {
        check(c.call(&req).expect("round trip"));
    }
    let start = Instant::now();
    let mut paused = Duration::ZERO;
    for _ in 0..count {
        if !gap.is_zero() {
            let t = Instant::now();
            std::thread::sleep(gap);
            paused += t.elapsed();
        }
        let t = Instant::now();
        check(c.call(&req).expect("round trip"));
        h.record(t.elapsed().as_nanos() as u64).ok();
    }
    LoadResult {
        requests: count as u64,
        elapsed: start.elapsed(),
        latency: h,
        achieved_gap: Some(paused / count.max(1) as u32),
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
    }
}

/// Linux rounds sleeps up by the thread's timer slack (50 us by default), which would swamp a
/// 20 us gap; ask for the finest.
fn set_fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and no pointers.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}
