//! [`Seat`]: a current-thread runtime's one worker place, which the threads in `block_on`
//! take in turn.
//!
//! ```text
//! match seat.take() {
//!     Take::Seated(queue) => { drive the runtime with the worker's queue; seat.leave(slot, queue) }
//!     Take::Taken => { poll only our own future; thread::park() until woken or the seat frees }
//!     Take::Closed => { the runtime shut down: poll our own future alone }
//! }
//! ```
//!
//! How it works: a mutex around the worker's queue (absent while a thread drives with it) and
//! the list of threads waiting for it, which `leave` and `close` unpark. No user code runs
//! under the lock. `current_thread.rs` is what a seated thread does.

use std::sync::{Mutex, MutexGuard};
use std::thread::{self, Thread};

use super::queues::{drop_queued, LocalQueue, WorkerSlot};

/// The one worker's place on a current-thread runtime: its queue while no thread drives, and
/// the threads in `block_on` waiting to take it.
pub(crate) struct Seat {
    state: Mutex<SeatState>,
}

struct SeatState {
    /// The worker's queue; `None` while a thread drives (it holds the queue).
    queue: Option<LocalQueue>,
    /// Threads in `block_on` waiting for the seat, to unpark when it frees up.
    waiting: Vec<Thread>,
    /// The runtime shut down: nobody takes the seat any more.
    closed: bool,
}

/// What [`Seat::take`] found.
pub(super) enum Take {
    /// The seat is ours, with the worker's queue.
    Seated(LocalQueue),
    /// Another thread drives; we are on the waiting list.
    Taken,
    /// The runtime shut down.
    Closed,
}

impl Seat {
    pub(crate) fn new(queue: LocalQueue) -> Seat {
        Seat {
            state: Mutex::new(SeatState {
                queue: Some(queue),
                waiting: Vec::new(),
                closed: false,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, SeatState> {
        // No user code runs under this lock.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the seat for the calling thread, or puts it on the waiting list (once).
    pub(super) fn take(&self) -> Take {
        let mut st = self.state();
        let me = thread::current();
        if st.closed {
            return Take::Closed;
        }
        match st.queue.take() {
            Some(queue) => {
                st.waiting.retain(|t| t.id() != me.id());
                Take::Seated(queue)
            }
            None => {
                if !st.waiting.iter().any(|t| t.id() == me.id()) {
                    st.waiting.push(me);
                }
                Take::Taken
            }
        }
    }

    /// Gives the seat back with the worker's queue, and wakes the threads waiting for it. After
    /// shutdown the queue's tasks are dropped instead (as a worker thread drops its own), with
    /// those in the worker's `slot`.
    pub(super) fn leave(&self, slot: &WorkerSlot, queue: LocalQueue) {
        let mut st = self.state();
        if st.closed {
            drop(st);
            drop_queued(slot, &queue);
            return;
        }
        st.queue = Some(queue);
        let waiting = std::mem::take(&mut st.waiting);
        drop(st);
        for t in waiting {
            t.unpark();
        }
    }

    /// Shutdown: closes the seat, drops the tasks queued in it if no thread drives (a thread
    /// that drives drops them when it leaves), and wakes the waiting threads, which go on
    /// polling their futures without the runtime.
    pub(crate) fn close(&self, slot: &WorkerSlot) {
        let mut st = self.state();
        st.closed = true;
        let queue = st.queue.take();
        let waiting = std::mem::take(&mut st.waiting);
        drop(st);
        for t in waiting {
            t.unpark();
        }
        if let Some(queue) = queue {
            drop_queued(slot, &queue);
        }
    }
}
