//! Tasks spawned at once spread over the workers: none is left queued behind a worker that is
//! blocked in another while a worker sleeps, so tasks that block their worker (sleep loops, as
//! tokio's `rt_common.rs` `yield_defers_until_park` spawns them) each start on a worker of
//! their own, without the watchdog having to wake anybody for them.
//!
//! How: every worker parks first (the runtime is idle), then `block_on` spawns the tasks in a
//! burst into the injector. The first worker woken takes half of the burst as a batch (one to
//! run, the rest into its queue); each worker woken after it takes from the injector or steals
//! half of what another holds. The runtime has no reactor here,
//! so `RuntimeMetrics::watchdog_wakes` counts only the wake-ups the watchdog issued for work
//! queued behind a stuck worker: it stays 0 when every task found a worker through the idle
//! protocol, and a task stranded behind a blocked worker shows up there (it starts only once
//! the watchdog sees that worker stuck, milliseconds later) or as a task that never starts.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use spinpark_executor::{spawn, Builder};

/// What one run saw.
#[derive(Debug)]
struct Spread {
    /// How many of the tasks started.
    started: usize,
    /// Wake-ups the watchdog issued for work stuck behind a blocked worker.
    watchdog_wakes: u64,
}

/// One run: `tasks` tasks that block their worker until all of them have started (or the run
/// gives up), spawned at once from `block_on` on an idle runtime of `workers` workers.
fn spawn_blocking_burst(workers: usize, tasks: usize) -> Spread {
    let rt = Builder::new().worker_threads(workers).build().unwrap();
    // Every worker parked, so the burst meets the idle protocol from its quiet state (bounded:
    // a worker that never parks only makes the run less telling).
    for _ in 0..2000 {
        if rt.handle().idle_state().0 as usize == workers {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        for _ in 0..tasks {
            let (stop, started) = (stop.clone(), started.clone());
            drop(spawn(async move {
                started.fetch_add(1, SeqCst);
                // Blocks the worker (as a barrier) until every task started or the run is over.
                while started.load(SeqCst) < tasks && !stop.load(SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }));
        }
        // Bounded: spreading takes microseconds, and the watchdog's rescue milliseconds.
        for _ in 0..5000 {
            if started.load(SeqCst) == tasks {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    stop.store(true, SeqCst);
    let spread = Spread {
        started: started.load(SeqCst),
        watchdog_wakes: rt.metrics().watchdog_wakes(),
    };
    drop(rt);
    spread
}

/// Runs each setting `runs` times; panics with the first run that left a task behind.
fn check(settings: &[(usize, usize)], runs: usize) {
    for &(workers, tasks) in settings {
        for run in 0..runs {
            let s = spawn_blocking_burst(workers, tasks);
            assert!(
                s.started == tasks && s.watchdog_wakes == 0,
                "{workers} workers, {tasks} blocking tasks spawned at once, run {run}: {s:?} \
                 (a task waited behind a blocked worker while another slept)"
            );
        }
    }
}

/// As tokio's test: one task fewer than workers, so one worker stays free (there, for the
/// task that yields).
#[test]
fn blocking_tasks_spawned_at_once_each_find_a_worker() {
    check(&[(2, 1), (3, 2), (4, 3)], 20);
}

/// As many blocking tasks as workers: every worker ends up blocked in one.
#[test]
fn as_many_blocking_tasks_as_workers_each_find_a_worker() {
    check(&[(2, 2), (3, 3), (4, 4)], 20);
}
