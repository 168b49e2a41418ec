//! The [`Driver`] trait, what a runtime asks of an I/O reactor, and [`DriverCell`], where a
//! runtime keeps the one installed. The trait is public through the crate's `driver` module
//! (with the functions reactor authors install a driver with); the cell is internal, and
//! `Shared::driver_or_install` holds its install protocol against shutdown.
//!
//! ```text
//! cell.get()?.park()             // the last worker to park blocks in the reactor
//! cell.try_poll(|| count())      // a spinner polls it, unless another one is polling
//! cell.unpark()                  // a producer gets the parked worker up
//! ```
//!
//! How it works: the cell is a `OnceLock` (a driver is installed once and stays until the
//! runtime is freed) and a try-lock flag around `poll`.

use std::any::Any;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Acquire, Release, SeqCst};
use std::sync::OnceLock;

/// An event source polled by the runtime's workers (an epoll reactor with timers).
///
/// All methods may be called from any worker concurrently; the runtime makes sure that at most
/// one worker is in [`Driver::park`] at a time. Other workers may be awake and calling
/// [`Driver::poll`] while it is parked, so a wake-up meant for the parked worker must not be
/// something a `poll` can consume (see [`Driver::unpark`]).
pub trait Driver: Send + Sync + 'static {
    /// Dispatches the events that are ready now, without blocking: wakes the tasks they
    /// concern. Returns how many events were dispatched.
    fn poll(&self) -> usize;

    /// Blocks until an event is ready, the next timer is due, or [`Driver::unpark`] is called,
    /// then dispatches what is ready. May return spuriously.
    fn park(&self);

    /// Makes a current or the next [`Driver::park`] return soon, whatever [`Driver::poll`]
    /// calls other threads make meanwhile: the idle protocol relies on it to wake the parked
    /// worker it picked. Cheap when called often: the implementation coalesces calls.
    fn unpark(&self);

    /// The runtime is shutting down: drop every waker the driver holds, so tasks waiting on
    /// I/O or timers can be freed. May be called more than once (a driver installed while the
    /// runtime shuts down may be shut down by both), and should make later registrations fail.
    fn shutdown(&self);

    /// Whether every connection the driver accepted and still holds comes from a client that
    /// runs on this runtime's own CPUs (a client on the same machine), and there is at least
    /// one. The spin policy then weighs the CPU its spinning takes from that client
    /// (`idle/spin.rs`, "Clients on our own CPUs"). Called at the start of every idle period:
    /// it must be cheap. The default says no.
    fn clients_colocated(&self) -> bool {
        false
    }

    /// For downcasting to the concrete reactor.
    fn as_any(&self) -> &dyn Any;
}

/// A runtime's I/O driver, once a reactor has installed one, and the try-lock that keeps
/// spinners from polling it all at once.
pub(crate) struct DriverCell {
    driver: OnceLock<Box<dyn Driver>>,
    /// Held by the one spinner that polls the driver, so spinners do not pile into epoll.
    polling: AtomicBool,
    /// Set by shutdown once the workers have stopped: a driver installed from then on is
    /// shut down at once (`Shared::driver_or_install`).
    closed: AtomicBool,
}

impl DriverCell {
    /// No driver yet.
    pub(crate) fn new() -> DriverCell {
        DriverCell {
            driver: OnceLock::new(),
            polling: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        }
    }

    /// The driver, if one is installed.
    pub(crate) fn get(&self) -> Option<&dyn Driver> {
        self.driver.get().map(|d| &**d)
    }

    /// Installs `driver` unless one is installed already; returns whether it was.
    pub(crate) fn install(&self, driver: Box<dyn Driver>) -> bool {
        self.driver.set(driver).is_ok()
    }

    /// Shutdown: no driver may serve from now on (see `closed`).
    pub(crate) fn close(&self) {
        // SeqCst: the store half of the store / fence / load pair with an installer
        // (`Shared::driver_or_install`, `Shared::shut_down_driver`).
        self.closed.store(true, SeqCst);
    }

    /// Whether shutdown closed the cell (see [`DriverCell::close`]).
    pub(crate) fn is_closed(&self) -> bool {
        // SeqCst: see `close`.
        self.closed.load(SeqCst)
    }

    /// Makes a parked driver return, if there is a driver.
    pub(crate) fn unpark(&self) {
        if let Some(d) = self.get() {
            d.unpark();
        }
    }

    /// Polls the driver without blocking, unless there is none or another thread is polling
    /// it; runs `polling` first when it does poll. Returns how many events it dispatched.
    pub(crate) fn try_poll(&self, polling: impl FnOnce()) -> usize {
        let Some(driver) = self.get() else {
            return 0;
        };
        // Acquire/Release: a try-lock around `poll`, so two spinners do not contend in the
        // kernel for the same events; the reactor's own state is synchronized internally.
        if self.polling.swap(true, Acquire) {
            return 0;
        }
        polling();
        let n = driver.poll();
        self.polling.store(false, Release);
        n
    }
}
