//! The idle protocol with its futex and alarm replaced by models, exported for the `loom`
//! tests (`tests/loom_idle.rs`). Only compiled with `--cfg loom`.

use std::time::Duration;

use super::alarm::LoomAlarm;
use super::futex::LoomFutex;
use super::{Idle, Parked, Woke};

/// [`Idle`] over the loom futex and alarm models.
pub struct Model(Idle<LoomFutex, LoomAlarm>);

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("idle", &self.0.snapshot())
            .finish()
    }
}

/// How a model `park` ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The re-check found work.
    Work,
    /// Blocked, then woken; now a spinner.
    Woken,
    /// Shut down.
    Shutdown,
    /// Un-announced: a driver appeared after the caller looked; it parks again.
    DriverAppeared,
}

impl Model {
    /// A model for `workers` workers with at most `max_spinners` spinners. Its watch's
    /// alarm never rings until [`Model::time_passes`] says so.
    pub fn new(workers: usize, max_spinners: usize) -> Self {
        Self(Idle::new(
            LoomFutex::default(),
            LoomAlarm::new(0),
            Duration::from_millis(4),
            workers,
            max_spinners,
        ))
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
    /// See `Idle::park` (at time 0: the model has no clock), followed by `Idle::attend` when
    /// the worker returns awake, as the worker loop does. The models that count their items
    /// in one place take them after the call (`recheck` only says whether any is there), so
    /// the look at the queues after a re-check that found work finds nothing more here; see
    /// [`Model::park_checking`] for models whose re-check takes the work.
    pub fn park(&self, recheck: impl FnMut() -> bool, drive: Option<&mut dyn FnMut()>) -> Outcome {
        self.park_or_retry(recheck, drive, || false)
    }
    /// [`Model::park`] with `driver_appeared`, asked after the announcement when `drive` is
    /// `None` (see `Idle::park`).
    pub fn park_or_retry(
        &self,
        recheck: impl FnMut() -> bool,
        drive: Option<&mut dyn FnMut()>,
        driver_appeared: impl FnOnce() -> bool,
    ) -> Outcome {
        self.park_full(recheck, || false, || {}, drive, driver_appeared)
    }
    /// See `Idle::park`: `recheck` takes a task if it finds one (`true`), and `more` is the
    /// look at every queue after the un-announcement that follows (`unpark_driver` delivers
    /// a wake-up it decides for the driver).
    pub fn park_checking(
        &self,
        recheck: impl FnMut() -> bool,
        more: impl FnOnce() -> bool,
        unpark_driver: impl FnOnce(),
        drive: Option<&mut dyn FnMut()>,
    ) -> Outcome {
        self.park_full(recheck, more, unpark_driver, drive, || false)
    }
    fn park_full(
        &self,
        recheck: impl FnMut() -> bool,
        more: impl FnOnce() -> bool,
        unpark_driver: impl FnOnce(),
        drive: Option<&mut dyn FnMut()>,
        driver_appeared: impl FnOnce() -> bool,
    ) -> Outcome {
        let mut recheck = recheck;
        let parked = self.0.park(
            0,
            false,
            || recheck().then_some(()),
            (more, unpark_driver),
            drive,
            driver_appeared,
        );
        let out = match parked {
            Parked::Work((), _) => Outcome::Work,
            Parked::Woken => Outcome::Woken,
            Parked::Shutdown => return Outcome::Shutdown,
            Parked::DriverAppeared => return Outcome::DriverAppeared,
        };
        self.0.attend(0);
        out
    }
    /// Up to `periods` watch periods may pass without anybody attending the reactor (a
    /// worker is stuck in a task): the alarm may ring that many more times.
    pub fn time_passes(&self, periods: u32) {
        self.0.alarm().grant(periods)
    }
    /// See `Idle::attend`: a worker polled the reactor.
    pub fn attend(&self) {
        self.0.attend(0)
    }
    /// The watchdog thread's loop (`scheduler/watchdog.rs`, without the stuck-work part, which is the
    /// scheduler's): until shutdown, each time the alarm rings, ask for a driver and re-arm.
    /// Returns how many sleepers it woke.
    pub fn watchdog(&self) -> usize {
        let mut woke = 0;
        while self.0.wait_alarm() {
            if self.0.watch_wanted() {
                woke += (self.0.need_driver() != Woke::Nobody) as usize;
            }
            self.0.rearm(0, Duration::from_millis(4));
        }
        woke
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
