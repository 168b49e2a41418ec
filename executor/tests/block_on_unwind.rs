//! A panic that unwinds out of `block_on` (the caller catches it) leaves the runtime usable,
//! and leaves the calling thread as it found it, on both flavours, as in tokio.

mod common;

use std::future::poll_fn;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::task::Poll;
use std::time::Duration;

use spinpark_executor::{coop, spawn, Builder, Runtime};

const WATCHDOG: Duration = Duration::from_secs(30);

fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    common::within(WATCHDOG, what, f)
}

/// `block_on` of a future that panics, caught.
fn panic_in_block_on(rt: &Runtime) {
    let caught = catch_unwind(AssertUnwindSafe(|| {
        rt.block_on(async {
            // Some tasks queued behind the panic, which must survive it.
            spawn(async {});
            spawn(async {});
            panic!("boom in block_on")
        })
    }));
    assert!(caught.is_err());
}

#[test]
fn a_current_thread_runtime_runs_tasks_after_a_panic_in_block_on() {
    within("block_on after a panic", || {
        let rt = Builder::new_current_thread().build().unwrap();
        for i in 0..3 {
            panic_in_block_on(&rt);
            // The seat was given back: a task spawned now runs.
            assert_eq!(
                rt.block_on(async move { spawn(async move { i }).await })
                    .unwrap(),
                i
            );
        }
    });
}

#[test]
fn a_current_thread_runtime_can_be_driven_from_another_thread_after_a_panic() {
    within("another thread after a panic", || {
        let rt = std::sync::Arc::new(Builder::new_current_thread().build().unwrap());
        panic_in_block_on(&rt);
        let other = rt.clone();
        let v =
            std::thread::spawn(move || other.block_on(async { spawn(async { 5 }).await }).unwrap())
                .join()
                .unwrap();
        assert_eq!(v, 5);
    });
}

#[test]
fn a_multi_thread_runtime_runs_tasks_after_a_panic_in_block_on() {
    within("multi-thread block_on after a panic", || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        panic_in_block_on(&rt);
        assert_eq!(rt.block_on(async { spawn(async { 3 }).await }).unwrap(), 3);
    });
}

/// The number of times in a row `poll_proceed` lets the future go on, up to `limit`.
async fn budget_granted(limit: u32) -> u32 {
    poll_fn(|cx| {
        for n in 0..limit {
            match coop::poll_proceed(cx) {
                Poll::Ready(unit) => unit.made_progress(),
                Poll::Pending => return Poll::Ready(n),
            }
        }
        Poll::Ready(limit)
    })
    .await
}

#[test]
fn a_panic_in_current_thread_block_on_leaves_no_budget_behind() {
    within("budget after a panic", || {
        let rt = Builder::new_current_thread().build().unwrap();
        panic_in_block_on(&rt);
        drop(rt);
        // Outside any task the budget is unlimited: a multi-thread runtime's block_on on this
        // same thread must not inherit the budget the panicking future was given.
        let other = Builder::new().worker_threads(1).build().unwrap();
        assert_eq!(other.block_on(budget_granted(1000)), 1000);
    });
}
