//! [`JoinError`]: why a task did not produce its output (it panicked, or was cancelled).
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let err = spinpark::spawn(async { panic!("boom") }).await.unwrap_err();
//! assert!(err.is_panic());
//! # });
//! ```

use std::any::Any;
use std::fmt;

use super::id::Id;
use super::panics;

/// Why a task did not produce its output.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let task = spinpark::spawn(async { panic!("boom") });
/// let err = task.await.unwrap_err();
/// assert!(err.is_panic());
/// assert_eq!(err.to_string(), "task panicked: boom");
/// # });
/// ```
pub struct JoinError {
    repr: Repr,
    /// The task's id.
    id: Id,
}

enum Repr {
    Cancelled,
    Panic(Box<dyn Any + Send + 'static>),
}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> Self {
        Self {
            repr: Repr::Cancelled,
            id,
        }
    }

    pub(crate) fn panic(id: Id, payload: Box<dyn Any + Send + 'static>) -> Self {
        Self {
            repr: Repr::Panic(payload),
            id,
        }
    }

    /// The id of the task that failed.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(async { panic!("x") });
    /// let id = task.id();
    /// assert_eq!(task.await.unwrap_err().id(), id);
    /// # });
    /// ```
    pub fn id(&self) -> Id {
        self.id
    }

    /// The task was aborted, or dropped because its runtime shut down.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(std::future::pending::<()>());
    /// task.abort();
    /// assert!(task.await.unwrap_err().is_cancelled());
    /// # });
    /// ```
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let err = spinpark::spawn(async { panic!("x") }).await.unwrap_err();
    /// assert!(err.is_panic() && !err.is_cancelled());
    /// # });
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic's payload, to resume it with `std::panic::resume_unwind`.
    ///
    /// # Panics
    /// If the task did not panic; see [`JoinError::try_into_panic`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let err = spinpark::spawn(async { panic!("x") }).await.unwrap_err();
    /// let payload = err.into_panic();
    /// assert_eq!(payload.downcast_ref::<&str>(), Some(&"x"));
    /// // or: std::panic::resume_unwind(payload)
    /// # });
    /// ```
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("JoinError::into_panic called on a task that was cancelled, not panicked")
    }

    /// The panic's payload, or the error back if the task was cancelled.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let task = spinpark::spawn(std::future::pending::<()>());
    /// task.abort();
    /// assert!(task.await.unwrap_err().try_into_panic().is_err()); // cancelled, not a panic
    /// # });
    /// ```
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(p) => Ok(p),
            Repr::Cancelled => Err(self),
        }
    }

    fn panic_message(&self) -> Option<&str> {
        match &self.repr {
            Repr::Panic(p) => panics::message(p),
            Repr::Cancelled => None,
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => f.write_str("task was cancelled"),
            (Repr::Panic(_), Some(msg)) => write!(f, "task panicked: {msg}"),
            (Repr::Panic(_), None) => f.write_str("task panicked"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
            Repr::Panic(_) => write!(f, "JoinError::Panic({:?})", self.panic_message()),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> Self {
        std::io::Error::other(e.to_string())
    }
}
