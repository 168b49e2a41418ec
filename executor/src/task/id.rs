//! Task ids: [`Id`], [`id`] and [`try_id`], as tokio's.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let task = spinpark::spawn(async { spinpark::task::id() });
//! let id = task.id();
//! assert_eq!(task.await.unwrap(), id);
//! assert_eq!(spinpark::task::try_id(), None); // block_on's future is not a task
//! # });
//! ```
//!
//! How it works: every task gets the next number of a process-wide counter when it is made.
//! A thread-local holds the id of the task whose code runs on this thread: set around each
//! poll of the task's future and around the drops of its future and of its output (wherever
//! those happen), restored afterwards, so nested ones (a task polled inside another's
//! `block_in_place`) see their own.

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A task's id: unique among the tasks of this process for its lifetime (ids are not reused).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let a = spinpark::spawn(async {});
/// let b = spinpark::spawn(async {});
/// assert_ne!(a.id(), b.id());
/// println!("task {}", a.id());
/// # });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    /// The next id.
    pub(crate) fn next() -> Id {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        // Relaxed: only uniqueness matters. A u64 counted up once per task does not wrap.
        let n = NEXT.fetch_add(1, Relaxed);
        Id(NonZeroU64::new(n).expect("the task id counter wrapped around"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

thread_local! {
    /// The task whose code runs on this thread now, if any.
    static CURRENT: Cell<Option<Id>> = const { Cell::new(None) };
}

/// The id of the task running this code.
///
/// # Panics
/// Outside a task (in `block_on`'s future, or on a thread that is not running one); see
/// [`try_id`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let id = spinpark::spawn(async { spinpark::task::id() }).await.unwrap();
/// println!("that task was {id}");
/// # });
/// ```
#[track_caller]
pub fn id() -> Id {
    try_id().expect("spinpark::task::id called outside a task")
}

/// The id of the task running this code, or `None` outside a task.
///
/// ```
/// assert_eq!(spinpark::task::try_id(), None);
/// ```
pub fn try_id() -> Option<Id> {
    CURRENT.try_with(Cell::get).ok().flatten()
}

/// Makes `id` the current task's id until the guard drops, which restores the previous one.
pub(crate) fn enter(id: Id) -> IdGuard {
    IdGuard(CURRENT.try_with(|c| c.replace(Some(id))).ok().flatten())
}

/// Restores the previous current task id on drop.
pub(crate) struct IdGuard(Option<Id>);

impl Drop for IdGuard {
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|c| c.set(self.0));
    }
}
