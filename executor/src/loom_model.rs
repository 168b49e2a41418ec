//! The idle protocol with its futex replaced by a model, exported for the `loom` tests
//! (`tests/loom_idle.rs`). Only compiled with `--cfg loom`.

use crate::futex::LoomFutex;
use crate::idle::{Parked, Sleepers, Woke};

/// [`Sleepers`] over the loom futex model.
pub struct Model(Sleepers<LoomFutex>);

/// How a model `park` ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The re-check found work.
    Work,
    /// Blocked, then woken; now a spinner.
    Woken,
    /// Shut down.
    Shutdown,
}

impl Model {
    /// A model for `workers` workers with at most `max_spinners` spinners.
    pub fn new(workers: usize, max_spinners: usize) -> Self {
        Self(Sleepers::new(LoomFutex::default(), workers, max_spinners))
    }
    /// See `Sleepers::try_start_spinning`.
    pub fn try_start_spinning(&self) -> bool {
        self.0.try_start_spinning()
    }
    /// See `Sleepers::stop_spinning`; returns whether somebody was woken.
    pub fn stop_spinning(&self, found: bool, more: bool, unpark_driver: impl FnOnce()) -> bool {
        self.0.stop_spinning(found, more, unpark_driver) != Woke::Nobody
    }
    /// See `Sleepers::notify`; returns whether somebody was woken.
    pub fn notify(&self, unpark_driver: impl FnOnce()) -> bool {
        self.0.notify(unpark_driver) != Woke::Nobody
    }
    /// See `Sleepers::park`.
    pub fn park(&self, recheck: impl FnMut() -> bool, drive: Option<&mut dyn FnMut()>) -> Outcome {
        let mut recheck = recheck;
        match self.0.park(|| recheck().then_some(()), drive) {
            Parked::Work(()) => Outcome::Work,
            Parked::Woken => Outcome::Woken,
            Parked::Shutdown => Outcome::Shutdown,
        }
    }
    /// See `Sleepers::shutdown`.
    pub fn shutdown(&self, unpark_driver: impl FnOnce()) {
        self.0.shutdown(unpark_driver)
    }
    /// (sleepers, spinners, driver parked).
    pub fn snapshot(&self) -> (u32, u32, bool) {
        self.0.snapshot()
    }
}
