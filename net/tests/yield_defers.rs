//! `yield_now` lets its worker poll the reactor before the task runs again, whatever the
//! other workers do, as tokio promises (its `rt_common.rs` `yield_defers_until_park`): with
//! every worker but one blocked in a task (`std::thread::sleep` loops), the last one polls an
//! accept (nothing to accept yet), connects, then yields, and the accept must complete within
//! a few yields: only a reactor poll can have told the listener. For every worker count from
//! 1 to 4, and with the cooperative budget spent instead of `yield_now`.
//!
//! The blocking tasks are spawned one at a time (each started before the next is spawned),
//! and at once, as tokio's test spawns them: then the workers spread them among themselves
//! (the last test, and `spinpark-executor`'s `tests/spread.rs`).

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Poll;

use spinpark_executor::{spawn, yield_now, Builder};
use spinpark_net::TcpListener;

/// How many yields the accept may take: the first reactor poll after the connect sees it
/// (tokio's test allows ten).
const MAX_YIELDS: usize = 10;
/// Runs per setting: a bug that depends on which worker happens to hold what shows in some.
const RUNS: usize = 5;

/// Polls `f` once.
async fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut *f).poll(cx))).await
}

/// How the blocking tasks are spawned from `block_on`.
#[derive(Clone, Copy, Debug)]
enum Spawn {
    /// One at a time, each started before the next is spawned (so each lands on a worker of
    /// its own whatever the scheduler does with a burst).
    OneByOne,
    /// All at once, as tokio's test does: the workers spread them.
    AtOnce,
}

/// Waits (bounded: only a broken build waits this long) until `started` reaches `n`;
/// otherwise stops the blocking tasks and fails.
fn wait_started(started: &AtomicUsize, n: usize, stop: &AtomicBool) {
    for _ in 0..10_000 {
        if started.load(SeqCst) >= n {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    stop.store(true, SeqCst);
    panic!("{} of {n} blocking tasks started", started.load(SeqCst));
}

/// One run on `workers` workers: how many yields the accept took, `None` if more than
/// [`MAX_YIELDS`].
fn yields_until_accepted(workers: usize, use_budget: bool, how: Spawn) -> Option<usize> {
    let rt = Builder::new().worker_threads(workers).build().unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicUsize::new(0));
    let took = rt.block_on(async {
        // Every other worker blocked in a task, so none can take the yielding task or poll
        // the reactor for it.
        for k in 0..workers - 1 {
            let (stop, now_running) = (flag.clone(), started.clone());
            drop(spawn(async move {
                now_running.fetch_add(1, SeqCst);
                while !stop.load(SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }));
            if let Spawn::OneByOne = how {
                wait_started(&started, k + 1, &flag);
            }
        }
        wait_started(&started, workers - 1, &flag);
        let took = spawn(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let mut accept = Box::pin(listener.accept());
            // Nothing to accept yet: this poll leaves the listener waiting for readiness, so
            // that only a reactor poll can tell it about the connection below.
            assert!(poll_once(&mut accept).await.is_pending());
            // Blocking on purpose, as in tokio's test: the connection is queued on return.
            let _client = std::net::TcpStream::connect(addr).unwrap();
            for yields in 1..=MAX_YIELDS {
                if use_budget {
                    // Spends the budget: one of these yields (tokio's test spends 128).
                    for _ in 0..1000 {
                        spinpark_executor::coop::consume_budget().await;
                    }
                } else {
                    yield_now().await;
                }
                if let Poll::Ready(r) = poll_once(&mut accept).await {
                    r.unwrap();
                    return Some(yields);
                }
            }
            None
        })
        .await;
        flag.store(true, SeqCst);
        took.unwrap()
    });
    drop(rt);
    took
}

fn check(use_budget: bool, how: Spawn) {
    for workers in 1..=4 {
        for run in 0..RUNS {
            let took = yields_until_accepted(workers, use_budget, how);
            assert!(
                took.is_some(),
                "{workers} workers, blocking tasks spawned {how:?}, run {run}: the accept was \
                 not seen in {MAX_YIELDS} yields"
            );
        }
    }
}

#[test]
fn yield_now_polls_the_reactor_first_on_every_worker_count() {
    check(false, Spawn::OneByOne);
}

#[test]
fn a_spent_budget_polls_the_reactor_first_on_every_worker_count() {
    check(true, Spawn::OneByOne);
}

/// tokio's `yield_defers_until_park` as it is: the blocking tasks spawned at once.
#[test]
fn yield_now_polls_the_reactor_first_with_blocking_tasks_spawned_at_once() {
    check(false, Spawn::AtOnce);
}

#[test]
fn a_spent_budget_polls_the_reactor_first_with_blocking_tasks_spawned_at_once() {
    check(true, Spawn::AtOnce);
}

/// One run: `workers - 1` tasks that block their worker (sleep loops), spawned at once from
/// `block_on` as tokio's test spawns them; whether they all started, each on a worker of its
/// own, without the watchdog's help. A task left queued behind a blocked worker starts only
/// once the watchdog sees that worker stuck and wakes another (counted in
/// `RuntimeMetrics::watchdog_wakes`: there is no reactor here for it to wake a driver for),
/// or never.
fn blocking_tasks_all_start(workers: usize) -> bool {
    let rt = Builder::new().worker_threads(workers).build().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let arrived = Arc::new(AtomicUsize::new(0));
    let all = rt.block_on(async {
        for _ in 0..workers - 1 {
            let (stop, arrived) = (stop.clone(), arrived.clone());
            drop(spawn(async move {
                arrived.fetch_add(1, SeqCst);
                // As a barrier: blocks the worker until every task arrived (or the test
                // gives up).
                while arrived.load(SeqCst) < workers - 1 && !stop.load(SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }));
        }
        // Bounded: a second is thousands of times what spreading takes.
        for _ in 0..1000 {
            if arrived.load(SeqCst) == workers - 1 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        arrived.load(SeqCst) == workers - 1
    });
    stop.store(true, SeqCst);
    let unaided = rt.metrics().watchdog_wakes() == 0;
    drop(rt);
    all && unaided
}

#[test]
fn blocking_tasks_spawned_at_once_each_find_a_worker() {
    for workers in 2..=4 {
        for run in 0..40 {
            assert!(
                blocking_tasks_all_start(workers),
                "{workers} workers, run {run}: a blocking task did not find a worker of its own"
            );
        }
    }
}
