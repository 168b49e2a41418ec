//! The reactor tells the spin policy whether the clients of its accepted TCP connections run
//! on the runtime's own CPUs (`Driver::clients_colocated`): yes for a loopback client on one
//! of our CPUs, no as soon as one client runs elsewhere (a CPU outside the runtime's set: the
//! benchmarks' remote layout), and no once the colocated connections are gone.
//!
//! Each case runs in a thread pinned before it builds the runtime, so the workers inherit
//! its CPU set; the clients are plain threads pinned where the case needs them. Needs two
//! CPUs in this process's set (skips with a message otherwise).

use std::io::{Read, Write};
use std::net::TcpStream as StdStream;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{driver, Builder, Handle};
use spinpark_net::TcpListener;

/// The CPUs this thread may run on.
fn cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bit set (all-zero is empty).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity writes at most the set's size into the set on our stack.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    assert_eq!(
        r,
        0,
        "sched_getaffinity: {}",
        std::io::Error::last_os_error()
    );
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads one bit of the set; `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) {
    // SAFETY: cpu_set_t is a plain bit set (all-zero is empty).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes one bit of the set on our stack; `cpu` came from `cpus`, so it
    // is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: sched_setaffinity only reads the set on our stack.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    assert_eq!(
        r,
        0,
        "sched_setaffinity: {}",
        std::io::Error::last_os_error()
    );
}

/// A blocking client on `cpu`: connects, sends one byte, reads the echo, and holds the
/// connection until told to go.
fn client(
    addr: std::net::SocketAddr,
    cpu: usize,
) -> (std::thread::JoinHandle<()>, std::sync::mpsc::Sender<()>) {
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        pin(cpu);
        let mut s = StdStream::connect(addr).unwrap();
        s.write_all(b"x").unwrap();
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
        let _ = wait.recv();
    });
    (t, go)
}

fn colocated() -> bool {
    driver::get(&Handle::current())
        .expect("a reactor")
        .clients_colocated()
}

/// Accepts one connection and echoes its one byte; returns the stream (still counted).
async fn accept_one(l: &TcpListener) -> spinpark_net::TcpStream {
    let (mut s, _) = l.accept().await.unwrap();
    let mut b = [0u8; 1];
    s.read_exact(&mut b).await.unwrap();
    s.write_all(&b).await.unwrap();
    s.flush().await.unwrap();
    s
}

#[test]
fn loopback_clients_on_our_cpus_count_as_colocated_and_others_do_not() {
    let all = cpus();
    if all.len() < 2 {
        eprintln!("skipped: needs two CPUs in this process's set, it has {all:?}");
        return;
    }
    let (ours, theirs) = (all[0], all[1]);
    std::thread::spawn(move || {
        pin(ours);
        let rt = Builder::new().worker_threads(2).build().unwrap();
        rt.block_on(async {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            assert!(!colocated(), "no connection yet");

            let (t1, go1) = client(addr, ours);
            let s1 = accept_one(&l).await;
            assert!(colocated(), "a loopback client on our CPU");

            let (t2, go2) = client(addr, theirs);
            let s2 = accept_one(&l).await;
            assert!(!colocated(), "one client on a CPU that is not ours");

            drop(s2);
            go2.send(()).unwrap();
            assert!(colocated(), "that one gone, the colocated one remains");

            // Split halves keep the connection counted until both are gone.
            let (r, w) = s1.into_split();
            drop(r);
            assert!(colocated());
            drop(w);
            assert!(!colocated(), "no connection left");
            go1.send(()).unwrap();
            t1.join().unwrap();
            t2.join().unwrap();

            // A client that only ever runs elsewhere.
            let (t3, go3) = client(addr, theirs);
            let s3 = accept_one(&l).await;
            assert!(!colocated());
            drop(s3);
            go3.send(()).unwrap();
            t3.join().unwrap();
        });
    })
    .join()
    .unwrap();
}
