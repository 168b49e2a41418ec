//! Open-loop load: requests sent on a Poisson schedule, whatever the server's replies do.
//!
//! ```text
//! let r = poisson::run(addr, 4, Duration::from_micros(200), Duration::from_secs(2), true);
//! println!("{} req/s, p99 {} ns", r.requests as f64 / r.elapsed.as_secs_f64(),
//!          r.latency.value_at_quantile(0.99));
//! ```
//!
//! One thread drives every connection (non-blocking sockets and `ppoll`), so the load
//! generator needs one CPU. Inter-arrival times are exponential with the given mean, the
//! requests go round-robin over the connections, and each latency is measured from the
//! request's *scheduled* send time, not from when it was actually sent: a server that stalls
//! is charged for every request it delays, including those the client could not send in
//! time (no coordinated omission, as in wrk2 and mutilate). With `spin`, the thread sleeps in
//! `ppoll` until just before the next send and busy-polls for the rest (the remote layout,
//! where the client has its own CPU); without, it only sleeps.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::clock::{set_fine_timer_slack, SPIN_MARGIN};
use crate::load::{histogram, request, LoadResult, PAYLOAD};

/// How long after the schedule ends the replies still outstanding may take.
const DRAIN: Duration = Duration::from_secs(5);

struct Conn {
    stream: TcpStream,
    /// Scheduled send times of the requests awaiting a reply, oldest first.
    pending: VecDeque<Instant>,
    /// Bytes not yet accepted by the socket.
    out: Vec<u8>,
    input: Vec<u8>,
}

/// A small xorshift generator: fast, and plenty random for arrival times.
struct Rng(u64);

impl Rng {
    /// An exponentially distributed duration with the given mean.
    fn exp(&mut self, mean: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        // A uniform in (0, 1], so that ln() is finite.
        let u = ((self.0 >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        mean.mul_f64(-u.ln())
    }
}

/// Sends requests with exponential inter-arrival times of mean `mean` over `conns`
/// connections for `dur`, and waits for every reply.
pub fn run(
    addr: SocketAddr,
    conns: usize,
    mean: Duration,
    dur: Duration,
    spin: bool,
) -> LoadResult {
    set_fine_timer_slack();
    let req = request();
    let mut cs: Vec<Conn> = (0..conns.max(1))
        .map(|_| {
            let stream = TcpStream::connect(addr).expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            stream.set_nonblocking(true).expect("nonblocking");
            Conn {
                stream,
                pending: VecDeque::new(),
                out: Vec::new(),
                input: Vec::with_capacity(64 * 1024),
            }
        })
        .collect();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut rng = Rng(seed | 1);
    let mut h = histogram();
    let start = Instant::now() + Duration::from_millis(1);
    let end = start + dur;
    let mut next = start + rng.exp(mean);
    let (mut sent, mut received, mut turn) = (0u64, 0u64, 0usize);
    let mut last_reply = start;
    let mut fds: Vec<libc::pollfd> = cs
        .iter()
        .map(|c| libc::pollfd {
            fd: c.stream.as_raw_fd(),
            events: 0,
            revents: 0,
        })
        .collect();
    loop {
        let now = Instant::now();
        while next <= now && next < end {
            let n = cs.len();
            let c = &mut cs[turn % n];
            turn += 1;
            c.pending.push_back(next);
            c.out.extend_from_slice(&req);
            sent += 1;
            next += rng.exp(mean);
        }
        for c in &mut cs {
            flush(c);
        }
        let done_sending = next >= end;
        if done_sending && received == sent {
            break;
        }
        assert!(
            now < end + DRAIN,
            "the server left {} requests unanswered for {DRAIN:?}",
            sent - received
        );
        let wait = if done_sending {
            Duration::from_millis(1)
        } else {
            let left = next.saturating_duration_since(now);
            if !spin {
                left
            } else {
                left.saturating_sub(SPIN_MARGIN)
            }
        };
        for (fd, c) in fds.iter_mut().zip(&cs) {
            fd.events = libc::POLLIN | if c.out.is_empty() { 0 } else { libc::POLLOUT };
            fd.revents = 0;
        }
        let ts = libc::timespec {
            tv_sec: wait.as_secs() as libc::time_t,
            tv_nsec: wait.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `fds` is a live, correctly sized array of pollfd, `ts` lives on the stack for
        // the call, and a null signal mask leaves the mask alone.
        let rc = unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            assert_eq!(e.kind(), io::ErrorKind::Interrupted, "ppoll: {e}");
            continue;
        }
        if rc == 0 {
            continue;
        }
        for (fd, c) in fds.iter().zip(&mut cs) {
            if fd.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) == 0 {
                continue;
            }
            let k = receive(c);
            if k > 0 {
                let now = Instant::now();
                for t in c.pending.drain(..k) {
                    h.record(now.saturating_duration_since(t).as_nanos() as u64)
                        .ok();
                }
                received += k as u64;
                last_reply = now;
            }
        }
    }
    LoadResult {
        requests: received,
        elapsed: last_reply.max(end) - start,
        latency: h,
        achieved_gap: None,
        segments_in: None,
    }
}

/// Writes what the socket takes of `c.out`.
fn flush(c: &mut Conn) {
    while !c.out.is_empty() {
        match c.stream.write(&c.out) {
            Ok(n) => {
                c.out.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => panic!("send: {e}"),
        }
    }
}

/// Reads what has arrived and returns the number of complete replies it consumed.
fn receive(c: &mut Conn) -> usize {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match c.stream.read(&mut buf) {
            Ok(0) => panic!("the server closed a connection"),
            Ok(n) => c.input.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => panic!("recv: {e}"),
        }
    }
    let frame = 4 + PAYLOAD;
    let k = c.input.len() / frame;
    for f in c.input[..k * frame].chunks(frame) {
        let n = u32::from_be_bytes(f[..4].try_into().unwrap()) as usize;
        assert_eq!(n, PAYLOAD, "the server answered with a wrong frame");
    }
    c.input.drain(..k * frame);
    k
}
