//! The runtime's clock (feature `test-util`): std's monotonic time, which a test may pause,
//! advance and resume, one clock per runtime.
//!
//! ```
//! use std::time::Duration;
//! let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
//! let clock = spinpark_executor::driver::clock(rt.handle());
//! clock.pause().unwrap();
//! let t0 = clock.now();
//! clock.advance(Duration::from_secs(3600)).unwrap();
//! assert_eq!(clock.now() - t0, Duration::from_secs(3600)); // an hour, at once
//! ```
//!
//! How it works: the clock reads `base`, plus the time elapsed since `unfrozen` while it
//! runs. Pausing adds what elapsed to `base` and forgets `unfrozen`, so the reading stays put;
//! advancing adds to `base`; resuming sets `unfrozen` to now, so the reading moves on from
//! where it was (ahead of std's clock by what was advanced, behind it by how long it was
//! paused). A clock that was never paused reads std's clock.
//!
//! The reactor (spinpark-net) fires its timers at this clock's reading and waits, while the
//! clock runs, for the real time that separates it from the next deadline. While the clock is
//! paused, the reactor's driver, about to block with nothing to run, jumps the clock to the
//! earliest timer instead (auto-advance; see [`Clock::auto_advance`]), unless something
//! outside the scheduler may still act: a `spawn_blocking` closure that is queued or running,
//! or another thread polling its own future in `block_on` ([`Clock::inhibit`]).
//!
//! Only a current-thread runtime can be paused. There, the thread in `block_on` is the only
//! one that runs tasks, so once it has found nothing to run, re-checked every queue, and
//! polled the reactor without blocking, nothing the runtime knows of can register an earlier
//! timer before the jump. On the multi-thread runtime the idle word does know when every
//! worker is parked, but the `block_on` caller and the blocking pool run futures and closures
//! outside it, and a driver may park beside a worker stuck in a long poll (`idle/watch.rs`);
//! telling "everybody is idle" would need all of those in the word, for a mode whose point,
//! deterministic tests, a work-stealing scheduler does not give anyway. So
//! [`Clock::pause`] refuses there, with a message that names the fix.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Set once any clock in the process was paused: until then `driver::now` reads std's clock
/// without looking for the current runtime.
static EVER_PAUSED: AtomicBool = AtomicBool::new(false);

/// Whether any clock in the process was ever paused (`driver::now`'s fast path).
pub(crate) fn ever_paused() -> bool {
    // Acquire: see `Clock::pause`.
    EVER_PAUSED.load(Ordering::Acquire)
}

/// Why a clock refused to pause on a multi-thread runtime.
const NEEDS_CURRENT_THREAD: &str = "spinpark::time::pause: time can only be paused on a \
    current-thread runtime: use #[spinpark::test] (current-thread unless worker_threads or \
    flavor = \"multi_thread\" is given), #[spinpark::test(start_paused = true)], or \
    Builder::new_current_thread(); the multi-thread runtime cannot tell that every thread \
    polling its futures is idle, which auto-advance needs";

/// A runtime's clock: std's time, or a paused reading that tests move by hand. Clones share
/// the clock. Get it with [`crate::driver::clock`].
///
/// ```
/// let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
/// let clock = spinpark_executor::driver::clock(rt.handle());
/// assert!(!clock.is_paused());
/// clock.pause().unwrap();
/// assert!(clock.is_paused());
/// clock.resume().unwrap();
/// ```
#[derive(Clone)]
pub struct Clock {
    state: Arc<Mutex<State>>,
    /// Whether this runtime may be paused (it is a current-thread one).
    pausable: bool,
}

struct State {
    /// The reading when `unfrozen` was set, or the frozen reading.
    base: Instant,
    /// When the clock last started running; `None` while paused.
    unfrozen: Option<Instant>,
    /// Things outside the scheduler that may still act, during which the clock must not jump
    /// (see [`Clock::inhibit`]).
    inhibitors: usize,
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clock")
            .field("now", &self.now())
            .field("paused", &self.is_paused())
            .finish()
    }
}

impl Clock {
    /// A running clock; `pausable` for a current-thread runtime, paused from the start if
    /// `start_paused` (which needs `pausable`).
    pub(crate) fn new(pausable: bool, start_paused: bool) -> Clock {
        let now = Instant::now();
        let clock = Clock {
            state: Arc::new(Mutex::new(State {
                base: now,
                unfrozen: Some(now),
                inhibitors: 0,
            })),
            pausable,
        };
        if start_paused {
            clock.pause().expect("Builder::build checks start_paused");
        }
        clock
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // No user code runs under this lock.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The clock's reading.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
    /// let clock = spinpark_executor::driver::clock(rt.handle());
    /// assert!(clock.now() <= std::time::Instant::now()); // a running clock reads std's time
    /// ```
    pub fn now(&self) -> Instant {
        let st = self.state();
        match st.unfrozen {
            Some(since) => st.base + since.elapsed(),
            None => st.base,
        }
    }

    /// Whether the clock is paused.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
    /// assert!(!spinpark_executor::driver::clock(rt.handle()).is_paused());
    /// ```
    pub fn is_paused(&self) -> bool {
        self.state().unfrozen.is_none()
    }

    /// Stops the clock at its current reading.
    ///
    /// # Errors
    /// On a multi-thread runtime (the message says why and what to use instead), or if the
    /// clock is paused already.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new().build().unwrap(); // multi-thread
    /// let err = spinpark_executor::driver::clock(rt.handle()).pause().unwrap_err();
    /// assert!(err.contains("current-thread"));
    /// ```
    pub fn pause(&self) -> Result<(), &'static str> {
        if !self.pausable {
            return Err(NEEDS_CURRENT_THREAD);
        }
        let mut st = self.state();
        let Some(since) = st.unfrozen.take() else {
            return Err("spinpark::time::pause: time is already paused");
        };
        st.base += since.elapsed();
        // Release: pairs with the Acquire in `ever_paused`; only gates a slower path, nothing is
        // published through it.
        EVER_PAUSED.store(true, Ordering::Release);
        Ok(())
    }

    /// Starts a paused clock again, from its reading.
    ///
    /// # Errors
    /// If the clock is not paused.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
    /// let clock = spinpark_executor::driver::clock(rt.handle());
    /// assert!(clock.resume().is_err()); // not paused
    /// ```
    pub fn resume(&self) -> Result<(), &'static str> {
        let mut st = self.state();
        if st.unfrozen.is_some() {
            return Err("spinpark::time::resume: time is not paused");
        }
        st.unfrozen = Some(Instant::now());
        Ok(())
    }

    /// Moves a paused clock forward by `by`.
    ///
    /// # Errors
    /// If the clock is not paused.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
    /// let clock = spinpark_executor::driver::clock(rt.handle());
    /// assert!(clock.advance(std::time::Duration::from_secs(1)).is_err()); // not paused
    /// ```
    pub fn advance(&self, by: Duration) -> Result<(), &'static str> {
        let mut st = self.state();
        if st.unfrozen.is_some() {
            return Err(
                "spinpark::time::advance: time is not paused (call spinpark::time::pause first)",
            );
        }
        st.base = st
            .base
            .checked_add(by)
            .ok_or("spinpark::time::advance: the clock would overflow std::time::Instant")?;
        Ok(())
    }

    /// For the driver, about to block with nothing to run: if the clock is paused and nothing
    /// inhibits auto-advance, moves it forward to `to` (never backward) and returns `true`.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new_current_thread().start_paused(true).build().unwrap();
    /// let clock = spinpark_executor::driver::clock(rt.handle());
    /// let later = clock.now() + std::time::Duration::from_secs(5);
    /// assert!(clock.auto_advance(later));
    /// assert_eq!(clock.now(), later);
    /// ```
    pub fn auto_advance(&self, to: Instant) -> bool {
        let mut st = self.state();
        if st.unfrozen.is_some() || st.inhibitors > 0 {
            return false;
        }
        st.base = st.base.max(to);
        true
    }

    /// Whether [`Clock::auto_advance`] would move the clock now: it is paused and nothing
    /// inhibits auto-advance.
    ///
    /// ```
    /// let rt = spinpark_executor::Builder::new_current_thread().start_paused(true).build().unwrap();
    /// assert!(spinpark_executor::driver::clock(rt.handle()).can_auto_advance());
    /// ```
    pub fn can_auto_advance(&self) -> bool {
        let st = self.state();
        st.unfrozen.is_none() && st.inhibitors == 0
    }

    /// Something outside the scheduler may act (a queued or running `spawn_blocking` closure,
    /// another thread polling its own future in `block_on`): the clock must not auto-advance
    /// until the matching [`Clock::allow`].
    pub(crate) fn inhibit(&self) {
        self.state().inhibitors += 1;
    }

    /// Ends one [`Clock::inhibit`]. Returns whether the clock is paused: then the caller
    /// unparks the driver, which may have blocked because of the inhibition and should now
    /// look again.
    pub(crate) fn allow(&self) -> bool {
        let mut st = self.state();
        st.inhibitors = st.inhibitors.saturating_sub(1);
        st.unfrozen.is_none()
    }
}
