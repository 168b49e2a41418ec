//! Model checks of the idle protocol (`src/idle.rs`) with `loom`.
//!
//! Run with: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p spinpark-executor
//! --test loom_idle --release`. Each test models workers (threads that take items from a
//! counter standing in for the queues) and producers (threads that add an item, then notify).
//! A lost wake-up shows up as loom's deadlock report: every thread blocked, items left over.
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
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

/// A model of the reactor's blocking wait: `park` blocks until `unpark`.
#[derive(Default)]
struct Driver {
    unparked: Mutex<bool>,
    cond: Condvar,
}

impl Driver {
    fn park(&self) {
        let mut u = self.unparked.lock().unwrap();
        while !*u {
            u = self.cond.wait(u).unwrap();
        }
        *u = false;
    }
    fn unpark(&self) {
        *self.unparked.lock().unwrap() = true;
        self.cond.notify_one();
    }
}

/// A worker: run items; when out of them, spin once (if allowed), then park. The worker that
/// consumes the last item shuts the model down, as the runtime's owner would.
fn worker(m: &Model, q: &Queue, driver: Option<&Driver>) {
    let mut spinning = false;
    loop {
        if q.take() {
            if spinning {
                let more = q.items.load(SeqCst) > 0;
                m.stop_spinning(true, more, || driver.unwrap().unpark());
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
            m.stop_spinning(false, false, || {});
            spinning = false;
        } else if m.try_start_spinning() {
            spinning = true;
            continue;
        }
        let mut drive = || driver.unwrap().park();
        let drive: Option<&mut dyn FnMut()> = match driver {
            Some(_) => Some(&mut drive),
            None => None,
        };
        match m.park(|| q.items.load(SeqCst) > 0, drive) {
            Outcome::Work => {}
            Outcome::Woken => spinning = true,
            Outcome::Shutdown => return,
        }
    }
}

/// Pushes `items` at once (a burst, like a reactor turn that woke several tasks), then
/// notifies once.
fn producer(m: &Model, q: &Queue, driver: Option<&Driver>, items: usize) {
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
        let d = with_driver.then(|| Arc::new(Driver::default()));
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
        m.stop_spinning(false, false, || {});
        // ...so it parks, and must not sleep through the item.
        let mut spinning = false;
        loop {
            if q.take() {
                if spinning {
                    m.stop_spinning(true, false, || {});
                }
                break;
            }
            if spinning {
                m.stop_spinning(false, false, || {});
                spinning = false;
            }
            match m.park(|| q.items.load(SeqCst) > 0, None) {
                Outcome::Work => {}
                Outcome::Woken => spinning = true,
                Outcome::Shutdown => unreachable!(),
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
        let d = Arc::new(Driver::default());
        let mut ts = Vec::new();
        for _ in 0..2 {
            let (m, d) = (m.clone(), d.clone());
            ts.push(thread::spawn(move || {
                let mut drive = || d.park();
                loop {
                    match m.park(|| false, Some(&mut drive)) {
                        Outcome::Shutdown => return,
                        Outcome::Woken => m.stop_spinning(false, false, || {}),
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
