//! `--only neighbour`: both runtimes with a CPU-bound neighbour process on the server CPUs,
//! and how much work that neighbour gets done beside each.
//!
//! ```text
//! cargo bench --bench rpc -- --only neighbour --rounds 5
//! let plan = neighbour::plan(2, 3, false, None, None, false).unwrap(); // None: fewer than 2 CPUs
//! let mut n = Neighbour::start(plan.layout.server_cpus());
//! let before = n.count(); /* load the server */ let units_per_sec = n.count().rate_since(before);
//! ```
//!
//! The question: with a batch job beside the server, what latency does each runtime give,
//! and what does the job get done meanwhile? A runtime that keeps its latency by taking the
//! CPU from its neighbour has not solved anything, so the table shows both. The neighbour is
//! this binary re-executed with `--serve neighbour`, started with every thread on the remote
//! layout's server CPUs: one busy thread per CPU, each pinned to its CPU, doing units of pure
//! CPU work ([`UNIT_STEPS`] xorshift steps) and counting them in one shared counter, and a
//! main thread that blocks on stdin and answers each line with the count (`COUNT n`), so it
//! costs nothing between readings; it exits at end of input. The runner reads the count right
//! before and right after each measurement; the rate is the units done over the time between
//! the two readings (each timed at the middle of its round trip).

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::mode;
use crate::pin::{self, Layout};
use crate::runner::Plan;
use crate::server::{Spec, Spin};

/// xorshift steps per unit of the neighbour's work (about 1-2 us on a current core).
pub const UNIT_STEPS: u32 = 1024;

/// The plan: spinpark and tokio with `workers` workers in the remote layout, over
/// [`mode::neighbour`]'s gaps, restarted every round, beside the neighbour; `None` without
/// a remote layout (fewer than 2 CPUs).
pub fn plan(
    workers: usize,
    rounds: usize,
    quick: bool,
    gap_budget: Option<Duration>,
    spin: Option<Spin>,
    deadline: bool,
) -> Option<Plan> {
    let layout = Layout::remote()?;
    let cpus = layout.server_cpus().len();
    Some(Plan {
        title: format!(
            "{} layout, {workers} worker{}, a CPU-bound neighbour on the server CPU{}",
            layout.name(),
            if workers == 1 { "" } else { "s" },
            if cpus == 1 { "" } else { "s" }
        ),
        layout,
        specs: vec![
            Spec::new("spinpark", workers).spin(spin).deadline(deadline),
            Spec::new("tokio", workers).deadline(deadline),
        ],
        modes: mode::neighbour(quick, gap_budget),
        rounds,
        // A fresh spin policy every round, learning beside the neighbour from the start.
        restart: true,
        fresh_per_mode: false,
        neighbour: true,
    })
}

/// One reading of the neighbour's count, and when it was taken.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub units: u64,
    /// The middle of the query's round trip.
    pub at: Instant,
}

impl Reading {
    /// Units per second between `before` and this reading.
    pub fn rate_since(&self, before: Reading) -> f64 {
        let secs = self.at.duration_since(before.at).as_secs_f64();
        if secs > 0.0 {
            self.units.saturating_sub(before.units) as f64 / secs
        } else {
            f64::NAN
        }
    }
}

/// The neighbour process and its control pipe; killed (and reaped) on drop if not stopped.
pub struct Neighbour {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    reaped: bool,
}

impl Neighbour {
    /// Starts the neighbour with all its threads on `cpus`, one busy thread per CPU.
    pub fn start(cpus: &[usize]) -> Neighbour {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--serve", "neighbour"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = pin::spawn_on(cpus, &mut cmd).expect("start the neighbour");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut n = Neighbour {
            child,
            stdin,
            stdout,
            reaped: false,
        };
        // Started once it answers.
        n.count();
        n
    }

    /// The units done so far.
    pub fn count(&mut self) -> Reading {
        let sent = Instant::now();
        let stdin = self.stdin.as_mut().expect("the neighbour is running");
        writeln!(stdin, "COUNT").expect("ask the neighbour");
        stdin.flush().expect("ask the neighbour");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the neighbour's count");
        let got = Instant::now();
        let units = line
            .trim()
            .strip_prefix("COUNT ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the neighbour said {line:?}"));
        Reading {
            units,
            at: sent + got.duration_since(sent) / 2,
        }
    }

    /// Closes its stdin (it exits at end of input) and waits for it.
    pub fn stop(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
        self.reaped = true;
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        if !self.reaped {
            drop(self.stdin.take());
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One unit of work: [`UNIT_STEPS`] xorshift64 steps from `x`.
fn unit(mut x: u64) -> u64 {
    for _ in 0..UNIT_STEPS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// Runs the neighbour in this process (`--serve neighbour`): a busy thread per allowed CPU,
/// pinned to it, and this thread answering `COUNT` lines on stdin until it closes.
pub fn serve() -> ! {
    let done = Arc::new(AtomicU64::new(0));
    for (i, cpu) in pin::allowed().into_iter().enumerate() {
        let done = Arc::clone(&done);
        std::thread::Builder::new()
            .name(format!("neighbour-{cpu}"))
            .spawn(move || {
                pin::pin_current(&[cpu]).ok();
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
                loop {
                    x = std::hint::black_box(unit(std::hint::black_box(x)));
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
            .expect("the neighbour's busy thread");
    }
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim() == "COUNT" {
            writeln!(out, "COUNT {}", done.load(Ordering::Relaxed)).ok();
            out.flush().ok();
        }
    }
    std::process::exit(0);
}
