//! A reply followed by CPU work in the same poll: how long the client waits for the reply, on
//! spinpark and on tokio, in the same run.
//!
//! ```text
//! cargo bench --bench held_reply            # about 80 s
//! ```
//!
//! The server's handler reads an 8-byte request, writes an 8-byte reply, and then, in the same
//! poll, keeps its thread busy for 5 ms (logging, accounting, preparing the next item), before
//! it reads again. The client (a plain thread) sends a request, times the reply's arrival, and
//! waits three times the work's length (so that the work is over) before the next. The reply is
//! written in three ways: as one `write_all`; as two (an unflushed header and body); and as one
//! `write_all` right after a poll that wrote two (replies alternating between the two shapes;
//! only the one-write replies are timed). At one request in flight spinpark sends every write
//! at once (the connection learns its reply's shape), so every row should read as tokio's; a
//! reply queued in the kernel and held by a busy poll would show the late runner's bound (it
//! pushes once the poll has lasted 500 us). Every flavour: current-thread, 1 worker and 2
//! workers. Remote layout: the servers' threads on CPU 1, the client on CPU 0 (on a machine
//! with fewer than 2 CPUs, nothing is pinned); the runtimes alternate: 5 rounds of 40 timed
//! requests each; medians per round, then the median (min-max) over rounds and spinpark's over
//! tokio's per round. Not a test: it asserts nothing, it prints.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const REQUESTS: usize = 40;
const WORK: Duration = Duration::from_millis(5);

/// Keeps the thread busy for `WORK`.
fn work() {
    let start = Instant::now();
    while start.elapsed() < WORK {
        std::hint::spin_loop();
    }
}

/// Pins the calling thread (and the threads it starts later) to `cpu`, if the machine has it.
fn pin_to(cpu: usize) {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return;
    }
    // SAFETY: cpu_set_t is plain old data; CPU_ZERO/CPU_SET write within it, and
    // sched_setaffinity reads `size_of::<cpu_set_t>()` bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// How the handler writes its replies.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// One `write_all`.
    One,
    /// Two `write_all`s (3 and 5 bytes), unflushed.
    Two,
    /// Two for even requests, one for odd ones; only the odd ones are timed.
    OneAfterTwo,
}

impl Shape {
    /// Whether request `i`'s reply is written in two writes.
    fn split(self, i: u64) -> bool {
        match self {
            Shape::One => false,
            Shape::Two => true,
            Shape::OneAfterTwo => i % 2 == 0,
        }
    }

    /// Whether request `i` is timed.
    fn timed(self, i: u64) -> bool {
        self != Shape::OneAfterTwo || i % 2 == 1
    }
}

/// The runtime flavours, as (name, workers; 0 for current-thread).
const FLAVOURS: [(&str, usize); 3] = [("current-thread", 0), ("1 worker", 1), ("2 workers", 2)];

fn client(addr: SocketAddr, shape: Shape) -> f64 {
    std::thread::spawn(move || {
        pin_to(0);
        client_on_this_thread(addr, shape)
    })
    .join()
    .unwrap()
}

/// The client: round trips until `REQUESTS` were timed, each to the reply's arrival, in µs;
/// median.
fn client_on_this_thread(addr: SocketAddr, shape: Shape) -> f64 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut times = Vec::with_capacity(REQUESTS);
    for i in 0u64.. {
        if times.len() == REQUESTS {
            break;
        }
        let start = Instant::now();
        s.write_all(&i.to_be_bytes()).unwrap();
        let mut reply = [0u8; 8];
        s.read_exact(&mut reply).unwrap();
        if shape.timed(i) {
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
        assert_eq!(u64::from_be_bytes(reply), i);
        // Long past the work's end, also when a spinning worker shares its CPU: the next
        // request must find the task waiting, so that this measures the reply alone.
        std::thread::sleep(WORK * 3);
    }
    median(&mut times)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn spinpark_round(workers: usize, shape: Shape) -> f64 {
    use futures_util::{AsyncReadExt, AsyncWriteExt};
    let rt = match workers {
        0 => spinpark::Builder::new_current_thread().build().unwrap(),
        n => spinpark::Builder::new().worker_threads(n).build().unwrap(),
    };
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut req = [0u8; 8];
        while s.read_exact(&mut req).await.is_ok() {
            if shape.split(u64::from_be_bytes(req)) {
                s.write_all(&req[..3]).await.unwrap();
                s.write_all(&req[3..]).await.unwrap();
            } else {
                s.write_all(&req).await.unwrap();
            }
            work();
        }
    });
    // A current-thread runtime runs its tasks only inside `block_on`: the client runs beside it.
    let client = std::thread::spawn(move || client(addr, shape));
    rt.block_on(server).unwrap();
    client.join().unwrap()
}

fn tokio_round(workers: usize, shape: Shape) -> f64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = match workers {
        0 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build()
            .unwrap(),
    };
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut req = [0u8; 8];
        while s.read_exact(&mut req).await.is_ok() {
            if shape.split(u64::from_be_bytes(req)) {
                s.write_all(&req[..3]).await.unwrap();
                s.write_all(&req[3..]).await.unwrap();
            } else {
                s.write_all(&req).await.unwrap();
            }
            work();
        }
    });
    let client = std::thread::spawn(move || client(addr, shape));
    rt.block_on(server).unwrap();
    client.join().unwrap()
}

fn spread(v: &[f64]) -> String {
    let mut s = v.to_vec();
    let m = median(&mut s);
    format!("{m:.1} ({:.1}-{:.1})", s[0], s[s.len() - 1])
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken. The runtimes' threads inherit
    // this thread's CPU.
    pin_to(1);
    println!(
        "reply then {WORK:?} of CPU work in the same poll; runtime on CPU 1, client on CPU 0; {ROUNDS} rounds of {REQUESTS} timed requests; reply wait in µs, median (min-max) over rounds of per-round medians\n"
    );
    println!("| runtime | reply written as | spinpark | tokio | spinpark / tokio |");
    println!("|---|---|---:|---:|---:|");
    for (flavour, workers) in FLAVOURS {
        for (name, shape) in [
            ("one write", Shape::One),
            ("two writes, unflushed", Shape::Two),
            ("one write after a poll that wrote two", Shape::OneAfterTwo),
        ] {
            let (mut sp, mut tk, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..ROUNDS {
                let (a, b) = if round % 2 == 0 {
                    let a = spinpark_round(workers, shape);
                    (a, tokio_round(workers, shape))
                } else {
                    let b = tokio_round(workers, shape);
                    (spinpark_round(workers, shape), b)
                };
                sp.push(a);
                tk.push(b);
                ratio.push(a / b);
            }
            println!(
                "| {flavour} | {name} | {} | {} | {}x |",
                spread(&sp),
                spread(&tk),
                spread(&ratio)
            );
        }
    }
}
