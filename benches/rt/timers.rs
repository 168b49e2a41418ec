//! The timer rows of `cargo bench --bench rt`: what a request's deadlines cost on each
//! runtime, measured by hand (a million timers do not fit criterion's loop) with spinpark and
//! tokio alternating round by round, each row printed as the median and the range.
//!
//! ```text
//! cargo bench --bench rt -- timer              # every row
//! cargo bench --bench rt -- timer_arm          # one row (by the start of its name)
//! timer_reset       spinpark   median    9.1 ns/reset  (8.8 .. 9.5)   tokio ...
//! ```
//!
//! Everything runs in a task on a worker of a 2-worker runtime (where a server's timers
//! live). Sleeps are first polled with a no-op waker, which arms them. Memory is glibc's count
//! of allocated bytes (`mallinfo2`, every arena), before and after arming, so it includes the
//! `Sleep` itself, its box and anything the timer store allocates.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::Context;
use std::time::{Duration, Instant};

use criterion::Criterion;

use super::{spinpark_rt, tokio_rt, Rt};

const IDLE: usize = 10_000;
const SWEEPS: usize = 20;
const ARM_CANCEL: usize = 500_000;
const MILLION: usize = 1_000_000;
const ROUNDS: usize = 11;
const ROUNDS_1M: usize = 3;

/// Whether a filter was given on the command line that only the timer rows match.
pub(super) fn only_timers() -> bool {
    filter().is_some_and(|f| "timer".contains(&f) || f.starts_with("timer"))
}

fn filter() -> Option<String> {
    std::env::args().skip(1).find(|a| !a.starts_with('-'))
}

fn wanted() -> bool {
    filter().is_none_or(|f| f.starts_with("timer") || "timer".contains(&f))
}

/// Whether the row `name` runs: every row for no filter or `timer`, else those the filter
/// starts (`timer_arm` runs `timer_arm_cancel` only).
fn wanted_row(name: &str) -> bool {
    filter().is_none_or(|f| "timer".contains(&f) || name.starts_with(&f))
}

/// A runtime's timers, as the rows use them.
trait Timers: Rt {
    type Sleep: Future<Output = ()> + Send + 'static;
    fn sleep_until(at: Instant) -> Self::Sleep;
    fn reset(s: Pin<&mut Self::Sleep>, at: Instant);
}

impl Timers for super::Spinpark {
    type Sleep = spinpark::time::Sleep;
    fn sleep_until(at: Instant) -> Self::Sleep {
        spinpark::time::sleep_until(at.into())
    }
    fn reset(s: Pin<&mut Self::Sleep>, at: Instant) {
        s.reset(at.into());
    }
}

impl Timers for super::Tokio {
    type Sleep = tokio::time::Sleep;
    fn sleep_until(at: Instant) -> Self::Sleep {
        tokio::time::sleep_until(at.into())
    }
    fn reset(s: Pin<&mut Self::Sleep>, at: Instant) {
        s.reset(at.into());
    }
}

/// Runs `f` in a task on one of `rt`'s workers and returns its result.
fn on_worker<R: Rt, T: Send + 'static, F: Future<Output = T> + Send + 'static>(rt: &R, f: F) -> T {
    let (tx, rx) = mpsc::sync_channel(1);
    rt.spawn_remote(async move {
        let _ = tx.send(f.await);
    });
    rx.recv().unwrap()
}

/// Polls once with a waker that does nothing: arms a sleep.
fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> bool {
    let waker = futures_util::task::noop_waker();
    f.poll(&mut Context::from_waker(&waker)).is_ready()
}

/// Bytes allocated right now, by glibc's count over every arena.
fn allocated() -> usize {
    // SAFETY: mallinfo2 only reads the allocator's statistics.
    let m = unsafe { libc::mallinfo2() };
    m.uordblks + m.hblkhd
}

/// ns per reset and re-poll: `IDLE` armed 30 s deadlines, each pushed back once per sweep
/// and polled again, as the connection's task does.
async fn reset_once<R: Timers>() -> f64 {
    let t0 = Instant::now();
    let mut idle: Vec<Pin<Box<R::Sleep>>> = (0..IDLE)
        .map(|_| Box::pin(R::sleep_until(t0 + Duration::from_secs(30))))
        .collect();
    for s in idle.iter_mut() {
        assert!(!poll_once(s.as_mut()));
    }
    let start = Instant::now();
    for k in 1..=SWEEPS {
        // One request's reading of the clock, as a server computes its new deadline.
        let at = Instant::now() + Duration::from_secs(30) + Duration::from_micros(k as u64);
        for s in idle.iter_mut() {
            R::reset(s.as_mut(), at);
            // The connection's task then waits on it again (a `select!` with its reads).
            assert!(!poll_once(s.as_mut()));
        }
    }
    start.elapsed().as_nanos() as f64 / (IDLE * SWEEPS) as f64
}

/// ns per arm (first poll) and cancel (drop) of a 30 s timeout.
async fn arm_cancel_once<R: Timers>() -> f64 {
    let start = Instant::now();
    for _ in 0..ARM_CANCEL {
        let s = std::pin::pin!(R::sleep_until(Instant::now() + Duration::from_secs(30)));
        assert!(!poll_once(s));
    }
    start.elapsed().as_nanos() as f64 / ARM_CANCEL as f64
}

/// (bytes per pending timer, ms from the common deadline until all were seen fired).
async fn million_once<R: Timers>() -> (f64, f64) {
    let before = allocated();
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut all: Vec<Pin<Box<R::Sleep>>> = Vec::with_capacity(MILLION);
    for _ in 0..MILLION {
        let mut s = Box::pin(R::sleep_until(deadline));
        assert!(!poll_once(s.as_mut()));
        all.push(s);
    }
    let bytes = (allocated().saturating_sub(before)) as f64 / MILLION as f64;
    assert!(
        Instant::now() < deadline,
        "arming a million timers took over 2 s"
    );
    for s in all.iter_mut() {
        s.as_mut().await;
    }
    let fired = deadline.elapsed().as_secs_f64() * 1e3;
    drop(all);
    (bytes, fired)
}

/// Median and range of `xs`.
fn stats(xs: &mut [f64]) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

fn print(row: &str, unit: &str, sp: &mut [f64], tk: &mut [f64]) {
    let (s, s0, s1) = stats(sp);
    let (t, t0, t1) = stats(tk);
    println!(
        "{row:<18} spinpark {s:>10.1} {unit} ({s0:.1} .. {s1:.1})   tokio {t:>10.1} {unit} ({t0:.1} .. {t1:.1})   spinpark/tokio {:.2}",
        s / t
    );
}

/// The timer rows (criterion's handle unused: these are measured by hand).
pub(super) fn rows(_c: &mut Criterion) {
    if !wanted() {
        return;
    }
    let sp = spinpark_rt();
    let tk = tokio_rt();
    if wanted_row("timer_reset") {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            a.push(on_worker(&sp, reset_once::<super::Spinpark>()));
            b.push(on_worker(&tk, reset_once::<super::Tokio>()));
        }
        print("timer_reset", "ns/reset", &mut a, &mut b);
    }
    if wanted_row("timer_arm_cancel") {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            a.push(on_worker(&sp, arm_cancel_once::<super::Spinpark>()));
            b.push(on_worker(&tk, arm_cancel_once::<super::Tokio>()));
        }
        print("timer_arm_cancel", "ns/op", &mut a, &mut b);
    }
    if !wanted_row("timer_1m") {
        return;
    }
    let (mut ma, mut mb, mut fa, mut fb) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS_1M {
        let (m, f) = on_worker(&sp, million_once::<super::Spinpark>());
        ma.push(m);
        fa.push(f);
        let (m, f) = on_worker(&tk, million_once::<super::Tokio>());
        mb.push(m);
        fb.push(f);
    }
    print("timer_1m_memory", "B/timer", &mut ma, &mut mb);
    print("timer_1m_fire", "ms", &mut fa, &mut fb);
}
