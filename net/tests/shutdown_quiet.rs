//! Dropping a runtime whose workers are busy with timers never polls a task once shutdown has
//! begun, so no timer panics "has shut down" in a task that the shutdown then drops (tokio
//! prints nothing there either).
//!
//! A binary of its own: it counts panics with a process-wide panic hook.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use spinpark_executor::{spawn, Builder};
use spinpark_net::time::sleep;

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Tasks that keep making new timers, each first polled wherever the scheduler puts it.
fn churn(left: u32) {
    if left == 0 {
        return;
    }
    spawn(async move {
        sleep(Duration::from_micros(50)).await;
        churn(left - 1);
    });
}

#[test]
fn runtimes_dropped_while_timers_churn_print_no_panic() {
    std::panic::set_hook(Box::new(|info| {
        PANICS.fetch_add(1, Relaxed);
        eprintln!(
            "panic during shutdown on {:?}: {info}",
            std::thread::current().name()
        );
    }));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..300 {
            let rt = Builder::new().worker_threads(2).build().unwrap();
            let started = Arc::new(AtomicUsize::new(0));
            let s = started.clone();
            rt.spawn(async move {
                for _ in 0..16 {
                    churn(1_000_000);
                }
                s.store(1, Relaxed);
            });
            while started.load(Relaxed) == 0 {
                std::thread::yield_now();
            }
            drop(rt);
        }
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("dropping 300 runtimes hung");
    let _ = std::panic::take_hook();
    assert_eq!(
        PANICS.load(Relaxed),
        0,
        "panics were printed during shutdown"
    );
}
