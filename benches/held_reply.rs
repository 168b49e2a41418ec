//! A reply followed by CPU work in the same poll: how long the client waits for the reply, on
//! spinpark and on tokio, in the same run.
//!
//! ```text
//! cargo bench --bench held_reply            # about 30 s
//! ```
//!
//! The server's handler reads an 8-byte request, writes an 8-byte reply, and then, in the same
//! poll, keeps its thread busy for 5 ms (logging, accounting, preparing the next item), before
//! it reads again. The client (a plain thread) sends a request, times the reply's arrival, and
//! waits three times the work's length (so that the work is over) before the next. The reply is written as one `write_all`, and
//! again as two (an unflushed header and body), where spinpark queues the second write in the
//! kernel with `MSG_MORE`: that row shows the bound the executor's late runner puts on queued
//! bytes held by a busy poll (it pushes them once the poll has lasted 500 us). Each runtime
//! has 2 workers. Remote layout: the servers' threads on CPU 1, the client on CPU 0 (on a
//! machine with fewer than 2 CPUs, nothing is pinned); the runtimes alternate: 5 rounds of 40 requests each;
//! medians per round, then the median (min-max) over rounds and spinpark's over tokio's per
//! round. Not a test: it asserts nothing, it prints.

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

/// The client: `REQUESTS` round trips, each time to the reply's arrival, in µs; median.
fn client(addr: SocketAddr) -> f64 {
    std::thread::spawn(move || {
        pin_to(0);
        client_on_this_thread(addr)
    })
    .join()
    .unwrap()
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

fn client_on_this_thread(addr: SocketAddr) -> f64 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut times = Vec::with_capacity(REQUESTS);
    for i in 0..REQUESTS as u64 {
        let start = Instant::now();
        s.write_all(&i.to_be_bytes()).unwrap();
        let mut reply = [0u8; 8];
        s.read_exact(&mut reply).unwrap();
        times.push(start.elapsed().as_secs_f64() * 1e6);
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

fn spinpark_round(split: bool) -> f64 {
    use futures_util::{AsyncReadExt, AsyncWriteExt};
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut req = [0u8; 8];
        while s.read_exact(&mut req).await.is_ok() {
            if split {
                s.write_all(&req[..3]).await.unwrap();
                s.write_all(&req[3..]).await.unwrap();
            } else {
                s.write_all(&req).await.unwrap();
            }
            work();
        }
    });
    client(addr)
}

fn tokio_round(split: bool) -> f64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut req = [0u8; 8];
        while s.read_exact(&mut req).await.is_ok() {
            if split {
                s.write_all(&req[..3]).await.unwrap();
                s.write_all(&req[3..]).await.unwrap();
            } else {
                s.write_all(&req).await.unwrap();
            }
            work();
        }
    });
    client(addr)
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
        "reply then {WORK:?} of CPU work in the same poll; 2 workers on CPU 1, client on CPU 0; {ROUNDS} rounds of {REQUESTS}; reply wait in µs, median (min-max) over rounds of per-round medians\n"
    );
    println!("| reply written as | spinpark | tokio | spinpark / tokio |");
    println!("|---|---:|---:|---:|");
    for (name, split) in [("one write", false), ("two writes, unflushed", true)] {
        let (mut sp, mut tk, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let (a, b) = if round % 2 == 0 {
                let a = spinpark_round(split);
                (a, tokio_round(split))
            } else {
                let b = tokio_round(split);
                (spinpark_round(split), b)
            };
            sp.push(a);
            tk.push(b);
            ratio.push(a / b);
        }
        println!(
            "| {name} | {} | {} | {}x |",
            spread(&sp),
            spread(&tk),
            spread(&ratio)
        );
    }
}
