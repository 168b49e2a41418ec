//! Places where tokio's own tests found spinpark behaving differently from tokio, each pinned
//! here: a runtime dropped while its thread's locals are destroyed, a panicking task's future
//! dropped during the unwind, `max_blocking_threads(0)`, and `Handle::block_on` on a
//! current-thread runtime, which waits beside the runtime rather than driving it.

mod common;

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use spinpark_executor::{yield_now, Builder, Runtime};

const WATCHDOG: Duration = Duration::from_secs(20);

#[test]
fn a_runtime_kept_in_a_thread_local_drops_as_the_thread_exits() {
    thread_local! {
        static RT: RefCell<Option<Runtime>> = const { RefCell::new(None) };
    }
    for flavor in ["multi", "current"] {
        let ran = common::within(WATCHDOG, "thread-local runtime", move || {
            std::thread::spawn(move || {
                // The runtime's cell is this thread's first thread-local, so it is destroyed
                // after the runtime's own ones, which the runtime's drop must not touch then.
                RT.with(|cell| {
                    *cell.borrow_mut() = Some(match flavor {
                        "multi" => common::rt(2),
                        _ => Builder::new_current_thread().build().unwrap(),
                    })
                });
                RT.with(|cell| {
                    let rt = cell.borrow();
                    let rt = rt.as_ref().unwrap();
                    rt.block_on(async { spinpark_executor::spawn(async { 7 }).await })
                        .unwrap()
                })
            })
            .join()
        });
        // Before, dropping it there touched already destroyed thread-locals: an abort.
        assert_eq!(ran.ok(), Some(7), "{flavor}: the thread died");
    }
}

/// A future that panics when polled and records, when dropped, whether a panic was unwinding.
struct PanicsInPoll {
    dropped_while_panicking: Arc<AtomicBool>,
    dropped: Arc<AtomicUsize>,
    panic_again_in_drop: bool,
}

impl Future for PanicsInPoll {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        panic!("poll fails");
    }
}

impl Drop for PanicsInPoll {
    fn drop(&mut self) {
        self.dropped_while_panicking
            .store(std::thread::panicking(), SeqCst);
        self.dropped.fetch_add(1, SeqCst);
        if self.panic_again_in_drop {
            panic!("drop fails too");
        }
    }
}

#[test]
fn a_future_whose_poll_panics_is_dropped_during_the_unwind() {
    for panic_again_in_drop in [false, true] {
        let (panicking, dropped) = common::within(WATCHDOG, "panic in poll", move || {
            let rt = common::rt(2);
            let panicking = Arc::new(AtomicBool::new(false));
            let dropped = Arc::new(AtomicUsize::new(0));
            let fut = PanicsInPoll {
                dropped_while_panicking: panicking.clone(),
                dropped: dropped.clone(),
                panic_again_in_drop,
            };
            let err = rt.block_on(rt.spawn(fut)).unwrap_err();
            assert_eq!(common::panic_text(err), "poll fails");
            // The runtime is still whole afterwards.
            assert_eq!(rt.block_on(rt.spawn(async { 3 })).unwrap(), 3);
            (panicking.load(SeqCst), dropped.load(SeqCst))
        });
        assert_eq!(
            dropped, 1,
            "dropped exactly once (drop panics: {panic_again_in_drop})"
        );
        assert!(panicking, "the drop did not see the unwinding panic");
    }
}

#[test]
fn zero_blocking_threads_is_refused_by_build() {
    for b in [Builder::new_multi_thread(), Builder::new_current_thread()] {
        let err = b.max_blocking_threads(0).build().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("max_blocking_threads"), "{err}");
    }
}

#[test]
#[allow(clippy::async_yields_async)] // the task's handle is carried out of block_on on purpose
fn handle_block_on_waits_beside_a_current_thread_runtime_without_driving_it() {
    common::within(WATCHDOG, "Handle::block_on", || {
        let rt = Builder::new_current_thread().build().unwrap();
        let handle = rt.handle().clone();
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let task = handle.block_on(async move {
            let task = spinpark_executor::spawn(async move { flag.store(true, SeqCst) });
            for _ in 0..50 {
                yield_now().await;
            }
            task
        });
        // No thread was in Runtime::block_on: the task has not run (as in tokio).
        assert!(!ran.load(SeqCst), "Handle::block_on drove the runtime");
        assert_eq!(spinpark_executor::worker_index(), None);
        rt.block_on(task).unwrap();
        assert!(ran.load(SeqCst));
    });
}

#[test]
fn runtimes_have_ids_and_names() {
    let a = Builder::new_current_thread().name("api").build().unwrap();
    let b = Builder::new_current_thread().build().unwrap();
    assert_ne!(a.handle().id(), b.handle().id());
    assert_eq!(a.handle().id(), a.handle().clone().id());
    assert_eq!(a.handle().name(), Some("api"));
    assert_eq!(b.handle().name(), None);
    let err = Builder::new_current_thread().name(" ").build().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn tokios_tuning_numbers_are_checked_by_build() {
    type Set = fn(Builder) -> Builder;
    let zeros: [Set; 4] = [
        |b| b.global_queue_interval(0),
        |b| b.event_interval(0),
        |b| b.max_io_events_per_tick(0),
        |b| b.max_io_events_per_busy_tick(0),
    ];
    for set in zeros {
        let err = set(Builder::new_multi_thread()).build().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    }
    let fine = Builder::new_multi_thread()
        .global_queue_interval(31)
        .event_interval(61)
        .max_io_events_per_tick(1024)
        .max_io_events_per_busy_tick(64)
        .build();
    assert!(fine.is_ok());
}

#[test]
fn park_hooks_run_around_parks_and_a_panicking_hook_is_contained() {
    common::within(WATCHDOG, "park hooks", || {
        let parks = Arc::new(AtomicUsize::new(0));
        let unparks = Arc::new(AtomicUsize::new(0));
        let (p, u) = (parks.clone(), unparks.clone());
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_park(move || {
                p.fetch_add(1, SeqCst);
                panic!("hook fails");
            })
            .on_thread_unpark(move || {
                u.fetch_add(1, SeqCst);
            })
            .build()
            .unwrap();
        for _ in 0..20 {
            // The worker parks between these, waking for each.
            std::thread::sleep(Duration::from_millis(2));
            assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1);
        }
        assert!(parks.load(SeqCst) >= 1, "the park hook never ran");
        assert!(unparks.load(SeqCst) >= 1, "the unpark hook never ran");
    });
}

#[test]
fn tokios_metrics_read_live_figures() {
    let rt = Builder::new_current_thread().build().unwrap();
    let metrics = rt.metrics();
    assert_eq!(metrics.num_workers(), 1);
    assert_eq!(metrics.global_queue_depth(), 0);
    let task = rt.spawn(async {}); // from outside the runtime: into the shared queue
    assert_eq!(
        metrics.global_queue_depth(),
        1,
        "read when called, not at snapshot time"
    );
    rt.block_on(task).unwrap();
    assert_eq!(metrics.global_queue_depth(), 0);
}

#[test]
fn block_in_place_inside_a_local_set_panics_with_tokios_message() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let set = spinpark_executor::LocalSet::new();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.block_on(&rt, async { spinpark_executor::block_in_place(|| ()) })
    }))
    .unwrap_err();
    let text = err
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| err.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        text.contains("can call blocking only when running on the multi-threaded runtime"),
        "{text}"
    );
}

#[test]
fn runtimes_and_handles_may_be_used_across_catch_unwind() {
    fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>(_: &T) {}
    let rt = Builder::new_current_thread().build().unwrap();
    unwind_safe(&rt);
    unwind_safe(rt.handle());
    // The promise behind the markers: a panic out of block_on leaves the runtime usable.
    assert!(std::panic::catch_unwind(|| rt.block_on(async { panic!("out") })).is_err());
    assert_eq!(rt.block_on(rt.spawn(async { 2 })).unwrap(), 2);
}
