//! Wakes and spawns from a plain thread beside cooperative CPU work: how long until the woken
//! (or spawned) task runs, on spinpark and on tokio, in the same run.
//!
//! ```text
//! cargo bench --bench cross_wake            # about 40 s
//! ```
//!
//! Two tasks compute in 5 ms slices with `yield_now` between them. A plain thread, every
//! 20 ms, either completes a oneshot that a third task awaits ("wake"), or calls
//! `Handle::spawn` with a task that notes when it starts ("spawn"). Measured: from the fire to
//! the task's resumption, 20 times a round. Per flavour (current-thread, 1 worker, 2 workers)
//! and case, 5 rounds alternating the runtimes, fresh runtimes every round; each round's p50
//! and max, then the median (min-max) over rounds and spinpark's p50 over tokio's per round.
//! The servers' CPUs are whatever the machine gives (nothing is pinned). Not a test: it
//! asserts nothing, it prints.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const FIRES: usize = 20;
const SLICE: Duration = Duration::from_millis(5);
const EVERY: Duration = Duration::from_millis(20);
const FLAVOURS: [(&str, usize); 3] = [("current-thread", 0), ("1 worker", 1), ("2 workers", 2)];

/// Keeps the thread busy for a slice.
fn slice() {
    let start = Instant::now();
    while start.elapsed() < SLICE {
        std::hint::spin_loop();
    }
}

/// The p50 and the max of `v`, in ms.
fn p50_max(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(v[v.len() / 2]), ms(v[v.len() - 1]))
}

/// A round on either runtime: `$spawn` starts a task, `$yield_now` yields, `$handle` gives
/// the handle a plain thread spawns through; `$spawned_case` picks the case.
macro_rules! round {
    ($rt:expr, $spawn:path, $yield_now:path, $handle:expr, $spawned_case:expr) => {{
        let rt = $rt;
        let handle = $handle(&rt);
        rt.block_on(async move {
            let stop = Arc::new(AtomicBool::new(false));
            let mut workers = Vec::new();
            for _ in 0..2 {
                let stop = stop.clone();
                workers.push($spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        slice();
                        $yield_now().await;
                    }
                }));
            }
            let mut waits = Vec::with_capacity(FIRES);
            for _ in 0..FIRES {
                if $spawned_case {
                    let (tx, rx) = tokio::sync::oneshot::channel::<Duration>();
                    let h = handle.clone();
                    let firer = std::thread::spawn(move || {
                        std::thread::sleep(EVERY);
                        let fired = Instant::now();
                        drop(h.spawn(async move {
                            let _ = tx.send(fired.elapsed());
                        }));
                    });
                    waits.push(rx.await.unwrap());
                    firer.join().unwrap();
                } else {
                    let (tx, rx) = tokio::sync::oneshot::channel::<Instant>();
                    let waiter = $spawn(async move {
                        let fired = rx.await.unwrap();
                        fired.elapsed()
                    });
                    let firer = std::thread::spawn(move || {
                        std::thread::sleep(EVERY);
                        let _ = tx.send(Instant::now());
                    });
                    waits.push(waiter.await.unwrap());
                    firer.join().unwrap();
                }
            }
            stop.store(true, Ordering::Relaxed);
            for w in workers {
                w.await.unwrap();
            }
            waits
        })
    }};
}

fn spinpark_round(workers: usize, spawned: bool) -> Vec<Duration> {
    let rt = match workers {
        0 => spinpark::Builder::new_current_thread().build().unwrap(),
        n => spinpark::Builder::new().worker_threads(n).build().unwrap(),
    };
    round!(
        rt,
        spinpark::spawn,
        spinpark::yield_now,
        |rt: &spinpark::Runtime| rt.handle().clone(),
        spawned
    )
}

fn tokio_round(workers: usize, spawned: bool) -> Vec<Duration> {
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
    round!(
        rt,
        tokio::spawn,
        tokio::task::yield_now,
        |rt: &tokio::runtime::Runtime| rt.handle().clone(),
        spawned
    )
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn spread(v: &[f64]) -> String {
    let mut s = v.to_vec();
    let m = median(&mut s);
    format!("{m:.2} ({:.2}-{:.2})", s[0], s[s.len() - 1])
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    println!(
        "two tasks in {SLICE:?} CPU slices with yield_now between; a plain thread fires every {EVERY:?}; {ROUNDS} rounds of {FIRES}; fire to resumption in ms, median (min-max) over rounds\n"
    );
    println!("| runtime | case | spinpark p50 | tokio p50 | spinpark / tokio, p50 | spinpark max | tokio max |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (flavour, workers) in FLAVOURS {
        for (case, spawned) in [("wake", false), ("spawn", true)] {
            let (mut sp, mut tk, mut ratio, mut sp_max, mut tk_max) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for round in 0..ROUNDS {
                let (a, b) = if round % 2 == 0 {
                    let a = p50_max(spinpark_round(workers, spawned));
                    (a, p50_max(tokio_round(workers, spawned)))
                } else {
                    let b = p50_max(tokio_round(workers, spawned));
                    (p50_max(spinpark_round(workers, spawned)), b)
                };
                sp.push(a.0);
                tk.push(b.0);
                sp_max.push(a.1);
                tk_max.push(b.1);
                ratio.push(a.0 / b.0);
            }
            println!(
                "| {flavour} | {case} | {} | {} | {}x | {} | {} |",
                spread(&sp),
                spread(&tk),
                spread(&ratio),
                spread(&sp_max),
                spread(&tk_max)
            );
        }
    }
}
