//! [`Semaphore`]: tokio's counting semaphore, whose `acquire*` take a unit of spinpark's
//! budget.
//!
//! ```
//! use std::sync::Arc;
//! use spinpark::sync::Semaphore;
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! // At most two requests in flight.
//! let limit = Arc::new(Semaphore::new(2));
//! let mut tasks = Vec::new();
//! for i in 0..6 {
//!     let permit = limit.clone().acquire_owned().await.unwrap();
//!     tasks.push(spinpark::spawn(async move {
//!         let _permit = permit; // released when the task ends
//!         i * 2
//!     }));
//! }
//! for t in tasks {
//!     t.await.unwrap();
//! }
//! assert_eq!(limit.available_permits(), 2);
//! # });
//! ```
//!
//! A `#[repr(transparent)]` newtype over `tokio::sync::Semaphore`, so that the `Arc<Semaphore>`
//! methods hand tokio's owned permit an `Arc` of tokio's semaphore. The permits are tokio's
//! (`permit.semaphore()` names tokio's semaphore).

use std::fmt;
use std::sync::Arc;

use tokio::sync::{AcquireError, OwnedSemaphorePermit, SemaphorePermit, TryAcquireError};

use super::budget::{forbid_blocking, AfterAcquire};

/// A counting semaphore (tokio's, fair: waiters are served in order).
///
/// A successful `acquire*` takes a unit of the task's budget, as in tokio; one that fails
/// because the semaphore is closed does not.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let sem = spinpark::sync::Semaphore::new(3);
/// let two = sem.acquire_many(2).await.unwrap();
/// assert_eq!(sem.available_permits(), 1);
/// drop(two);
/// assert_eq!(sem.available_permits(), 3);
/// # });
/// ```
#[repr(transparent)]
pub struct Semaphore(tokio::sync::Semaphore);

/// `Arc<Semaphore>` as `Arc<tokio::sync::Semaphore>`, the same allocation.
fn arc_tokio(this: Arc<Semaphore>) -> Arc<tokio::sync::Semaphore> {
    // SAFETY: `Semaphore` is `#[repr(transparent)]` over `tokio::sync::Semaphore`: the same
    // size and alignment, so `from_raw` gets a pointer to a valid tokio semaphore inside an
    // `ArcInner` of the same layout. The count moves over.
    unsafe { Arc::from_raw(Arc::into_raw(this) as *const tokio::sync::Semaphore) }
}

impl Semaphore {
    /// The most permits a semaphore can hold (tokio's figure).
    pub const MAX_PERMITS: usize = tokio::sync::Semaphore::MAX_PERMITS;

    /// A semaphore with `permits` permits.
    ///
    /// # Panics
    ///
    /// If `permits` is more than [`Semaphore::MAX_PERMITS`].
    #[track_caller]
    pub fn new(permits: usize) -> Self {
        Semaphore(tokio::sync::Semaphore::new(permits))
    }

    /// [`Semaphore::new`] in a `const` context.
    ///
    /// ```
    /// static LIMIT: spinpark::sync::Semaphore = spinpark::sync::Semaphore::const_new(10);
    /// assert_eq!(LIMIT.available_permits(), 10);
    /// ```
    pub const fn const_new(permits: usize) -> Self {
        Semaphore(tokio::sync::Semaphore::const_new(permits))
    }

    /// Permits available now.
    pub fn available_permits(&self) -> usize {
        self.0.available_permits()
    }

    /// Adds `n` permits (waking waiters they satisfy).
    pub fn add_permits(&self, n: usize) {
        self.0.add_permits(n)
    }

    /// Removes up to `n` available permits; returns how many were removed.
    pub fn forget_permits(&self, n: usize) -> usize {
        self.0.forget_permits(n)
    }

    /// Waits for a permit, then takes a unit of the task's budget. Fails once the semaphore is
    /// closed. Cancel safe.
    pub async fn acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        AfterAcquire::new(self.0.acquire()).await
    }

    /// Waits for `n` permits at once, then takes a unit of the task's budget.
    pub async fn acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        AfterAcquire::new(self.0.acquire_many(n)).await
    }

    /// A permit if one is free, without waiting.
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.0.try_acquire()
    }

    /// `n` permits if that many are free, without waiting.
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.0.try_acquire_many(n)
    }

    /// Blocks the thread until a permit is had: for synchronous code.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    ///
    /// ```
    /// let sem = spinpark::sync::Semaphore::new(1);
    /// let permit = sem.blocking_acquire().unwrap(); // a plain thread may block
    /// assert_eq!(sem.available_permits(), 0);
    /// # drop(permit);
    /// ```
    #[track_caller]
    pub fn blocking_acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        forbid_blocking();
        self.0.blocking_acquire()
    }

    /// Blocks the thread until `n` permits are had.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    #[track_caller]
    pub fn blocking_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        forbid_blocking();
        self.0.blocking_acquire_many(n)
    }

    /// [`acquire`](Semaphore::acquire) for an `Arc<Semaphore>`: the permit owns a reference.
    pub async fn acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        AfterAcquire::new(arc_tokio(self).acquire_owned()).await
    }

    /// [`acquire_many`](Semaphore::acquire_many) for an `Arc<Semaphore>`.
    pub async fn acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        AfterAcquire::new(arc_tokio(self).acquire_many_owned(n)).await
    }

    /// [`try_acquire`](Semaphore::try_acquire) for an `Arc<Semaphore>`.
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        arc_tokio(self).try_acquire_owned()
    }

    /// [`try_acquire_many`](Semaphore::try_acquire_many) for an `Arc<Semaphore>`.
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        arc_tokio(self).try_acquire_many_owned(n)
    }

    /// [`blocking_acquire`](Semaphore::blocking_acquire) for an `Arc<Semaphore>`.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    #[track_caller]
    pub fn blocking_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        forbid_blocking();
        arc_tokio(self).blocking_acquire_owned()
    }

    /// [`blocking_acquire_many`](Semaphore::blocking_acquire_many) for an `Arc<Semaphore>`.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    #[track_caller]
    pub fn blocking_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        forbid_blocking();
        arc_tokio(self).blocking_acquire_many_owned(n)
    }

    /// Closes the semaphore: waiters and later `acquire*` fail.
    pub fn close(&self) {
        self.0.close()
    }

    /// Whether [`close`](Semaphore::close) was called.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// tokio's semaphore behind this one, for code that takes `&tokio::sync::Semaphore`.
    pub fn as_tokio(&self) -> &tokio::sync::Semaphore {
        &self.0
    }

    /// tokio's semaphore, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::Semaphore {
        self.0
    }
}

impl From<tokio::sync::Semaphore> for Semaphore {
    fn from(sem: tokio::sync::Semaphore) -> Self {
        Semaphore(sem)
    }
}

impl From<Semaphore> for tokio::sync::Semaphore {
    fn from(sem: Semaphore) -> Self {
        sem.0
    }
}

/// tokio's format.
impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
