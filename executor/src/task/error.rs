//! [`JoinError`]: why a task did not produce its output (it panicked, or was cancelled).
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let err = spinpark::spawn(async { panic!("boom") }).await.unwrap_err();
//! assert!(err.is_panic());
//! # });
//! ```

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use super::id::Id;
use super::panics::Payload;
use crate::exclusive::Exclusive;

/// Why a task did not produce its output.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let task = spinpark::spawn(async { panic!("boom") });
/// let err = task.await.unwrap_err();
/// assert!(err.is_panic());
/// let id = err.id();
/// assert_eq!(err.to_string(), format!("task {id} panicked with message \"boom\""));
/// assert_eq!(format!("{err:?}"), format!("JoinError::Panic(Id({id}), \"boom\", ...)"));
/// # });
/// ```
pub struct JoinError {
    repr: Repr,
    /// The task's id.
    id: Id,
}

// `JoinError` is `Send` and `Sync` (as tokio's), so that `handle.await?` converts into
// `Box<dyn Error + Send + Sync>` or `anyhow::Error`. The panic's payload is only `Send`, so
// shared access must never reach it: it sits in an `Exclusive` (reachable by value only, by
// `into_panic`), and what `Display` and `Debug` show through `&self` is a copy of its
// message taken when the error was made, while the payload was still owned.
enum Repr {
    Cancelled,
    Panic {
        payload: Exclusive<Payload>,
        /// The payload's message, if it is a string (`panic!` with a literal or a format
        /// string): borrowed if `'static`, else copied.
        message: Option<Cow<'static, str>>,
    },
}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> Self {
        Self {
            repr: Repr::Cancelled,
            id,
        }
    }

    pub(crate) fn panic(id: Id, payload: Payload) -> Self {
        let message = match payload.downcast_ref::<&'static str>() {
            Some(s) => Some(Cow::Borrowed(*s)),
            None => payload.downcast_ref::<String>().cloned().map(Cow::Owned),
        };
        Self {
            repr: Repr::Panic {
                payload: Exclusive::new(payload),
                message,
            },
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
        matches!(self.repr, Repr::Panic { .. })
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
            Repr::Panic { payload, .. } => Ok(payload.into_inner()),
            Repr::Cancelled => Err(self),
        }
    }

    fn panic_message(&self) -> Option<&str> {
        match &self.repr {
            Repr::Panic { message, .. } => message.as_deref(),
            Repr::Cancelled => None,
        }
    }
}

/// Names the task by its id, as tokio's: `task 12 was cancelled`, `task 12 panicked with
/// message "boom"` (the message quoted as a string literal), or `task 12 panicked` when the
/// payload is not a string.
impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.id;
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => write!(f, "task {id} was cancelled"),
            (Repr::Panic { .. }, Some(msg)) => write!(f, "task {id} panicked with message {msg:?}"),
            (Repr::Panic { .. }, None) => write!(f, "task {id} panicked"),
        }
    }
}

/// As tokio's: `JoinError::Cancelled(Id(12))`, `JoinError::Panic(Id(12), "boom", ...)`.
impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.id;
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => write!(f, "JoinError::Cancelled({id:?})"),
            (Repr::Panic { .. }, Some(msg)) => write!(f, "JoinError::Panic({id:?}, {msg:?}, ...)"),
            (Repr::Panic { .. }, None) => write!(f, "JoinError::Panic({id:?}, ...)"),
        }
    }
}

impl std::error::Error for JoinError {}

/// An `io::Error` of kind `Other` saying "task was cancelled" or "task panicked" (the
/// wording of tokio's, without the id or message).
impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> Self {
        std::io::Error::other(match e.repr {
            Repr::Cancelled => "task was cancelled",
            Repr::Panic { .. } => "task panicked",
        })
    }
}
