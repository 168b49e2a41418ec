//! The pool behind `spawn_blocking`: threads for closures that block.
//!
//! These threads are not workers: they never spin, never park on the idle word, and are
//! not counted anywhere in the idle protocol. A thread is started when a closure arrives and
//! no pool thread is free for it, up to a bound; a thread that has idled for the keep-alive
//! period exits (a keep-alive too large for `Instant` means never). Closures beyond the bound
//! wait in a FIFO queue.
//!
//! "Free" means idle and not already promised to an earlier closure: a closure that finds an
//! idle thread takes it out of the idle count as it notifies it, leaving a wake-up token that
//! whichever waiting thread wakes first consumes. Were the notified thread still counted as
//! idle until it woke, a second closure arriving meanwhile would only notify it too, and wait
//! behind the first: two closures where one waits for the other would deadlock far below the
//! bound (tokio starts a thread there, and so do we).
//!
//! *Carriers* are the closures that carry a worker's place while its thread is in
//! `block_in_place` (`block_in_place.rs`): they run that worker's loop, possibly until
//! shutdown. Carrying a place is not blocking work, so it does not count against the bound:
//! the threads carrying a place or promised to a carrier (`carrying`, at most one per worker)
//! are left out when a closure checks the bound, and a carrier may start a thread past it.
//! No thread starts past the bound plus the number of workers (tokio's pool has that same
//! total). A carrier
//! runs before the queued closures. A carrier thread that blocks in place itself stops
//! carrying while its blocking code runs ([`BlockingPool::stop_carrying`]): that code is
//! blocking work and counts, as a closure does.
//!
//! Shutting down stops new closures, and then, as in tokio: a thread that is busy or was
//! promised to a closure runs what is queued before it exits, so a closure queued just
//! before shutdown, with a thread started for it, still runs; a thread that was idle when
//! the shutdown came drops whatever is still queued (those closures' handles report
//! cancellation). `shutdown` waits for the pool's threads to exit, except the calling thread
//! when it is one of them (a closure that drops its own runtime): that one exits once its
//! closure returns.
//!
//! The pool knows the runtime only as a [`PoolHost`] (`spawn.rs` implements it for the
//! runtime's shared state): what its threads run inside, and whom to tell that a closure is
//! pending. With the `test-util` feature, a closure from when it is queued until it has run
//! (and woken whoever awaits it) keeps a paused clock from auto-advancing: the scheduler may
//! look idle while the closure is about to produce work (`time/paused.rs`).

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use async_task::Runnable;

thread_local! {
    /// The pool this thread belongs to, or null. Only compared, never dereferenced.
    static CURRENT_POOL: Cell<*const BlockingPool> = const { Cell::new(std::ptr::null()) };
    /// Whether this pool thread runs a carrier and holds the worker's place (counted in
    /// `carrying`).
    static CARRYING: Cell<bool> = const { Cell::new(false) };
}

/// The runtime, as the blocking pool sees it.
pub(crate) trait PoolHost: Send + Sync + 'static {
    /// A new pool thread's whole life: enters the runtime, then runs
    /// [`BlockingPool::thread_main`] with this host.
    fn run_thread(self: Arc<Self>);

    /// A closure was queued; [`PoolHost::closure_done`] follows once it has run or was
    /// dropped.
    fn closure_queued(&self);

    /// A queued closure has run (or was dropped).
    fn closure_done(&self);
}

pub(crate) struct BlockingPool {
    state: Mutex<State>,
    cond: Condvar,
    /// Signalled when a thread exits, for `shutdown`.
    exited: Condvar,
    max_threads: usize,
    /// The runtime's workers: how far past `max_threads` carriers may start threads.
    workers: usize,
    keep_alive: Duration,
    name: String,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Runnable>,
    /// Carriers waiting for a thread; run before `queue`.
    carriers: VecDeque<Runnable>,
    /// Threads running a carrier or promised to one (a carrier queued): not counted against
    /// the bound.
    carrying: usize,
    /// Pool threads alive.
    threads: usize,
    /// Threads waiting for a closure that no closure has claimed yet.
    idle: usize,
    /// Wake-up tokens: threads taken out of `idle` by a closure and notified, not yet awake.
    /// Any waiting thread may consume one (condition variables wake whom they like).
    notified: usize,
    shutdown: bool,
}

impl State {
    /// The next closure to run, carriers first, and whether it is a carrier.
    fn pop(&mut self) -> Option<(Runnable, bool)> {
        if let Some(r) = self.carriers.pop_front() {
            return Some((r, true));
        }
        self.queue.pop_front().map(|r| (r, false))
    }
}

/// How [`BlockingPool::wait_for_work`] ended.
enum Woken {
    /// A closure claimed this thread (or another waiting one; the tokens are fungible).
    Claimed,
    /// The pool shut down while this thread was idle and unclaimed.
    Shutdown,
    /// The keep-alive passed with no claim.
    TimedOut,
}

impl BlockingPool {
    pub(crate) fn new(
        max_threads: usize,
        workers: usize,
        keep_alive: Duration,
        name: String,
    ) -> Self {
        Self {
            state: Mutex::new(State::default()),
            cond: Condvar::new(),
            exited: Condvar::new(),
            max_threads: max_threads.max(1),
            workers,
            keep_alive,
            name,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A closure's panic is caught by its task wrapper, so the lock is never poisoned by
        // one; recover anyway rather than cascade a panic.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `runnable` and makes sure a thread will run it; `host` is the runtime this pool
    /// belongs to, which a new thread enters. A `carrier` (see the module docs) runs before
    /// the queued closures and gets a thread past the bound if it must.
    pub(crate) fn schedule(&self, runnable: Runnable, host: &Arc<dyn PoolHost>, carrier: bool) {
        let mut st = self.lock();
        if st.shutdown {
            drop(st);
            drop(runnable);
            return;
        }
        host.closure_queued();
        if carrier {
            st.carriers.push_back(runnable);
            st.carrying += 1;
        } else {
            st.queue.push_back(runnable);
        }
        if st.idle > 0 {
            // This closure claims an idle thread: the next one must not count it again.
            st.idle -= 1;
            st.notified += 1;
            self.cond.notify_one();
        } else if st.threads < self.max_threads + self.workers
            && (carrier || st.threads.saturating_sub(st.carrying) < self.max_threads)
        {
            st.threads += 1;
            drop(st);
            let thread_host = host.clone();
            let spawned = thread::Builder::new()
                .name(self.name.clone())
                .spawn(move || thread_host.run_thread());
            if spawned.is_err() {
                // Could not start a thread: the closure waits for an existing one, if any.
                let mut st = self.lock();
                st.threads -= 1;
                if st.threads == 0 {
                    // Nobody could ever run it; drop it so its JoinHandle reports cancellation.
                    self.drop_queued(st, &**host);
                }
            }
        }
    }

    /// Drops every queued closure (their handles report cancellation), after unlocking.
    fn drop_queued(&self, mut st: MutexGuard<'_, State>, host: &dyn PoolHost) {
        let carriers = std::mem::take(&mut st.carriers);
        st.carrying -= carriers.len();
        let queued = std::mem::take(&mut st.queue);
        drop(st);
        for r in carriers.into_iter().chain(queued) {
            drop(r);
            host.closure_done();
        }
    }

    /// A pool thread's loop: runs queued closures, waits (idle) for more, and exits after the
    /// keep-alive or at shutdown. Called by [`PoolHost::run_thread`], inside the runtime.
    pub(crate) fn thread_main(&self, host: &dyn PoolHost) {
        CURRENT_POOL.with(|p| p.set(self));
        let mut st = self.lock();
        loop {
            if let Some((r, carrier)) = st.pop() {
                drop(st);
                CARRYING.with(|c| c.set(carrier));
                r.run();
                host.closure_done();
                st = self.lock();
                if CARRYING.with(|c| c.replace(false)) {
                    st.carrying -= 1;
                }
                continue;
            }
            if st.shutdown {
                break;
            }
            let woken;
            (st, woken) = self.wait_for_work(st);
            match woken {
                Woken::Claimed => {}
                Woken::TimedOut => break,
                Woken::Shutdown => {
                    // Idle when the shutdown came: what is still queued is not run.
                    self.drop_queued(st, host);
                    st = self.lock();
                    break;
                }
            }
        }
        st.threads -= 1;
        self.exited.notify_all();
    }

    /// Waits, counted idle, until a closure claims this thread (or another waiting one: the
    /// tokens are fungible), the pool shuts down, or the keep-alive passes.
    fn wait_for_work<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
    ) -> (MutexGuard<'a, State>, Woken) {
        st.idle += 1;
        // A keep-alive too large for `Instant` means no deadline.
        let deadline = Instant::now().checked_add(self.keep_alive);
        loop {
            if st.notified > 0 {
                // Claimed: the closure that notified took us out of `idle` already.
                st.notified -= 1;
                return (st, Woken::Claimed);
            }
            if st.shutdown {
                st.idle -= 1;
                return (st, Woken::Shutdown);
            }
            let wait = match deadline {
                None => None,
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => {
                        // Timed out with no claim on us: leave.
                        st.idle -= 1;
                        return (st, Woken::TimedOut);
                    }
                },
            };
            st = match wait {
                None => self.cond.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(left) => {
                    self.cond
                        .wait_timeout(st, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }

    /// Stops accepting closures and waits until `deadline` (if any) for the pool's threads
    /// to finish what they run or were promised (see the module docs). Returns whether every
    /// pool thread exited in time. Called from one of the pool's own threads, it does not wait
    /// for that one.
    pub(crate) fn shutdown(&self, deadline: Option<Instant>, host: &dyn PoolHost) -> bool {
        let mut st = self.lock();
        st.shutdown = true;
        self.cond.notify_all();
        if st.threads == 0 {
            // No thread to run or drop what is queued (none could be started).
            self.drop_queued(st, host);
        } else {
            drop(st);
        }
        let own = CURRENT_POOL
            .try_with(|p| std::ptr::eq(p.get(), self))
            .unwrap_or(false) as usize;
        let mut st = self.lock();
        while st.threads > own {
            match deadline {
                None => st = self.exited.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return false;
                    }
                    st = self
                        .exited
                        .wait_timeout(st, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
        true
    }

    /// Called by `block_in_place` on a thread that holds a worker's place and is about to
    /// hand it on and run blocking code: if the thread is one of this pool's carrying a place,
    /// it stops counting as carrying (its blocking code counts against the bound, as a
    /// closure does). Returns whether it did; then [`BlockingPool::resume_carrying`] follows
    /// if the thread gets the place back.
    pub(crate) fn stop_carrying(&self) -> bool {
        let mine = CURRENT_POOL
            .try_with(|p| std::ptr::eq(p.get(), self))
            .unwrap_or(false);
        if !mine || !CARRYING.with(|c| c.replace(false)) {
            return false;
        }
        self.lock().carrying -= 1;
        true
    }

    /// This thread, which [stopped carrying](BlockingPool::stop_carrying), took its worker's
    /// place back.
    pub(crate) fn resume_carrying(&self) {
        CARRYING.with(|c| c.set(true));
        self.lock().carrying += 1;
    }

    /// Pool threads currently alive (for tests and metrics).
    pub(crate) fn threads(&self) -> usize {
        self.lock().threads
    }
}

impl Drop for BlockingPool {
    fn drop(&mut self) {
        // Only reached when the runtime's shared state is freed; the threads hold it (an
        // `Arc<Shared>`), so they are all gone by then.
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        debug_assert_eq!(st.threads, 0);
        st.queue.clear();
        st.carriers.clear();
    }
}
