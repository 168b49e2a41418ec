//! Scheduler micro-benchmarks after tokio's `rt_multi_threaded` suite, each run on spinpark
//! and on tokio with the same number of workers (2), side by side in one criterion group.
//!
//! ```text
//! cargo bench --bench rt
//! ```
//!
//! * spawn_many_local: a task spawns 10 000 tasks and waits for them all;
//! * spawn_many_remote_idle: a thread outside the runtime spawns 10 000 tasks onto an idle
//!   runtime and waits;
//! * spawn_many_remote_busy: the same while every worker is busy with a yielding task;
//! * ping_pong: 1 000 pairs of tasks bounce a message over one-shot channels;
//! * yield_many: 200 tasks yield 1 000 times each;
//! * chained_spawn: each task spawns the next, 1 000 deep.
//!
//! Then the timer rows, measured by hand rather than by criterion (one of them holds a
//! million timers), spinpark and tokio alternating round by round in the same run, each
//! printed as the median and the range over the rounds (`rt/timers.rs`):
//!
//! * timer_reset: 10 000 idle deadlines (30 s) armed on a worker, each pushed back once per
//!   "request" and polled again (the task waits on it): ns per reset;
//! * timer_arm_cancel: a 30 s timeout armed (first poll) and dropped per request: ns per op;
//! * timer_1m: a million pending timers: bytes of RSS per timer, and the time from their
//!   common deadline until a task has seen every one fire.
//!
//! `cargo bench --bench rt -- timer` runs only the timer rows.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

const WORKERS: usize = 2;
const NUM_SPAWN: usize = 10_000;
const NUM_YIELD: usize = 1_000;
const TASKS_PER_CPU: usize = 100;

/// What the benchmarks need from a runtime.
trait Rt: Send + Sync + 'static {
    fn block_on<F: Future>(&self, f: F) -> F::Output;
    fn spawn_remote<F: Future<Output = ()> + Send + 'static>(&self, f: F);
    fn spawn<F: Future<Output = ()> + Send + 'static>(f: F);
    fn yield_now() -> impl Future<Output = ()> + Send;
}

struct Spinpark(spinpark::Runtime);
struct Tokio(tokio::runtime::Runtime);

impl Rt for Spinpark {
    fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.0.block_on(f)
    }
    fn spawn_remote<F: Future<Output = ()> + Send + 'static>(&self, f: F) {
        drop(self.0.spawn(f));
    }
    fn spawn<F: Future<Output = ()> + Send + 'static>(f: F) {
        drop(spinpark::spawn(f));
    }
    fn yield_now() -> impl Future<Output = ()> + Send {
        spinpark::yield_now()
    }
}

impl Rt for Tokio {
    fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.0.block_on(f)
    }
    fn spawn_remote<F: Future<Output = ()> + Send + 'static>(&self, f: F) {
        drop(self.0.spawn(f));
    }
    fn spawn<F: Future<Output = ()> + Send + 'static>(f: F) {
        drop(tokio::spawn(f));
    }
    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }
}

fn spinpark_rt() -> Spinpark {
    Spinpark(
        spinpark::Builder::new()
            .worker_threads(WORKERS)
            .build()
            .unwrap(),
    )
}

fn tokio_rt() -> Tokio {
    Tokio(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKERS)
            .enable_all()
            .build()
            .unwrap(),
    )
}

/// A one-shot channel that works on any runtime (so neither side gets a home advantage).
struct Oneshot<T> {
    slot: Mutex<(Option<T>, Option<Waker>)>,
}

fn oneshot<T>() -> Arc<Oneshot<T>> {
    Arc::new(Oneshot {
        slot: Mutex::new((None, None)),
    })
}

impl<T> Oneshot<T> {
    fn send(&self, v: T) {
        let w = {
            let mut s = self.slot.lock().unwrap();
            s.0 = Some(v);
            s.1.take()
        };
        if let Some(w) = w {
            w.wake();
        }
    }
    fn recv(self: &Arc<Self>) -> Recv<T> {
        Recv(self.clone())
    }
}

struct Recv<T>(Arc<Oneshot<T>>);

impl<T> Future for Recv<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut s = self.0.slot.lock().unwrap();
        match s.0.take() {
            Some(v) => Poll::Ready(v),
            None => {
                s.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

fn spawn_many_local<R: Rt>(rt: &R) {
    let (tx, rx) = mpsc::sync_channel(1);
    let rem = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        rem.store(NUM_SPAWN, Relaxed);
        let (tx, rem) = (tx.clone(), rem.clone());
        R::spawn(async move {
            for _ in 0..NUM_SPAWN {
                let (tx, rem) = (tx.clone(), rem.clone());
                R::spawn(async move {
                    if 1 == rem.fetch_sub(1, Relaxed) {
                        tx.send(()).unwrap();
                    }
                });
            }
        });
    });
    rx.recv().unwrap();
}

fn spawn_many_remote<R: Rt>(rt: &R) {
    let (tx, rx) = mpsc::sync_channel(1000);
    let rem = Arc::new(AtomicUsize::new(NUM_SPAWN));
    for _ in 0..NUM_SPAWN {
        let (tx, rem) = (tx.clone(), rem.clone());
        rt.spawn_remote(async move {
            if 1 == rem.fetch_sub(1, Relaxed) {
                tx.send(()).unwrap();
            }
        });
    }
    rx.recv().unwrap();
}

fn ping_pong<R: Rt>(rt: &R) {
    const PAIRS: usize = 1_000;
    let (done_tx, done_rx) = mpsc::sync_channel(1);
    let rem = Arc::new(AtomicUsize::new(PAIRS));
    rt.block_on(async {
        let (done_tx, rem) = (done_tx.clone(), rem.clone());
        R::spawn(async move {
            for _ in 0..PAIRS {
                let (done_tx, rem) = (done_tx.clone(), rem.clone());
                R::spawn(async move {
                    let ping = oneshot::<()>();
                    let pong = oneshot::<()>();
                    let (ping2, pong2) = (ping.clone(), pong.clone());
                    R::spawn(async move {
                        ping2.recv().await;
                        pong2.send(());
                    });
                    ping.send(());
                    pong.recv().await;
                    if 1 == rem.fetch_sub(1, Relaxed) {
                        done_tx.send(()).unwrap();
                    }
                });
            }
        });
    });
    done_rx.recv().unwrap();
}

fn yield_many<R: Rt>(rt: &R) {
    let tasks = TASKS_PER_CPU * WORKERS;
    let (tx, rx) = mpsc::sync_channel(tasks);
    for _ in 0..tasks {
        let tx = tx.clone();
        rt.spawn_remote(async move {
            for _ in 0..NUM_YIELD {
                R::yield_now().await;
            }
            tx.send(()).unwrap();
        });
    }
    for _ in 0..tasks {
        rx.recv().unwrap();
    }
}

fn chained_spawn<R: Rt>(rt: &R) {
    fn iter<R: Rt>(done: mpsc::SyncSender<()>, n: usize) {
        if n == 0 {
            done.send(()).unwrap();
        } else {
            R::spawn(async move { iter::<R>(done, n - 1) });
        }
    }
    let (tx, rx) = mpsc::sync_channel(1);
    rt.block_on(async {
        R::spawn(async move { iter::<R>(tx, 1_000) });
    });
    rx.recv().unwrap();
}

/// Keeps every worker busy with a task that yields in a loop until dropped.
struct Busy(Arc<AtomicBool>);

fn busy<R: Rt>(rt: &R) -> Busy {
    let flag = Arc::new(AtomicBool::new(true));
    for _ in 0..WORKERS {
        let f = flag.clone();
        rt.spawn_remote(async move {
            while f.load(SeqCst) {
                R::yield_now().await;
            }
        });
    }
    Busy(flag)
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.store(false, SeqCst);
    }
}

fn benches(c: &mut Criterion) {
    if timers::only_timers() {
        return;
    }
    let sp = spinpark_rt();
    let tk = tokio_rt();
    macro_rules! pair {
        ($name:literal, $f:ident) => {{
            let mut g = c.benchmark_group($name);
            g.sample_size(20)
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_secs(2));
            g.bench_function("spinpark", |b| b.iter(|| $f(&sp)));
            g.bench_function("tokio", |b| b.iter(|| $f(&tk)));
            g.finish();
        }};
    }
    pair!("spawn_many_local", spawn_many_local);
    pair!("spawn_many_remote_idle", spawn_many_remote);
    {
        let mut g = c.benchmark_group("spawn_many_remote_busy");
        g.sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        g.bench_function("spinpark", |b| {
            let _busy = busy(&sp);
            b.iter(|| spawn_many_remote(&sp))
        });
        g.bench_function("tokio", |b| {
            let _busy = busy(&tk);
            b.iter(|| spawn_many_remote(&tk))
        });
        g.finish();
    }
    pair!("ping_pong", ping_pong);
    pair!("yield_many", yield_many);
    pair!("chained_spawn", chained_spawn);
}

#[path = "rt/timers.rs"]
mod timers;

criterion_group!(rt_benches, benches, timers::rows);
criterion_main!(rt_benches);
