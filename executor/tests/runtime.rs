//! The executor's public API: spawning, joining, aborting, panics, shutdown, metrics.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

use spinpark_executor::{spawn, spawn_blocking, yield_now, Builder, Handle, Runtime};

fn rt(workers: usize) -> Runtime {
    Builder::new().worker_threads(workers).build().unwrap()
}

#[test]
fn block_on_returns_output_and_spawned_tasks_run() {
    let rt = rt(2);
    let out = rt.block_on(async {
        let hs: Vec<_> = (0..100u64).map(|i| spawn(async move { i * 2 })).collect();
        let mut sum = 0;
        for h in hs {
            sum += h.await.unwrap();
        }
        sum
    });
    assert_eq!(out, 9900);
}

#[test]
fn nested_spawns_from_workers_all_complete() {
    let rt = rt(2);
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    rt.block_on(async move {
        let outer: Vec<_> = (0..20)
            .map(|_| {
                let d = d.clone();
                spawn(async move {
                    let inner: Vec<_> = (0..50)
                        .map(|_| {
                            let d = d.clone();
                            spawn(async move {
                                yield_now().await;
                                d.fetch_add(1, SeqCst);
                            })
                        })
                        .collect();
                    for h in inner {
                        h.await.unwrap();
                    }
                })
            })
            .collect();
        for h in outer {
            h.await.unwrap();
        }
    });
    assert_eq!(done.load(SeqCst), 1000);
}

#[test]
fn a_panicking_task_yields_a_join_error_and_the_worker_survives() {
    let rt = rt(1);
    let err = rt
        .block_on(async { spawn(async { panic!("boom {}", 7) }).await })
        .unwrap_err();
    assert!(err.is_panic());
    assert!(!err.is_cancelled());
    assert!(err.to_string().contains("boom 7"), "{err}");
    let payload = err.into_panic();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()));
    assert_eq!(msg.as_deref(), Some("boom 7"));
    // The single worker is still alive and runs more tasks.
    assert_eq!(rt.block_on(async { spawn(async { 5 }).await.unwrap() }), 5);
}

#[test]
fn abort_cancels_a_pending_task_and_drops_its_future() {
    struct DropFlag(Arc<AtomicUsize>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }
    let rt = rt(2);
    let dropped = Arc::new(AtomicUsize::new(0));
    let flag = DropFlag(dropped.clone());
    let h = rt.spawn(async move {
        let _flag = flag;
        std::future::pending::<()>().await;
    });
    assert!(!h.is_finished());
    h.abort();
    let err = rt.block_on(h).unwrap_err();
    assert!(err.is_cancelled());
    assert_eq!(dropped.load(SeqCst), 1);
}

#[test]
fn abort_after_completion_keeps_the_output() {
    let rt = rt(1);
    let h = rt.spawn(async { 9 });
    while !h.is_finished() {
        std::thread::yield_now();
    }
    h.abort();
    assert_eq!(rt.block_on(h).unwrap(), 9);
}

#[test]
fn dropping_the_runtime_drops_unfinished_tasks() {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel::<std::task::Waker>();
    let rt = rt(2);
    let mut handles = Vec::new();
    for _ in 0..50 {
        let c = Counted(dropped.clone());
        // Tasks that never finish and keep no waker anywhere.
        handles.push(rt.spawn(async move {
            let _c = c;
            std::future::pending::<()>().await;
        }));
    }
    for _ in 0..50 {
        let c = Counted(dropped.clone());
        let tx = tx.clone();
        // Tasks whose waker sits in the runtime's queues because they keep yielding.
        handles.push(rt.spawn(async move {
            let _c = c;
            let _tx = tx;
            loop {
                yield_now().await;
            }
        }));
    }
    drop(tx);
    std::thread::sleep(Duration::from_millis(20));
    drop(rt);
    assert_eq!(dropped.load(SeqCst), 100);
    // Awaiting a handle of a dropped runtime's task reports cancellation.
    let other = Runtime::new().unwrap();
    for h in handles {
        assert!(other.block_on(h).unwrap_err().is_cancelled());
    }
    assert!(rx.recv().is_err(), "every task (and its sender) is gone");
}

#[test]
fn spawn_from_many_threads_outside_the_runtime() {
    let rt = rt(2);
    let handle = rt.handle().clone();
    let count = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let handle = handle.clone();
            let count = count.clone();
            std::thread::spawn(move || {
                let hs: Vec<_> = (0..1000)
                    .map(|_| {
                        let count = count.clone();
                        handle.spawn(async move {
                            count.fetch_add(1, SeqCst);
                        })
                    })
                    .collect();
                hs
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in threads {
        all.extend(t.join().unwrap());
    }
    rt.block_on(async {
        for h in all {
            h.await.unwrap();
        }
    });
    assert_eq!(count.load(SeqCst), 8000);
    let m = rt.metrics();
    assert_eq!(m.tasks_spawned(), 8000);
    assert!(m.remote_schedules() >= 8000);
}

#[test]
fn join_handle_awaited_from_another_runtime() {
    let a = rt(1);
    let b = rt(1);
    let (tx, rx) = mpsc::channel();
    let h = a.spawn(async move {
        rx.recv().unwrap();
        "from a"
    });
    let out = b.block_on(async move {
        spawn(async move {
            tx.send(()).unwrap();
            h.await.unwrap()
        })
        .await
        .unwrap()
    });
    assert_eq!(out, "from a");
}

#[test]
fn handle_current_inside_and_outside() {
    assert!(Handle::try_current().is_err());
    let rt = rt(2);
    let workers = rt.block_on(async { Handle::current().worker_threads() });
    assert_eq!(workers, 2);
    let in_task = rt.block_on(async { spawn(async { Handle::try_current().is_ok() }).await });
    assert!(in_task.unwrap());
}

#[test]
#[should_panic(expected = "outside a spinpark runtime")]
fn spawn_outside_a_runtime_panics_with_a_message() {
    drop(spawn(async {}));
}

#[test]
fn block_on_inside_a_worker_panics_instead_of_deadlocking() {
    let rt = rt(1);
    let h = rt.handle().clone();
    let err = rt
        .block_on(async move { spawn(async move { h.block_on(async {}) }).await })
        .unwrap_err();
    assert!(err.is_panic());
    assert!(
        err.to_string().contains("inside a spinpark runtime"),
        "{err}"
    );
}

#[test]
fn spawn_blocking_runs_off_the_workers_and_threads_exit_after_idling() {
    let rt = Builder::new()
        .worker_threads(1)
        .thread_keep_alive(Duration::from_millis(50))
        .build()
        .unwrap();
    let names = rt.block_on(async {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                spawn_blocking(|| {
                    std::thread::sleep(Duration::from_millis(20));
                    std::thread::current().name().unwrap().to_string()
                })
            })
            .collect();
        let mut v = Vec::new();
        for h in hs {
            v.push(h.await.unwrap());
        }
        v
    });
    assert!(names.iter().all(|n| n.ends_with("-blocking")), "{names:?}");
    assert!(rt.handle().blocking_threads() >= 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rt.handle().blocking_threads() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "blocking threads never exited"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let err = rt
        .block_on(rt.spawn_blocking(|| panic!("in blocking")))
        .unwrap_err();
    assert!(err.is_panic());
}

#[test]
fn thread_hooks_run_on_every_worker() {
    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let (s, t) = (started.clone(), stopped.clone());
    let rt = Builder::new()
        .worker_threads(3)
        .thread_name("hooked")
        .on_thread_start(move || {
            assert!(std::thread::current()
                .name()
                .unwrap()
                .starts_with("hooked-"));
            s.fetch_add(1, SeqCst);
        })
        .on_thread_stop(move || {
            t.fetch_add(1, SeqCst);
        })
        .build()
        .unwrap();
    rt.block_on(async { spawn(async {}).await.unwrap() });
    drop(rt);
    assert_eq!(started.load(SeqCst), 3);
    assert_eq!(stopped.load(SeqCst), 3);
}

#[test]
fn builder_rejects_zero_workers() {
    let err = Builder::new().worker_threads(0).build().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("worker_threads"));
}

#[test]
fn metrics_count_polls_spawns_and_parks() {
    let rt = Builder::new()
        .worker_threads(2)
        .spin(Duration::from_micros(50))
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..10 {
            spawn(async {
                yield_now().await;
            })
            .await
            .unwrap();
        }
    });
    let m = rt.metrics();
    assert_eq!(m.tasks_spawned(), 10);
    // Each task is polled twice (it yields once).
    assert_eq!(m.total().polls(), 20);
    // Let the workers' spin windows run out: both park.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (sleepers, spinners, _) = rt.handle().idle_state();
        if sleepers == 2 && spinners == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "workers never parked");
        std::thread::sleep(Duration::from_millis(5));
    }
    // A spawn from outside now has to wake a parked worker: a wake syscall.
    let before = rt.metrics().wakes();
    rt.block_on(async { spawn(async {}).await.unwrap() });
    let after = rt.metrics();
    assert!(after.wakes() > before);
    assert!(after.total().parks() >= 1);
    // At most one worker spins at a time (max_spinners = 1 of 2), so at least one window
    // ran out before the workers parked.
    assert!(after.total().spins_expired() >= 1);
}

#[test]
fn spinning_disabled_still_runs_everything() {
    let rt = Builder::new()
        .worker_threads(2)
        .spin(Duration::ZERO)
        .build()
        .unwrap();
    let n = rt.block_on(async {
        let mut n = 0;
        for i in 0..200u32 {
            n += spawn(async move { i % 3 }).await.unwrap();
        }
        n
    });
    assert_eq!(n, (0..200u32).map(|i| i % 3).sum());
}

#[test]
fn shutdown_timeout_returns_while_a_blocking_closure_still_runs() {
    let rt = rt(1);
    let barrier = Arc::new(Barrier::new(2));
    let b = barrier.clone();
    let _h = rt.spawn_blocking(move || {
        b.wait();
        std::thread::sleep(Duration::from_secs(2));
    });
    barrier.wait();
    rt.shutdown_timeout(Duration::from_millis(10));
}
