//! `spinpark::sync`: each wait takes part in spinpark's cooperative budget, `blocking_*`
//! refuses to block a thread that drives tasks, and `send_timeout` runs on spinpark's timer.
//!
//! The budget tests run two tasks on a runtime with one worker: the one under test loops on a
//! wait that is always ready (a prefilled channel, a free lock), the other only sets a flag.
//! With the budget, the loop yields after 128 completed waits and the other task runs while
//! the loop still has work; a wrapper that skipped the budget would run the loop to its end
//! first. Counts and flags only: no timing.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use spinpark::sync::{broadcast, mpsc, oneshot, watch, Mutex, RwLock, Semaphore};

/// Waits per loop: many budgets' worth.
const N: usize = 20 * 128;

/// tokio's panic text for a `blocking_*` call on a thread that drives tasks.
const BLOCKING_PANIC: &str = "Cannot block the current thread from within a runtime. This \
    happens because a function attempted to block the current thread while the thread is \
    being used to drive asynchronous tasks.";

fn one_worker() -> spinpark::Runtime {
    spinpark::Builder::new().worker_threads(1).build().unwrap()
}

/// Runs `work` in a task on a one-worker runtime, right after spawning (on the same worker) a
/// task that counts how often it runs until `work` is done. `work` gets a probe to call once
/// per wait; returns how many waits had completed when the other task first ran (`None`: it
/// did not run before `work` ended) and how often it ran meanwhile.
fn neighbour_during<F, Fut>(work: F) -> (Option<usize>, usize)
where
    F: FnOnce(Probe) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    one_worker().block_on(async move {
        spinpark::spawn(async move {
            let probe = Probe::default();
            let (runs, done) = (probe.runs.clone(), probe.done.clone());
            spinpark::spawn(async move {
                while !done.load(SeqCst) {
                    runs.fetch_add(1, SeqCst);
                    spinpark::yield_now().await;
                }
            });
            let (first, runs) = (probe.first.clone(), probe.runs.clone());
            let done = probe.done.clone();
            work(probe).await;
            done.store(true, SeqCst);
            let first = first.load(SeqCst);
            ((first != usize::MAX).then_some(first), runs.load(SeqCst))
        })
        .await
        .unwrap()
    })
}

/// What the loop under test reports, once per completed wait.
#[derive(Clone)]
struct Probe {
    waits: Arc<AtomicUsize>,
    first: Arc<AtomicUsize>,
    runs: Arc<AtomicUsize>,
    done: Arc<AtomicBool>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            waits: Arc::default(),
            first: Arc::new(AtomicUsize::new(usize::MAX)),
            runs: Arc::default(),
            done: Arc::default(),
        }
    }
}

impl Probe {
    /// One wait completed; notes whether the neighbour has run by now.
    fn waited(&self) {
        let n = self.waits.fetch_add(1, SeqCst) + 1;
        if self.runs.load(SeqCst) > 0 && self.first.load(SeqCst) == usize::MAX {
            self.first.store(n, SeqCst);
        }
    }
}

/// The neighbour ran once the loop had spent one budget (not before, not at the end), and ran
/// again about once per budget.
#[track_caller]
fn assert_yields((first, runs): (Option<usize>, usize)) {
    let first = first.expect("the other task did not run before the loop ended: no budget");
    // 128 waits per budget, as tokio: not fewer (a wait charged twice), not many more.
    assert!(
        (100..=2 * 128).contains(&first),
        "the other task first ran after {first} waits"
    );
    assert!(
        runs >= N / 128 / 2,
        "the other task ran {runs} times during {N} waits"
    );
}

#[test]
fn mpsc_recv_drain_yields() {
    assert_yields(neighbour_during(|probe| async move {
        let (tx, mut rx) = mpsc::channel(N);
        for i in 0..N {
            tx.try_send(i).unwrap();
        }
        drop(tx);
        while rx.recv().await.is_some() {
            probe.waited();
        }
    }));
}

#[test]
fn mpsc_recv_many_drain_yields() {
    assert_yields(neighbour_during(|probe| async move {
        let (tx, mut rx) = mpsc::channel(N);
        for i in 0..N {
            tx.try_send(i).unwrap();
        }
        drop(tx);
        let mut buf = Vec::with_capacity(1);
        while rx.recv_many(&mut buf, 1).await == 1 {
            buf.clear();
            probe.waited();
        }
    }));
}

#[test]
fn unbounded_recv_drain_yields() {
    assert_yields(neighbour_during(|probe| async move {
        let (tx, mut rx) = mpsc::unbounded_channel();
        for i in 0..N {
            tx.send(i).unwrap();
        }
        drop(tx);
        while rx.recv().await.is_some() {
            probe.waited();
        }
    }));
}

#[test]
fn mpsc_send_and_reserve_yield() {
    assert_yields(neighbour_during(|probe| async move {
        let (tx, _rx) = mpsc::channel(N);
        for i in 0..N / 2 {
            tx.send(i).await.unwrap();
            probe.waited();
        }
        for _ in 0..N / 2 {
            drop(tx.reserve().await.unwrap());
            probe.waited();
        }
    }));
}

#[test]
fn semaphore_acquire_yields() {
    assert_yields(neighbour_during(|probe| async move {
        let sem = Arc::new(Semaphore::new(1));
        for _ in 0..N / 2 {
            drop(sem.acquire().await.unwrap());
            probe.waited();
        }
        for _ in 0..N / 2 {
            drop(sem.clone().acquire_owned().await.unwrap());
            probe.waited();
        }
    }));
}

#[test]
fn mutex_lock_yields() {
    assert_yields(neighbour_during(|probe| async move {
        let m = Arc::new(Mutex::new(0usize));
        for _ in 0..N / 2 {
            *m.lock().await += 1;
            probe.waited();
        }
        for _ in 0..N / 2 {
            *m.clone().lock_owned().await += 1;
            probe.waited();
        }
        assert_eq!(*m.lock().await, N);
    }));
}

#[test]
fn rwlock_read_and_write_yield() {
    assert_yields(neighbour_during(|probe| async move {
        let lock = RwLock::new(0usize);
        for _ in 0..N / 2 {
            let _r = lock.read().await;
            probe.waited();
        }
        for _ in 0..N / 2 {
            *lock.write().await += 1;
            probe.waited();
        }
    }));
}

#[test]
fn oneshot_recv_yields() {
    assert_yields(neighbour_during(|probe| async move {
        for i in 0..N {
            let (tx, rx) = oneshot::channel();
            tx.send(i).unwrap();
            assert_eq!(rx.await, Ok(i));
            probe.waited();
        }
    }));
}

#[test]
fn oneshot_sender_closed_yields() {
    assert_yields(neighbour_during(|probe| async move {
        for _ in 0..N {
            let (mut tx, rx) = oneshot::channel::<()>();
            drop(rx);
            tx.closed().await;
            probe.waited();
        }
    }));
}

#[test]
fn broadcast_recv_yields() {
    assert_yields(neighbour_during(|probe| async move {
        let (tx, mut rx) = broadcast::channel(N);
        for i in 0..N {
            tx.send(i).unwrap();
        }
        for _ in 0..N {
            rx.recv().await.unwrap();
            probe.waited();
        }
    }));
}

#[test]
fn watch_waits_yield() {
    assert_yields(neighbour_during(|probe| async move {
        let (tx, mut rx) = watch::channel(0);
        for i in 0..N / 2 {
            tx.send(i).unwrap();
            rx.changed().await.unwrap();
            probe.waited();
        }
        for _ in 0..N / 2 {
            let _v = rx.wait_for(|_| true).await.unwrap();
            probe.waited();
        }
    }));
}

#[test]
fn watch_sender_closed_yields() {
    assert_yields(neighbour_during(|probe| async move {
        let (tx, rx) = watch::channel(());
        drop(rx);
        for _ in 0..N {
            tx.closed().await;
            probe.waited();
        }
    }));
}

/// A wait that ends pending costs nothing: a task woken for one value in each of 200
/// channels, polling all of them each time, still receives them all in one poll's budget.
#[test]
fn pending_waits_cost_no_budget() {
    one_worker().block_on(async {
        spinpark::spawn(async {
            let (tx, mut rx) = mpsc::channel::<u32>(1);
            let (_keep, mut idle) = mpsc::channel::<u32>(1);
            tx.try_send(1).unwrap();
            // 200 pending polls of an empty channel, then the ready one: the pending ones did
            // not spend the budget, so the ready one is received in the same poll.
            let got = std::future::poll_fn(|cx| {
                for _ in 0..200 {
                    assert!(idle.poll_recv(cx).is_pending());
                }
                rx.poll_recv(cx)
            })
            .await;
            assert_eq!(got, Some(1));
            assert!(spinpark::task::coop::has_budget_remaining());
        })
        .await
        .unwrap();
    });
}

/// A `blocking_*` call, named.
type Call = (&'static str, Box<dyn FnOnce() + Send>);

/// As in tokio, a wait that fails (a closed semaphore, a bounded channel whose receiver is
/// gone) is not charged: 300 of them in one poll leave the budget untouched.
#[test]
fn failed_acquires_cost_no_budget() {
    one_worker().block_on(async {
        spinpark::spawn(async {
            // Runs only if this task yields.
            let ran = Arc::new(AtomicBool::new(false));
            let flag = ran.clone();
            spinpark::spawn(async move { flag.store(true, SeqCst) });
            let sem = Semaphore::new(0);
            sem.close();
            let (tx, rx) = mpsc::channel::<u8>(1);
            drop(rx);
            for _ in 0..300 {
                assert!(sem.acquire().await.is_err());
                assert!(tx.reserve().await.is_err());
            }
            // Not one unit spent: 127 more still fit in this poll, which never yielded.
            for _ in 0..127 {
                spinpark::task::coop::consume_budget().await;
            }
            assert!(spinpark::task::coop::has_budget_remaining());
            assert!(
                !ran.load(SeqCst),
                "the task yielded: the failed waits took budget"
            );
        })
        .await
        .unwrap();
    });
}

/// Spawns `call` as a task and returns its panic message.
fn panic_in_task(call: impl FnOnce() + Send + 'static) -> String {
    one_worker().block_on(async move {
        let err = spinpark::spawn(async move { call() }).await.unwrap_err();
        assert!(err.is_panic());
        let payload = err.into_panic();
        match payload.downcast::<String>() {
            Ok(s) => *s,
            Err(p) => p.downcast::<&str>().unwrap().to_string(),
        }
    })
}

#[test]
fn blocking_methods_panic_inside_a_task() {
    let calls: Vec<Call> = vec![
        (
            "Mutex::blocking_lock",
            Box::new(|| drop(Mutex::new(0).blocking_lock())),
        ),
        (
            "Mutex::blocking_lock_owned",
            Box::new(|| drop(Arc::new(Mutex::new(0)).blocking_lock_owned())),
        ),
        (
            "RwLock::blocking_read",
            Box::new(|| drop(RwLock::new(0).blocking_read())),
        ),
        (
            "RwLock::blocking_write",
            Box::new(|| drop(RwLock::new(0).blocking_write())),
        ),
        (
            "Semaphore::blocking_acquire",
            Box::new(|| drop(Semaphore::new(1).blocking_acquire())),
        ),
        (
            "Semaphore::blocking_acquire_many",
            Box::new(|| drop(Semaphore::new(2).blocking_acquire_many(2))),
        ),
        (
            "Semaphore::blocking_acquire_owned",
            Box::new(|| drop(Arc::new(Semaphore::new(1)).blocking_acquire_owned())),
        ),
        (
            "Semaphore::blocking_acquire_many_owned",
            Box::new(|| drop(Arc::new(Semaphore::new(2)).blocking_acquire_many_owned(2))),
        ),
        (
            "mpsc::Sender::blocking_send",
            Box::new(|| {
                let (tx, _rx) = mpsc::channel(1);
                let _ = tx.blocking_send(1);
            }),
        ),
        (
            "mpsc::Receiver::blocking_recv",
            Box::new(|| {
                let (tx, mut rx) = mpsc::channel(1);
                tx.try_send(1).unwrap();
                let _ = rx.blocking_recv();
            }),
        ),
        (
            "mpsc::Receiver::blocking_recv_many",
            Box::new(|| {
                let (_tx, mut rx) = mpsc::channel::<u8>(1);
                let _ = rx.blocking_recv_many(&mut Vec::new(), 1);
            }),
        ),
        (
            "mpsc::UnboundedReceiver::blocking_recv",
            Box::new(|| {
                let (_tx, mut rx) = mpsc::unbounded_channel::<u8>();
                let _ = rx.blocking_recv();
            }),
        ),
        (
            "mpsc::UnboundedReceiver::blocking_recv_many",
            Box::new(|| {
                let (_tx, mut rx) = mpsc::unbounded_channel::<u8>();
                let _ = rx.blocking_recv_many(&mut Vec::new(), 1);
            }),
        ),
        (
            "oneshot::Receiver::blocking_recv",
            Box::new(|| {
                let (tx, rx) = oneshot::channel();
                tx.send(1).unwrap();
                let _ = rx.blocking_recv();
            }),
        ),
        (
            "broadcast::Receiver::blocking_recv",
            Box::new(|| {
                let (tx, mut rx) = broadcast::channel(1);
                tx.send(1).unwrap();
                let _ = rx.blocking_recv();
            }),
        ),
    ];
    for (name, call) in calls {
        // A value is ready for most of them: they would return at once if not refused.
        assert_eq!(panic_in_task(call), BLOCKING_PANIC, "{name}");
    }
}

#[test]
fn blocking_recv_panics_inside_block_on() {
    for rt in [
        spinpark::Builder::new_current_thread().build().unwrap(),
        one_worker(),
    ] {
        let (tx, mut rx) = mpsc::channel(1);
        tx.try_send(1).unwrap();
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { rx.blocking_recv() })
        }))
        .unwrap_err();
        assert_eq!(panic.downcast::<String>().unwrap().as_str(), BLOCKING_PANIC);
    }
}

#[test]
fn blocking_methods_block_in_spawn_blocking() {
    one_worker().block_on(async {
        let (tx, rx) = mpsc::channel(1);
        let (back_tx, mut back_rx) = mpsc::unbounded_channel();
        let m = Arc::new(Mutex::new(0));
        let lock = Arc::new(RwLock::new(0));
        let sem = Arc::new(Semaphore::new(0));
        let (m2, lock2, sem2) = (m.clone(), lock.clone(), sem.clone());
        let (one_tx, one_rx) = oneshot::channel();
        let (b_tx, mut b_rx) = broadcast::channel(1);
        let worker = spinpark::spawn_blocking(move || {
            let mut rx = rx;
            // Each waits for the async side below.
            let v = rx.blocking_recv().unwrap();
            back_tx.send(v + 1).unwrap();
            *m2.blocking_lock() += v;
            *lock2.blocking_write() += v;
            let permit = sem2.clone().blocking_acquire_owned().unwrap();
            drop(permit);
            let one = one_rx.blocking_recv().unwrap();
            let b = b_rx.blocking_recv().unwrap();
            (one, b)
        });
        tx.send(10).await.unwrap();
        assert_eq!(back_rx.recv().await, Some(11));
        sem.add_permits(1);
        one_tx.send("one").unwrap();
        b_tx.send("b").unwrap();
        assert_eq!(worker.await.unwrap(), ("one", "b"));
        assert_eq!(*m.lock().await, 10);
        assert_eq!(*lock.read().await, 10);
    });
}

#[test]
fn blocking_methods_block_in_block_in_place_and_on_plain_threads() {
    one_worker().block_on(async {
        spinpark::spawn(async {
            let (tx, mut rx) = mpsc::channel(1);
            tx.send(5).await.unwrap();
            let got = spinpark::task::block_in_place(|| rx.blocking_recv());
            assert_eq!(got, Some(5));
        })
        .await
        .unwrap();
    });
    let (tx, rx) = oneshot::channel();
    let t = std::thread::spawn(move || rx.blocking_recv());
    tx.send(1).unwrap();
    assert_eq!(t.join().unwrap(), Ok(1));
}

#[test]
fn send_timeout_times_out_with_the_value() {
    one_worker().block_on(async {
        let (tx, mut rx) = mpsc::channel(1);
        tx.send(1).await.unwrap();
        let err = tx
            .send_timeout(2, Duration::from_millis(20))
            .await
            .unwrap_err();
        assert!(matches!(err, mpsc::error::SendTimeoutError::Timeout(2)));
        assert_eq!(err.to_string(), "timed out waiting on send operation");
        assert_eq!(err.into_inner(), 2);
        // The slot is still taken by the first value only.
        assert_eq!(rx.recv().await, Some(1));
        assert!(rx.try_recv().is_err());
    });
}

#[test]
fn send_timeout_sends_once_space_frees() {
    one_worker().block_on(async {
        let (tx, mut rx) = mpsc::channel(1);
        tx.send(1).await.unwrap();
        let reader = spinpark::spawn(async move {
            spinpark::time::sleep(Duration::from_millis(10)).await;
            let first = rx.recv().await;
            (first, rx.recv().await)
        });
        tx.send_timeout(2, Duration::from_secs(30)).await.unwrap();
        assert_eq!(reader.await.unwrap(), (Some(1), Some(2)));
    });
}

#[test]
fn send_timeout_on_a_closed_channel_gives_the_value_back() {
    one_worker().block_on(async {
        let (tx, rx) = mpsc::channel(1);
        drop(rx);
        let err = tx.send_timeout(3, Duration::from_secs(30)).await;
        assert_eq!(err, Err(mpsc::error::SendTimeoutError::Closed(3)));
    });
}

#[test]
fn methods_give_back_spinpark_types() {
    one_worker().block_on(async {
        let (tx, mut rx) = mpsc::channel::<u8>(1);
        let weak: mpsc::WeakSender<u8> = tx.downgrade();
        let tx2: mpsc::Sender<u8> = weak.upgrade().unwrap();
        let permit: mpsc::OwnedPermit<u8> = tx2.reserve_owned().await.unwrap();
        let tx3: mpsc::Sender<u8> = permit.release();
        assert!(tx3.same_channel(&tx));
        let tokio_tx: tokio::sync::mpsc::Sender<u8> = tx3.into();
        let back = mpsc::Sender::from(tokio_tx);
        back.send(4).await.unwrap();
        assert_eq!(rx.recv().await, Some(4));

        let (btx, _brx) = broadcast::channel::<u8>(1);
        let _sub: broadcast::Receiver<u8> = btx.subscribe();
        let _re: broadcast::Receiver<u8> = _sub.resubscribe();
        let (wtx, _wrx) = watch::channel(0u8);
        let _w: watch::Receiver<u8> = wtx.subscribe();

        let m = Arc::new(Mutex::new(1));
        let g = m.clone().lock_owned().await;
        assert_eq!(*g, 1);
        assert_eq!(Arc::strong_count(&m), 2);
        drop(g);
        assert_eq!(Arc::strong_count(&m), 1);
        let tokio_m: tokio::sync::Mutex<i32> = Arc::try_unwrap(m).unwrap().into_tokio();
        assert_eq!(Mutex::<i32>::from(tokio_m).into_inner(), 1);
    });
}

/// The futures have the auto traits of tokio's: a lock future is `Sync` even for a value that
/// is not (it keeps the guard across a yield only behind `&mut`).
#[test]
fn futures_are_send_and_sync_as_tokio_s() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    /// `Send`, not `Sync`.
    struct SendOnly(#[allow(dead_code)] std::cell::Cell<u8>);
    let m = Mutex::new(SendOnly(std::cell::Cell::new(0)));
    send_sync(&m.lock());
    let m = Arc::new(m);
    send_sync(&m.clone().lock_owned());
    let sem = Semaphore::new(1);
    send_sync(&sem.acquire());
    let (tx, mut rx) = mpsc::channel::<SendOnly>(1);
    send_sync(&tx.reserve());
    send_sync(&rx.recv());
    let (btx, mut brx) = broadcast::channel::<u8>(1);
    send_sync(&brx.recv());
    drop(btx);
    let (tx, _rx) = mpsc::channel::<u8>(1);
    send_sync(&tx.send_timeout(1, Duration::from_secs(1)));
    send_sync(&tx.send(1));
    let (wtx, mut wrx) = watch::channel(0u8);
    send_sync(&wrx.changed());
    send_sync(&wtx.closed());
    let (mut otx, orx) = oneshot::channel::<u8>();
    send_sync(&otx.closed());
    send_sync(&orx);
}
