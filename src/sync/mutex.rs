//! [`Mutex`]: tokio's async mutex, whose `lock` takes a unit of spinpark's budget.
//!
//! ```
//! use std::sync::Arc;
//! use spinpark::sync::Mutex;
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let count = Arc::new(Mutex::new(0));
//! let tasks: Vec<_> = (0..4)
//!     .map(|_| {
//!         let count = count.clone();
//!         spinpark::spawn(async move { *count.lock().await += 1 })
//!     })
//!     .collect();
//! for t in tasks {
//!     t.await.unwrap();
//! }
//! assert_eq!(*count.lock().await, 4);
//! # });
//! ```
//!
//! A newtype over `tokio::sync::Mutex`, `#[repr(transparent)]` so that the `Arc<Mutex<T>>`
//! methods (`lock_owned`...) can hand tokio's owned guard an `Arc` of tokio's mutex without
//! allocating. The guards are tokio's (`MutexGuard::mutex` names tokio's mutex).

use std::fmt;
use std::sync::Arc;

use tokio::sync::{MutexGuard, OwnedMutexGuard, TryLockError};

use super::budget::{forbid_blocking, AfterAcquire};

/// An async mutex (tokio's), fair, whose guard may be held across `.await`.
///
/// `lock` and `lock_owned` take a unit of the task's budget once they have the lock, as in
/// tokio, so a task taking an uncontended lock in a loop still lets its worker's other tasks
/// run.
///
/// ```
/// use spinpark::sync::Mutex;
///
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let m = Mutex::new(vec![1]);
/// m.lock().await.push(2);
/// assert_eq!(m.into_inner(), [1, 2]);
/// # });
/// ```
#[repr(transparent)]
pub struct Mutex<T: ?Sized>(tokio::sync::Mutex<T>);

/// `Arc<Mutex<T>>` as `Arc<tokio::sync::Mutex<T>>`, the same allocation.
fn arc_tokio<T: ?Sized>(this: Arc<Mutex<T>>) -> Arc<tokio::sync::Mutex<T>> {
    // SAFETY: `Mutex<T>` is `#[repr(transparent)]` over `tokio::sync::Mutex<T>`, so both have
    // the same size, alignment and pointer metadata for every `T`: the pointer `into_raw`
    // returns points at a valid tokio mutex inside an `ArcInner` of the same layout, which is
    // what `from_raw` requires. The count is moved over, not duplicated.
    unsafe { Arc::from_raw(Arc::into_raw(this) as *const tokio::sync::Mutex<T>) }
}

impl<T> Mutex<T> {
    /// A new, unlocked mutex holding `value`.
    ///
    /// ```
    /// let m = spinpark::sync::Mutex::new(5);
    /// assert_eq!(*m.try_lock().unwrap(), 5);
    /// ```
    #[track_caller]
    pub fn new(value: T) -> Self {
        Mutex(tokio::sync::Mutex::new(value))
    }

    /// [`Mutex::new`] in a `const` context (a `static`).
    ///
    /// ```
    /// static M: spinpark::sync::Mutex<u32> = spinpark::sync::Mutex::const_new(0);
    /// assert_eq!(*M.try_lock().unwrap(), 0);
    /// ```
    pub const fn const_new(value: T) -> Self {
        Mutex(tokio::sync::Mutex::const_new(value))
    }

    /// Consumes the mutex, returning the value.
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }

    /// tokio's mutex, for code that takes tokio's type (the `From` impls do the same).
    pub fn into_tokio(self) -> tokio::sync::Mutex<T> {
        self.0
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits for the lock (first come, first served), then takes a unit of the task's budget.
    /// Cancel safe: dropping the future gives up the place in the queue.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let m = spinpark::sync::Mutex::new(1);
    /// *m.lock().await += 1;
    /// assert_eq!(*m.lock().await, 2);
    /// # });
    /// ```
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        AfterAcquire::new(self.0.lock()).await
    }

    /// [`lock`](Mutex::lock) for an `Arc<Mutex>`: the guard keeps the mutex alive and borrows
    /// nothing (it can move into a spawned task).
    ///
    /// ```
    /// use std::sync::Arc;
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let m = Arc::new(spinpark::sync::Mutex::new(1));
    /// let mut guard = m.clone().lock_owned().await;
    /// spinpark::spawn(async move { *guard += 1 }).await.unwrap();
    /// assert_eq!(*m.lock().await, 2);
    /// # });
    /// ```
    pub async fn lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        AfterAcquire::new(arc_tokio(self).lock_owned()).await
    }

    /// Blocks the thread until the lock is taken: for synchronous code (a `spawn_blocking`
    /// closure, a plain thread).
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, where blocking would stall tasks, with
    /// tokio's message.
    ///
    /// ```
    /// use std::sync::Arc;
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let m = Arc::new(spinpark::sync::Mutex::new(1));
    /// let m2 = m.clone();
    /// spinpark::spawn_blocking(move || *m2.blocking_lock() += 1).await.unwrap();
    /// assert_eq!(*m.lock().await, 2);
    /// # });
    /// ```
    #[track_caller]
    pub fn blocking_lock(&self) -> MutexGuard<'_, T> {
        forbid_blocking();
        self.0.blocking_lock()
    }

    /// [`blocking_lock`](Mutex::blocking_lock) for an `Arc<Mutex>`, returning an owned guard.
    ///
    /// # Panics
    ///
    /// As [`blocking_lock`](Mutex::blocking_lock).
    #[track_caller]
    pub fn blocking_lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        forbid_blocking();
        arc_tokio(self).blocking_lock_owned()
    }

    /// Takes the lock if it is free, without waiting (and without budget).
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        self.0.try_lock()
    }

    /// [`try_lock`](Mutex::try_lock) for an `Arc<Mutex>`, returning an owned guard.
    pub fn try_lock_owned(self: Arc<Self>) -> Result<OwnedMutexGuard<T>, TryLockError> {
        arc_tokio(self).try_lock_owned()
    }

    /// The value, through the exclusive borrow (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }

    /// tokio's mutex behind this one, for code that takes `&tokio::sync::Mutex`.
    pub fn as_tokio(&self) -> &tokio::sync::Mutex<T> {
        &self.0
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

impl<T> From<tokio::sync::Mutex<T>> for Mutex<T> {
    fn from(m: tokio::sync::Mutex<T>) -> Self {
        Mutex(m)
    }
}

impl<T> From<Mutex<T>> for tokio::sync::Mutex<T> {
    fn from(m: Mutex<T>) -> Self {
        m.0
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex(tokio::sync::Mutex::default())
    }
}

/// tokio's format: `Mutex { data: .. }`, or `<locked>`.
impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
