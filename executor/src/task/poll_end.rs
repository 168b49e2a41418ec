//! Work deferred to the end of a task's poll: the hook that lets an I/O type queue the small
//! writes a task makes during one poll in the kernel and push them together when the poll
//! returns (spinpark-net's write coalescing, `net/src/cork.rs`).
//!
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//! use std::task::Poll;
//! use spinpark_executor::task::poll_end::{self, PollEnd};
//!
//! struct Count(AtomicUsize);
//! impl PollEnd for Count {
//!     fn poll_end(self: Arc<Self>) {
//!         self.0.fetch_add(1, Ordering::Relaxed);
//!     }
//! }
//! let count = Arc::new(Count(AtomicUsize::new(0)));
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! let c = count.clone();
//! let task = rt.spawn(std::future::poll_fn(move |cx| {
//!     let scope = poll_end::current(cx.waker()).expect("inside a task's poll");
//!     scope.defer(c.clone()); // runs when this poll has returned (or sooner: below)
//!     Poll::Ready(())
//! }));
//! rt.block_on(task).unwrap();
//! // Once, or also once early if the poll had lasted 500 µs (the late runner).
//! assert!(count.0.load(Ordering::Relaxed) >= 1);
//! ```
//!
//! # How it works
//!
//! Every poll of a task (on a worker, on a current-thread runtime, in a `LocalSet`, including
//! the drop of its future when it completes, panics or is aborted) runs inside a *scope*
//! (`task/guarded.rs` enters it). The scope remembers the task's waker (borrowed for the poll), and
//! the items deferred to it sit in one thread-local list; when the poll returns or unwinds,
//! the scope's guard runs the items that were deferred since it began. Scopes nest (a
//! `LocalSet` polled inside a task runs its tasks' polls in scopes of their own), and each
//! instance has an id that is never reused, so an I/O object can tell "already deferred to
//! this scope" with one comparison.
//!
//! [`current`] answers only for the poll's own waker. A future that some other executor polls
//! inside the task (`futures::executor::block_on` in a handler, a combinator that makes
//! wakers of its own) sees no scope, so its writes go out at once: it may be about to block
//! the thread until the peer answers, and the poll would never end. For the same reason
//! `block_in_place` runs the scope's items before its closure ([`run_now`]).
//!
//! Items run first-deferred-first, so what a task wrote earlier on one socket is handed on
//! before what it wrote later on another. A write that pushes bytes to the peer at once can
//! first run what its poll deferred so far ([`run_pending`]), so that program order holds
//! across sockets.
//!
//! A poll can still last long after its deferrals: the task computes, or blocks its thread in
//! a way the runtime cannot see (a `std` lock or channel, a synchronous client, tokio's own
//! `block_in_place` under `tokio-compat`). So the items of a poll that has lasted
//! [`LATE_AFTER`] also run *early*, from another thread: one process-wide thread, the *late
//! runner* (`poll_end/late.rs`), which the polling thread's own alarm wakes only when a poll
//! that deferred work is still running then. The items stay deferred and run again when their
//! scope ends. Each thread's list is therefore behind a mutex, uncontended except while the
//! late runner looks.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::Waker;

mod late;

use late::ThreadAlarm;
pub use late::{late_runs, LATE_AFTER};

/// Work to run when a task's poll ends. Implementations must not panic: they run from the
/// scope's guard, also while a panicking poll unwinds.
pub trait PollEnd: Send + Sync {
    /// Runs the deferred work: once per [`ScopeId::defer`] when the scope ends (or sooner, at
    /// [`run_pending`]), and possibly before that too, from the late runner's thread, once
    /// the poll has lasted [`LATE_AFTER`].
    fn poll_end(self: Arc<Self>);
}

/// One instance of a poll scope. Ids are never reused, on any thread.
///
/// ```
/// # use spinpark_executor::task::poll_end;
/// let rt = spinpark_executor::Runtime::new().unwrap();
/// rt.block_on(rt.spawn(std::future::poll_fn(|cx| {
///     let a = poll_end::current(cx.waker()).unwrap();
///     assert_eq!(Some(a), poll_end::current(cx.waker())); // the same poll, the same scope
///     std::task::Poll::Ready(())
/// })))
/// .unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeId(u64);

impl ScopeId {
    /// Defers `item` to the end of this scope's poll. If this thread is no longer inside
    /// that scope (a caller kept the id), the item runs at once.
    pub fn defer(self, item: Arc<dyn PollEnd>) {
        let mut item = Some(item);
        let _ = STATE.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.id == self.0 && s.id != 0 {
                let alarm = s.items.alarm().filter(|_| late_allowed());
                let mut list = s.items.lock();
                list.items.extend(item.take());
                let begins = !std::mem::replace(&mut list.waiting, true);
                drop(list);
                if let (Some(alarm), true) = (alarm, begins) {
                    // The thread begins waiting: the late runner must look within LATE_AFTER.
                    // Only this thread arms or disarms its alarm, so program order is all the
                    // order that needs.
                    s.alarm_until = late::keep_armed(alarm, s.alarm_until);
                }
                s.deferred += 1;
            }
        });
        if let Some(item) = item {
            item.poll_end();
        }
    }
}

/// The poll scope this thread is in, if it is the poll of the task whose waker is `waker`.
///
/// `None` outside any task's poll, and for a waker that is not the polled task's own (a
/// future polled by a nested executor): such a caller must do its work at once.
pub fn current(waker: &Waker) -> Option<ScopeId> {
    STATE
        .try_with(|s| {
            let s = s.borrow();
            // SAFETY: `s.waker` is the innermost scope's waker, set by `Scope::enter` from a
            // reference that outlives the scope (`Scope<'a>`), and restored by its drop
            // before that reference ends; it is read only while a scope is active (`id` is
            // not 0). A `Scope` is a local of the task's poll and cannot be leaked.
            let own = s.id != 0 && unsafe { (*s.waker).will_wake(waker) };
            own.then_some(ScopeId(s.id))
        })
        .ok()
        .flatten()
}

/// Whether the late runner can run this thread's long polls' items early: `false` only if
/// its thread or this thread's timer could not be made, in which case a deferral waits for its
/// poll's end, however long, and an I/O type that must not hold bytes that long should not
/// defer.
///
/// ```
/// assert!(spinpark_executor::task::poll_end::late_runner_available());
/// ```
pub fn late_runner_available() -> bool {
    STATE
        .try_with(|s| s.borrow().items.alarm().is_some())
        .unwrap_or(false)
}

/// Runs the items deferred to the current scope so far, now, first-deferred-first. For a
/// write about to push bytes to a peer at once: what the poll deferred earlier (bytes queued
/// on other sockets) goes first, so that peers see the task's writes in program order. Does
/// nothing outside a scope, or when nothing was deferred (one thread-local read).
///
/// ```
/// # use std::sync::{Arc, Mutex};
/// use spinpark_executor::task::poll_end::{self, PollEnd};
///
/// struct Log(Arc<Mutex<Vec<&'static str>>>, &'static str);
/// impl PollEnd for Log {
///     fn poll_end(self: Arc<Self>) {
///         self.0.lock().unwrap().push(self.1);
///     }
/// }
/// let log = Arc::new(Mutex::new(Vec::new()));
/// let l = log.clone();
/// let rt = spinpark_executor::Runtime::new().unwrap();
/// rt.block_on(rt.spawn(std::future::poll_fn(move |cx| {
///     let scope = poll_end::current(cx.waker()).unwrap();
///     scope.defer(Arc::new(Log(l.clone(), "a")));
///     scope.defer(Arc::new(Log(l.clone(), "b")));
///     poll_end::run_pending();
///     l.lock().unwrap().push("then");
///     std::task::Poll::Ready(())
/// })))
/// .unwrap();
/// // In order, before `run_pending` returned (the late runner may have run them once more
/// // before it, had the poll lasted 500 µs).
/// let log = log.lock().unwrap();
/// assert_eq!(&log[..2], ["a", "b"]);
/// assert_eq!(log.last(), Some(&"then"));
/// ```
pub fn run_pending() {
    let start = STATE.try_with(|s| {
        let s = s.borrow();
        (s.id != 0 && s.deferred > s.start).then_some(s.start)
    });
    if let Ok(Some(start)) = start {
        run_from(start);
    }
}

/// The thread is out of work at `now`: spinning (`parking` false), or about to park. Its
/// alarm, armed for polls that deferred work and have all ended, must not ring for nothing: a
/// parker disarms it; a spinner leaves it armed for the next deferring poll (so that polls
/// that come densely cost no syscall) until it would ring within a quarter window. One
/// syscall then; a thread-local read otherwise.
pub(crate) fn thread_idle(now: std::time::Instant, parking: bool) {
    let _ = STATE.try_with(|s| s.borrow_mut().quiet_alarm(parking, || now));
}

/// Runs the items deferred to the current scope so far, now, and gives the scope a new id, so
/// that work deferred later is deferred again. For code about to block its thread inside a
/// task's poll (`block_in_place`). Does nothing outside a scope.
pub fn run_now() {
    let start = STATE.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.id == 0 {
            return None;
        }
        s.id = next_id();
        Some(s.start)
    });
    if let Ok(Some(start)) = start {
        run_from(start);
    }
}

/// The innermost scope's waker: the task's own, borrowed for the scope's life.
type Parts = *const Waker;

/// The thread's innermost scope and the items deferred to it and to the scopes around it.
struct State {
    /// The innermost scope's id; 0 outside any.
    id: u64,
    /// Its task's waker.
    waker: Parts,
    /// Where its items begin in `items` (the outer scopes' come before).
    start: usize,
    /// How many items `items` holds: only this thread adds or removes them, so it can tell
    /// "nothing to run" without the lock.
    deferred: usize,
    items: Arc<Items>,
    /// When this thread's alarm rings, if it is armed (`late.rs`).
    alarm_until: Option<std::time::Instant>,
    /// An empty vector that keeps its allocation, for the items a scope's end runs.
    spare: Vec<Arc<dyn PollEnd>>,
}

/// A thread's deferred items, which the late runner reads from its own thread, and the
/// thread's alarm, made on first use.
#[derive(Default)]
struct Items {
    list: Mutex<List>,
    alarm: OnceLock<Option<ThreadAlarm>>,
}

#[derive(Default)]
struct List {
    /// Every item deferred to the thread's active scopes, in deferral order.
    items: Vec<Arc<dyn PollEnd>>,
    /// Some of `items` have run neither at their scope's end nor from the late runner, and
    /// the thread's alarm is armed for them (`late.rs`).
    waiting: bool,
}

impl Items {
    fn lock(&self) -> MutexGuard<'_, List> {
        // Items never panic while it is held (the guard is dropped before one runs).
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The thread's alarm, made on first use; `None` if it could not be.
    fn alarm(self: &Arc<Self>) -> Option<&ThreadAlarm> {
        self.alarm
            .get_or_init(|| ThreadAlarm::new(self).ok())
            .as_ref()
    }
}

impl State {
    fn new() -> State {
        State {
            id: 0,
            waker: std::ptr::null(),
            start: 0,
            deferred: 0,
            items: Arc::new(Items::default()),
            alarm_until: None,
            spare: Vec::new(),
        }
    }
}

impl State {
    /// Nothing waits on this thread: disarms its alarm if it is armed and `force` is set or it
    /// would ring within a quarter window of `now` (read only if the alarm is armed).
    fn quiet_alarm(&mut self, force: bool, now: impl FnOnce() -> std::time::Instant) {
        let Some(until) = self.alarm_until else {
            return;
        };
        if force || until <= now() + LATE_AFTER / 4 {
            self.alarm_until = None;
            if let Some(Some(alarm)) = self.items.alarm.get() {
                late::disarm(alarm, until);
            }
        }
    }
}

/// The late runner's look, once the alarm of the thread whose items are `items` rang: if the
/// thread still waits, it stops, and its items run now, in deferral order (they stay deferred,
/// for their scopes' ends). Whether any ran.
fn run_late(items: &Items) -> bool {
    let pending = {
        let mut list = items.lock();
        if !std::mem::take(&mut list.waiting) {
            return false;
        }
        list.items.clone()
    };
    pending.into_iter().for_each(|i| i.poll_end());
    true
}

/// Whether this thread's deferrals are the late runner's to look at: always, but in this
/// module's unit tests, whose items count their runs exactly and would see an early run when
/// a slow build (a sanitizer's) makes a poll last 500 µs.
fn late_allowed() -> bool {
    #[cfg(test)]
    return !tests::NO_LATE.with(Cell::get);
    #[cfg(not(test))]
    true
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::new());
    /// The next id this thread hands out, and the end of its block of ids.
    static IDS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Ids are handed to threads in blocks, so that a scope costs no shared atomic.
const ID_BLOCK: u64 = 1 << 20;
/// The next block's first id. Starts past 0, which means "no scope".
static NEXT_BLOCK: AtomicU64 = AtomicU64::new(ID_BLOCK);

fn next_id() -> u64 {
    IDS.with(|ids| {
        let (mut next, mut end) = ids.get();
        if next == end {
            // Relaxed: the counter only has to hand out distinct blocks.
            next = NEXT_BLOCK.fetch_add(ID_BLOCK, Ordering::Relaxed);
            end = next + ID_BLOCK;
        }
        ids.set((next + 1, end));
        next
    })
}

/// Runs (and removes) the items from index `start` on, first-deferred-first. They are taken
/// out with the list unborrowed while they run, so an item may defer or enter scopes itself
/// (what it defers runs next).
fn run_from(start: usize) {
    loop {
        let batch = STATE.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.deferred <= start {
                return Vec::new();
            }
            s.deferred = start;
            // Into the thread's spare vector: no allocation per poll.
            let mut batch = std::mem::take(&mut s.spare);
            let mut list = s.items.lock();
            batch.extend(list.items.drain(start..));
            if list.items.is_empty() {
                // Nothing waits. The alarm stays armed for the thread's next deferring poll,
                // until the thread goes idle ([`thread_idle`]).
                list.waiting = false;
            }
            batch
        });
        match batch {
            Ok(mut batch) if !batch.is_empty() => {
                batch.drain(..).for_each(|i| i.poll_end());
                let _ = STATE.try_with(|s| {
                    let mut s = s.borrow_mut();
                    if s.spare.capacity() == 0 {
                        s.spare = batch;
                    }
                });
            }
            _ => return,
        }
    }
}

/// A task's poll scope, from [`Scope::enter`] until dropped; dropping it runs what was
/// deferred to it and restores the scope around it. Inert (no scope: writes go out at once)
/// on a thread whose thread-locals are being destroyed.
pub(crate) struct Scope<'a> {
    /// The scope around this one, to restore; `None` if this one is inert.
    outer: Option<(u64, Parts, usize)>,
    /// The poll's waker, which the thread-local points to while this scope is innermost.
    _waker: std::marker::PhantomData<&'a Waker>,
}

impl<'a> Scope<'a> {
    /// Enters the scope of a poll of the task whose waker is `waker`.
    pub(crate) fn enter(waker: &'a Waker) -> Scope<'a> {
        let id = IDS.try_with(|_| next_id()).unwrap_or(0);
        let outer = STATE
            .try_with(|s| {
                let mut s = s.borrow_mut();
                let start = s.deferred;
                (
                    std::mem::replace(&mut s.id, id),
                    std::mem::replace(&mut s.waker, waker as *const Waker),
                    std::mem::replace(&mut s.start, start),
                )
            })
            .ok();
        Scope {
            outer,
            _waker: std::marker::PhantomData,
        }
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        let Some((id, waker, start)) = self.outer else {
            return;
        };
        if let Ok(mine) = STATE.try_with(|s| s.borrow().start) {
            run_from(mine);
        }
        let _ = STATE.try_with(|s| {
            let mut s = s.borrow_mut();
            s.id = id;
            s.waker = waker;
            s.start = start;
            // A busy thread whose polls stopped deferring must not have its alarm ring for
            // nothing either: disarmed once it is near (a clock read only while armed).
            if id == 0 && s.deferred == 0 {
                s.quiet_alarm(false, std::time::Instant::now);
            }
        });
    }
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// This thread's deferrals are not the late runner's (see `late_allowed`).
        pub(super) static NO_LATE: Cell<bool> = const { Cell::new(false) };
    }

    /// Keeps the late runner away from this test's thread.
    fn no_late() {
        NO_LATE.with(|c| c.set(true));
    }
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;
    use std::task::Wake;

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    /// Records the order items ran in.
    struct Log(Arc<Mutex<Vec<&'static str>>>, &'static str);
    impl PollEnd for Log {
        fn poll_end(self: Arc<Self>) {
            self.0.lock().unwrap().push(self.1);
        }
    }

    #[test]
    fn items_run_when_the_scope_ends_and_nested_scopes_run_their_own() {
        no_late();
        let log = Arc::new(Mutex::new(Vec::new()));
        let outer_waker = Waker::from(Arc::new(Noop));
        let inner_waker = Waker::from(Arc::new(Noop));
        assert_eq!(current(&outer_waker), None);
        {
            let _outer = Scope::enter(&outer_waker);
            let outer = current(&outer_waker).unwrap();
            outer.defer(Arc::new(Log(log.clone(), "outer")));
            {
                let _inner = Scope::enter(&inner_waker);
                // Only the innermost scope's own waker answers.
                assert_eq!(current(&outer_waker), None);
                let inner = current(&inner_waker).unwrap();
                assert_ne!(inner, outer);
                inner.defer(Arc::new(Log(log.clone(), "inner")));
                // An id kept past its scope's turn runs at once.
                outer.defer(Arc::new(Log(log.clone(), "stale")));
            }
            assert_eq!(*log.lock().unwrap(), ["stale", "inner"]);
            assert_eq!(current(&outer_waker), Some(outer));
        }
        assert_eq!(*log.lock().unwrap(), ["stale", "inner", "outer"]);
        assert_eq!(current(&outer_waker), None);
    }

    #[test]
    fn run_now_runs_early_and_renumbers_the_scope() {
        no_late();
        struct Count(AtomicUsize);
        impl PollEnd for Count {
            fn poll_end(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::new(Noop));
        {
            let _scope = Scope::enter(&waker);
            let first = current(&waker).unwrap();
            first.defer(count.clone());
            run_now();
            assert_eq!(count.0.load(Ordering::Relaxed), 1);
            let second = current(&waker).unwrap();
            assert_ne!(
                first, second,
                "work deferred after run_now must be deferred anew"
            );
            second.defer(count.clone());
            assert_eq!(count.0.load(Ordering::Relaxed), 1);
        }
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        run_now(); // outside a scope: nothing to do, no panic
    }

    use std::time::Instant;

    /// Whether this thread's alarm is armed now.
    fn armed() -> bool {
        STATE.with(|s| s.borrow().items.alarm().expect("an alarm").armed())
    }

    #[test]
    fn the_alarm_is_armed_by_a_deferring_poll_and_disarmed_before_it_would_ring_for_nothing() {
        let waker = Waker::from(Arc::new(Noop));
        let log = Arc::new(Mutex::new(Vec::new()));
        thread_idle(Instant::now(), true);
        for round in 0..3 {
            assert!(!armed(), "round {round}: armed while idle");
            for poll in 0..3 {
                let _scope = Scope::enter(&waker);
                let scope = current(&waker).unwrap();
                scope.defer(Arc::new(Log(log.clone(), "a")));
                scope.defer(Arc::new(Log(log.clone(), "b")));
                // Armed for this poll, or by the previous one (still within the half window),
                // unless a slow machine let it ring already (one-shot: then it is spent, and
                // the late runner took the items).
                let rang = STATE.with(|s| s.borrow().alarm_until.unwrap() <= Instant::now());
                assert!(armed() || rang, "round {round}, poll {poll}: not armed");
            }
            // Every poll ended and the thread spins: the alarm stays armed for the next poll,
            // until it is about to ring.
            thread_idle(Instant::now(), false);
            let until = STATE.with(|s| s.borrow().alarm_until);
            assert!(until.is_none_or(|u| u > Instant::now() + LATE_AFTER / 4));
            thread_idle(Instant::now() + LATE_AFTER, false);
            assert!(
                !armed(),
                "round {round}: armed after a spinner came near its ring"
            );
            // Again, then the thread parks: disarmed at once.
            {
                let _scope = Scope::enter(&waker);
                current(&waker)
                    .unwrap()
                    .defer(Arc::new(Log(log.clone(), "c")));
            }
            thread_idle(Instant::now(), true);
            assert!(!armed(), "round {round}: armed after the thread went idle");
            {
                // A scope that defers nothing arms nothing.
                let _scope = Scope::enter(&waker);
            }
            assert!(
                !armed(),
                "round {round}: a scope without deferrals armed it"
            );
        }
        assert_eq!(log.lock().unwrap().iter().filter(|l| **l == "b").count(), 9);
    }

    #[test]
    fn an_unwinding_poll_still_runs_its_items() {
        no_late();
        let log = Arc::new(Mutex::new(Vec::new()));
        let waker = Waker::from(Arc::new(Noop));
        let l = log.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _scope = Scope::enter(&waker);
            current(&waker).unwrap().defer(Arc::new(Log(l, "sent")));
            panic!("the poll panics");
        }));
        assert!(r.is_err());
        assert_eq!(*log.lock().unwrap(), ["sent"]);
        assert_eq!(current(&waker), None);
    }
}
