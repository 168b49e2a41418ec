//! [`RwLock`]: tokio's async reader-writer lock, whose `read` and `write` take a unit of
//! spinpark's budget.
//!
//! ```
//! use spinpark::sync::RwLock;
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let config = RwLock::new(String::from("a"));
//! {
//!     let (r1, r2) = (config.read().await, config.read().await);
//!     assert_eq!((r1.as_str(), r2.as_str()), ("a", "a"));
//! }
//! config.write().await.push('b');
//! assert_eq!(*config.read().await, "ab");
//! # });
//! ```
//!
//! A `#[repr(transparent)]` newtype over `tokio::sync::RwLock`, as [`Mutex`](super::Mutex) is,
//! for the `Arc<RwLock<T>>` methods. The guards are tokio's.

use std::fmt;
use std::sync::Arc;

use tokio::sync::{
    OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLockReadGuard, RwLockWriteGuard, TryLockError,
};

use super::budget::{forbid_blocking, AfterAcquire};

/// An async reader-writer lock (tokio's, fair: a waiting writer keeps new readers out).
///
/// `read`, `write` and their `_owned` forms take a unit of the task's budget once they have
/// the lock, as in tokio.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let lock = spinpark::sync::RwLock::new(1);
/// *lock.write().await += 1;
/// assert_eq!(*lock.read().await, 2);
/// # });
/// ```
#[repr(transparent)]
pub struct RwLock<T: ?Sized>(tokio::sync::RwLock<T>);

/// `Arc<RwLock<T>>` as `Arc<tokio::sync::RwLock<T>>`, the same allocation.
fn arc_tokio<T: ?Sized>(this: Arc<RwLock<T>>) -> Arc<tokio::sync::RwLock<T>> {
    // SAFETY: `RwLock<T>` is `#[repr(transparent)]` over `tokio::sync::RwLock<T>`: the same
    // size, alignment and pointer metadata for every `T`, so `from_raw` gets a pointer to a
    // valid tokio lock inside an `ArcInner` of the same layout. The count moves over.
    unsafe { Arc::from_raw(Arc::into_raw(this) as *const tokio::sync::RwLock<T>) }
}

impl<T> RwLock<T> {
    /// A new, unlocked lock holding `value`.
    #[track_caller]
    pub fn new(value: T) -> Self {
        RwLock(tokio::sync::RwLock::new(value))
    }

    /// A new lock that lets at most `max_reads` readers in at once.
    ///
    /// # Panics
    ///
    /// If `max_reads` is more than `u32::MAX >> 3`, as tokio's.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let lock = spinpark::sync::RwLock::with_max_readers(0, 1);
    /// let _r = lock.read().await;
    /// assert!(lock.try_read().is_err());
    /// # });
    /// ```
    #[track_caller]
    pub fn with_max_readers(value: T, max_reads: u32) -> Self {
        RwLock(tokio::sync::RwLock::with_max_readers(value, max_reads))
    }

    /// [`RwLock::new`] in a `const` context.
    pub const fn const_new(value: T) -> Self {
        RwLock(tokio::sync::RwLock::const_new(value))
    }

    /// [`RwLock::with_max_readers`] in a `const` context.
    pub const fn const_with_max_readers(value: T, max_reads: u32) -> Self {
        RwLock(tokio::sync::RwLock::const_with_max_readers(
            value, max_reads,
        ))
    }

    /// Consumes the lock, returning the value.
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }

    /// tokio's lock, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::RwLock<T> {
        self.0
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Waits for shared access, then takes a unit of the task's budget. Cancel safe.
    pub async fn read(&self) -> RwLockReadGuard<'_, T> {
        AfterAcquire::new(self.0.read()).await
    }

    /// [`read`](RwLock::read) for an `Arc<RwLock>`: the guard owns a reference to the lock.
    ///
    /// ```
    /// use std::sync::Arc;
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let lock = Arc::new(spinpark::sync::RwLock::new(7));
    /// let r = lock.clone().read_owned().await;
    /// assert_eq!(spinpark::spawn(async move { *r }).await.unwrap(), 7);
    /// # });
    /// ```
    pub async fn read_owned(self: Arc<Self>) -> OwnedRwLockReadGuard<T> {
        AfterAcquire::new(arc_tokio(self).read_owned()).await
    }

    /// Waits for exclusive access, then takes a unit of the task's budget. Cancel safe.
    pub async fn write(&self) -> RwLockWriteGuard<'_, T> {
        AfterAcquire::new(self.0.write()).await
    }

    /// [`write`](RwLock::write) for an `Arc<RwLock>`.
    pub async fn write_owned(self: Arc<Self>) -> OwnedRwLockWriteGuard<T> {
        AfterAcquire::new(arc_tokio(self).write_owned()).await
    }

    /// Blocks the thread until shared access is had: for synchronous code.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    ///
    /// ```
    /// use std::sync::Arc;
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let lock = Arc::new(spinpark::sync::RwLock::new(3));
    /// let l2 = lock.clone();
    /// let v = spinpark::spawn_blocking(move || *l2.blocking_read()).await.unwrap();
    /// assert_eq!(v, 3);
    /// # });
    /// ```
    #[track_caller]
    pub fn blocking_read(&self) -> RwLockReadGuard<'_, T> {
        forbid_blocking();
        self.0.blocking_read()
    }

    /// Blocks the thread until exclusive access is had: for synchronous code.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    #[track_caller]
    pub fn blocking_write(&self) -> RwLockWriteGuard<'_, T> {
        forbid_blocking();
        self.0.blocking_write()
    }

    /// Shared access if no writer holds or waits for the lock, without waiting.
    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        self.0.try_read()
    }

    /// [`try_read`](RwLock::try_read) for an `Arc<RwLock>`.
    pub fn try_read_owned(self: Arc<Self>) -> Result<OwnedRwLockReadGuard<T>, TryLockError> {
        arc_tokio(self).try_read_owned()
    }

    /// Exclusive access if the lock is free, without waiting.
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        self.0.try_write()
    }

    /// [`try_write`](RwLock::try_write) for an `Arc<RwLock>`.
    pub fn try_write_owned(self: Arc<Self>) -> Result<OwnedRwLockWriteGuard<T>, TryLockError> {
        arc_tokio(self).try_write_owned()
    }

    /// The value, through the exclusive borrow (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }

    /// tokio's lock behind this one, for code that takes `&tokio::sync::RwLock`.
    pub fn as_tokio(&self) -> &tokio::sync::RwLock<T> {
        &self.0
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(value: T) -> Self {
        RwLock::new(value)
    }
}

impl<T> From<tokio::sync::RwLock<T>> for RwLock<T> {
    fn from(lock: tokio::sync::RwLock<T>) -> Self {
        RwLock(lock)
    }
}

impl<T> From<RwLock<T>> for tokio::sync::RwLock<T> {
    fn from(lock: RwLock<T>) -> Self {
        lock.0
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock(tokio::sync::RwLock::default())
    }
}

/// tokio's format: `RwLock { data: .. }`, or `<locked>`.
impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
