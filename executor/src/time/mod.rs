//! The runtime's clocks: the kernel's coarse clock, read once per task poll
//! (`coarse.rs`), and, with the `test-util` feature, the clock the reactor's timers follow,
//! which tests may pause (`paused.rs`).

pub(crate) mod coarse;
#[cfg(feature = "test-util")]
mod paused;

#[cfg(feature = "test-util")]
pub(crate) use paused::ever_paused;
#[cfg(feature = "test-util")]
pub use paused::Clock;
