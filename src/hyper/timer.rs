//! [`Timer`]: hyper's `Timer` on [`spinpark::time`](crate::time).
//!
//! ```
//! use std::time::Duration;
//! let mut builder = hyper::server::conn::http1::Builder::new();
//! builder
//!     .timer(spinpark::hyper::Timer::new())
//!     .header_read_timeout(Duration::from_secs(5));
//! ```
//!
//! How: each hyper sleep is a boxed [`spinpark::time::Sleep`](crate::time::Sleep); `reset`
//! moves the deadline of that same timer instead of allocating a new one.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::time::{sleep, sleep_until, Sleep};

/// hyper's timer, on spinpark's timers. Install it on every hyper builder: hyper panics when a
/// timeout is configured without a timer, and ignores timeouts (HTTP/1's header-read timeout,
/// HTTP/2 keep-alive pings) if no timer is installed.
///
/// ```
/// let mut builder = hyper::server::conn::http1::Builder::new();
/// builder.timer(spinpark::hyper::Timer::new());
/// ```
///
/// # Panics
/// The sleeps it makes panic when polled outside a spinpark runtime (like
/// [`sleep`](crate::time::sleep)).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer {
    _private: (),
}

impl Timer {
    /// A timer for hyper's builders.
    pub fn new() -> Timer {
        Timer { _private: () }
    }
}

/// A spinpark sleep that hyper can hold as a `hyper::rt::Sleep`.
#[derive(Debug)]
struct HyperSleep(Sleep);

impl HyperSleep {
    fn sleep(self: Pin<&mut Self>) -> Pin<&mut Sleep> {
        // SAFETY: the sleep is structurally pinned: `HyperSleep` never moves it out, is not
        // `Unpin` unless `Sleep` is, and has no destructor of its own.
        unsafe { self.map_unchecked_mut(|s| &mut s.0) }
    }
}

impl Future for HyperSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.sleep().poll(cx)
    }
}

impl ::hyper::rt::Sleep for HyperSleep {}

impl ::hyper::rt::Timer for Timer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn ::hyper::rt::Sleep>> {
        Box::pin(HyperSleep(sleep(duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn ::hyper::rt::Sleep>> {
        Box::pin(HyperSleep(sleep_until(deadline.into())))
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn ::hyper::rt::Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<HyperSleep>() {
            Some(s) => s.sleep().reset(new_deadline.into()),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}
