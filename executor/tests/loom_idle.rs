//! Model checks of the idle protocol (`src/idle/`) with `loom`.
//!
//! Run with: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p spinpark-executor
//! --test loom_idle --release`. Each test models workers (threads that take items from a
//! counter standing in for the queues) and producers (threads that add an item, then notify).
//! A lost wake-up shows up as loom's deadlock report: every thread blocked, items left over.
//!
//! The last groups (`Reactor`, `reactor_worker`) model spinpark-net's reactor as the workers
//! meet it: spinners poll it, the driver blocks in it, and tasks register a timer in it. Its
//! `shared_wake_*` tests run the same models against the reactor as it once was (the driver's
//! wake-up in the epoll set that spinners poll) and expect loom's deadlock
//! report: they show that these models can fail. The `busy_worker_*` models add a worker
//! that never returns from its task and the watchdog thread; their twins without the
//! watchdog are the protocol before it existed, and deadlock. The last group (`Runq`) models
//! the queues as the scheduler has them, an injector and a queue per worker with batch
//! steals, beside workers whose first task blocks them for good: what a worker that stops
//! looking for work must re-check (`src/idle/mod.rs`, "Every queue").
#![cfg(loom)]

use loom::sync::atomic::{
    AtomicBool, AtomicU8, AtomicUsize,
    Ordering::{Acquire, Release, SeqCst},
};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use spinpark_executor::loom_model::{Model, Outcome};

/// Stands in for the run queues.
struct Queue {
    items: AtomicUsize,
    consumed: AtomicUsize,
    total: usize,
}

impl Queue {
    fn new(total: usize) -> Arc<Self> {
        Arc::new(Self {
            items: AtomicUsize::new(0),
            consumed: AtomicUsize::new(0),
            total,
        })
    }
    fn take(&self) -> bool {
        let mut n = self.items.load(SeqCst);
        while n > 0 {
            match self.items.compare_exchange(n, n - 1, SeqCst, SeqCst) {
                Ok(_) => return true,
                Err(a) => n = a,
            }
        }
        false
    }
    fn push(&self) {
        self.items.fetch_add(1, SeqCst);
    }
}

/// Where the wake-up that `unpark` writes (the eventfd) can be collected.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wake {
    /// In the epoll set that every poller reads, as spinpark-net once had it: a
    /// spinner's zero-timeout poll can take the wake-up meant for the parked driver, which then
    /// finds nothing and blocks again with its old timeout.
    Shared,
    /// Only the parked driver sees it (spinpark-net now: the eventfd is not in the epoll set
    /// that `poll` reads, only in what `park` waits on).
    DriverOnly,
}

/// `park_deadline` values: no worker in `park`; parked until a timer; parked without one.
const NOT_PARKED: u8 = 0;
const FINITE: u8 = 1;
const INFINITE: u8 = 2;

/// A model of spinpark-net's reactor (`net/src/reactor.rs`) as far as the idle protocol can
/// tell: no I/O sources, one timer, and the eventfd wake-up.
///
/// * `unpark` sets the coalescing flag and, if it was clear, makes the eventfd ready (`edge`).
/// * `poll` (a spinner's zero-timeout `epoll_wait`) takes a ready edge and clears the flag, if
///   the edge is in the shared set ([`Wake::Shared`]); it never fires the timer (a spin window
///   is microseconds, a timer milliseconds).
/// * `park` publishes its deadline, computes its timeout from the timer, and waits for the
///   edge. With a deadline the wait ends by itself (time passes: the timer fires); without
///   one it re-blocks whenever it finds nothing, as `epoll_wait` does when another poller
///   took the event it was woken for.
/// * `add_timer` registers the timer and unparks a driver parked without a deadline.
struct Reactor {
    wake: Wake,
    unparked: AtomicBool,
    /// The eventfd's readiness in the set it is registered in.
    edge: Mutex<bool>,
    cond: Condvar,
    /// A registered timer that has not fired.
    armed: Mutex<bool>,
    park_deadline: AtomicU8,
}

impl Reactor {
    fn new(wake: Wake) -> Self {
        Self {
            wake,
            unparked: AtomicBool::new(false),
            edge: Mutex::new(false),
            cond: Condvar::new(),
            armed: Mutex::new(false),
            park_deadline: AtomicU8::new(NOT_PARKED),
        }
    }

    fn unpark(&self) {
        if !self.unparked.swap(true, SeqCst) {
            *self.edge.lock().unwrap() = true;
            self.cond.notify_all();
        }
    }

    /// A zero-timeout poll.
    fn poll(&self) {
        if self.wake == Wake::Shared {
            let mut edge = self.edge.lock().unwrap();
            if *edge {
                *edge = false;
                self.unparked.store(false, SeqCst);
            }
        }
    }

    fn deadline(&self) -> u8 {
        if *self.armed.lock().unwrap() {
            FINITE
        } else {
            INFINITE
        }
    }

    /// Blocks as the driver; returns whether the timer fired.
    fn park(&self) -> bool {
        // As `NetDriver::park`: publish the deadline, then compute the timeout.
        self.park_deadline.store(self.deadline(), SeqCst);
        let deadline = self.deadline();
        let mut edge = self.edge.lock().unwrap();
        let timed_out = loop {
            if *edge {
                *edge = false;
                self.unparked.store(false, SeqCst);
                break false;
            }
            if deadline == FINITE {
                break true;
            }
            edge = self.cond.wait(edge).unwrap();
        };
        drop(edge);
        let fired = timed_out && std::mem::take(&mut *self.armed.lock().unwrap());
        self.park_deadline.store(NOT_PARKED, SeqCst);
        fired
    }

    /// `Timers::insert` then `Reactor::timer_added`.
    fn add_timer(&self) {
        *self.armed.lock().unwrap() = true;
        if self.park_deadline.load(SeqCst) == INFINITE {
            self.unpark();
        }
    }
}

/// A worker: run items; when out of them, spin once (if allowed), then park. The worker that
/// consumes the last item shuts the model down, as the runtime's owner would.
fn worker(m: &Model, q: &Queue, driver: Option<&Reactor>) {
    let mut spinning = false;
    loop {
        if q.take() {
            if spinning {
                m.stop_spinning(
                    true,
                    || q.items.load(SeqCst) > 0,
                    || driver.unwrap().unpark(),
                );
                spinning = false;
            }
            if q.consumed.fetch_add(1, SeqCst) + 1 == q.total {
                m.shutdown(|| {
                    if let Some(d) = driver {
                        d.unpark()
                    }
                });
            }
            continue;
        }
        if spinning {
            m.stop_spinning(false, || false, || {});
            spinning = false;
        } else if m.try_start_spinning() {
            spinning = true;
            continue;
        }
        let mut drive = || {
            driver.unwrap().park();
        };
        let drive: Option<&mut dyn FnMut()> = match driver {
            Some(_) => Some(&mut drive),
            None => None,
        };
        match m.park(|| q.items.load(SeqCst) > 0, drive) {
            Outcome::Work => {}
            Outcome::Woken => spinning = true,
            Outcome::Shutdown => return,
            Outcome::DriverAppeared => unreachable!("the driver is fixed"),
        }
    }
}

/// Pushes `items` at once (a burst, like a reactor turn that woke several tasks), then
/// notifies once.
fn producer(m: &Model, q: &Queue, driver: Option<&Reactor>, items: usize) {
    for _ in 0..items {
        q.push();
    }
    m.notify(|| driver.unwrap().unpark());
}

fn run(workers: usize, max_spinners: usize, producers: usize, with_driver: bool) {
    run_burst(workers, max_spinners, producers, 1, with_driver)
}

fn run_burst(
    workers: usize,
    max_spinners: usize,
    producers: usize,
    burst: usize,
    with_driver: bool,
) {
    loom::model(move || {
        let m = Arc::new(Model::new(workers, max_spinners));
        let q = Queue::new(producers * burst);
        let d = with_driver.then(|| Arc::new(Reactor::new(Wake::DriverOnly)));
        let mut threads = Vec::new();
        for _ in 0..workers {
            let (m, q, d) = (m.clone(), q.clone(), d.clone());
            threads.push(thread::spawn(move || worker(&m, &q, d.as_deref())));
        }
        for _ in 0..producers {
            let (m, q, d) = (m.clone(), q.clone(), d.clone());
            threads.push(thread::spawn(move || producer(&m, &q, d.as_deref(), burst)));
        }
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(q.consumed.load(SeqCst), producers * burst);
        assert_eq!(q.items.load(SeqCst), 0);
    });
}

/// A spawn from outside races the only worker going to sleep.
#[test]
fn outside_spawn_vs_last_worker_parking() {
    run(1, 1, 1, false);
}

/// The same, where the last worker to park blocks in the reactor.
#[test]
fn outside_spawn_vs_last_worker_parking_in_the_driver() {
    run(1, 1, 1, true);
}

/// Two workers, one burst of two items with a single notify: the worker that is woken takes
/// one item while the other is queued, and must make sure somebody takes the second (the
/// chain wake), with one worker parked in the reactor.
#[test]
fn chain_wake_with_driver() {
    run_burst(2, 1, 1, 2, true);
}

/// The same on the futex only.
#[test]
fn chain_wake_futex_only() {
    run_burst(2, 1, 1, 2, false);
}

/// Two workers on the futex only.
#[test]
fn two_workers_two_producers_futex_only() {
    run(2, 1, 2, false);
}

/// A producer sees a spinner and relies on it; the spinner gives up at the same time.
#[test]
fn wake_while_spinning() {
    loom::model(|| {
        let m = Arc::new(Model::new(1, 1));
        let q = Queue::new(1);
        assert!(m.try_start_spinning());
        let (m2, q2) = (m.clone(), q.clone());
        let p = thread::spawn(move || producer(&m2, &q2, None, 1));
        // The spinner's window ends without it seeing the item...
        m.stop_spinning(false, || false, || {});
        // ...so it parks, and must not sleep through the item.
        let mut spinning = false;
        loop {
            if q.take() {
                if spinning {
                    m.stop_spinning(true, || false, || {});
                }
                break;
            }
            if spinning {
                m.stop_spinning(false, || false, || {});
                spinning = false;
            }
            match m.park(|| q.items.load(SeqCst) > 0, None) {
                Outcome::Work => {}
                Outcome::Woken => spinning = true,
                Outcome::Shutdown => unreachable!(),
                Outcome::DriverAppeared => unreachable!("the driver is fixed"),
            }
        }
        p.join().unwrap();
        assert_eq!(m.snapshot(), (0, 0, false));
    });
}

/// Shutdown races a worker parking: the worker always returns.
#[test]
fn shutdown_vs_park() {
    loom::model(|| {
        let m = Arc::new(Model::new(2, 1));
        let d = Arc::new(Reactor::new(Wake::DriverOnly));
        let mut ts = Vec::new();
        for _ in 0..2 {
            let (m, d) = (m.clone(), d.clone());
            ts.push(thread::spawn(move || {
                let mut drive = || {
                    d.park();
                };
                loop {
                    match m.park(|| false, Some(&mut drive)) {
                        Outcome::Shutdown => return,
                        Outcome::DriverAppeared => unreachable!("the driver is fixed"),
                        Outcome::Woken => m.stop_spinning(false, || false, || {}),
                        Outcome::Work => unreachable!(),
                    };
                }
            }));
        }
        m.shutdown(|| d.unpark());
        for t in ts {
            t.join().unwrap();
        }
    });
}

/// The run queues and the tasks of the reactor models. A task's first run may register the
/// timer (`timer_task`); the timer's firing queues the same task again, and its second run
/// completes it. The run that completes the last task shuts the model down.
struct Tasks {
    items: AtomicUsize,
    runs: AtomicUsize,
    total_runs: usize,
    timer_task: bool,
}

impl Tasks {
    fn take(&self) -> bool {
        let mut n = self.items.load(SeqCst);
        while n > 0 {
            match self.items.compare_exchange(n, n - 1, SeqCst, SeqCst) {
                Ok(_) => return true,
                Err(a) => n = a,
            }
        }
        false
    }

    fn run(&self, m: &Model, r: &Reactor) {
        let n = self.runs.fetch_add(1, SeqCst) + 1;
        if self.timer_task && n == 1 {
            // `sleep(..).await`: the first poll registers the timer.
            r.add_timer();
        }
        if n == self.total_runs {
            m.shutdown(|| r.unpark());
        }
    }

    /// The driver's `park`: when the timer fires, its waker queues the task (from this worker,
    /// which is still the parked driver in the word) and notifies.
    fn drive(&self, m: &Model, r: &Reactor) {
        if r.park() {
            self.items.fetch_add(1, SeqCst);
            m.notify(|| r.unpark());
        }
    }
}

/// A worker as `scheduler/worker.rs` runs it: run tasks; out of them, spin (scan the queues, then poll
/// the reactor) for one iteration if allowed, then park, with the re-check taking a task as
/// `next_task` does.
fn reactor_worker(m: &Model, t: &Tasks, r: &Reactor) {
    loop {
        while t.take() {
            t.run(m, r);
        }
        let mut spinning = m.try_start_spinning();
        loop {
            if spinning {
                if t.take() {
                    m.stop_spinning(true, || t.items.load(SeqCst) > 0, || r.unpark());
                    t.run(m, r);
                    break;
                }
                r.poll();
                m.attend();
                m.stop_spinning(false, || false, || {});
            }
            let mut drive = || t.drive(m, r);
            match m.park(|| t.take(), Some(&mut drive)) {
                Outcome::Work => {
                    t.run(m, r);
                    break;
                }
                Outcome::Woken => spinning = true,
                Outcome::Shutdown => return,
                Outcome::DriverAppeared => unreachable!("the driver is fixed"),
            }
        }
    }
}

/// Two workers (both may spin) beside the reactor model, and one outside thread that queues
/// `tasks` tasks one after the other, notifying after each. With `timer_task`, the first task
/// sleeps once.
fn run_reactor(wake: Wake, tasks: usize, timer_task: bool) {
    loom::model(move || {
        // `std`'s Arc, not loom's: when loom reports a deadlock it unwinds the blocked threads,
        // and dropping a loom Arc there panics again and aborts the whole test binary, which
        // the `should_panic` tests below must survive.
        let m = std::sync::Arc::new(Model::new(2, 2));
        let r = std::sync::Arc::new(Reactor::new(wake));
        let t = std::sync::Arc::new(Tasks {
            items: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
            total_runs: tasks + timer_task as usize,
            timer_task,
        });
        let mut threads = Vec::new();
        for _ in 0..2 {
            let (m, t, r) = (m.clone(), t.clone(), r.clone());
            threads.push(thread::spawn(move || reactor_worker(&m, &t, &r)));
        }
        let (m2, t2, r2) = (m.clone(), t.clone(), r.clone());
        threads.push(thread::spawn(move || {
            for _ in 0..tasks {
                t2.items.fetch_add(1, SeqCst);
                m2.notify(|| r2.unpark());
            }
        }));
        for th in threads {
            th.join().unwrap();
        }
        assert_eq!(t.runs.load(SeqCst), t.total_runs);
        assert!(!*r.armed.lock().unwrap(), "the timer never fired");
    });
}

/// The interleaving that lost a timer when the wake-up was in the shared set: worker A's re-check takes the task while B parks as the driver
/// without a deadline; the task registers a timer, whose unpark A's next spin may poll up.
#[test]
fn timer_registered_beside_parked_driver() {
    run_reactor(Wake::DriverOnly, 1, true);
}

/// A worker awake (its re-check found work) beside a driver parked in the reactor, in general:
/// two plain tasks queued one after the other, so a notify may pick the parked driver while
/// the other worker runs the first task, spins and polls, and the second task needs the
/// driver that notify picked.
#[test]
fn awake_worker_beside_parked_driver() {
    run_reactor(Wake::DriverOnly, 2, false);
}

/// The same two models against the reactor as it once was (the wake-up in the
/// shared epoll set): loom must find the lost wake-up, reported as a deadlock (both workers
/// blocked, the task or its timer never run). These show that the models can fail.
#[test]
#[should_panic(expected = "deadlock")]
fn shared_wake_loses_the_timer() {
    run_reactor(Wake::Shared, 1, true);
}

/// See [`shared_wake_loses_the_timer`].
#[test]
#[should_panic(expected = "deadlock")]
fn shared_wake_loses_the_notify() {
    run_reactor(Wake::Shared, 2, false);
}

/// A spinner found work (task T1, taken before the model starts) while a producer
/// pushes T2 and, seeing the spinner, wakes nobody. The spinner then runs T1 "forever" (it
/// never looks at the queues again), so T2 must reach the other worker, parked on the futex.
/// `stale_more` reads "more work queued" before the spinner removes itself, as the protocol
/// once did; otherwise the read happens after the removal, inside `stop_spinning`.
fn found_work_then_more(stale_more: bool) {
    loom::model(move || {
        // `std`'s Arc: see `run_reactor`.
        let m = std::sync::Arc::new(Model::new(2, 1));
        let q = std::sync::Arc::new(Queue {
            items: AtomicUsize::new(0),
            consumed: AtomicUsize::new(0),
            total: 1,
        });
        assert!(m.try_start_spinning());
        let (m1, q1) = (m.clone(), q.clone());
        let spinner = thread::spawn(move || {
            if stale_more {
                let more = q1.items.load(SeqCst) > 0;
                m1.stop_spinning(true, || more, || {});
            } else {
                m1.stop_spinning(true, || q1.items.load(SeqCst) > 0, || {});
            }
            // ...and runs T1, which never ends as far as T2 is concerned.
        });
        let (m2, q2) = (m.clone(), q.clone());
        let other = thread::spawn(move || {
            // The other worker: parked until it runs T2.
            let mut spinning = false;
            loop {
                if q2.take() {
                    if spinning {
                        m2.stop_spinning(true, || false, || {});
                    }
                    return;
                }
                if spinning {
                    m2.stop_spinning(false, || false, || {});
                    spinning = false;
                }
                match m2.park(|| q2.items.load(SeqCst) > 0, None) {
                    Outcome::Work => {}
                    Outcome::Woken => spinning = true,
                    Outcome::Shutdown => unreachable!(),
                    Outcome::DriverAppeared => unreachable!("the driver is fixed"),
                }
            }
        });
        q.push();
        m.notify(|| {});
        spinner.join().unwrap();
        other.join().unwrap();
        assert_eq!(q.items.load(SeqCst), 0);
    });
}

/// The spinner's re-check after removing itself: T2 always reaches the parked worker.
#[test]
fn found_work_then_more_queued() {
    found_work_then_more(false);
}

/// The old order (read "more queued", then remove): loom finds T2 stranded behind
/// T1 with the other worker asleep, reported as a deadlock. Shows the model can fail.
#[test]
#[should_panic(expected = "deadlock")]
fn more_read_before_the_cas_strands_work() {
    found_work_then_more(true);
}

/// Worker A runs a task that does not return until task T2 has run (a CPU loop or a
/// blocking call, as far as the runtime can tell: it never polls the reactor or the queues,
/// and never parks). T2 waits on a timer. Worker B parks beside it: not the last awake
/// worker, so on the futex, not in the reactor. `a_spins_first`: A was spinning when B
/// parked, and then found the task (the spinner that picked up a request whose handler
/// blocks). With `watchdog`, the watchdog thread runs beside them (`scheduler/watchdog.rs`); without
/// it, this is the protocol as it was before the watchdog.
fn busy_worker(watchdog: bool, a_spins_first: bool) {
    loom::model(move || {
        // `std`'s Arc: see `run_reactor`.
        let m = std::sync::Arc::new(Model::new(2, 2));
        let r = std::sync::Arc::new(Reactor::new(Wake::DriverOnly));
        let t = std::sync::Arc::new(Tasks {
            items: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
            total_runs: 1,
            timer_task: false,
        });
        // T2 already waits on its timer.
        r.add_timer();
        let t2_ran = std::sync::Arc::new((Mutex::new(false), Condvar::new()));
        if a_spins_first {
            assert!(m.try_start_spinning());
        }
        let mut threads = Vec::new();
        {
            let (m, t2_ran) = (m.clone(), t2_ran.clone());
            threads.push(thread::spawn(move || {
                if a_spins_first {
                    // It attended the reactor while it spun, then found the task. Spinning
                    // attends every iteration, but a spinner can be preempted: let one period
                    // pass meanwhile.
                    m.time_passes(1);
                    m.attend();
                    m.stop_spinning(true, || false, || {});
                }
                // The task: holds the worker until T2 ran, while periods pass.
                m.time_passes(2);
                let (lock, cond) = &*t2_ran;
                let mut ran = lock.lock().unwrap();
                while !*ran {
                    ran = cond.wait(ran).unwrap();
                }
            }));
        }
        {
            let (m, t, r, t2_ran) = (m.clone(), t.clone(), r.clone(), t2_ran.clone());
            threads.push(thread::spawn(move || {
                reactor_worker(&m, &t, &r);
                // Shut down after T2 ran: tell A its task may return.
                let (lock, cond) = &*t2_ran;
                *lock.lock().unwrap() = true;
                cond.notify_all();
            }));
        }
        if watchdog {
            let m = m.clone();
            threads.push(thread::spawn(move || {
                m.watchdog();
            }));
        }
        for th in threads {
            th.join().unwrap();
        }
        assert_eq!(t.runs.load(SeqCst), 1, "T2 never ran");
        assert!(!*r.armed.lock().unwrap(), "the timer never fired");
    });
}

/// The watchdog wakes B to drive the reactor: the timer fires and T2 runs.
#[test]
fn busy_worker_beside_a_parked_one_timer_fires() {
    busy_worker(true, false);
}

/// The same when A was spinning (attending the reactor) while B parked.
#[test]
fn busy_worker_after_spinning_timer_fires() {
    busy_worker(true, true);
}

/// Without the watchdog (the protocol as it was before it) nobody drives the reactor while A is
/// busy: loom finds both threads blocked for ever. Shows the model can fail.
#[test]
#[should_panic(expected = "deadlock")]
fn busy_worker_without_the_watchdog_loses_the_timer() {
    busy_worker(false, false);
}

/// See [`busy_worker_without_the_watchdog_loses_the_timer`], with A spinning first.
#[test]
#[should_panic(expected = "deadlock")]
fn busy_worker_after_spinning_without_the_watchdog_loses_the_timer() {
    busy_worker(false, true);
}

/// The reactor is installed (by a thread that is not a worker, as `block_on`'s future making
/// the first socket) while the only worker spins and parks; the installer then registers a
/// timer and waits for it to fire, which needs somebody blocked in the reactor. The worker
/// looks for the reactor before it parks (`drive` or not), as the worker loop does; with
/// `second_look` it also takes the look the protocol makes after its announcement.
fn driver_installed_while_the_last_worker_parks(second_look: bool) {
    loom::model(move || {
        let m = std::sync::Arc::new(Model::new(1, 1));
        let r = std::sync::Arc::new(Reactor::new(Wake::DriverOnly));
        // The reactor's slot (`OnceLock::set` is a release store, `get` an acquire load).
        let installed = std::sync::Arc::new(AtomicBool::new(false));
        let fired = std::sync::Arc::new((Mutex::new(false), Condvar::new()));
        let worker = {
            let (m, r, installed, fired) = (m.clone(), r.clone(), installed.clone(), fired.clone());
            thread::spawn(move || {
                let mut spinning = m.try_start_spinning();
                loop {
                    if spinning {
                        // One spin iteration finds nothing (no tasks in this model).
                        m.stop_spinning(false, || false, || {});
                    }
                    let has_driver = installed.load(Acquire);
                    let mut timer_fired = false;
                    let mut drive = || timer_fired = r.park();
                    let drive: Option<&mut dyn FnMut()> = match has_driver {
                        true => Some(&mut drive),
                        false => None,
                    };
                    let out =
                        m.park_or_retry(|| false, drive, || second_look && installed.load(Acquire));
                    if timer_fired {
                        let (lock, cond) = &*fired;
                        *lock.lock().unwrap() = true;
                        cond.notify_all();
                    }
                    match out {
                        Outcome::Shutdown => return,
                        Outcome::Woken => spinning = true,
                        Outcome::DriverAppeared => spinning = false,
                        Outcome::Work => unreachable!("no tasks in this model"),
                    }
                }
            })
        };
        // The installer: `Scheduler::driver_or_install`, then a task's first `Sleep` poll.
        installed.store(true, Release);
        loom::sync::atomic::fence(SeqCst);
        m.notify(|| r.unpark());
        r.add_timer();
        {
            let (lock, cond) = &*fired;
            let mut done = lock.lock().unwrap();
            while !*done {
                done = cond.wait(done).unwrap();
            }
        }
        m.shutdown(|| r.unpark());
        worker.join().unwrap();
    });
}

/// The worker that parked unable to drive looks again after its announcement: it parks
/// again as the driver, and the timer fires.
#[test]
fn driver_installed_while_the_last_worker_parks_timer_fires() {
    driver_installed_while_the_last_worker_parks(true);
}

/// Without the second look (the protocol before it), the installer may find nobody to wake
/// while the worker, having looked too early, sleeps on the futex: nobody drives, and loom
/// finds both threads blocked for ever. Shows the model can fail.
#[test]
#[should_panic(expected = "deadlock")]
fn driver_installed_without_the_second_look_loses_the_timer() {
    driver_installed_while_the_last_worker_parks(false);
}

/// `block_in_place`'s handoff: the worker loop of one place, as `run_place` runs it, on
/// whichever thread holds the place. Running the last item sets `done` and shuts down.
fn place_loop(m: &Model, q: &Queue, done: &(Mutex<bool>, Condvar)) {
    let mut spinning = false;
    loop {
        if q.take() {
            if spinning {
                m.stop_spinning(true, || q.items.load(SeqCst) > 0, || {});
                spinning = false;
            }
            if q.consumed.fetch_add(1, SeqCst) + 1 == q.total {
                *done.0.lock().unwrap() = true;
                done.1.notify_all();
                m.shutdown(|| {});
            }
            continue;
        }
        if spinning {
            m.stop_spinning(false, || false, || {});
            spinning = false;
        } else if m.try_start_spinning() {
            spinning = true;
            continue;
        }
        match m.park(|| q.items.load(SeqCst) > 0, None) {
            Outcome::Work => {}
            Outcome::Woken => spinning = true,
            Outcome::Shutdown => return,
            Outcome::DriverAppeared => unreachable!("no reactor here"),
        }
    }
}

/// The runtime's only worker runs a task that spawns a second one and then blocks in place
/// until that one has run (`rx.recv()` inside `block_in_place`). The spawn's notify finds the
/// worker awake and wakes nobody; so the second task runs only if the worker's place went to
/// another thread, which goes on in the worker loop from where the blocked thread left it,
/// with the idle word unchanged (the worker stays awake across the move). With `hand_off`
/// false the blocked worker keeps its place, as before `block_in_place` existed: deadlock.
fn run_block_in_place(hand_off: bool) {
    loom::model(move || {
        // `std`'s Arcs, not loom's (see `run_reactor`: the deadlock twin must unwind).
        let m = std::sync::Arc::new(Model::new(1, 1));
        let q = std::sync::Arc::new(Queue {
            items: AtomicUsize::new(0),
            consumed: AtomicUsize::new(0),
            total: 2,
        });
        let done = std::sync::Arc::new((Mutex::new(false), Condvar::new()));
        let place = std::sync::Arc::new(Mutex::new(false));
        // The first task, queued before the worker looks.
        q.push();
        let (m1, q1, done1, place1) = (m.clone(), q.clone(), done.clone(), place.clone());
        let a = thread::spawn(move || {
            assert!(q1.take());
            q1.consumed.fetch_add(1, SeqCst);
            // The task spawns the second one (a push and a notify from the worker).
            q1.push();
            m1.notify(|| {});
            let mut b = None;
            if hand_off {
                *place1.lock().unwrap() = true;
                let (m2, q2, done2, place2) =
                    (m1.clone(), q1.clone(), done1.clone(), place1.clone());
                b = Some(thread::spawn(move || {
                    let took = std::mem::replace(&mut *place2.lock().unwrap(), false);
                    if took {
                        place_loop(&m2, &q2, &done2);
                    }
                }));
            }
            // The blocking closure: wait until the second task has run.
            let mut ran = done1.0.lock().unwrap();
            while !*ran {
                ran = done1.1.wait(ran).unwrap();
            }
            drop(ran);
            // Back: take the place again if nobody took it, and go on as the worker.
            let kept = !hand_off || std::mem::replace(&mut *place1.lock().unwrap(), false);
            if kept {
                place_loop(&m1, &q1, &done1);
            }
            if let Some(b) = b {
                b.join().unwrap();
            }
        });
        a.join().unwrap();
        assert_eq!(q.consumed.load(SeqCst), 2);
    });
}

#[test]
fn block_in_place_hands_the_place_to_another_thread() {
    run_block_in_place(true);
}

/// Without the handoff, the blocked worker's task waits for a task that nobody runs.
#[test]
#[should_panic]
fn block_in_place_without_handoff_deadlocks() {
    run_block_in_place(false);
}

/// The run queues as the scheduler has them (`src/idle/mod.rs`, "Every queue"), as counts:
/// the injector and one queue per worker. A worker looks in its own queue, then takes half of
/// the injector, then half of another worker's queue, rounding up (crossbeam's
/// `steal_batch_and_pop`, on the injector and on a stealer alike: one task to run and the rest
/// of the half into the thief's queue). A batch leaves its queue before it lands in the
/// thief's, as in crossbeam, whose thief publishes its queue's new back only after taking the
/// tasks off the other.
struct Runq {
    injector: AtomicUsize,
    local: Vec<AtomicUsize>,
    /// Tasks that started; each blocks its worker for good.
    started: AtomicUsize,
    total: usize,
}

/// What the scheduler does around the idle protocol: whether a worker that stops looking
/// for work re-checks `every_queue` (or only its own and the injector, as it once did),
/// whether a busy worker notifies after a batch left tasks in its queue (`tell_moves`), and
/// whether a parker whose re-check found work re-checks after its un-announcement
/// (`after_unannounce`).
#[derive(Clone, Copy)]
struct Rules {
    every_queue: bool,
    tell_moves: bool,
    after_unannounce: bool,
}

/// The scheduler as it is.
const RULES: Rules = Rules {
    every_queue: true,
    tell_moves: true,
    after_unannounce: true,
};

impl Runq {
    fn new(workers: usize, total: usize) -> Self {
        Self {
            injector: AtomicUsize::new(0),
            local: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            started: AtomicUsize::new(0),
            total,
        }
    }

    /// Takes half of `from`, rounded up; returns how many (0: it was empty).
    fn take_off(from: &AtomicUsize) -> usize {
        let mut n = from.load(SeqCst);
        while n > 0 {
            let k = n.div_ceil(2);
            match from.compare_exchange(n, n - k, SeqCst, SeqCst) {
                Ok(_) => return k,
                Err(a) => n = a,
            }
        }
        0
    }

    /// Worker `me` looks for a task (`Worker::take_task`): `Some(moved)` when it took one and
    /// moved `moved` more into its own queue.
    fn take(&self, me: usize) -> Option<usize> {
        let own = &self.local[me];
        let mut n = own.load(SeqCst);
        while n > 0 {
            match own.compare_exchange(n, n - 1, SeqCst, SeqCst) {
                Ok(_) => return Some(0),
                Err(a) => n = a,
            }
        }
        let workers = self.local.len();
        let mut k = Self::take_off(&self.injector);
        for v in (1..workers).map(|d| (me + d) % workers) {
            if k > 0 {
                break;
            }
            k = Self::take_off(&self.local[v]);
        }
        if k == 0 {
            return None;
        }
        if k > 1 {
            self.local[me].fetch_add(k - 1, SeqCst);
        }
        Some(k - 1)
    }

    /// The re-check of a worker that stops looking for work (`Worker::more_work_queued`).
    fn more(&self, me: usize, every_queue: bool) -> bool {
        self.injector.load(SeqCst) > 0
            || if every_queue {
                self.local.iter().any(|q| q.load(SeqCst) > 0)
            } else {
                self.local[me].load(SeqCst) > 0
            }
    }

    /// A task starts, and blocks its worker for good; the last one shuts the model down.
    fn start(&self, m: &Model) {
        if self.started.fetch_add(1, SeqCst) + 1 == self.total {
            m.shutdown(|| {});
        }
    }
}

/// Worker `me`, whose first task blocks it for good (a sleep loop, as far as the runtime can
/// tell): it looks for work as the worker loop does, starting busy (between two tasks) or,
/// if `spinning`, as a spinner (the caller counted it), and once it took a task it never looks
/// at the queues again.
fn blocking_worker(m: &Model, q: &Runq, me: usize, rules: Rules, mut spinning: bool) {
    loop {
        if let Some(moved) = q.take(me) {
            if spinning {
                m.stop_spinning(true, || q.more(me, rules.every_queue), || {});
            } else if moved > 0 && rules.tell_moves {
                // Busy: the batch it moved is a push (`Worker::next_task`).
                m.notify(|| {});
            }
            q.start(m);
            return;
        }
        if spinning {
            // Its window ran out; it parks next.
            m.stop_spinning(false, || false, || {});
        } else if m.try_start_spinning() {
            spinning = true;
            continue;
        }
        let more = || rules.after_unannounce && q.more(me, rules.every_queue);
        match m.park_checking(|| q.take(me).is_some(), more, || {}, None) {
            Outcome::Work => {
                q.start(m);
                return;
            }
            Outcome::Woken => spinning = true,
            Outcome::Shutdown => return,
            Outcome::DriverAppeared => unreachable!("no reactor here"),
        }
    }
}

/// Tasks spawned at once from `block_on`, each blocking its worker: a burst of three in the
/// injector, one notify, which sees worker 0 spinning. Worker 0 may take half of the burst
/// (two: one to run, one into its queue) and wake a parked worker for the rest; the one
/// woken may take the third from the injector, and then has nothing in its own queue or the
/// injector: only a look at worker 0's queue sees the second.
fn batch_taken(rules: Rules) {
    loom::model(move || {
        // `std`'s Arc: see `run_reactor`.
        let m = std::sync::Arc::new(Model::new(3, 1));
        let q = std::sync::Arc::new(Runq::new(3, 3));
        assert!(m.try_start_spinning());
        let mut threads = Vec::new();
        for me in 0..3 {
            let (m, q) = (m.clone(), q.clone());
            threads.push(thread::spawn(move || {
                blocking_worker(&m, &q, me, rules, me == 0)
            }));
        }
        q.injector.fetch_add(3, SeqCst);
        m.notify(|| {});
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(q.started.load(SeqCst), 3);
    });
}

#[test]
fn batch_taken_then_more_queued() {
    batch_taken(RULES);
}

/// The re-check as it was (its own queue and the injector): the second task waits behind
/// worker 0's for good while worker 2 sleeps, reported as a deadlock. Shows the model fails.
#[test]
#[should_panic(expected = "deadlock")]
fn batch_taken_own_queue_only_strands_work() {
    batch_taken(Rules {
        every_queue: false,
        ..RULES
    });
}

/// A spinner (worker 0) found a task and stops looking while a producer's three tasks, left
/// to it, move: worker 1, busy between tasks, takes half of them from the injector as a
/// batch, runs one and keeps the other in its queue. The batch is off the injector before it
/// is in worker 1's queue, so the spinner's re-check may see neither of them (only the third,
/// still in the injector, which worker 2 may then take); worker 3 is parked.
fn batch_moved(rules: Rules) {
    loom::model(move || {
        // `std`'s Arc: see `run_reactor`.
        let m = std::sync::Arc::new(Model::new(4, 1));
        let q = std::sync::Arc::new(Runq::new(4, 4));
        assert!(m.try_start_spinning());
        let mut threads = Vec::new();
        for me in 1..4 {
            let (m, q) = (m.clone(), q.clone());
            threads.push(thread::spawn(move || {
                blocking_worker(&m, &q, me, rules, false)
            }));
        }
        let (m0, q0) = (m.clone(), q.clone());
        threads.push(thread::spawn(move || {
            // Worker 0 runs the task it found, which blocks it.
            m0.stop_spinning(true, || q0.more(0, rules.every_queue), || {});
            q0.start(&m0);
        }));
        // The producer: a burst of three, one notify.
        q.injector.fetch_add(3, SeqCst);
        m.notify(|| {});
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(q.started.load(SeqCst), 4);
    });
}

#[test]
fn batch_moved_while_the_spinner_looks() {
    batch_moved(RULES);
}

/// Without the notify after a move, the spinner's look at every queue is not enough: the
/// batch in flight escapes it.
#[test]
#[should_panic(expected = "deadlock")]
fn batch_moved_untold_strands_work() {
    batch_moved(Rules {
        tell_moves: false,
        ..RULES
    });
}

/// Two workers and a producer that pushes two tasks, notifying after each. The first notify
/// picks a sleeper to wake while worker A, announced, re-checks: A takes the first task, and
/// its un-announcement takes the wake-up; the second notify saw that wake-up pending and
/// relied on it. So A must look again once it is out.
fn parker_took_the_wake_up(rules: Rules) {
    loom::model(move || {
        // `std`'s Arc: see `run_reactor`.
        let m = std::sync::Arc::new(Model::new(2, 1));
        let q = std::sync::Arc::new(Runq::new(2, 2));
        let mut threads = Vec::new();
        for me in 0..2 {
            let (m, q) = (m.clone(), q.clone());
            threads.push(thread::spawn(move || {
                blocking_worker(&m, &q, me, rules, false)
            }));
        }
        for _ in 0..2 {
            q.injector.fetch_add(1, SeqCst);
            m.notify(|| {});
        }
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(q.started.load(SeqCst), 2);
    });
}

#[test]
fn parker_took_the_wake_up_then_more_queued() {
    parker_took_the_wake_up(RULES);
}

/// Without the look after the un-announcement: the second task waits behind the first, with
/// the other worker asleep.
#[test]
#[should_panic(expected = "deadlock")]
fn parker_took_the_wake_up_without_looking_again_strands_work() {
    parker_took_the_wake_up(Rules {
        after_unannounce: false,
        ..RULES
    });
}

/// tokio's `yield_defers_until_park` hung this way: a producer pushes two tasks, notifying
/// after each, and both notifies see a spinner and wake nobody. The spinner's window runs
/// out before it sees them; it parks, and its re-check takes half of the injector (one task,
/// which blocks it) and leaves the other there. The other worker is asleep, and the watchdog
/// looks only behind stuck workers, not in the injector: so the re-check that found work must
/// look again once the worker is out.
fn spinner_gave_up(rules: Rules) {
    loom::model(move || {
        // `std`'s Arc: see `run_reactor`.
        let m = std::sync::Arc::new(Model::new(2, 1));
        let q = std::sync::Arc::new(Runq::new(2, 2));
        assert!(m.try_start_spinning());
        let mut threads = Vec::new();
        for me in 0..2 {
            let (m, q) = (m.clone(), q.clone());
            threads.push(thread::spawn(move || {
                blocking_worker(&m, &q, me, rules, me == 0)
            }));
        }
        for _ in 0..2 {
            q.injector.fetch_add(1, SeqCst);
            m.notify(|| {});
        }
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(q.started.load(SeqCst), 2);
    });
}

#[test]
fn spinner_gave_up_then_its_recheck_found_work() {
    spinner_gave_up(RULES);
}

/// Without the look after the un-announcement: the second task stays in the injector for
/// good while the other worker sleeps.
#[test]
#[should_panic(expected = "deadlock")]
fn spinner_gave_up_without_looking_again_strands_work() {
    spinner_gave_up(Rules {
        after_unannounce: false,
        ..RULES
    });
}
