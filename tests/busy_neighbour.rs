//! A spinning worker beside a CPU-bound neighbour on its CPU: the spinner loses its core, the
//! runtime notices (`spin_lost_cores`) and holds parking (`spin_contended`), and every request
//! is still answered. The latency this saves is the benchmark's to show
//! (`cargo bench --bench rpc -- --only neighbour`); this test asserts no timing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};

/// Pins the calling thread to `cpu`.
fn pin_to(cpu: usize) {
    // SAFETY: cpu_set_t is a plain bit set (all-zero is empty); CPU_SET writes one bit inside
    // it, and sched_setaffinity reads the set on our stack for the duration of the call.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(
        rc,
        0,
        "pinning to CPU {cpu}: {}",
        std::io::Error::last_os_error()
    );
}

/// The first CPU this process may run on.
fn first_cpu() -> usize {
    // SAFETY: as in `pin_to`; sched_getaffinity writes at most the set's size into it, and
    // CPU_ISSET reads one bit below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .expect("a CPU to run on")
    }
}

#[test]
fn a_spinner_beside_a_busy_neighbour_holds_parking_and_answers_every_request() {
    let cpu = first_cpu();
    let stop = Arc::new(AtomicBool::new(false));
    // The neighbour: a busy loop on the worker's CPU.
    let neighbour = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            pin_to(cpu);
            let mut x = 1u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..10_000 {
                    x = std::hint::black_box(x ^ (x << 13) ^ (x >> 7));
                }
            }
            x
        })
    };
    // One worker, always spinning a long window when idle (unless parking holds), on the
    // same CPU.
    let rt = spinpark::runtime::Builder::new()
        .worker_threads(1)
        .spin(Duration::from_millis(1))
        .enable_all()
        .on_thread_start(move || pin_to(cpu))
        .build()
        .unwrap();
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 8];
        while s.read_exact(&mut buf).await.is_ok() {
            if s.write_all(&buf).await.is_err() {
                break;
            }
        }
    });
    let mut client = TcpStream::connect(addr).unwrap();
    client.set_nodelay(true).unwrap();
    let metrics = || rt.metrics();
    let mut answered = 0u64;
    // Bounded: a spinner on a CPU with a runnable neighbour gives it the core at its first
    // yield, so the loss shows within a few requests; allow many more.
    for i in 0..20_000u64 {
        client.write_all(&i.to_le_bytes()).unwrap();
        let mut back = [0u8; 8];
        client.read_exact(&mut back).unwrap();
        assert_eq!(u64::from_le_bytes(back), i, "request {i} answered wrongly");
        answered += 1;
        // A pause, so the worker goes idle and spins.
        std::thread::sleep(Duration::from_micros(100));
        let m = metrics();
        if m.spin_lost_cores() > 0 && m.spin_contended() {
            break;
        }
    }
    let m = metrics();
    stop.store(true, Ordering::Relaxed);
    neighbour.join().unwrap();
    assert!(
        m.spin_lost_cores() > 0,
        "no spin window lost its core in {answered} requests beside a busy neighbour"
    );
    assert!(
        m.spin_contended(),
        "a lost core did not hold parking ({} lost)",
        m.spin_lost_cores()
    );
    // Every request so far was answered, and the connection still works.
    client.write_all(&7u64.to_le_bytes()).unwrap();
    let mut back = [0u8; 8];
    client.read_exact(&mut back).unwrap();
    assert_eq!(u64::from_le_bytes(back), 7);
}
