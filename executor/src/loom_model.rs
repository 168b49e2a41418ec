//! The idle protocol with its futex replaced by a model, exported for the `loom` tests
//! (`tests/loom_idle.rs`). Only compiled with `--cfg loom`.

use crate::futex::LoomFutex;
use crate::idle::{Idle, Parked, Woke};

/// [`Idle`] over the loom futex model.
pub struct Model(Idle<LoomFutex>);

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
        Self(Idle::new(LoomFutex::default(), workers, max_spinners))
    }
    /// See `Idle::try_start_spinning`.
    pub fn try_start_spinning(&self) -> bool {
        self.0.try_start_spinning()
    }
    /// See `Idle::stop_spinning`; returns whether somebody was woken. `more` is called after
    /// the spinner removed itself, and only if it `found` work.
    pub fn stop_spinning(
        &self,
        found: bool,
        more: impl FnOnce() -> bool,
        unpark_driver: impl FnOnce(),
    ) -> bool {
        self.0.stop_spinning(found, more, unpark_driver) != Woke::Nobody
    }
    /// See `Idle::notify`; returns whether somebody was woken.
    pub fn notify(&self, unpark_driver: impl FnOnce()) -> bool {
        self.0.notify(unpark_driver) != Woke::Nobody
    }
    /// See `Idle::park`.
    pub fn park(&self, recheck: impl FnMut() -> bool, drive: Option<&mut dyn FnMut()>) -> Outcome {
        let mut recheck = recheck;
        match self.0.park(|| recheck().then_some(()), drive) {
            Parked::Work(()) => Outcome::Work,
            Parked::Woken => Outcome::Woken,
            Parked::Shutdown => Outcome::Shutdown,
        }
    }
    /// See `Idle::shutdown`.
    pub fn shutdown(&self, unpark_driver: impl FnOnce()) {
        self.0.shutdown(unpark_driver)
    }
    /// (sleepers, spinners, driver parked).
    pub fn snapshot(&self) -> (u32, u32, bool) {
        self.0.snapshot()
    }
}
