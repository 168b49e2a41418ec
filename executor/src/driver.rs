//! The hook through which an I/O reactor joins the idle protocol.
//!
//! The executor knows nothing about epoll. A reactor (spinpark-net's) implements [`Driver`]
//! and installs itself in a runtime with [`crate::Handle::driver_or_install`]; from then on
//! spinning workers call [`Driver::poll`] without blocking, the last worker to park blocks in
//! [`Driver::park`], and a producer that needs that worker calls [`Driver::unpark`].

use std::any::Any;

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
    /// I/O or timers can be freed.
    fn shutdown(&self);

    /// For downcasting to the concrete reactor.
    fn as_any(&self) -> &dyn Any;
}
