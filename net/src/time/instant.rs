//! [`Instant`]: a point in time on the runtime's clock, which tests may pause.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

/// A measurement of the runtime's monotonic clock, as tokio's `Instant`: std's
/// [`std::time::Instant`] wrapped, so that with the `test-util` feature and a paused clock
/// (`spinpark::time::pause`) [`Instant::now`] reads the paused time, which [`sleep`],
/// [`timeout`] and [`interval`] follow. Without the feature it is std's clock, at the same
/// cost. Convert with [`Instant::from_std`] / [`Instant::into_std`] or `From`.
///
/// ```
/// use std::time::Duration;
/// use spinpark::time::Instant;
/// let start = Instant::now();
/// let later = start + Duration::from_millis(5);
/// assert_eq!(later - start, Duration::from_millis(5));
/// assert_eq!(later.duration_since(start), Duration::from_millis(5));
/// let std_instant: std::time::Instant = later.into();
/// assert_eq!(Instant::from(std_instant), later);
/// ```
///
/// [`sleep`]: super::sleep
/// [`timeout`]: super::timeout
/// [`interval`]: super::interval
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The current time: the current runtime's clock (paused or not) with the `test-util`
    /// feature, else std's clock.
    ///
    /// ```
    /// let a = spinpark::time::Instant::now();
    /// let b = spinpark::time::Instant::now();
    /// assert!(b >= a);
    /// ```
    pub fn now() -> Instant {
        #[cfg(feature = "test-util")]
        let std = spinpark_executor::driver::now();
        #[cfg(not(feature = "test-util"))]
        let std = std::time::Instant::now();
        Instant { std }
    }

    /// Wraps one of std's instants.
    ///
    /// ```
    /// let std = std::time::Instant::now();
    /// assert_eq!(spinpark::time::Instant::from_std(std).into_std(), std);
    /// ```
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant { std }
    }

    /// The std instant inside.
    ///
    /// ```
    /// let t = spinpark::time::Instant::now();
    /// let _: std::time::Instant = t.into_std();
    /// ```
    pub fn into_std(self) -> std::time::Instant {
        self.std
    }

    /// The time from `earlier` to `self`; zero if `earlier` is later.
    ///
    /// ```
    /// use std::time::Duration;
    /// let a = spinpark::time::Instant::now();
    /// let b = a + Duration::from_secs(1);
    /// assert_eq!(b.duration_since(a), Duration::from_secs(1));
    /// assert_eq!(a.duration_since(b), Duration::ZERO);
    /// ```
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// The time from `earlier` to `self`, or `None` if `earlier` is later.
    ///
    /// ```
    /// use std::time::Duration;
    /// let a = spinpark::time::Instant::now();
    /// let b = a + Duration::from_secs(1);
    /// assert_eq!(b.checked_duration_since(a), Some(Duration::from_secs(1)));
    /// assert_eq!(a.checked_duration_since(b), None);
    /// ```
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.std.checked_duration_since(earlier.std)
    }

    /// The time from `earlier` to `self`; zero if `earlier` is later.
    ///
    /// ```
    /// use std::time::Duration;
    /// let a = spinpark::time::Instant::now();
    /// assert_eq!(a.saturating_duration_since(a + Duration::from_secs(1)), Duration::ZERO);
    /// ```
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// The time since `self`, on the same clock as [`Instant::now`].
    ///
    /// ```
    /// let t = spinpark::time::Instant::now();
    /// assert!(t.elapsed() < std::time::Duration::from_secs(60));
    /// ```
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(*self)
    }

    /// `self + d`, or `None` on overflow.
    ///
    /// ```
    /// let t = spinpark::time::Instant::now();
    /// assert!(t.checked_add(std::time::Duration::from_secs(1)).is_some());
    /// assert!(t.checked_add(std::time::Duration::MAX).is_none());
    /// ```
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        self.std.checked_add(d).map(Instant::from_std)
    }

    /// `self - d`, or `None` if that is before what the clock can represent.
    ///
    /// ```
    /// let t = spinpark::time::Instant::now();
    /// assert!(t.checked_sub(std::time::Duration::MAX).is_none());
    /// ```
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        self.std.checked_sub(d).map(Instant::from_std)
    }
}

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant::from_std(std)
    }
}

impl From<Instant> for std::time::Instant {
    fn from(t: Instant) -> std::time::Instant {
        t.into_std()
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// On overflow, as std's.
    fn add(self, d: Duration) -> Instant {
        Instant::from_std(self.std + d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// On underflow, as std's.
    fn sub(self, d: Duration) -> Instant {
        Instant::from_std(self.std - d)
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// The time from `earlier` to `self`; zero if `earlier` is later.
    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}
