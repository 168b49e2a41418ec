//! [`FileTimes`]: the access and modification times [`File::set_times`](super::File::set_times)
//! sets.
//!
//! ```
//! use std::time::{Duration, SystemTime};
//! let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
//! let times = spinpark::fs::FileTimes::new().set_modified(when);
//! # drop(times);
//! ```
//!
//! How: each time is kept as an `Option` and turned into a [`std::fs::FileTimes`] when set,
//! so a time left unset is left as it is on the file.

use std::time::SystemTime;

/// The times to set on a file; unset ones are left alone. tokio's `FileTimes`; see
/// [`std::fs::FileTimes`].
#[derive(Debug, Clone, Default)]
#[must_use = "FileTimes does nothing until File::set_times applies it"]
pub struct FileTimes {
    accessed: Option<SystemTime>,
    modified: Option<SystemTime>,
}

impl FileTimes {
    /// No times: applying this changes nothing.
    ///
    /// ```
    /// let times = spinpark::fs::FileTimes::new();
    /// # drop(times);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the last access time.
    ///
    /// ```
    /// let times = spinpark::fs::FileTimes::new().set_accessed(std::time::SystemTime::now());
    /// # drop(times);
    /// ```
    pub fn set_accessed(mut self, t: SystemTime) -> Self {
        self.accessed = Some(t);
        self
    }

    /// Sets the last modification time.
    ///
    /// ```
    /// let times = spinpark::fs::FileTimes::new().set_modified(std::time::SystemTime::now());
    /// # drop(times);
    /// ```
    pub fn set_modified(mut self, t: SystemTime) -> Self {
        self.modified = Some(t);
        self
    }

    /// std's form of these times.
    pub(super) fn into_std(self) -> std::fs::FileTimes {
        let mut times = std::fs::FileTimes::new();
        if let Some(t) = self.accessed {
            times = times.set_accessed(t);
        }
        if let Some(t) = self.modified {
            times = times.set_modified(t);
        }
        times
    }
}
