//! The idle word: every field of the idle state in one `u32`, and its transitions as pure
//! functions.
//!
//! ```text
//! let w = Word::EMPTY.start_spinning(1).unwrap();           // one spinner
//! let (w, as_driver) = w.stop_spinning().announce(2, true, false).unwrap();
//! assert!(!as_driver);                                     // another worker is awake
//! let (w, who) = w.pick().unwrap();                        // a producer: Woke::Sleeper
//! let Claim::Woken(w) = w.claim_sleeper() else { .. };     // it claims WAKING, spins
//! // ... it finds work and runs it for seconds; the other worker parks (not the last) ...
//! let (w, who) = w.need_driver().unwrap();                 // the watchdog: Woke::Sleeper
//! // ... the sleeper it woke spins, then parks: it becomes the driver though a worker is awake
//! ```
//!
//! Nothing here touches memory: [`super::Idle`] loads the word, asks one of these functions
//! for the next value, and installs it with one compare-and-swap (`Idle::update`). So the
//! transitions can be tested exhaustively (the tests below walk every word reachable by up to
//! four workers and check the invariants on each), and the atomic code is one loop.
//!
//! | bits  | field           | meaning |
//! |-------|-----------------|---------|
//! | 0-7   | `sleepers`      | workers parked on the futex (on this very word) |
//! | 8-15  | `spinners`      | workers spinning: awake, out of work, looking for more |
//! | 16    | `WAKING`        | a futex sleeper has been picked to wake and has not yet claimed it |
//! | 17    | `DRIVER`        | one worker is parked in the reactor (`Driver::park`), not on the futex |
//! | 18    | `DRIVER_WAKING` | that worker has been picked to wake and has not yet claimed it |
//! | 19    | `SHUTDOWN`      | the runtime is stopping; nobody parks any more |
//! | 20    | `DRIVER_NEEDED` | the watchdog found the reactor unattended: the next worker to park drives |
//! | 21-31 | epoch           | bumped by every wake decision (no ABA on the futex value) |

const ONE_SLEEPER: u32 = 1;
const SLEEPERS_MASK: u32 = 0xff;
const ONE_SPINNER: u32 = 1 << 8;
const SPINNERS_SHIFT: u32 = 8;
const WAKING: u32 = 1 << 16;
const DRIVER: u32 = 1 << 17;
const DRIVER_WAKING: u32 = 1 << 18;
const SHUTDOWN: u32 = 1 << 19;
const DRIVER_NEEDED: u32 = 1 << 20;
const EPOCH_SHIFT: u32 = 21;
const EPOCH_ONE: u32 = 1 << EPOCH_SHIFT;

/// The most workers the word can count.
pub(crate) const MAX_WORKERS: usize = SLEEPERS_MASK as usize;

/// Who a wake decision picked, so the caller can deliver the wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// Nobody: somebody is already looking for work, or nobody sleeps.
    Nobody,
    /// A futex sleeper; the caller issues `FUTEX_WAKE`.
    Sleeper,
    /// The worker blocked in the reactor; the caller unparks the reactor.
    Driver,
}

/// What a futex sleeper that returned from `FUTEX_WAIT` finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// `SHUTDOWN` is set: leave.
    Shutdown,
    /// No `WAKING` to claim (spurious return, or another sleeper claimed it): still counted
    /// in `sleepers`, wait again on this word.
    NotPicked,
    /// Claimed `WAKING`: the new word, with this worker counted as a spinner.
    Woken(Word),
}

/// The idle state of one runtime, as one 32-bit value. See the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Word(pub(crate) u32);

impl Word {
    /// Nobody idle, no shutdown, epoch 0.
    pub(crate) const EMPTY: Word = Word(0);

    /// Workers counted as futex sleepers (announced, or blocked in `FUTEX_WAIT`).
    pub(crate) fn sleepers(self) -> u32 {
        self.0 & SLEEPERS_MASK
    }

    /// Workers spinning.
    pub(crate) fn spinners(self) -> u32 {
        (self.0 >> SPINNERS_SHIFT) & 0xff
    }

    /// A worker is parked in the reactor and has not been picked.
    pub(crate) fn driver_parked(self) -> bool {
        self.0 & DRIVER != 0
    }

    /// A driver is parked, or was picked to wake and has not claimed it yet: either way there
    /// is one, and no other worker may become it.
    pub(crate) fn driver_present(self) -> bool {
        self.0 & (DRIVER | DRIVER_WAKING) != 0
    }

    /// Whether the watch should be armed: some worker is parked (on the futex or as the
    /// driver) while another is not (spinning, running a task, or picked to wake). Then a
    /// worker that stops attending the reactor (a task that blocks) can leave the parked ones
    /// unaware of events; see `watch.rs`.
    pub(crate) fn wants_watch(self, workers: u32) -> bool {
        let parked = self.sleepers() + self.driver_parked() as u32;
        !self.is_shutdown() && parked > 0 && parked < workers
    }

    /// [`Word::shutdown`] happened.
    pub(crate) fn is_shutdown(self) -> bool {
        self.0 & SHUTDOWN != 0
    }

    /// Wake-ups decided and not yet claimed (0, 1 or 2: `WAKING` and `DRIVER_WAKING`).
    pub(crate) fn pending(self) -> u32 {
        (self.0 & WAKING != 0) as u32 + (self.0 & DRIVER_WAKING != 0) as u32
    }

    /// The wake-decision counter (11 bits, wrapping).
    #[cfg(test)]
    fn epoch(self) -> u32 {
        self.0 >> EPOCH_SHIFT
    }

    /// Somebody awake will scan every queue before it parks: a spinner, or a worker picked to
    /// wake that has not claimed it yet.
    pub(crate) fn someone_looking(self) -> bool {
        self.spinners() > 0 || self.0 & (WAKING | DRIVER_WAKING) != 0
    }

    fn bump_epoch(self) -> Word {
        Word(self.0.wrapping_add(EPOCH_ONE))
    }

    /// An awake worker out of work asks to spin: allowed while spinners plus pending wake-ups
    /// are below `max_spinners` and the runtime runs. `None`: park instead.
    pub(crate) fn start_spinning(self, max_spinners: u32) -> Option<Word> {
        if self.is_shutdown() || self.spinners() + self.pending() >= max_spinners {
            return None;
        }
        Some(Word(self.0 + ONE_SPINNER))
    }

    /// A spinner stops spinning (it found work, or its window ran out).
    pub(crate) fn stop_spinning(self) -> Word {
        debug_assert!(self.spinners() > 0, "stop_spinning without spinning");
        Word(self.0 - ONE_SPINNER)
    }

    /// The wake decision for work that was made visible: `None` when nobody is to be woken
    /// (somebody is looking, nobody is parked, or the runtime is stopping); otherwise the new
    /// word and whom it picked: the driver first, else a futex sleeper. The epoch is bumped.
    pub(crate) fn pick(self) -> Option<(Word, Woke)> {
        if self.someone_looking() || self.is_shutdown() {
            None
        } else if self.0 & DRIVER != 0 {
            let w = Word((self.0 & !DRIVER) | DRIVER_WAKING).bump_epoch();
            Some((w, Woke::Driver))
        } else if self.sleepers() > 0 {
            let w = Word((self.0 - ONE_SLEEPER) | WAKING).bump_epoch();
            Some((w, Woke::Sleeper))
        } else {
            None
        }
    }

    /// An awake worker that is not spinning announces that it parks: as the driver when
    /// `can_drive` (a reactor exists), there is no driver, and either it is the last awake
    /// worker, or the watchdog asked for a driver (`DRIVER_NEEDED`, consumed here), or
    /// `others_stuck` (the worker saw another one stuck in a long poll) while nobody spins
    /// and no wake-up is pending; else as a futex sleeper. Returns the new word and whether
    /// it is the driver; `None` once shut down.
    pub(crate) fn announce(
        self,
        workers: u32,
        can_drive: bool,
        others_stuck: bool,
    ) -> Option<(Word, bool)> {
        if self.is_shutdown() {
            return None;
        }
        // The last awake worker: every other worker is counted in `sleepers`. (The driver
        // and any worker picked to wake are not counted there, so this also means nobody
        // spins, nobody is the driver, and no wake-up is pending.)
        let last = self.sleepers() + 1 == workers;
        let needed = self.0 & DRIVER_NEEDED != 0 || (others_stuck && !self.someone_looking());
        if can_drive && (last || (needed && !self.driver_present())) {
            Some((Word((self.0 | DRIVER) & !DRIVER_NEEDED), true))
        } else {
            Some((Word(self.0 + ONE_SLEEPER), false))
        }
    }

    /// The watchdog's transition: nobody has polled the reactor for a while although some
    /// worker is parked (so events and timers may be waiting), and no driver is parked. Sets
    /// `DRIVER_NEEDED`, so that the next worker to park blocks in the reactor even if another
    /// worker is awake (busy in a long poll), and, unless somebody is already looking for
    /// work (who will then be that worker), picks a futex sleeper to wake for it, bumping the
    /// epoch like any wake decision. `None`: nothing to change (a driver is there, the flag
    /// is set and nobody can be woken, or the runtime is stopping).
    pub(crate) fn need_driver(self) -> Option<(Word, Woke)> {
        if self.is_shutdown() || self.driver_present() {
            return None;
        }
        let flagged = Word(self.0 | DRIVER_NEEDED);
        if !self.someone_looking() && self.sleepers() > 0 {
            let w = Word((flagged.0 - ONE_SLEEPER) | WAKING).bump_epoch();
            Some((w, Woke::Sleeper))
        } else if flagged != self {
            Some((flagged, Woke::Nobody))
        } else {
            None
        }
    }

    /// The re-check after announcing found work: leave the parked state without blocking. A
    /// wake-up already decided for this kind of parker is taken in its place (it is fungible:
    /// the work it was meant for is what this worker is about to run).
    pub(crate) fn unannounce(self, as_driver: bool) -> Word {
        if as_driver {
            if self.0 & DRIVER != 0 {
                Word(self.0 & !DRIVER)
            } else {
                debug_assert!(self.0 & DRIVER_WAKING != 0);
                Word(self.0 & !DRIVER_WAKING)
            }
        } else if self.0 & WAKING != 0 {
            Word(self.0 & !WAKING)
        } else {
            debug_assert!(self.sleepers() > 0);
            Word(self.0 - ONE_SLEEPER)
        }
    }

    /// The driver returned from the reactor: it claims `DRIVER_WAKING` if it was picked, or
    /// clears `DRIVER` if it returned on its own (I/O, a timer, spuriously), and becomes a
    /// spinner. Nobody else ever claims the driver's wake-up. `None` once shut down.
    pub(crate) fn claim_driver(self) -> Option<Word> {
        if self.is_shutdown() {
            return None;
        }
        let w = if self.0 & DRIVER != 0 {
            self.0 & !DRIVER
        } else {
            debug_assert!(self.0 & DRIVER_WAKING != 0);
            self.0 & !DRIVER_WAKING
        };
        Some(Word(w + ONE_SPINNER))
    }

    /// A futex sleeper returned from `FUTEX_WAIT`; see [`Claim`].
    pub(crate) fn claim_sleeper(self) -> Claim {
        if self.is_shutdown() {
            Claim::Shutdown
        } else if self.0 & WAKING == 0 {
            Claim::NotPicked
        } else {
            Claim::Woken(Word((self.0 & !WAKING) + ONE_SPINNER))
        }
    }

    /// Stops the protocol. Changes the word (so no `FUTEX_WAIT` can block on an old value).
    pub(crate) fn shutdown(self) -> Word {
        Word(self.0 | SHUTDOWN)
    }
}

#[cfg(test)]
mod tests {
    //! Every word reachable from [`Word::EMPTY`] by up to four workers and any number of
    //! producers, found by a breadth-first walk over the transitions, with the invariants
    //! checked on each word and each step. Each worker's own state is tracked beside the word
    //! so that a transition is only tried by a worker that may make it; a worker that
    //! announced may un-announce at any point before it is picked, which over-approximates
    //! (the re-check happens only once, right after the announcement), so the invariants hold
    //! on a superset of the real states. The epoch is left out of the visited set (no
    //! transition reads it) and checked step by step instead.
    use super::*;
    use std::collections::{HashSet, VecDeque};

    /// What one worker is doing, as far as the word can tell.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    enum W {
        Awake,
        Spinning,
        Sleeper,
        Driver,
        /// Left at shutdown; a sleeper or driver that leaves stays counted in the word
        /// (nobody reads the counts after shutdown), so these remember where they were.
        Exited,
        ExitedSleeper,
        ExitedDriver,
    }

    type State = (u32, Vec<W>);

    fn key(w: Word, ws: &[W]) -> State {
        (w.0 & !(0x7ff << EPOCH_SHIFT), ws.to_vec())
    }

    /// The invariants every reachable word keeps, given which workers are where.
    fn check(w: Word, ws: &[W], workers: u32) {
        let count = |s: W| ws.iter().filter(|&&x| x == s).count() as u32;
        let count = |s: W| match s {
            W::Sleeper => count(s) + count(W::ExitedSleeper),
            W::Driver => count(s) + count(W::ExitedDriver),
            _ => count(s),
        };
        let picked = w.pending();
        // The fields count exactly the workers in each state.
        assert_eq!(w.spinners(), count(W::Spinning), "{w:?} {ws:?}");
        assert_eq!(
            w.sleepers() + (w.0 & WAKING != 0) as u32,
            count(W::Sleeper),
            "{w:?} {ws:?}"
        );
        assert!(count(W::Driver) <= 1, "two drivers: {ws:?}");
        assert_eq!(
            (w.0 & (DRIVER | DRIVER_WAKING) != 0) as u32,
            count(W::Driver),
            "{w:?} {ws:?}"
        );
        assert!(w.0 & DRIVER == 0 || w.0 & DRIVER_WAKING == 0, "{w:?}");
        // The flag asks for a driver; the worker that becomes one clears it.
        assert!(
            w.0 & DRIVER_NEEDED == 0 || count(W::Driver) == 0,
            "DRIVER_NEEDED beside a driver: {w:?} {ws:?}"
        );
        // The watch is wanted exactly when some worker is parked and another is not.
        let parked = count(W::Sleeper) - (w.0 & WAKING != 0) as u32 + (w.0 & DRIVER != 0) as u32;
        let exited = ws.iter().filter(|&&x| x == W::Exited).count() as u32;
        if !w.is_shutdown() {
            assert_eq!(exited, 0);
            assert_eq!(
                w.wants_watch(workers),
                parked > 0 && parked < workers,
                "{w:?} {ws:?}"
            );
        }
        assert!(
            w.sleepers() + w.spinners() + picked + w.driver_parked() as u32 <= workers,
            "{w:?} counts more than {workers} workers"
        );
    }

    /// Every step worker `i` (or a producer, or the owner's shutdown) can take from `(w, ws)`.
    fn steps(
        w: Word,
        ws: &[W],
        workers: u32,
        max_spinners: u32,
        can_drive: bool,
    ) -> Vec<(Word, Vec<W>, bool)> {
        let mut out = Vec::new();
        let mut with = |i: usize, s: W, nw: Word, decision: bool| {
            let mut v = ws.to_vec();
            v[i] = s;
            out.push((nw, v, decision));
        };
        for (i, &s) in ws.iter().enumerate() {
            match s {
                W::Awake => {
                    if let Some(nw) = w.start_spinning(max_spinners) {
                        with(i, W::Spinning, nw, false);
                    }
                    // Whether it saw another worker stuck is a hint from outside the word:
                    // both answers, at any time.
                    for stuck in [false, true] {
                        match w.announce(workers, can_drive, stuck) {
                            Some((nw, true)) => with(i, W::Driver, nw, false),
                            Some((nw, false)) => with(i, W::Sleeper, nw, false),
                            None => with(i, W::Exited, w, false),
                        }
                    }
                }
                W::Spinning => {
                    let nw = w.stop_spinning();
                    with(i, W::Awake, nw, false);
                    // A spinner that found work and sees more queued wakes one (chain wake).
                    if let Some((nw2, _)) = nw.pick() {
                        with(i, W::Awake, nw2, true);
                    }
                }
                W::Sleeper => {
                    if w.sleepers() > 0 || w.0 & WAKING != 0 {
                        with(i, W::Awake, w.unannounce(false), false);
                    }
                    match w.claim_sleeper() {
                        Claim::Shutdown => with(i, W::ExitedSleeper, w, false),
                        Claim::NotPicked => {}
                        Claim::Woken(nw) => with(i, W::Spinning, nw, false),
                    }
                }
                W::Driver => {
                    with(i, W::Awake, w.unannounce(true), false);
                    match w.claim_driver() {
                        Some(nw) => with(i, W::Spinning, nw, false),
                        None => with(i, W::ExitedDriver, w, false),
                    }
                }
                W::Exited | W::ExitedSleeper | W::ExitedDriver => {}
            }
        }
        if let Some((nw, _)) = w.pick() {
            out.push((nw, ws.to_vec(), true));
        }
        // The watchdog, at any time (it is a decision only when it picks a sleeper).
        if let Some((nw, who)) = w.need_driver() {
            out.push((nw, ws.to_vec(), who != Woke::Nobody));
        }
        if !w.is_shutdown() {
            out.push((w.shutdown(), ws.to_vec(), false));
        }
        out
    }

    /// Walks every reachable state; returns how many there were.
    fn explore(workers: u32, max_spinners: u32, can_drive: bool) -> usize {
        let start = (Word::EMPTY, vec![W::Awake; workers as usize]);
        let mut seen: HashSet<State> = HashSet::new();
        let mut queue = VecDeque::from([start]);
        while let Some((w, ws)) = queue.pop_front() {
            if !seen.insert(key(w, &ws)) {
                continue;
            }
            check(w, &ws, workers);
            for (nw, nws, decision) in steps(w, &ws, workers, max_spinners, can_drive) {
                if decision {
                    assert_ne!(nw.epoch(), w.epoch(), "a wake decision keeps the epoch");
                }
                // Only wake decisions move the epoch.
                assert!(decision || nw.epoch() == w.epoch());
                queue.push_back((nw, nws));
            }
        }
        seen.len()
    }

    #[test]
    fn invariants_hold_in_every_reachable_word() {
        for workers in 1..=4 {
            for max_spinners in 1..=workers {
                for can_drive in [false, true] {
                    let n = explore(workers, max_spinners, can_drive);
                    // A walk that explored almost nothing would check almost nothing.
                    assert!(n > 3 * workers as usize, "only {n} states for {workers}");
                }
            }
        }
    }

    #[test]
    fn pick_prefers_the_driver_and_only_wakes_when_nobody_looks() {
        let (w, driver) = Word::EMPTY.announce(2, true, false).unwrap();
        assert!(!driver, "another worker is awake: a futex sleeper");
        let (w, driver) = w.announce(2, true, false).unwrap();
        assert!(driver, "the last awake worker drives");
        let (w2, who) = w.pick().unwrap();
        assert_eq!(who, Woke::Driver);
        assert_ne!(w2.epoch(), w.epoch());
        assert_eq!(w2.pick(), None, "the picked driver is looking");
        let spinning = Word::EMPTY.announce(2, false, false).unwrap().0;
        let spinning = spinning.start_spinning(1).unwrap();
        assert_eq!(spinning.pick(), None, "a spinner is looking");
        assert_eq!(spinning.stop_spinning().pick().unwrap().1, Woke::Sleeper);
    }

    #[test]
    fn spinners_and_pending_wakes_are_capped() {
        let w = Word::EMPTY.start_spinning(1).unwrap();
        assert_eq!(w.start_spinning(1), None);
        let (w, _) = Word::EMPTY.announce(3, false, false).unwrap();
        let (w, _) = w.pick().unwrap();
        assert_eq!(
            w.start_spinning(1),
            None,
            "a pending wake-up counts as a spinner"
        );
        assert!(w.start_spinning(2).is_some());
    }

    #[test]
    fn the_watchdog_makes_the_next_parker_the_driver_beside_a_busy_worker() {
        // Worker A is busy (awake, not spinning); B parks as a futex sleeper: not the last.
        let (w, driver) = Word::EMPTY.announce(2, true, false).unwrap();
        assert!(!driver);
        assert!(w.wants_watch(2), "one parked, one awake");
        // The watchdog: nobody polled the reactor; it wakes B and asks for a driver.
        let (w, who) = w.need_driver().unwrap();
        assert_eq!(who, Woke::Sleeper);
        let Claim::Woken(w) = w.claim_sleeper() else {
            panic!("WAKING is set");
        };
        // B spins (polling the reactor), then parks again: now as the driver, with A awake.
        let (w, driver) = w.stop_spinning().announce(2, true, false).unwrap();
        assert!(driver, "DRIVER_NEEDED makes the next parker the driver");
        // It returns (an event), runs what came, and parks again beside the stuck worker:
        // seeing that worker stuck, it drives again without waiting for the watchdog.
        assert_eq!(w.need_driver(), None, "a driver is parked: nothing to do");
        let back = w.claim_driver().unwrap().stop_spinning();
        assert!(
            !back.announce(2, true, false).unwrap().1,
            "not the last, no flag"
        );
        assert!(
            back.announce(2, true, true).unwrap().1,
            "another worker is stuck"
        );
        // But not while somebody spins (it attends the reactor).
        let spinning3 = Word::EMPTY.start_spinning(2).unwrap();
        assert!(!spinning3.announce(3, true, true).unwrap().1);
        // Without a reactor there is nothing to drive: the flag waits for one.
        let (w, _) = Word::EMPTY.announce(2, false, false).unwrap();
        let (w, _) = w.need_driver().unwrap();
        let (w, _) = w
            .claim_sleeper_or_panic()
            .stop_spinning()
            .announce(2, false, false)
            .unwrap();
        assert!(!w.driver_parked());
        // A spinner is looking: the flag is set, nobody is woken.
        let spinning = Word::EMPTY
            .announce(3, true, false)
            .unwrap()
            .0
            .start_spinning(1)
            .unwrap();
        let (flagged, who) = spinning.need_driver().unwrap();
        assert_eq!(who, Woke::Nobody);
        assert_eq!(flagged.need_driver(), None, "already flagged");
        let (_, driver) = flagged.stop_spinning().announce(3, true, false).unwrap();
        assert!(driver);
    }

    impl Word {
        fn claim_sleeper_or_panic(self) -> Word {
            match self.claim_sleeper() {
                Claim::Woken(w) => w,
                c => panic!("expected a wake-up to claim, got {c:?}"),
            }
        }
    }

    #[test]
    fn shutdown_stops_parking_and_claims() {
        let (w, _) = Word::EMPTY.announce(2, false, false).unwrap();
        let w = w.shutdown();
        assert_ne!(w, Word::EMPTY.announce(2, false, false).unwrap().0);
        assert_eq!(w.announce(2, true, false), None);
        assert_eq!(w.start_spinning(2), None);
        assert_eq!(w.claim_sleeper(), Claim::Shutdown);
        assert_eq!(w.claim_driver(), None);
        assert_eq!(w.pick(), None);
        assert_eq!(w.need_driver(), None);
        assert!(!w.wants_watch(2));
    }

    #[test]
    fn a_sleeper_not_picked_waits_again() {
        let (w, _) = Word::EMPTY.announce(3, false, false).unwrap();
        let (w, _) = w.announce(3, false, false).unwrap();
        let (w, _) = w.pick().unwrap();
        let Claim::Woken(after) = w.claim_sleeper() else {
            panic!("WAKING is set");
        };
        assert_eq!(after.claim_sleeper(), Claim::NotPicked);
        assert_eq!((after.sleepers(), after.spinners()), (1, 1));
    }
}
