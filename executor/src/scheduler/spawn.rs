//! Building a task and handing it to the scheduler: [`spawn`] (the worker queues and the
//! injector) and [`spawn_blocking`] (the blocking pool), and the blocking pool's view of the
//! runtime ([`PoolHost`] for [`Shared`]).
//!
//! ```
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! let a = rt.spawn(async { 1 });
//! let b = rt.spawn_blocking(|| 2);
//! assert_eq!(rt.block_on(async { a.await.unwrap() + b.await.unwrap() }), 3);
//! ```
//!
//! How it works: a task is an `async_task` runnable around `task/`'s `Guarded` future; its
//! schedule function is [`Shared::schedule`] (`schedule.rs`) for a task, the blocking pool's
//! queue for a closure.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use super::blocking::PoolHost;
use super::current;
use super::foreign_context::within;
use super::metrics::bump;
use super::shared::Shared;
use crate::task::{Guarded, JoinHandle, TaskMeta};

/// Builds a task for `future` and schedules it on `shared`'s runtime; see `crate::spawn`.
pub(crate) fn spawn<F>(shared: &Arc<Shared>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let meta = TaskMeta::new(Some(&shared.tasks));
    let schedule_on = shared.clone();
    let guarded = Guarded::new(future, meta.clone());
    let (runnable, task) = async_task::Builder::new().spawn(
        move |()| guarded,
        async_task::WithInfo(move |r, info: async_task::ScheduleInfo| {
            schedule_on.schedule(r, info.woken_while_running)
        }),
    );
    let waker = runnable.waker();
    shared.tasks.count_spawn();
    shared.schedule_new(runnable);
    JoinHandle::new(task, meta, waker)
}

/// Builds a task that runs `f` once on `shared`'s blocking pool; see
/// `crate::spawn_blocking`.
pub(crate) fn spawn_blocking<F, R>(shared: &Arc<Shared>, f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    spawn_on_pool(shared, f, false)
}

/// Runs `f`, which carries a worker's place (`block_in_place`), on `shared`'s blocking pool,
/// outside its bound on blocking closures (see `blocking.rs`).
pub(crate) fn spawn_carrier(shared: &Arc<Shared>, f: impl FnOnce() + Send + 'static) {
    drop(spawn_on_pool(shared, f, true));
}

fn spawn_on_pool<F, R>(shared: &Arc<Shared>, f: F, carrier: bool) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let meta = TaskMeta::new(None);
    let schedule_on = shared.clone();
    let guarded = Guarded::new(
        {
            let mut f = Some(f);
            std::future::poll_fn(move |_| Poll::Ready(f.take().expect("polled once")()))
        },
        meta.clone(),
    );
    let (runnable, task) = async_task::spawn(guarded, move |r| {
        let host: Arc<dyn PoolHost> = schedule_on.clone();
        schedule_on.blocking.schedule(r, &host, carrier)
    });
    let waker = runnable.waker();
    bump(&shared.counters.global().spawned);
    runnable.schedule();
    JoinHandle::new(task, meta, waker)
}

/// A blocking-pool thread lives inside the runtime: its context current (so the closures may
/// spawn, and make sockets and timers), inside the foreign context if there is one; and with
/// the `test-util` feature a pending closure holds a paused clock's auto-advance off.
impl PoolHost for Shared {
    fn run_thread(self: Arc<Self>) {
        let _enter = current::enter(self.clone(), false);
        within(self.context.as_ref(), || self.blocking.thread_main(&*self));
    }

    fn closure_queued(&self) {
        #[cfg(feature = "test-util")]
        self.clock.inhibit();
    }

    fn closure_done(&self) {
        // The driver may have blocked because the clock could not jump: it looks again.
        #[cfg(feature = "test-util")]
        if self.clock.allow() {
            self.unpark_driver();
        }
    }
}
