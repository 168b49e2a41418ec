//! More workers than CPUs: an idle worker must not spin while another worker that has work
//! wants the CPU (`Idle::crowded`).
//!
//! The test pins its thread (and so the runtime's threads, which inherit the mask) to one
//! CPU, builds two workers, and has one task stay in a single poll while small tasks are
//! spawned from plain threads one at a time, 300 us apart, yielding the CPU until each has
//! run on the other worker. Every idle period of that other worker begins while the first is
//! awake: it must park, never spin. With a fixed 1 ms window, a worker that spun would spin
//! at least the 300 us to the next task in each of the 50 periods (15 ms); one that parks
//! only scans the queues once when it is woken (a few us each). The bound between, 5 ms, is
//! three times from the first and a thousand from the second.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

/// Pins the calling thread to the first CPU it may use.
fn pin_to_one_cpu() {
    // SAFETY: cpu_set_t is plain data (all-zero is an empty set); the calls read and write
    // only the set on our stack, of the size given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
        let first = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .expect("some CPU is allowed");
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(first, &mut one);
        assert_eq!(libc::sched_setaffinity(0, size, &one), 0);
    }
}

#[test]
fn two_workers_on_one_cpu_park_instead_of_spinning_beside_a_busy_worker() {
    pin_to_one_cpu();
    assert_eq!(std::thread::available_parallelism().unwrap().get(), 1);
    let rt = spinpark_executor::Builder::new()
        .worker_threads(2)
        .spin(std::time::Duration::from_millis(1))
        .build()
        .unwrap();
    const TASKS: usize = 50;
    let ran = Arc::new(AtomicUsize::new(0));
    let (before, after) = rt.block_on({
        let ran = ran.clone();
        let handle = rt.handle().clone();
        async move {
            spinpark_executor::spawn(async move {
                let spawn_and_wait = |n: usize| {
                    std::thread::sleep(std::time::Duration::from_micros(300));
                    let r = ran.clone();
                    // From a plain thread, through the injector, as a remote spawn is.
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            handle.spawn(async move {
                                r.fetch_add(1, SeqCst);
                            })
                        });
                    });
                    // Still in this one poll: only the other worker can run it. Bounded.
                    for _ in 0..10_000_000u32 {
                        if ran.load(SeqCst) == n {
                            return;
                        }
                        std::thread::yield_now();
                    }
                    panic!("the other worker never ran task {n}");
                };
                // Two small tasks first: the other worker's idle period that found the first
                // (which may have spun, before this poll began) has settled its spin time
                // once the second has run.
                spawn_and_wait(1);
                spawn_and_wait(2);
                let before = handle.metrics().total();
                for n in 3..=TASKS + 2 {
                    spawn_and_wait(n);
                }
                (before, handle.metrics().total())
            })
            .await
            .unwrap()
        }
    });
    assert_eq!(ran.load(SeqCst), TASKS + 2);
    assert!(
        after.crowded() > before.crowded(),
        "the idle worker never saw the busy one"
    );
    let spun = after.spin_nanos() - before.spin_nanos();
    assert!(
        spun < 5_000_000,
        "a worker spun {spun} ns on the one CPU while the other had work ({} crowded periods)",
        after.crowded() - before.crowded()
    );
}
