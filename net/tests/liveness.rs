//! One task that holds its worker for a long time (a CPU loop, or a blocking call in a
//! handler, which real servers do by accident) must not stop the rest of the runtime: timers
//! still fire and other connections are still served, on 2, 4 and 8 workers.
//!
//! The reactor used to be driven only by the last worker to park, and a worker busy in a
//! poll is not parked: every other worker slept on the futex and nobody polled epoll or
//! fired timers until the poll ended. Each test here blocks a worker *until the other work
//! is done* (giving up after 60 s), so it asserts progress, not a duration: on the old code
//! the blocking task gives up, and the test fails on that.

use std::net::SocketAddr;
use std::sync::atomic::{
    AtomicBool, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::time::sleep;
use spinpark_net::{TcpListener, TcpStream};

/// How long a blocking task waits for the rest of the test before it gives up.
const GIVE_UP: Duration = Duration::from_secs(60);

fn rt(workers: usize) -> Runtime {
    Builder::new().worker_threads(workers).build().unwrap()
}

/// How the blocking task holds its worker.
#[derive(Debug, Clone, Copy)]
enum Hold {
    /// A CPU loop that never yields.
    Cpu,
    /// A blocking `std::thread::sleep`, as a blocking call in a handler would.
    Sleep,
}

/// Holds the calling thread until `done` is set; returns false if it gave up instead.
fn hold_until(done: &AtomicBool, how: Hold) -> bool {
    let give_up = Instant::now() + GIVE_UP;
    while !done.load(Acquire) {
        if Instant::now() > give_up {
            return false;
        }
        match how {
            Hold::Cpu => std::hint::spin_loop(),
            Hold::Sleep => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    true
}

/// An echo server whose connections answer `hold` by holding their worker (until `done`)
/// and then replying `held` or `gave up`, and echo anything else.
async fn server(done: Arc<AtomicBool>, how: Hold) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    spawn(async move {
        loop {
            let (mut s, _) = listener.accept().await.unwrap();
            let done = done.clone();
            spawn(async move {
                let mut buf = [0u8; 64];
                loop {
                    let n = match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    if &buf[..n] == b"hold" {
                        let reply: &[u8] = if hold_until(&done, how) {
                            b"held"
                        } else {
                            b"gave up"
                        };
                        let _ = s.write_all(reply).await;
                    } else if s.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

async fn round_trip(addr: SocketAddr, msg: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(msg).await.unwrap();
    let mut buf = vec![0u8; 64];
    let n = c.read(&mut buf).await.unwrap();
    buf.truncate(n);
    buf
}

/// A task spawned onto the runtime holds its worker; meanwhile a 100 ms timer in another
/// task must fire and an echo round trip on another connection must complete.
fn while_a_spawned_task_holds(workers: usize, how: Hold) {
    rt(workers).block_on(async {
        let done = Arc::new(AtomicBool::new(false));
        let addr = server(done.clone(), how).await;
        let started = Arc::new(AtomicBool::new(false));
        let holder = {
            let (done, started) = (done.clone(), started.clone());
            spawn(async move {
                started.store(true, Release);
                hold_until(&done, how)
            })
        };
        // This thread is not a worker: waiting here holds nobody up.
        let give_up = Instant::now() + GIVE_UP;
        while !started.load(Acquire) && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
        }
        spawn(sleep(Duration::from_millis(100))).await.unwrap();
        assert_eq!(round_trip(addr, b"ping").await, b"ping");
        done.store(true, Release);
        assert!(
            holder.await.unwrap(),
            "{workers} workers, {how:?}: the timer or the echo waited for the task to give up"
        );
    });
}

#[test]
fn timers_and_sockets_run_while_a_task_loops_on_the_cpu() {
    for workers in [2, 4, 8] {
        while_a_spawned_task_holds(workers, Hold::Cpu);
    }
}

#[test]
fn timers_and_sockets_run_while_a_task_blocks_in_a_sleep() {
    for workers in [2, 4, 8] {
        while_a_spawned_task_holds(workers, Hold::Sleep);
    }
}

/// The handler of a request blocks: the worker that picked the request up (a spinner, with
/// the other workers already parked on the futex) is the one that gets stuck. Another
/// connection must still get its echo, and a timer must fire.
#[test]
fn a_handler_that_blocks_leaves_other_connections_served() {
    for how in [Hold::Cpu, Hold::Sleep] {
        rt(2).block_on(async {
            let done = Arc::new(AtomicBool::new(false));
            let addr = server(done.clone(), how).await;
            // Let the workers go idle (spin, then park) before the request arrives.
            std::thread::sleep(Duration::from_millis(20));
            let mut held = TcpStream::connect(addr).await.unwrap();
            held.write_all(b"hold").await.unwrap();
            // Give the handler time to start holding (not required for correctness: if the
            // echo below came first, the test would only be weaker).
            std::thread::sleep(Duration::from_millis(20));
            spawn(sleep(Duration::from_millis(100))).await.unwrap();
            assert_eq!(round_trip(addr, b"ping").await, b"ping");
            done.store(true, Release);
            let mut buf = [0u8; 16];
            let n = held.read(&mut buf).await.unwrap();
            assert_eq!(
                &buf[..n],
                b"held",
                "{how:?}: the echo or the timer waited for the blocked handler to give up"
            );
        });
    }
}

/// Where a link of a blocking chain spawns the next one.
#[derive(Debug, Clone, Copy)]
enum Spawn {
    /// Block, then spawn the next link, then return (the next link runs on the same worker).
    After,
    /// Spawn the next link, then block (an idle worker takes the next link from the
    /// blocked worker's LIFO slot, so both workers go from link to link).
    Before,
}

/// One link of a chain of short blocking tasks: blocks its worker for 20 ms, and spawns the
/// next link until `fired` is set or `left` runs out; counts itself in `links`.
fn link(fired: Arc<AtomicBool>, links: Arc<AtomicUsize>, left: usize, how: Spawn) {
    let next = move |fired: Arc<AtomicBool>, links: Arc<AtomicUsize>| {
        if left > 0 && !fired.load(Acquire) {
            spawn(async move { link(fired, links, left - 1, how) });
        }
    };
    links.fetch_add(1, Relaxed);
    match how {
        Spawn::After => {
            std::thread::sleep(Duration::from_millis(20));
            next(fired, links);
        }
        Spawn::Before => {
            next(fired, links);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Workers that go from short blocking task to short blocking task (20 ms each, never idle,
/// so nobody parks and the watchdog has nothing to watch) must still serve the reactor: a 1 ms
/// timer fires within a couple of links, not after dozens (every 61 tasks of each worker, as
/// the busy workers once polled the reactor: 15-35 links, 0.3-0.7 s). The count of links is
/// driven by the order of events, not by the clock: each link outlasts the timer and the
/// watch period, so the first reactor poll after a link fires the timer.
#[test]
fn a_chain_of_short_blocking_tasks_leaves_timers_served() {
    for how in [Spawn::After, Spawn::Before] {
        rt(2).block_on(async {
            let fired = Arc::new(AtomicBool::new(false));
            let links = Arc::new(AtomicUsize::new(0));
            let (f, l) = (fired.clone(), links.clone());
            spawn(async move { link(f, l, 500, how) });
            // Wait (off the workers) for the chain to be under way.
            while links.load(Relaxed) == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            let at_arm = links.load(Relaxed);
            spawn(sleep(Duration::from_millis(1))).await.unwrap();
            let at_fire = links.load(Relaxed);
            fired.store(true, Release);
            assert!(
                at_fire - at_arm <= 6,
                "{how:?}: the 1 ms timer fired only after {} more links of 20 ms",
                at_fire - at_arm
            );
        });
    }
}
