//! The `Builder` settings tokio has that are about identity, hooks and tuning: `name`,
//! `on_thread_park`/`on_thread_unpark`, `global_queue_interval`, `event_interval`,
//! `max_io_events_per_tick` and `max_io_events_per_busy_tick`, and the runtime
//! [`Id`] that `Handle::id` returns.
//!
//! ```
//! let rt = spinpark::Builder::new_current_thread()
//!     .name("api")
//!     .on_thread_park(|| {})
//!     .build()
//!     .unwrap();
//! assert_eq!(rt.handle().name(), Some("api"));
//! ```
//!
//! The four tuning numbers are checked and accepted so that tokio programs build unchanged,
//! but spinpark's scheduler keeps its own: it looks at the injector every 61 tasks and
//! every millisecond of polling (coarse clock), polls the reactor between busy tasks when
//! nobody else does, and reads up to 64 events per `epoll_wait`.

use std::fmt;
use std::io;
use std::num::NonZeroU64;
use std::sync::Arc;

use super::Builder;
use crate::scheduler::ThreadHook;

/// tokio's settings that spinpark keeps for identity and hooks, or only checks.
#[derive(Default, Clone)]
pub(crate) struct Knobs {
    pub(crate) name: Option<String>,
    /// Set by `build_local`.
    pub(crate) local: bool,
    pub(crate) on_park: Option<ThreadHook>,
    pub(crate) on_unpark: Option<ThreadHook>,
    global_queue_interval: Option<u32>,
    event_interval: Option<u32>,
    io_events_per_tick: Option<usize>,
    io_events_per_busy_tick: Option<usize>,
}

impl fmt::Debug for Knobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Knobs")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Knobs {
    /// The errors `build()` reports for these settings.
    pub(crate) fn check(&self) -> io::Result<()> {
        let bad = |msg: &str| Err(io::Error::new(io::ErrorKind::InvalidInput, msg.to_string()));
        if self.name.as_ref().is_some_and(|n| n.trim().is_empty()) {
            return bad("spinpark: the runtime name must not be empty");
        }
        if self.global_queue_interval == Some(0) {
            return bad("spinpark: global_queue_interval must be greater than 0");
        }
        if self.event_interval == Some(0) {
            return bad("spinpark: event_interval must be greater than 0");
        }
        if self.io_events_per_tick == Some(0) || self.io_events_per_busy_tick == Some(0) {
            return bad(
                "spinpark: max_io_events_per_tick and max_io_events_per_busy_tick must be \
                        greater than 0",
            );
        }
        Ok(())
    }
}

impl Builder {
    /// Names the runtime ([`Handle::name`](crate::Handle::name)). An empty name is refused
    /// by `build()`.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().name("ingest").build().unwrap();
    /// assert_eq!(rt.handle().name(), Some("ingest"));
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.knobs.name = Some(name.into());
        self
    }

    /// Runs `f` on a worker each time it is about to block (on the futex, or in the reactor)
    /// for want of work. A panic in `f` is contained.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let parks = Arc::new(AtomicUsize::new(0));
    /// let p = parks.clone();
    /// let rt = spinpark::Builder::new()
    ///     .on_thread_park(move || { p.fetch_add(1, Ordering::Relaxed); })
    ///     .build()
    ///     .unwrap();
    /// # drop(rt);
    /// ```
    pub fn on_thread_park(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.knobs.on_park = Some(Arc::new(f));
        self
    }

    /// Runs `f` on a worker each time it wakes from a block; see
    /// [`Builder::on_thread_park`].
    ///
    /// ```
    /// let rt = spinpark::Builder::new().on_thread_unpark(|| {}).build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn on_thread_unpark(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.knobs.on_unpark = Some(Arc::new(f));
        self
    }

    /// Accepted for tokio's sake (0 is refused by `build()`); spinpark's workers look at the
    /// shared queue every 61 tasks, and once a millisecond of polling has passed since they
    /// last did (tokio's own default tunes the interval to the mean poll time, to the same
    /// end), whatever the value.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().global_queue_interval(31).build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn global_queue_interval(mut self, tasks: u32) -> Self {
        self.knobs.global_queue_interval = Some(tasks);
        self
    }

    /// Accepted for tokio's sake (0 is refused by `build()`); spinpark's workers poll the
    /// reactor when idle, every 61 tasks, and whenever it has gone unattended for long.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().event_interval(61).build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn event_interval(mut self, tasks: u32) -> Self {
        self.knobs.event_interval = Some(tasks);
        self
    }

    /// Accepted for tokio's sake (0 is refused by `build()`); spinpark's reactor reads up to
    /// 64 events per `epoll_wait`.
    ///
    /// ```
    /// let rt = spinpark::Builder::new().max_io_events_per_tick(256).build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn max_io_events_per_tick(mut self, events: usize) -> Self {
        self.knobs.io_events_per_tick = Some(events);
        self
    }

    /// Accepted for tokio's sake (0 is refused by `build()`); see
    /// [`Builder::max_io_events_per_tick`].
    ///
    /// ```
    /// let rt = spinpark::Builder::new().max_io_events_per_busy_tick(64).build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn max_io_events_per_busy_tick(mut self, events: usize) -> Self {
        self.knobs.io_events_per_busy_tick = Some(events);
        self
    }
}

/// A runtime's id, unique among the runtimes of the process ([`Handle::id`](crate::Handle::id)).
///
/// ```
/// let rt = spinpark::Runtime::new().unwrap();
/// let id: spinpark::runtime::Id = rt.handle().id();
/// assert_eq!(id, rt.handle().id());
/// println!("runtime {id}");
/// ```
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq)]
pub struct Id(pub(crate) NonZeroU64);

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
