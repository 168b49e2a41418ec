//! Every duration the runtime takes accepts `Duration::MAX` (and other durations too large to
//! add to an `Instant`) without panicking: a duration that does not fit means "no deadline"
//! or "never", as in tokio.

mod common;

use std::time::Duration;

use spinpark_executor::{spawn, spawn_blocking, Builder, Runtime};

const WATCHDOG: Duration = Duration::from_secs(30);

/// Runs a little of everything on `rt`, then shuts it down with an unbounded timeout.
fn exercise(rt: Runtime) {
    let sum = rt.block_on(async {
        let a = spawn(async { 1 });
        let b = spawn_blocking(|| 2);
        a.await.unwrap() + b.await.unwrap()
    });
    assert_eq!(sum, 3);
    rt.shutdown_timeout(Duration::MAX);
}

#[test]
fn builder_durations_of_duration_max() {
    common::within(WATCHDOG, "Duration::MAX everywhere", || {
        let huge = [Duration::MAX, Duration::from_secs(u64::MAX / 2)];
        for d in huge {
            exercise(
                Builder::new()
                    .worker_threads(2)
                    .thread_keep_alive(d)
                    .long_poll_threshold(d)
                    .build()
                    .unwrap(),
            );
            // A spin window that never ends on its own is still bounded by the spin budget.
            exercise(Builder::new().worker_threads(2).spin(d).build().unwrap());
            exercise(
                Builder::new()
                    .worker_threads(2)
                    .spin_adaptive(Duration::ZERO, d)
                    .build()
                    .unwrap(),
            );
            exercise(
                Builder::new_current_thread()
                    .thread_keep_alive(d)
                    .spin(d)
                    .build()
                    .unwrap(),
            );
        }
    });
}
