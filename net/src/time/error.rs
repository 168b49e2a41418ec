//! The timer's error types, under tokio's path `time::error`: [`Error`] (why a timer
//! operation could not be done) and [`Elapsed`] (a `timeout` whose deadline passed first,
//! also at `time::Elapsed`).
//!
//! ```
//! use spinpark::time::error::{Elapsed, Error};
//! let e = Error::shutdown();
//! assert!(e.is_shutdown() && !e.is_at_capacity() && !e.is_invalid());
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let r = spinpark::time::timeout(std::time::Duration::ZERO, std::future::pending::<()>());
//! let _: Elapsed = r.await.unwrap_err();
//! # });
//! ```

use std::fmt;

pub use super::Elapsed;

/// Why a timer operation could not be done, as tokio's `time::error::Error`: the timer's
/// runtime has shut down ([`Error::shutdown`]: permanent, no timer operation will succeed
/// again), the timer store is full ([`Error::at_capacity`]: transient, shed load and try
/// later), or the duration is beyond what the timer can represent ([`Error::invalid`]).
///
/// spinpark's own timers do not return it ([`Sleep`](super::Sleep) has no error path: a
/// sleep whose runtime shut down is elapsed); it is here for code written against tokio's
/// API, such as a timer of its own that reports these conditions.
///
/// ```
/// use spinpark::time::error::Error;
/// let e = Error::at_capacity();
/// assert!(e.is_at_capacity());
/// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
/// assert_eq!(boxed.to_string(), e.to_string());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error(Kind);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Shutdown,
    AtCapacity,
    Invalid,
}

impl Error {
    /// The error of a timer whose runtime has shut down.
    ///
    /// ```
    /// assert!(spinpark::time::error::Error::shutdown().is_shutdown());
    /// ```
    pub fn shutdown() -> Error {
        Error(Kind::Shutdown)
    }

    /// Whether the timer's runtime has shut down.
    ///
    /// ```
    /// assert!(!spinpark::time::error::Error::invalid().is_shutdown());
    /// ```
    pub fn is_shutdown(&self) -> bool {
        self.0 == Kind::Shutdown
    }

    /// The error of a timer store that holds as many timers as it can.
    ///
    /// ```
    /// assert!(spinpark::time::error::Error::at_capacity().is_at_capacity());
    /// ```
    pub fn at_capacity() -> Error {
        Error(Kind::AtCapacity)
    }

    /// Whether the timer store was full.
    ///
    /// ```
    /// assert!(!spinpark::time::error::Error::shutdown().is_at_capacity());
    /// ```
    pub fn is_at_capacity(&self) -> bool {
        self.0 == Kind::AtCapacity
    }

    /// The error of a timer whose duration is too long to represent.
    ///
    /// ```
    /// assert!(spinpark::time::error::Error::invalid().is_invalid());
    /// ```
    pub fn invalid() -> Error {
        Error(Kind::Invalid)
    }

    /// Whether the timer's duration was too long.
    ///
    /// ```
    /// assert!(!spinpark::time::error::Error::at_capacity().is_invalid());
    /// ```
    pub fn is_invalid(&self) -> bool {
        self.0 == Kind::Invalid
    }
}

/// Says which of the three it is.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Kind::Shutdown => "timer error: the runtime the timer belongs to has shut down",
            Kind::AtCapacity => "timer error: the timer store is full",
            Kind::Invalid => "timer error: the duration is too long for the timer",
        })
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_answers_only_its_own_question() {
        let all = [Error::shutdown(), Error::at_capacity(), Error::invalid()];
        let answers: Vec<_> = all
            .iter()
            .map(|e| [e.is_shutdown(), e.is_at_capacity(), e.is_invalid()])
            .collect();
        assert_eq!(
            answers,
            [
                [true, false, false],
                [false, true, false],
                [false, false, true]
            ]
        );
        let texts: std::collections::HashSet<_> = all.iter().map(|e| e.to_string()).collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
    }
}
