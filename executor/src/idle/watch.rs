//! The watch: a dead man's switch that notices when parked workers are left with nobody
//! attending the reactor, without costing the common case a syscall or a wake-up.
//!
//! ```text
//! // a worker that polled the reactor, or parked, or woke up:
//! watch.attend(now, workers, || idle_word);   // usually two loads and a compare
//! // the watchdog thread:
//! while watch.wait() {                         // the alarm rang: nobody attended for a while
//!     idle.need_driver(); ...; watch.rearm(now, after, workers, || idle_word);
//! }
//! ```
//!
//! # Why
//!
//! A worker blocks in the reactor (as the *driver*) only when it is the last one awake, so
//! that a spinning worker picks up network events itself without a parked thread being woken
//! for them too. But a worker that is awake need not be attending the reactor: it may be
//! running a task that takes seconds (a CPU loop, a blocking call in a handler). With every
//! other worker parked on the futex, nobody would then call `epoll_wait` or fire a timer.
//!
//! # How
//!
//! An alarm (a `timerfd`, see `alarm.rs`) is armed whenever some worker is parked while
//! another is not ([`Word::wants_watch`]). When all are parked (then one of them is the
//! driver) or none is, it is not needed; what the workers then do depends on the traffic
//! (see "Arming"). Every poll of the reactor *attends* it: when its deadline
//! is less than half a period away, the attending worker pushes it a period ahead (one
//! `timerfd_settime`, on a thread that was spinning anyway: with a period of 4 ms, one syscall
//! per 2 ms of spinning). So while a worker spins or keeps polling the reactor between tasks,
//! the alarm never rings. It rings only when nobody attended the reactor for at least half a
//! period: the watchdog thread then sets `DRIVER_NEEDED` and wakes a parked worker, which
//! polls the reactor and parks again as the driver (`word.rs`). Latency of an event during a
//! long poll: at most a period, plus two wake-ups.
//!
//! # Arming
//!
//! Arming happens at parks and wake-ups, which already cost a futex or reactor syscall, and
//! only when the deadline is less than half a period away. A server whose only awake worker
//! parks as the driver after every request (beside a busy neighbour, or on a host where
//! parking answers sooner) wakes with the watch wanted and parks with it unwanted. Disarming
//! at every such park, and arming at every wake-up, cost two `timerfd_settime` per request;
//! leaving it armed costs nothing while requests come faster than the period (it is pushed
//! once per half period and never rings), but a ring for nothing, a wake-up of the watchdog
//! thread, per request when they come slower. So the watch is *lazy* (leaves the alarm
//! armed when it is not wanted) until the alarm rings for nothing, and *eager* (disarms it)
//! until a worker arms it again within half a period of the last disarm: each mode lasts
//! while the traffic is on its side of the period. A worker that spins through a
//! request-response loop never parks, and never touches the alarm but to push it. Either
//! mode keeps the rule that matters (armed whenever wanted); the mode is a hint, `Relaxed`.
//!
//! # Why no change is lost
//!
//! The alarm's state is changed only under a mutex, by a caller that read the idle word
//! under it; once the word says shutdown, only `close` touches it (its ring tells the
//! watchdog thread to exit, and a late re-arm must not cancel that). A caller that skips the mutex (the common case: the alarm looks right) read the
//! deadline after its own change of the word; a caller that changed the alarm re-reads the
//! word after storing the deadline. Both sides are `SeqCst`, so either the re-read sees the
//! other's change of the word (and fixes the alarm), or the other's read sees the new
//! deadline (and takes the mutex).

use std::time::Duration;

use super::alarm::Alarm;
use super::spin::Nanos;
use super::sync::{AtomicU64, Mutex};
use super::word::Word;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

/// The watch over one runtime's reactor. See the module docs.
pub(crate) struct Watch<A: Alarm> {
    alarm: A,
    /// When the alarm rings (policy clock), or 0 when it is disarmed.
    deadline: AtomicU64,
    lock: Mutex<()>,
    period: Nanos,
    /// 1: leave the alarm armed when the watch is not wanted; 0: disarm it ("Arming").
    lazy: AtomicU64,
    /// When a worker last disarmed the alarm (policy clock).
    disarmed_at: AtomicU64,
}

impl<A: Alarm> Watch<A> {
    /// A disarmed watch whose alarm rings `period` after the last attendance.
    pub(crate) fn new(alarm: A, period: Duration) -> Self {
        Self {
            alarm,
            deadline: AtomicU64::new(0),
            lock: Mutex::new(()),
            period: period.as_nanos().clamp(2, u64::MAX as u128) as Nanos,
            lazy: AtomicU64::new(1),
            disarmed_at: AtomicU64::new(0),
        }
    }

    /// Whether the alarm is as `w` wants it: armed at least half a period ahead when the
    /// watch is wanted; otherwise disarmed, or anything while the watch is lazy.
    fn in_line(&self, w: Word, workers: u32, now: Nanos) -> bool {
        // SeqCst: see "Why no change is lost".
        let d = self.deadline.load(SeqCst);
        if !w.wants_watch(workers) {
            // Relaxed: a hint ("Arming").
            return self.lazy.load(Relaxed) != 0 || d == 0;
        }
        d != 0 && d >= now.saturating_add(self.period / 2)
    }

    /// A worker polled the reactor, parked, or woke up: bring the alarm in line with the idle
    /// word (`current` reads it), pushing it a period ahead when it is due soon.
    pub(crate) fn attend(&self, now: Nanos, workers: u32, current: impl Fn() -> Word) {
        if self.in_line(current(), workers, now) {
            return;
        }
        let _g = lock(&self.lock);
        if !self.in_line(current(), workers, now) {
            self.set(now, workers, self.period, &current);
        }
    }

    /// After a ring: arm for `after` if the watch is still wanted, else disarm; a ring
    /// nobody wanted makes the watch eager ("Arming").
    pub(crate) fn rearm(
        &self,
        now: Nanos,
        after: Duration,
        workers: u32,
        current: impl Fn() -> Word,
    ) {
        let _g = lock(&self.lock);
        let for_nothing = !current().wants_watch(workers);
        let after = after.as_nanos().clamp(1, u64::MAX as u128) as Nanos;
        self.set(now, workers, after, &current);
        if for_nothing {
            // Relaxed: hints. This disarm is not a worker's: the next arming, however soon,
            // does not say that requests come faster than the period.
            self.lazy.store(0, Relaxed);
            self.disarmed_at.store(0, Relaxed);
        }
    }

    /// Under the lock: arms the alarm for `after` or disarms it, as the word wants, then
    /// re-reads the word, until what it set agrees with what it read last.
    fn set(&self, now: Nanos, workers: u32, after: Nanos, current: &impl Fn() -> Word) {
        let mut want = current().wants_watch(workers);
        loop {
            // Once shut down, the alarm is `close`'s: setting it now would cancel the ring
            // that tells the watchdog to exit. (`close` takes this lock, and the word says
            // shutdown before `close` is called, so either this sees it, or `close` comes
            // after this whole call.)
            if current().is_shutdown() {
                return;
            }
            if want {
                // Armed again within half a period of the last disarm: requests come faster
                // than the period, so leave it armed from now on. (Relaxed: hints.)
                if now.saturating_sub(self.disarmed_at.load(Relaxed)) < self.period / 2 {
                    self.lazy.store(1, Relaxed);
                }
                self.alarm.set(Some(Duration::from_nanos(after)));
                // SeqCst: see "Why no change is lost".
                self.deadline
                    .store(now.saturating_add(after).max(1), SeqCst);
            } else if self.deadline.load(SeqCst) != 0 {
                self.alarm.set(None);
                self.deadline.store(0, SeqCst);
                self.disarmed_at.store(now, Relaxed);
            }
            let again = current().wants_watch(workers);
            if again == want {
                return;
            }
            want = again;
        }
    }

    /// The watchdog thread: blocks until the alarm rings (`true`) or the watch is closed.
    pub(crate) fn wait(&self) -> bool {
        self.alarm.wait()
    }

    /// Stops the watchdog thread (at shutdown, after the idle word says so).
    pub(crate) fn close(&self) {
        let _g = lock(&self.lock);
        self.alarm.close();
    }

    /// The alarm (for the loom model, which grants it rings).
    #[cfg(loom)]
    pub(crate) fn alarm(&self) -> &A {
        &self.alarm
    }

    /// Whether the alarm is armed (for tests and metrics).
    #[cfg(test)]
    pub(crate) fn armed(&self) -> bool {
        self.deadline.load(SeqCst) != 0
    }
}

fn lock(m: &Mutex<()>) -> impl Drop + '_ {
    // Nothing panics under this lock; recover from poisoning anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::sync::Mutex as StdMutex;

    /// An alarm that records its settings.
    #[derive(Default)]
    struct Recorder(StdMutex<Vec<Option<Duration>>>);

    impl Alarm for Recorder {
        fn set(&self, after: Option<Duration>) {
            self.0.lock().unwrap().push(after);
        }
        fn wait(&self) -> bool {
            false
        }
        fn close(&self) {}
    }

    const MS: Nanos = 1_000_000;

    #[test]
    fn armed_while_some_park_pushed_by_attendance_left_alone_when_all_park() {
        // The watch's atomics and lock are loom's under `--cfg loom`.
        super::super::sync::model(|| {
            let watch = Watch::new(Recorder::default(), Duration::from_millis(4));
            let word = AtomicU32::new(Word::EMPTY.0);
            let current = || Word(word.load(SeqCst));
            // Nobody parked: nothing to watch, nothing set.
            watch.attend(0, 2, current);
            assert!(!watch.armed());
            // One of two parks (the other spins): armed a period ahead.
            let (w, _) = Word::EMPTY.announce(2, true, false).unwrap();
            word.store(w.0, SeqCst);
            watch.attend(MS, 2, current);
            assert!(watch.armed());
            // Attending early in the period changes nothing (no syscall)...
            watch.attend(2 * MS, 2, current);
            assert_eq!(watch.alarm.0.lock().unwrap().len(), 1);
            // ...past half of it, the alarm is pushed a period ahead.
            watch.attend(3 * MS + MS / 2, 2, current);
            assert_eq!(watch.alarm.0.lock().unwrap().len(), 2);
            // The other parks too (as the driver): no syscall, the alarm stays armed...
            let (w, driver) = w.announce(2, true, false).unwrap();
            assert!(driver);
            word.store(w.0, SeqCst);
            watch.attend(4 * MS, 2, current);
            assert!(watch.armed());
            assert_eq!(watch.alarm.0.lock().unwrap().len(), 2);
            // ...and a wake-up soon after finds it in line: still no syscall.
            let w1 = w.claim_driver().unwrap();
            word.store(w1.0, SeqCst);
            watch.attend(4 * MS + MS / 2, 2, current);
            assert_eq!(watch.alarm.0.lock().unwrap().len(), 2);
            word.store(w.0, SeqCst);
            // The watchdog, after the ring nobody wanted, disarms it, and the watch turns
            // eager: requests come slower than the period.
            watch.rearm(5 * MS, Duration::from_millis(1), 2, current);
            assert!(!watch.armed());
            assert_eq!(watch.alarm.0.lock().unwrap().last(), Some(&None));
            let sets = || watch.alarm.0.lock().unwrap().len();
            assert_eq!(sets(), 3);
            // A wake-up 5 ms after that one arms it; the park after it disarms it, as the
            // watch did before it was lazy: no ring per request.
            word.store(w1.0, SeqCst);
            watch.attend(10 * MS, 2, current);
            assert!(watch.armed());
            word.store(w.0, SeqCst);
            watch.attend(10 * MS + MS / 10, 2, current);
            assert!(!watch.armed());
            assert_eq!(sets(), 5);
            // A request at `at`: the driver wakes for it, and parks again 100 µs later.
            let request = |at: Nanos| {
                word.store(w1.0, SeqCst);
                watch.attend(at, 2, current);
                word.store(w.0, SeqCst);
                watch.attend(at + MS / 10, 2, current);
            };
            // Requests 5 ms apart keep it eager.
            request(15 * MS);
            assert!(!watch.armed());
            assert_eq!(sets(), 7);
            // A wake-up 1 ms after the last disarm: requests come faster than the period
            // again, so the watch turns lazy and the next park leaves it armed.
            request(16 * MS);
            assert!(watch.armed());
            assert_eq!(sets(), 8);
        });
    }
}
