//! `block_on`: drive one future on the calling thread, parking it between polls.
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! assert_eq!(rt.block_on(async { 40 + 2 }), 42);
//! ```
//!
//! How it works: on the multi-thread runtime the future's waker is a [`ThreadWaker`], a flag
//! plus the calling thread. Waking sets the flag and unparks the thread; the loop polls, then
//! parks until the flag is set (`thread::park` may return spuriously, hence the flag). On a
//! current-thread runtime the calling thread also runs the tasks (`scheduler/current_thread.rs`).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

use crate::scheduler::{block_on_seated, current, within, Shared};

/// Runs `future` to completion on the current thread, with `shared`'s runtime current. On a
/// current-thread runtime the thread also runs the runtime's tasks (takes its seat) only if
/// `may_drive` (`Runtime::block_on`; `Handle::block_on` does not, as in tokio).
#[track_caller]
pub(crate) fn block_on<F: Future>(shared: &Arc<Shared>, may_drive: bool, future: F) -> F::Output {
    assert!(
        !current::block_on_forbidden(),
        "Runtime::block_on called from inside a spinpark runtime (a task, a blocking-pool \
         thread, or another block_on): that would block a thread the runtime needs. \
         Use `.await` instead, or spawn_blocking to run blocking code."
    );
    let _enter = current::enter(shared.clone(), true);
    within(shared.context.as_ref(), || match &shared.seat {
        Some(seat) => block_on_seated(shared, seat, may_drive, future),
        None => run(future),
    })
}

/// The polling loop of `block_on`.
fn run<F: Future>(future: F) -> F::Output {
    let signal = Arc::new(ThreadWaker {
        thread: thread::current(),
        notified: AtomicBool::new(false),
    });
    let waker = Waker::from(signal.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        // Acquire: pairs with the Release in `wake`, so what the waker published before
        // waking us is visible when we poll again.
        while !signal.notified.swap(false, Ordering::Acquire) {
            thread::park();
        }
    }
}

/// The waker of a `block_on` future: wakes the thread blocked in it.
struct ThreadWaker {
    thread: thread::Thread,
    notified: AtomicBool,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: see `block_on`.
        if !self.notified.swap(true, Ordering::Release) {
            self.thread.unpark();
        }
    }
}
