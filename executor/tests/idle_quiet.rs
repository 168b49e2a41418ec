//! An idle runtime goes quiet: once the spin window is over, its workers sleep and burn no
//! CPU, and its watchdog thread is never woken. Measured as the threads' own CPU time, not
//! wall time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use spinpark_executor::{spawn, Builder};

fn thread_cpu(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a valid timespec on our stack; `clock` is a thread CPU
    // clock of a thread that is still alive (the runtime outlives every call).
    assert_eq!(unsafe { libc::clock_gettime(clock, &mut ts) }, 0);
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The CPU time of this process's thread named `name` (from `/proc/self/task/*/schedstat`).
fn named_thread_cpu(name: &str) -> Duration {
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(dir.join("schedstat")).unwrap();
            let ns: u64 = stat.split_whitespace().next().unwrap().parse().unwrap();
            return Duration::from_nanos(ns);
        }
    }
    panic!("no thread named {name:?}");
}

#[test]
fn an_idle_two_worker_runtime_uses_under_five_percent_of_a_core() {
    let clocks = Arc::new(Mutex::new(Vec::new()));
    let c = clocks.clone();
    let spin = Duration::from_millis(1);
    let rt = Builder::new()
        .worker_threads(2)
        .thread_name("quiet")
        .spin(spin)
        .on_thread_start(move || {
            let mut clock: libc::clockid_t = 0;
            // SAFETY: asks for the CPU clock of the calling thread into a valid out-pointer.
            let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
            assert_eq!(rc, 0);
            c.lock().unwrap().push(clock);
        })
        .build()
        .unwrap();
    // Some work, so the workers have been busy and then run out of it.
    rt.block_on(async {
        for i in 0..1000u32 {
            assert_eq!(spawn(async move { i + 1 }).await.unwrap(), i + 1);
        }
    });
    std::thread::sleep(spin * 20);
    let clocks = clocks.lock().unwrap().clone();
    assert_eq!(clocks.len(), 2);
    let cpu = || {
        clocks.iter().map(|&c| thread_cpu(c)).sum::<Duration>() + named_thread_cpu("quiet-watchdog")
    };
    let before = cpu();
    std::thread::sleep(Duration::from_millis(500));
    let used = cpu() - before;
    assert!(
        used < Duration::from_millis(25),
        "idle workers and watchdog used {used:?} of CPU in 500 ms (limit: 5% of one core, 25 ms)"
    );
    assert_eq!(
        rt.metrics().watchdog_wakes(),
        0,
        "nothing blocked: no watchdog wake-up"
    );
    let (sleepers, spinners, _) = rt.handle().idle_state();
    assert_eq!((sleepers, spinners), (2, 0));
}
