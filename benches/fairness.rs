//! Fairness figures: does a timer keep firing while other tasks never wait, on spinpark and on
//! tokio, in the same run.
//!
//! ```text
//! cargo bench --features sync --bench fairness            # about 30 s
//! cargo bench --features sync --bench fairness -- --rounds 9
//! ```
//!
//! Two cases, each run in rounds that alternate the runtimes, fresh runtimes every round:
//!
//! * **drain**: on one worker (and on a current-thread runtime), a task receives every
//!   message of a prefilled unbounded mpsc channel (or takes and drops a semaphore permit as
//!   often) while another task sleeps 1 ms in a loop. tokio's channel on tokio's runtime,
//!   tokio's channel on spinpark (what a port that kept `tokio::sync` gets: no budget, so the
//!   loop never yields) and `spinpark::sync` on spinpark. Printed: how long the loop took, how
//!   many times the timer fired during it, and its worst lateness.
//! * **yield**: on two workers, 200 tasks sleep 1 ms in a loop while two tasks burn the CPU in
//!   300 µs slices with `yield_now` between them. Printed: the sleeps' lateness, p50 and p99.
//!
//! Each figure is the median over rounds, with the range. Not a test: it asserts nothing.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one drain round measured.
#[derive(Clone, Copy)]
struct Drain {
    took: Duration,
    fired: usize,
    worst: Duration,
}

/// Lateness of every sleep that ended while `busy` was set (the drain's loop ran).
#[derive(Default)]
struct Ticks {
    late: Vec<Duration>,
}

impl Ticks {
    fn summary(&self, took: Duration) -> Drain {
        Drain {
            took,
            fired: self.late.len(),
            worst: self.late.iter().copied().max().unwrap_or_default(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Prim {
    Mpsc,
    Semaphore,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Flavor {
    OneWorker,
    CurrentThread,
}

/// The drain case, written once for each runtime and channel: `$spawn`, `$sleep_until` and
/// `$now` are the runtime's, `$sync` the channel's module.
macro_rules! drain_case {
    ($name:ident, $sync:path, $spawn:path, $sleep_until:path, $instant:ty) => {
        pub(crate) async fn $name(prim: Prim, n: usize) -> Drain {
            use $sync as sync;
            // Filled before anything runs: the loop alone is measured.
            let mut rx = None;
            if prim == Prim::Mpsc {
                let (tx, r) = sync::mpsc::unbounded_channel::<u64>();
                for i in 0..n as u64 {
                    tx.send(i).unwrap();
                }
                rx = Some(r);
            }
            let busy = Arc::new(AtomicBool::new(true));
            let ticks = Arc::new(Mutex::new(Ticks::default()));
            let ticker = {
                let (busy, ticks) = (busy.clone(), ticks.clone());
                $spawn(async move {
                    while busy.load(Relaxed) {
                        let deadline = <$instant>::now() + Duration::from_millis(1);
                        $sleep_until(deadline).await;
                        if busy.load(Relaxed) {
                            let late = <$instant>::now().saturating_duration_since(deadline);
                            ticks.lock().unwrap().late.push(late);
                        }
                    }
                })
            };
            // The ticker is spawned first: on one worker it runs (and arms its timer) first.
            let drain = $spawn(async move {
                let start = Instant::now();
                match rx {
                    Some(mut rx) => {
                        let mut sum = 0u64;
                        for _ in 0..n {
                            sum = sum.wrapping_add(rx.recv().await.unwrap());
                        }
                        std::hint::black_box(sum);
                        start.elapsed()
                    }
                    None => {
                        let sem = sync::Semaphore::new(1);
                        for _ in 0..n {
                            drop(sem.acquire().await.unwrap());
                        }
                        start.elapsed()
                    }
                }
            });
            let took = drain.await.unwrap();
            busy.store(false, Relaxed);
            ticker.await.unwrap();
            let summary = ticks.lock().unwrap().summary(took);
            summary
        }
    };
}

mod on_tokio {
    use super::*;
    drain_case!(
        drain,
        tokio::sync,
        tokio::spawn,
        tokio::time::sleep_until,
        tokio::time::Instant
    );
}

mod tokio_sync_on_spinpark {
    use super::*;
    drain_case!(
        drain,
        tokio::sync,
        spinpark::spawn,
        spinpark::time::sleep_until,
        spinpark::time::Instant
    );
}

mod spinpark_sync_on_spinpark {
    use super::*;
    drain_case!(
        drain,
        spinpark::sync,
        spinpark::spawn,
        spinpark::time::sleep_until,
        spinpark::time::Instant
    );
}

/// Which runtime and channel a drain round uses.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Who {
    Tokio,
    TokioSyncOnSpinpark,
    SpinparkSync,
}

fn drain_round(who: Who, flavor: Flavor, prim: Prim, n: usize) -> Drain {
    match who {
        Who::Tokio => {
            let rt = match flavor {
                Flavor::OneWorker => tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build(),
                Flavor::CurrentThread => tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build(),
            }
            .unwrap();
            rt.block_on(on_tokio::drain(prim, n))
        }
        Who::TokioSyncOnSpinpark | Who::SpinparkSync => {
            let rt = match flavor {
                Flavor::OneWorker => spinpark::Builder::new().worker_threads(1).build(),
                Flavor::CurrentThread => spinpark::Builder::new_current_thread().build(),
            }
            .unwrap();
            if who == Who::SpinparkSync {
                rt.block_on(spinpark_sync_on_spinpark::drain(prim, n))
            } else {
                rt.block_on(tokio_sync_on_spinpark::drain(prim, n))
            }
        }
    }
}

/// The yield case on `who`'s runtime (two workers): the sleeps' lateness, p50 and p99.
fn yield_round(tokio_rt: bool, run_for: Duration) -> (Duration, Duration) {
    const SLEEPERS: usize = 200;
    const BURNERS: usize = 2;
    const SLICE: Duration = Duration::from_micros(300);
    let late = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    macro_rules! body {
        ($spawn:path, $sleep_until:path, $instant:ty, $yield_now:path) => {
            async {
                let mut tasks = Vec::new();
                for _ in 0..BURNERS {
                    let stop = stop.clone();
                    tasks.push($spawn(async move {
                        while !stop.load(Relaxed) {
                            let t = Instant::now();
                            while t.elapsed() < SLICE {
                                std::hint::spin_loop();
                            }
                            $yield_now().await;
                        }
                    }));
                }
                for _ in 0..SLEEPERS {
                    let (stop, late) = (stop.clone(), late.clone());
                    tasks.push($spawn(async move {
                        let mut mine = Vec::new();
                        while !stop.load(Relaxed) {
                            let deadline = <$instant>::now() + Duration::from_millis(1);
                            $sleep_until(deadline).await;
                            mine.push(<$instant>::now().saturating_duration_since(deadline));
                        }
                        late.lock().unwrap().extend(mine);
                    }));
                }
                std::thread::sleep(run_for);
                stop.store(true, Relaxed);
                for t in tasks {
                    t.await.unwrap();
                }
            }
        };
    }
    if tokio_rt {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(body!(
            tokio::spawn,
            tokio::time::sleep_until,
            tokio::time::Instant,
            tokio::task::yield_now
        ));
    } else {
        let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
        rt.block_on(body!(
            spinpark::spawn,
            spinpark::time::sleep_until,
            spinpark::time::Instant,
            spinpark::yield_now
        ));
    }
    let mut late = std::mem::take(&mut *late.lock().unwrap());
    late.sort();
    let at = |q: f64| late[((late.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99))
}

/// `median (min-max)` of `v`, each shown by `show`.
fn spread<T: Copy + PartialOrd>(mut v: Vec<T>, show: impl Fn(T) -> String) -> String {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    format!(
        "{} ({}-{})",
        show(v[v.len() / 2]),
        show(v[0]),
        show(v[v.len() - 1])
    )
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// The command line (`cargo bench --features sync --bench fairness -- --help`).
#[derive(clap::Parser)]
#[command(
    name = "fairness",
    bin_name = "cargo bench --features sync --bench fairness --",
    about = "For spinpark and tokio: a 1 ms timer while a task drains an always-ready channel \
             or semaphore, and while tasks yield between CPU slices"
)]
struct Cli {
    /// Rounds per case (runtimes alternate within each round)
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Messages (or permits) per drain
    #[arg(long, default_value_t = 5_000_000)]
    messages: usize,
    /// Seconds each yield round runs
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Run one case only: `drain` or `yield`
    #[arg(long)]
    only: Option<String>,
    /// Passed by `cargo bench`
    #[arg(long, hide = true)]
    bench: bool,
    /// A name filter, passed by `cargo bench NAME` (ignored)
    #[arg(hide = true)]
    filter: Vec<String>,
}

fn main() {
    use clap::Parser;
    let cli = Cli::parse();
    let rounds = cli.rounds.max(1);
    let runs = |case: &str| cli.only.as_deref().is_none_or(|only| only == case);
    if runs("drain") {
        drain_table(rounds, cli.messages);
    }
    if runs("yield") {
        yield_table(rounds, Duration::from_secs_f64(cli.seconds));
    }
}

fn drain_table(rounds: usize, messages: usize) {
    println!(
        "drain: {} messages (or permits) on an always-ready primitive, a 1 ms sleep loop beside \
         it; median (min-max) of {rounds} rounds\n",
        messages
    );
    println!("| runtime | primitive | sync | loop ms | timer fired | worst lateness ms |");
    println!("|---|---|---|---|---|---|");
    let whos = [Who::Tokio, Who::TokioSyncOnSpinpark, Who::SpinparkSync];
    for flavor in [Flavor::OneWorker, Flavor::CurrentThread] {
        for prim in [Prim::Mpsc, Prim::Semaphore] {
            let mut got: Vec<Vec<Drain>> = vec![Vec::new(); whos.len()];
            for _ in 0..rounds {
                for (i, who) in whos.iter().enumerate() {
                    got[i].push(drain_round(*who, flavor, prim, messages));
                }
            }
            for (i, who) in whos.iter().enumerate() {
                let (rt, sync) = match who {
                    Who::Tokio => ("tokio", "tokio::sync"),
                    Who::TokioSyncOnSpinpark => ("spinpark", "tokio::sync"),
                    Who::SpinparkSync => ("spinpark", "spinpark::sync"),
                };
                let d = &got[i];
                println!(
                    "| {rt}, {} | {prim:?} | {sync} | {} | {} | {} |",
                    match flavor {
                        Flavor::OneWorker => "1 worker",
                        Flavor::CurrentThread => "current-thread",
                    },
                    spread(d.iter().map(|d| d.took).collect(), ms),
                    spread(d.iter().map(|d| d.fired).collect(), |n| n.to_string()),
                    spread(d.iter().map(|d| d.worst).collect(), ms),
                );
            }
        }
    }
}

fn yield_table(rounds: usize, run_for: Duration) {
    println!(
        "\nyield: 2 workers, 200 tasks sleeping 1 ms in a loop, 2 tasks burning 300 µs slices \
         with yield_now between; lateness of the sleeps, median (min-max) of {rounds} rounds\n"
    );
    println!("| runtime | p50 ms | p99 ms |");
    println!("|---|---|---|");
    let (mut sp, mut tk) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        sp.push(yield_round(false, run_for));
        tk.push(yield_round(true, run_for));
    }
    for (name, v) in [("spinpark", &sp), ("tokio", &tk)] {
        println!(
            "| {name} | {} | {} |",
            spread(v.iter().map(|x| x.0).collect(), ms),
            spread(v.iter().map(|x| x.1).collect(), ms)
        );
    }
}
