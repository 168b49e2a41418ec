//! For reactor authors: the hook through which an I/O reactor joins the idle protocol.
//!
//! Applications never need this module; it is public so that a reactor in another crate
//! (spinpark-net's) can plug in.
//!
//! ```
//! use std::any::Any;
//! use spinpark_executor::driver::{self, Driver};
//!
//! struct Quiet;
//! impl Driver for Quiet {
//!     fn poll(&self) -> usize { 0 }
//!     fn park(&self) { std::thread::sleep(std::time::Duration::from_millis(1)) }
//!     fn unpark(&self) {}
//!     fn shutdown(&self) {}
//!     fn as_any(&self) -> &dyn Any { self }
//! }
//!
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! assert!(driver::get(rt.handle()).is_none());
//! let d = driver::get_or_install(rt.handle(), || Ok(Box::new(Quiet))).unwrap();
//! assert!(d.as_any().is::<Quiet>());
//! assert!(driver::get(rt.handle()).is_some());
//! ```
//!
//! How it works: the executor knows nothing about epoll. A reactor implements [`Driver`] and
//! installs itself in a runtime with [`get_or_install`]; from then on spinning workers call
//! [`Driver::poll`] without blocking, the last worker to park (or one the watchdog picked
//! while the others are stuck in long polls) blocks in [`Driver::park`], and a producer that
//! needs that worker calls [`Driver::unpark`].

use std::io;

use crate::runtime::Handle;
pub use crate::scheduler::Driver;

/// `handle`'s runtime's I/O driver, building and installing it with `make` if it has none
/// yet. If two threads race, one driver wins and the other is dropped; both get the winner.
///
/// # Errors
/// Whatever `make` returns.
pub fn get_or_install(
    handle: &Handle,
    make: impl FnOnce() -> io::Result<Box<dyn Driver>>,
) -> io::Result<&dyn Driver> {
    handle.shared().driver_or_install(make)
}

/// Runs `f` with the I/O driver of the runtime the calling thread is in, if it is in one
/// and one is installed, cloning nothing: a reactor's fast path to itself, where
/// [`get_or_install`] needs a [`Handle`].
///
/// ```
/// use spinpark_executor::driver;
/// assert!(driver::with_current(|d| d.is_none())); // in no runtime
/// let rt = spinpark_executor::Runtime::new().unwrap();
/// rt.block_on(async {
///     // This runtime has no driver installed (spinpark-net installs one on first use).
///     assert!(driver::with_current(|d| d.is_none()));
/// });
/// ```
pub fn with_current<R>(f: impl FnOnce(Option<&dyn Driver>) -> R) -> R {
    crate::scheduler::current::with_current(|shared| f(shared.and_then(|s| s.driver.get())))
}

/// `handle`'s runtime's I/O driver, if one is installed.
pub fn get(handle: &Handle) -> Option<&dyn Driver> {
    handle.shared().driver.get()
}

#[cfg(feature = "test-util")]
pub use crate::time::Clock;

/// `handle`'s runtime's clock (feature `test-util`), which the reactor's timers follow and
/// tests may pause: see [`Clock`].
///
/// ```
/// let rt = spinpark_executor::Builder::new_current_thread().build().unwrap();
/// let clock = spinpark_executor::driver::clock(rt.handle());
/// assert!(!clock.is_paused());
/// ```
#[cfg(feature = "test-util")]
pub fn clock(handle: &Handle) -> Clock {
    handle.shared().clock.clone()
}

/// The current runtime's clock reading (feature `test-util`); std's clock outside a runtime.
///
/// ```
/// let rt = spinpark_executor::Builder::new_current_thread().start_paused(true).build().unwrap();
/// let (a, b) = rt.block_on(async {
///     let a = spinpark_executor::driver::now();
///     std::thread::sleep(std::time::Duration::from_millis(5));
///     (a, spinpark_executor::driver::now())
/// });
/// assert_eq!(a, b); // paused
/// ```
#[cfg(feature = "test-util")]
pub fn now() -> std::time::Instant {
    // Until some clock was paused every clock reads std's: no need to look for the runtime.
    if !crate::time::ever_paused() {
        return std::time::Instant::now();
    }
    crate::scheduler::current::with_current(|shared| match shared {
        Some(shared) => shared.clock.now(),
        None => std::time::Instant::now(),
    })
}
