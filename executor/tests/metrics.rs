//! tokio's live runtime metrics: `num_alive_tasks`, `worker_park_unpark_count`,
//! `worker_total_busy_duration`.

use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use spinpark_executor::{Builder, LocalSet, RuntimeMetrics};

/// Bounds a wait for something that must happen; never reached when things work.
const WATCHDOG: Duration = Duration::from_secs(30);

/// Waits until `cond` holds, failing the test if it never does.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < WATCHDOG, "{what}: never happened");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn alive_tasks_count_spawned_tasks_until_their_future_is_dropped() {
    let rt = Builder::new_current_thread().build().unwrap();
    let metrics = rt.metrics(); // reads live
    assert_eq!(metrics.num_alive_tasks(), 0);
    // Queued, never polled: alive.
    let a = rt.spawn(async {});
    let b = rt.spawn(async {});
    assert_eq!(metrics.num_alive_tasks(), 2);
    // Waiting on something: alive.
    let (tx, rx) = futures_channel();
    let waiting = rt.spawn(rx);
    rt.block_on(async {
        a.await.unwrap();
        b.await.unwrap();
        // The task inside counts itself.
        let inner = spinpark_executor::spawn(async {
            spinpark_executor::Handle::current()
                .metrics()
                .num_alive_tasks()
        });
        assert_eq!(inner.await.unwrap(), 2); // itself and `waiting`
    });
    assert_eq!(metrics.num_alive_tasks(), 1);
    tx.send(());
    rt.block_on(waiting).unwrap();
    assert_eq!(metrics.num_alive_tasks(), 0);
    // Aborted: gone once its future is dropped.
    let pending = rt.spawn(std::future::pending::<()>());
    rt.block_on(async { spinpark_executor::yield_now().await });
    pending.abort();
    assert!(rt.block_on(pending).unwrap_err().is_cancelled());
    assert_eq!(metrics.num_alive_tasks(), 0);
    // Blocking closures and local tasks are not the runtime's tasks.
    rt.block_on(rt.spawn_blocking(|| ())).unwrap();
    let set = LocalSet::new();
    set.block_on(&rt, async {
        spinpark_executor::spawn_local(async {}).await
    })
    .unwrap();
    assert_eq!(metrics.num_alive_tasks(), 0);
}

#[test]
fn a_panicking_task_leaves_the_count() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    let metrics = rt.metrics();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            rt.spawn(async move {
                if i % 2 == 0 {
                    panic!("task {i}");
                }
            })
        })
        .collect();
    for t in tasks {
        let _ = rt.block_on(t);
    }
    // The count drops before the handle hears of the task's end.
    assert_eq!(metrics.num_alive_tasks(), 0);
}

#[test]
fn tasks_dropped_at_shutdown_leave_the_count() {
    // Current-thread: tasks spawned from outside wait in the queue, never polled, until a
    // thread drives the runtime; others wait on something, polled once.
    let rt = Builder::new_current_thread().build().unwrap();
    let metrics = rt.metrics();
    for _ in 0..3 {
        drop(rt.spawn(std::future::pending::<()>()));
    }
    rt.block_on(spinpark_executor::yield_now());
    for _ in 0..4 {
        drop(rt.spawn(async {}));
    }
    assert_eq!(metrics.num_alive_tasks(), 7);
    drop(rt);
    assert_eq!(metrics.num_alive_tasks(), 0);

    // Multi-thread: tasks waiting on something.
    let rt = Builder::new().worker_threads(2).build().unwrap();
    let metrics = rt.metrics();
    let (polled_tx, polled_rx) = mpsc::channel();
    for _ in 0..4 {
        let polled = polled_tx.clone();
        drop(rt.spawn(async move {
            polled.send(()).unwrap();
            std::future::pending::<()>().await
        }));
    }
    for _ in 0..4 {
        polled_rx.recv().unwrap();
    }
    assert_eq!(metrics.num_alive_tasks(), 4);
    drop(rt);
    assert_eq!(metrics.num_alive_tasks(), 0);
}

fn parked(m: &RuntimeMetrics) -> bool {
    m.worker_park_unpark_count(0) % 2 == 1
}

#[test]
fn park_unpark_count_is_odd_while_parked_and_even_while_working() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let metrics = rt.metrics();
    eventually("the idle worker parks", || parked(&metrics));
    let before = metrics.worker_park_unpark_count(0);
    let inside = rt
        .block_on(rt.spawn(async {
            spinpark_executor::Handle::current()
                .metrics()
                .worker_park_unpark_count(0)
        }))
        .unwrap();
    assert_eq!(
        inside % 2,
        0,
        "{inside}: the worker runs a task, it is not parked"
    );
    assert!(inside > before);
    eventually("the worker parks again", || parked(&metrics));
    assert!(metrics.worker_park_unpark_count(0) > inside);
    // The snapshot's per-worker figure says the same.
    assert!(metrics.workers()[0].park_unparks() <= metrics.worker_park_unpark_count(0));
}

#[test]
fn busy_duration_counts_time_running_tasks() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let metrics = rt.metrics();
    eventually("the idle worker parks", || parked(&metrics));
    let before = metrics.worker_total_busy_duration(0);
    // A task that keeps its worker busy for 50 ms.
    rt.block_on(rt.spawn(async { thread::sleep(Duration::from_millis(50)) }))
        .unwrap();
    eventually("the worker parks again", || parked(&metrics));
    let busy = metrics.worker_total_busy_duration(0) - before;
    // At least the 50 ms, less one tick of the coarse clock (at most 4 ms) at each end.
    assert!(busy >= Duration::from_millis(40), "{busy:?}");
}

#[test]
fn busy_duration_on_a_current_thread_runtime() {
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async { thread::sleep(Duration::from_millis(50)) });
    let busy = rt.metrics().worker_total_busy_duration(0);
    assert!(busy >= Duration::from_millis(40), "{busy:?}");
}

/// A one-shot channel from std's parts: `send` wakes the receiving task.
fn futures_channel() -> (OneTx, OneRx) {
    let shared = Arc::new(std::sync::Mutex::new((false, None::<std::task::Waker>)));
    (OneTx(shared.clone()), OneRx(shared))
}

type OneState = Arc<std::sync::Mutex<(bool, Option<std::task::Waker>)>>;

struct OneTx(OneState);

impl OneTx {
    fn send(self, _: ()) {
        let waker = {
            let mut s = self.0.lock().unwrap();
            s.0 = true;
            s.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

struct OneRx(OneState);

impl std::future::Future for OneRx {
    type Output = ();
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let mut s = self.0.lock().unwrap();
        if s.0 {
            std::task::Poll::Ready(())
        } else {
            s.1 = Some(cx.waker().clone());
            std::task::Poll::Pending
        }
    }
}

#[test]
fn a_few_tiny_tasks_show_busy_time_on_every_worker() {
    // Busy periods far shorter than the coarse clock's tick still count (tokio's
    // rt_metrics::worker_total_busy_duration): the readings are the fine clock's.
    let current = spinpark_executor::Builder::new_current_thread()
        .build()
        .unwrap();
    let threaded = spinpark_executor::Builder::new()
        .worker_threads(2)
        .build()
        .unwrap();
    for rt in [current, threaded] {
        let metrics = rt.metrics();
        rt.block_on(async {
            for _ in 0..5 {
                spinpark_executor::spawn(async { spinpark_executor::yield_now().await })
                    .await
                    .unwrap();
            }
        });
        drop(rt);
        for w in 0..metrics.num_workers() {
            assert!(
                metrics.worker_total_busy_duration(w) > std::time::Duration::ZERO,
                "worker {w} of {} shows no busy time",
                metrics.num_workers()
            );
        }
    }
}
