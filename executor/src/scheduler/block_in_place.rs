//! [`block_in_place`]: run blocking code on a worker thread, after handing the worker's place
//! (its queue, its LIFO slot, its part in the idle protocol) to another thread, which goes on
//! running the worker's tasks meanwhile.
//!
//! ```
//! # let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
//! # rt.block_on(rt.spawn(async {
//! let (tx, rx) = std::sync::mpsc::channel();
//! spinpark::spawn(async move { tx.send(1).unwrap() }); // runs while this worker blocks
//! let got = spinpark::task::block_in_place(|| rx.recv().unwrap());
//! assert_eq!(got, 1);
//! # })).unwrap();
//! ```
//!
//! How it works. A worker's state is a boxed *place*; while one of its tasks runs, the place
//! waits in the thread's slot (`current::lend`). `block_in_place` takes it from there, leaves
//! it in the runtime's `Places` for worker `i`, and queues a closure on the blocking pool that
//! takes it and runs the worker loop with it (`worker::run_place`): a *carrier*, which the
//! pool runs first and does not count against `max_blocking_threads` (`blocking.rs`). Then it runs `f`, on this
//! thread, which is no longer a worker (so `Handle::block_on` is allowed inside `f`, as in
//! tokio). When `f` returns it tries to take the place back: if the pool thread has not
//! taken it yet, this thread is worker `i` again and nothing else happened; otherwise the
//! rest of the task runs here as on any thread, and when its poll ends this thread's loop
//! sees that it no longer holds a place and ends, without touching the worker's state.
//!
//! The idle protocol needs nothing: worker `i` is awake while its task runs and stays awake
//! on the thread that takes its place, which starts in its loop like a worker that just ran
//! a task. While the place is in transit nobody runs worker `i`'s loop; that is a worker in
//! a long poll as far as the others are concerned: they steal its queue and, once its poll
//! stamp is old enough, its LIFO task, and the watch makes sure the reactor stays attended
//! (`idle/watch.rs`). The place moves between threads only through the `Places` mutex, which
//! orders the accesses of the thread that left it and the one that takes it.
//!
//! On a current-thread runtime there is no thread to hand the one worker's place to (its
//! tasks run only while a thread is in `block_on`), so it panics there, as tokio's does.
//! Anywhere else that is not a worker (a blocking-pool thread, `block_on`'s future on the
//! multi-thread runtime, outside any runtime), `f` simply runs.

use super::current;
use super::spawn::spawn_carrier;
use super::worker::run_place;
use crate::task::{self, coop};

/// Runs `f`, which may block, on the current thread; if the thread is a worker of a
/// multi-thread runtime, another thread takes over its tasks first. See the module docs.
///
/// # Panics
/// On a current-thread runtime's worker (the thread in its `block_on`).
#[track_caller]
pub(crate) fn block_in_place<F: FnOnce() -> R, R>(f: F) -> R {
    let Some(shared) = current::current() else {
        return f();
    };
    let drives_current_thread = shared.seat.is_some()
        && current::with_worker(|w| w.is_some_and(|w| w.belongs_to(shared.addr())));
    if drives_current_thread {
        panic!(
            "can call blocking only when running on the multi-threaded runtime: \
             block_in_place on a current-thread runtime, whose one worker has no other thread \
             to hand its tasks to (use spawn_blocking)"
        );
    }
    // What the task wrote so far and the runtime queued for the poll's end is pushed now:
    // `f` may block until the peer answers it.
    task::poll_end::run_now();
    // `f` runs without a budget and with yields woken at once, as in tokio: a `block_on`
    // inside it waits for budgeted and yielding futures, which must not wait for the task's
    // poll to end. The tasks that yielded so far are woken now, into this worker's queue,
    // which goes with its place.
    let f = move || coop::with_unconstrained(|| task::without_deferring(f));
    let Some(core) = current::take_place() else {
        // Not holding a worker's place (not a worker, or one whose place is already away):
        // `f` runs here, and may block_on, as on a worker.
        let _back = BlockOnAllowed(current::set_block_on_forbidden(false));
        return f();
    };
    let index = core.index;
    // A pool thread carrying this place stops counting as a carrier: `f` is blocking work.
    let was_carrying = shared.blocking.stop_carrying();
    shared.places.hand(core);
    let runtime = shared.clone();
    // The loop the carrier runs ends at shutdown (or hands on again); it does not count
    // against the pool's bound on blocking closures.
    spawn_carrier(&shared, move || {
        if let Some(core) = runtime.places.take(index) {
            // The pool thread has the runtime current already; as a worker it must not
            // block_on, and it runs the worker loop like a worker thread.
            let _worker = current::enter(runtime.clone(), true);
            run_place(&runtime, core);
        }
    });
    /// Restores the thread after `f`, however `f` ends (a panic unwinds through here): the
    /// `block_on` setting, and the worker's place if nobody took it meanwhile.
    struct Back {
        block_on_forbidden: bool,
        shared: std::sync::Arc<super::Shared>,
        index: usize,
        was_carrying: bool,
    }
    impl Drop for Back {
        fn drop(&mut self) {
            current::set_block_on_forbidden(self.block_on_forbidden);
            if let Some(core) = self.shared.places.take(self.index) {
                if self.was_carrying {
                    self.shared.blocking.resume_carrying();
                }
                current::lend(core);
            }
        }
    }
    let _back = Back {
        block_on_forbidden: current::set_block_on_forbidden(false),
        shared,
        index,
        was_carrying,
    };
    f()
}

/// Restores the thread's `block_on` setting however `f` ends (a panic unwinds through here).
struct BlockOnAllowed(bool);

impl Drop for BlockOnAllowed {
    fn drop(&mut self) {
        current::set_block_on_forbidden(self.0);
    }
}
