//! Liveness figures: what one blocking task costs the rest of the runtime, on spinpark and
//! on tokio, in the same run.
//!
//! ```text
//! cargo bench --bench liveness            # about 20 s
//! ```
//!
//! For 2, 4 and 8 workers, and a task that holds its worker with a CPU loop or a blocking
//! `std::thread::sleep` (spawned, in a connection handler, or spawned inside
//! `block_in_place`; with 1 worker too for the last), it measures while the
//! task holds: how long a 100 ms `sleep` in another task takes, and an echo round trip on
//! another connection. Then a UDP socket connected to a closed port: after `recv` returned
//! the `ECONNREFUSED`, a second `recv` under a 1 s timeout: how long it took, the process CPU
//! it used, and how many ticks a 10 ms ticker task got meanwhile. Each figure is the median
//! of 3 runs, with the maximum. Not a test: it asserts nothing, it prints.

use std::net::SocketAddr;
use std::sync::atomic::{
    AtomicBool, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A blocking task gives up after this, whatever happens.
const CAP: Duration = Duration::from_secs(5);
const RUNS: usize = 3;

#[derive(Debug, Clone, Copy)]
enum Hold {
    Cpu,
    Sleep,
}

#[derive(Debug, Clone, Copy)]
enum Where {
    Spawned,
    Handler,
    /// Spawned, holding inside `block_in_place` (which hands the worker to another thread).
    BlockInPlace,
}

fn hold_until(done: &AtomicBool, how: Hold) {
    let cap = Instant::now() + CAP;
    while !done.load(Acquire) && Instant::now() < cap {
        match how {
            Hold::Cpu => std::hint::spin_loop(),
            Hold::Sleep => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

fn cpu_time() -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the rusage struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// (100 ms sleep took, echo round trip took)
type Figures = (Duration, Duration);

mod sp {
    use super::*;
    use futures_util::{AsyncReadExt, AsyncWriteExt};
    use spinpark::net::{TcpListener, TcpStream, UdpSocket};

    async fn server(done: Arc<AtomicBool>, how: Hold) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        spinpark::spawn(async move {
            loop {
                let (mut s, _) = l.accept().await.unwrap();
                let done = done.clone();
                spinpark::spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 {
                            return;
                        }
                        if &buf[..n] == b"hold" {
                            hold_until(&done, how);
                        }
                        if s.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    pub fn long_poll(workers: usize, how: Hold, at: Where) -> Figures {
        let rt = spinpark::Builder::new()
            .worker_threads(workers)
            .build()
            .unwrap();
        rt.block_on(async {
            let done = Arc::new(AtomicBool::new(false));
            let addr = server(done.clone(), how).await;
            std::thread::sleep(Duration::from_millis(20));
            let _held = match at {
                Where::Spawned => {
                    let d = done.clone();
                    spinpark::spawn(async move { hold_until(&d, how) });
                    None
                }
                Where::BlockInPlace => {
                    let d = done.clone();
                    spinpark::spawn(async move {
                        spinpark::task::block_in_place(|| hold_until(&d, how))
                    });
                    None
                }
                Where::Handler => {
                    let mut c = TcpStream::connect(addr).await.unwrap();
                    c.write_all(b"hold").await.unwrap();
                    Some(c)
                }
            };
            std::thread::sleep(Duration::from_millis(20));
            let t = Instant::now();
            spinpark::spawn(spinpark::time::sleep(Duration::from_millis(100)))
                .await
                .unwrap();
            let slept = t.elapsed();
            let mut c = TcpStream::connect(addr).await.unwrap();
            let t = Instant::now();
            c.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            c.read_exact(&mut buf).await.unwrap();
            let echo = t.elapsed();
            done.store(true, Release);
            (slept, echo)
        })
    }

    /// (the second recv took, CPU used meanwhile, ticker ticks meanwhile)
    pub fn udp_error() -> (Duration, Duration, usize) {
        let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
        rt.block_on(async {
            let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let closed_addr = closed.local_addr().unwrap();
            drop(closed);
            let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            s.connect(closed_addr).await.unwrap();
            s.send(b"x").await.unwrap();
            let mut buf = [0u8; 8];
            let _refused = s.recv(&mut buf).await.unwrap_err();
            let ticks = Arc::new(AtomicUsize::new(0));
            let t2 = ticks.clone();
            let ticker = spinpark::spawn(async move {
                loop {
                    spinpark::time::sleep(Duration::from_millis(10)).await;
                    t2.fetch_add(1, Relaxed);
                }
            });
            let (t, cpu) = (Instant::now(), cpu_time());
            let r = spinpark::time::timeout(Duration::from_secs(1), s.recv(&mut buf)).await;
            let (took, used) = (t.elapsed(), cpu_time() - cpu);
            assert!(r.is_err(), "the second recv returned: {r:?}");
            ticker.abort();
            (took, used, ticks.load(Relaxed))
        })
    }
}

mod tk {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream, UdpSocket};

    async fn server(done: Arc<AtomicBool>, how: Hold) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (mut s, _) = l.accept().await.unwrap();
                let done = done.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 {
                            return;
                        }
                        if &buf[..n] == b"hold" {
                            hold_until(&done, how);
                        }
                        if s.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    pub fn long_poll(workers: usize, how: Hold, at: Where) -> Figures {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap();
        let r = rt.block_on(async {
            let done = Arc::new(AtomicBool::new(false));
            let addr = server(done.clone(), how).await;
            std::thread::sleep(Duration::from_millis(20));
            let _held = match at {
                Where::Spawned => {
                    let d = done.clone();
                    tokio::spawn(async move { hold_until(&d, how) });
                    None
                }
                Where::BlockInPlace => {
                    let d = done.clone();
                    tokio::spawn(
                        async move { tokio::task::block_in_place(|| hold_until(&d, how)) },
                    );
                    None
                }
                Where::Handler => {
                    let mut c = TcpStream::connect(addr).await.unwrap();
                    c.write_all(b"hold").await.unwrap();
                    Some(c)
                }
            };
            std::thread::sleep(Duration::from_millis(20));
            let t = Instant::now();
            tokio::spawn(tokio::time::sleep(Duration::from_millis(100)))
                .await
                .unwrap();
            let slept = t.elapsed();
            let mut c = TcpStream::connect(addr).await.unwrap();
            let t = Instant::now();
            c.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            c.read_exact(&mut buf).await.unwrap();
            let echo = t.elapsed();
            done.store(true, Release);
            (slept, echo)
        });
        rt.shutdown_timeout(CAP);
        r
    }

    pub fn udp_error() -> (Duration, Duration, usize) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let closed_addr = closed.local_addr().unwrap();
            drop(closed);
            let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            s.connect(closed_addr).await.unwrap();
            s.send(b"x").await.unwrap();
            let mut buf = [0u8; 8];
            let _refused = s.recv(&mut buf).await.unwrap_err();
            let ticks = Arc::new(AtomicUsize::new(0));
            let t2 = ticks.clone();
            let ticker = tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    t2.fetch_add(1, Relaxed);
                }
            });
            let (t, cpu) = (Instant::now(), cpu_time());
            let r = tokio::time::timeout(Duration::from_secs(1), s.recv(&mut buf)).await;
            let (took, used) = (t.elapsed(), cpu_time() - cpu);
            assert!(r.is_err(), "the second recv returned: {r:?}");
            ticker.abort();
            (took, used, ticks.load(Relaxed))
        })
    }
}

fn median_max(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() - 1])
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// The command line (`cargo bench --bench liveness -- --help`).
#[derive(clap::Parser)]
#[command(
    name = "liveness",
    bin_name = "cargo bench --bench liveness --",
    about = "For spinpark and tokio: how a blocking task affects a timer and an echo \
             elsewhere, and the cost of a recv after a socket error (about 20 s)"
)]
struct Cli {
    /// Passed by `cargo bench`
    #[arg(long, hide = true)]
    bench: bool,
    /// A name filter, passed by `cargo bench NAME` (ignored)
    #[arg(hide = true)]
    filter: Vec<String>,
}

fn main() {
    use clap::Parser;
    let _ = Cli::parse();
    println!(
        "A task holds its worker (CPU loop or blocking sleep; spawned or in a connection handler)."
    );
    println!(
        "Meanwhile: a 100 ms sleep in another task, then an echo round trip on another connection."
    );
    println!("Median of {RUNS} runs (max), in ms; spinpark and tokio alternate.\n");
    println!("| workers | hold | where | spinpark sleep 100 ms | tokio sleep 100 ms | spinpark echo | tokio echo |");
    println!("|---|---|---|---|---|---|---|");
    let mut cases = Vec::new();
    for workers in [2, 4, 8] {
        for how in [Hold::Cpu, Hold::Sleep] {
            for at in [Where::Spawned, Where::Handler, Where::BlockInPlace] {
                cases.push((workers, how, at));
            }
        }
    }
    // One worker: only block_in_place leaves anybody to serve the others.
    cases.push((1, Hold::Sleep, Where::BlockInPlace));
    for (workers, how, at) in cases {
        let (mut s_sleep, mut s_echo, mut t_sleep, mut t_echo) = (vec![], vec![], vec![], vec![]);
        for _ in 0..RUNS {
            let (a, b) = sp::long_poll(workers, how, at);
            s_sleep.push(a);
            s_echo.push(b);
            let (a, b) = tk::long_poll(workers, how, at);
            t_sleep.push(a);
            t_echo.push(b);
        }
        let f = |v: Vec<Duration>| {
            let (m, x) = median_max(v);
            format!("{} ({})", ms(m), ms(x))
        };
        println!(
            "| {workers} | {how:?} | {at:?} | {} | {} | {} | {} |",
            f(s_sleep),
            f(t_sleep),
            f(s_echo),
            f(t_echo)
        );
    }
    println!("\nUDP connected to a closed port: the recv after ECONNREFUSED, under timeout(1 s).");
    println!(
        "| runtime | returned after (ms) | process CPU meanwhile (ms) | 10 ms ticks meanwhile |"
    );
    println!("|---|---|---|---|");
    for _ in 0..RUNS {
        let (took, cpu, ticks) = sp::udp_error();
        println!("| spinpark | {} | {} | {ticks} |", ms(took), ms(cpu));
        let (took, cpu, ticks) = tk::udp_error();
        println!("| tokio | {} | {} | {ticks} |", ms(took), ms(cpu));
    }
}
