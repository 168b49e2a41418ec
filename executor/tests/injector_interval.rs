//! Work from other threads (a wake, a spawn) does not wait for a count of task polls: beside
//! two tasks that compute in 5 ms slices with `yield_now` between them (cooperative CPU
//! work, which keeps the worker's queue never empty), a task woken from a plain thread, or
//! spawned from one, runs within a few slices, on one worker, on two, and on a
//! current-thread runtime. (Counted, the injector is looked at every 61 polls: 61 slices.)
//!
//! No timing assertions: what is counted is slices, the CPU tasks' own progress, between the
//! wake and the woken task's start.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use spinpark_executor::{spawn, yield_now, Builder, Handle, Runtime};
use tokio::sync::oneshot;

/// The CPU tasks' slice.
const SLICE: Duration = Duration::from_millis(5);
/// Rounds per case: one late round in these many fails the test. A count-driven injector
/// look would let the wake wait anywhere from 0 to 61 slices, so eight rounds all under
/// [`MAX_SLICES`] would be chance.
const ROUNDS: usize = 8;
/// Far below 61, far above the one or two slices a wake now waits.
const MAX_SLICES: u64 = 20;

fn runtimes() -> [(&'static str, Runtime); 3] {
    [
        (
            "one worker",
            Builder::new().worker_threads(1).build().unwrap(),
        ),
        (
            "two workers",
            Builder::new().worker_threads(2).build().unwrap(),
        ),
        (
            "current-thread",
            Builder::new_current_thread().build().unwrap(),
        ),
    ]
}

/// Two tasks computing in slices with `yield_now` between, until `stop`; `slices` counts
/// the slices done.
fn start_cpu_tasks(slices: &Arc<AtomicU64>, stop: &Arc<AtomicBool>) {
    for _ in 0..2 {
        let (slices, stop) = (slices.clone(), stop.clone());
        drop(spawn(async move {
            while !stop.load(SeqCst) {
                let start = Instant::now();
                while start.elapsed() < SLICE {
                    std::hint::spin_loop();
                }
                slices.fetch_add(1, SeqCst);
                yield_now().await;
            }
        }));
    }
}

/// Waits until the CPU tasks have done a few slices (they run, so the worker is busy).
async fn until_busy(slices: &AtomicU64) {
    let at = slices.load(SeqCst);
    while slices.load(SeqCst) < at + 3 {
        yield_now().await;
    }
}

/// What a plain thread does to let a task run: `mark` right before the wake or spawn that
/// is counted, and the task calls `report` when it starts.
type Fire = fn(Handle, Box<dyn FnOnce() + Send>, Box<dyn FnOnce() + Send>);

/// How many slices pass between a plain thread's wake or spawn (`fire`, run once the CPU tasks
/// are busy) and the start of the task it lets run.
fn slices_waited(rt: &Runtime, fire: Fire) -> Vec<u64> {
    let slices = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let waited = rt.block_on(async {
        start_cpu_tasks(&slices, &stop);
        let mut waited = Vec::new();
        for _ in 0..ROUNDS {
            until_busy(&slices).await;
            let (done_tx, done_rx) = oneshot::channel::<u64>();
            let fired_at = Arc::new(AtomicU64::new(u64::MAX));
            let report = {
                let (slices, fired_at) = (slices.clone(), fired_at.clone());
                Box::new(move || {
                    let now = slices.load(SeqCst);
                    let _ = done_tx.send(now.saturating_sub(fired_at.load(SeqCst)));
                }) as Box<dyn FnOnce() + Send>
            };
            let mark = {
                let (slices, fired_at) = (slices.clone(), fired_at.clone());
                Box::new(move || fired_at.store(slices.load(SeqCst), SeqCst))
                    as Box<dyn FnOnce() + Send>
            };
            let handle = Handle::current();
            let thread = std::thread::spawn(move || fire(handle, mark, report));
            waited.push(done_rx.await.unwrap());
            thread.join().unwrap();
        }
        stop.store(true, SeqCst);
        waited
    });
    waited
}

/// A task awaits a oneshot that a plain thread fires.
fn wake(handle: Handle, mark: Box<dyn FnOnce() + Send>, report: Box<dyn FnOnce() + Send>) {
    let (tx, rx) = oneshot::channel::<()>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    drop(handle.spawn(async move {
        ready_tx.send(()).unwrap();
        rx.await.unwrap();
        report();
    }));
    // The task waits on the oneshot before it is fired (its spawn is itself work from
    // another thread, not what is counted here).
    ready_rx.recv().unwrap();
    // Mid-slice, roughly.
    std::thread::sleep(SLICE / 2);
    mark();
    tx.send(()).unwrap();
}

/// A plain thread spawns the task.
fn spawn_from_thread(
    handle: Handle,
    mark: Box<dyn FnOnce() + Send>,
    report: Box<dyn FnOnce() + Send>,
) {
    // Mid-slice, roughly.
    std::thread::sleep(SLICE / 2);
    mark();
    drop(handle.spawn(async move { report() }));
}

#[test]
fn a_wake_from_another_thread_waits_a_few_slices_not_61() {
    for (name, rt) in runtimes() {
        let waited = slices_waited(&rt, wake);
        eprintln!("{name}: slices waited after a wake: {waited:?}");
        assert!(
            waited.iter().all(|&n| n < MAX_SLICES),
            "{name}: slices between a cross-thread wake and the task's poll: {waited:?}"
        );
    }
}

#[test]
fn a_spawn_from_another_thread_waits_a_few_slices_not_61() {
    for (name, rt) in runtimes() {
        let waited = slices_waited(&rt, spawn_from_thread);
        eprintln!("{name}: slices waited after a spawn: {waited:?}");
        assert!(
            waited.iter().all(|&n| n < MAX_SLICES),
            "{name}: slices between a cross-thread spawn and the task's poll: {waited:?}"
        );
    }
}
