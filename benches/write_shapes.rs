//! When written bytes reach the peer, for the reply shapes handlers write, on spinpark and on
//! tokio in the same run: a reply's first and last byte when the handler does CPU work after
//! writing it, and a message fanned out to many clients in one poll.
//!
//! ```text
//! cargo bench --bench write_shapes            # about 40 s
//! ```
//!
//! * **First byte.** One client (a plain thread) sends an 8-byte request every millisecond;
//!   the handler replies with a 4-byte length prefix and a 100-byte body, in one write or in
//!   two, then keeps its thread busy for 150 µs in the same poll before it reads again. The
//!   client times the reply's first byte and its last. 1 worker and current-thread.
//! * **Fan-out.** One task holds 100 connections; every 5 ms a control connection
//!   ticks it, and it writes a 64-byte message (a 4-byte prefix, then the body: two writes)
//!   to each of them in one poll. The client times, from the tick, the first connection's
//!   message and the last's. 1 worker.
//!
//! Remote layout: the runtimes' threads on CPU 1, the client on CPU 0 (on a machine with fewer
//! than 2 CPUs nothing is pinned). The runtimes alternate, 5 rounds each; per round the p50,
//! then the median (min-max) over rounds, and spinpark's over tokio's per round. Not a test:
//! it asserts nothing but the bytes, and prints.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const REQUESTS: usize = 400;
const TICKS: usize = 100;
const CLIENTS: usize = 100;
const GAP: Duration = Duration::from_millis(1);
/// Fan-out ticks: long enough that the client has read every connection before the next.
const TICK: Duration = Duration::from_millis(5);
const WORK: Duration = Duration::from_micros(150);
const BODY: usize = 100;
const MESSAGE: usize = 64;

/// Keeps the thread busy for `d`.
fn busy(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Waits until `at`: sleeps, then spins the last 200 µs (a sleep overshoots by tens of µs).
fn wait_until(at: Instant) {
    let now = Instant::now();
    if at > now + Duration::from_micros(200) {
        std::thread::sleep(at - now - Duration::from_micros(200));
    }
    while Instant::now() < at {
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

fn p50(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The reply to request `i`: a 4-byte length prefix, then `BODY` bytes.
fn reply(i: u64) -> Vec<u8> {
    let mut r = (BODY as u32).to_be_bytes().to_vec();
    r.extend((0..BODY).map(|k| (i as usize + k) as u8));
    r
}

/// The first-byte client: (first byte p50, last byte p50) in µs.
fn reply_client(addr: SocketAddr) -> (f64, f64) {
    pin_to(0);
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let (mut first, mut last) = (Vec::new(), Vec::new());
    let mut next = Instant::now();
    for i in 0..REQUESTS as u64 + 20 {
        next += GAP;
        wait_until(next);
        let start = Instant::now();
        s.write_all(&i.to_be_bytes()).unwrap();
        let mut got = vec![0u8; 4 + BODY];
        let n = s.read(&mut got).unwrap();
        let t_first = start.elapsed();
        s.read_exact(&mut got[n..]).unwrap();
        let t_last = start.elapsed();
        assert_eq!(got, reply(i));
        // The first 20 warm up (and let spinpark learn the connection's reply shape).
        if i >= 20 {
            first.push(t_first.as_secs_f64() * 1e6);
            last.push(t_last.as_secs_f64() * 1e6);
        }
    }
    (p50(&mut first), p50(&mut last))
}

fn spinpark_rt(workers: usize) -> spinpark::Runtime {
    match workers {
        0 => spinpark::Builder::new_current_thread().build().unwrap(),
        n => spinpark::Builder::new().worker_threads(n).build().unwrap(),
    }
}

fn tokio_rt(workers: usize) -> tokio::runtime::Runtime {
    match workers {
        0 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build()
            .unwrap(),
    }
}

fn spinpark_reply(workers: usize, two: bool) -> (f64, f64) {
    use futures_util::{AsyncReadExt, AsyncWriteExt};
    let rt = spinpark_rt(workers);
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut req = [0u8; 8];
        while s.read_exact(&mut req).await.is_ok() {
            let r = reply(u64::from_be_bytes(req));
            if two {
                s.write_all(&r[..4]).await.unwrap();
                s.write_all(&r[4..]).await.unwrap();
            } else {
                s.write_all(&r).await.unwrap();
            }
            busy(WORK);
        }
    });
    let client = std::thread::spawn(move || reply_client(addr));
    rt.block_on(server).unwrap();
    client.join().unwrap()
}

fn tokio_reply(workers: usize, two: bool) -> (f64, f64) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio_rt(workers);
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut req = [0u8; 8];
        while s.read_exact(&mut req).await.is_ok() {
            let r = reply(u64::from_be_bytes(req));
            if two {
                s.write_all(&r[..4]).await.unwrap();
                s.write_all(&r[4..]).await.unwrap();
            } else {
                s.write_all(&r).await.unwrap();
            }
            busy(WORK);
        }
    });
    let client = std::thread::spawn(move || reply_client(addr));
    rt.block_on(server).unwrap();
    client.join().unwrap()
}

/// The fan-out client: (first connection's p50, last connection's p50) in µs, from the tick.
fn fan_client(addr: SocketAddr) -> (f64, f64) {
    pin_to(0);
    let mut control = TcpStream::connect(addr).unwrap();
    control.set_nodelay(true).unwrap();
    let mut conns: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let (mut first, mut last) = (Vec::new(), Vec::new());
    let mut next = Instant::now();
    let mut msg = [0u8; MESSAGE];
    for tick in 0..TICKS + 20 {
        next += TICK;
        wait_until(next);
        let start = Instant::now();
        control.write_all(&[1]).unwrap();
        conns[0].read_exact(&mut msg).unwrap();
        let t_first = start.elapsed();
        for c in &mut conns[1..] {
            c.read_exact(&mut msg).unwrap();
        }
        let t_last = start.elapsed();
        assert_eq!(&msg[..4], &((MESSAGE - 4) as u32).to_be_bytes());
        if tick >= 20 {
            first.push(t_first.as_secs_f64() * 1e6);
            last.push(t_last.as_secs_f64() * 1e6);
        }
    }
    (p50(&mut first), p50(&mut last))
}

fn message() -> Vec<u8> {
    let mut m = ((MESSAGE - 4) as u32).to_be_bytes().to_vec();
    m.resize(MESSAGE, 7);
    m
}

fn spinpark_fan(workers: usize) -> (f64, f64) {
    use futures_util::{AsyncReadExt, AsyncWriteExt};
    let rt = spinpark_rt(workers);
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = rt.spawn(async move {
        let (mut control, _) = listener.accept().await.unwrap();
        let mut conns = Vec::new();
        for _ in 0..CLIENTS {
            let (s, _) = listener.accept().await.unwrap();
            s.set_nodelay(true).unwrap();
            conns.push(s);
        }
        let m = message();
        let mut tick = [0u8; 1];
        while control.read_exact(&mut tick).await.is_ok() {
            for c in &mut conns {
                c.write_all(&m[..4]).await.unwrap();
                c.write_all(&m[4..]).await.unwrap();
            }
        }
    });
    let client = std::thread::spawn(move || fan_client(addr));
    rt.block_on(server).unwrap();
    client.join().unwrap()
}

fn tokio_fan(workers: usize) -> (f64, f64) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio_rt(workers);
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = rt.spawn(async move {
        let (mut control, _) = listener.accept().await.unwrap();
        let mut conns = Vec::new();
        for _ in 0..CLIENTS {
            let (s, _) = listener.accept().await.unwrap();
            s.set_nodelay(true).unwrap();
            conns.push(s);
        }
        let m = message();
        let mut tick = [0u8; 1];
        while control.read_exact(&mut tick).await.is_ok() {
            for c in &mut conns {
                c.write_all(&m[..4]).await.unwrap();
                c.write_all(&m[4..]).await.unwrap();
            }
        }
    });
    let client = std::thread::spawn(move || fan_client(addr));
    rt.block_on(server).unwrap();
    client.join().unwrap()
}

fn spread(v: &[f64]) -> String {
    let mut s = v.to_vec();
    let m = p50(&mut s);
    format!("{m:.1} ({:.1}-{:.1})", s[0], s[s.len() - 1])
}

fn ratio_spread(v: &[f64]) -> String {
    let mut s = v.to_vec();
    let m = p50(&mut s);
    format!("{m:.2}x ({:.2}-{:.2})", s[0], s[s.len() - 1])
}

/// Runs `sp` and `tk` alternating for `ROUNDS` rounds and prints two rows (the pair's first
/// and second figures).
fn compare(what: &str, names: [&str; 2], sp: impl Fn() -> (f64, f64), tk: impl Fn() -> (f64, f64)) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            a.push(sp());
            b.push(tk());
        } else {
            b.push(tk());
            a.push(sp());
        }
    }
    for (k, name) in names.iter().enumerate() {
        let pick = |v: &[(f64, f64)]| -> Vec<f64> {
            v.iter().map(|p| if k == 0 { p.0 } else { p.1 }).collect()
        };
        let (x, y) = (pick(&a), pick(&b));
        let ratio: Vec<f64> = x.iter().zip(&y).map(|(p, q)| p / q).collect();
        println!(
            "| {what} | {name} | {} | {} | {} |",
            spread(&x),
            spread(&y),
            ratio_spread(&ratio)
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken. The runtimes' threads inherit
    // this thread's CPU.
    pin_to(1);
    println!(
        "runtime on CPU 1, client on CPU 0; {ROUNDS} rounds, runtimes alternating; µs, median (min-max) over rounds of per-round p50s\n"
    );
    println!("| case | figure | spinpark | tokio | spinpark / tokio |");
    println!("|---|---|---:|---:|---:|");
    for (flavour, workers) in [("1 worker", 1), ("current-thread", 0)] {
        for (shape, two) in [("one write", false), ("two writes", true)] {
            compare(
                &format!("{flavour}, reply in {shape}, then {WORK:?} of work, {GAP:?} gaps"),
                ["first byte", "last byte"],
                || spinpark_reply(workers, two),
                || tokio_reply(workers, two),
            );
        }
    }
    compare(
        &format!("1 worker, fan-out to {CLIENTS} clients, two writes each, {TICK:?} ticks"),
        ["first client", "last client"],
        || spinpark_fan(1),
        || tokio_fan(1),
    );
}
