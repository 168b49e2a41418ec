//! Running the compiled tests: each test in a process of its own, a few at a time, each with a
//! time limit, and a failed test once more.
//!
//! ```text
//! let runs = run_all(jobs, Limits { parallel: 2, timeout: Duration::from_secs(30) }, &cwd);
//! ```
//!
//! One process per test keeps one test's hang, crash or signal handler from touching the
//! others, and lets a hung test be killed. Each test process leads a process group of its
//! own, so that a hung test is killed with every process it started (a `process_*` test's
//! children), and whatever a finished test left running goes too. Output goes to a log file
//! per test, read back once the process is gone. A test that fails is run a second time; one that
//! passes then counts as passed and is marked flaky. A hung one is not run again.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::libtest::{self, Outcome};

/// One test to run.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) exe: PathBuf,
    pub(crate) test: String,
    /// Where its output goes.
    pub(crate) log: PathBuf,
}

/// How a test ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Passed,
    /// Failed (or crashed), with the first lines of its output.
    Failed(String),
    /// Still running at the time limit; killed.
    Hung,
    /// The binary had no test by that name.
    NotFound,
}

/// A test's result.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) verdict: Verdict,
    /// Failed once, then passed.
    pub(crate) flaky: bool,
}

/// How many tests at once, and how long each may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) parallel: usize,
    pub(crate) timeout: Duration,
}

/// Runs every job (see the module docs); the results are in the jobs' order. `progress` is
/// called after each test with the number done.
pub(crate) fn run_all(
    jobs: &[Job],
    limits: Limits,
    cwd: &Path,
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<Run> {
    let queue = Mutex::new((0..jobs.len()).collect::<VecDeque<usize>>());
    let results = Mutex::new(vec![None; jobs.len()]);
    let done = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..limits.parallel.max(1) {
            scope.spawn(|| loop {
                let Some(i) = queue.lock().unwrap().pop_front() else {
                    break;
                };
                let run = run_with_retry(&jobs[i], limits.timeout, cwd);
                results.lock().unwrap()[i] = Some(run);
                let mut done = done.lock().unwrap();
                *done += 1;
                progress(*done);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

fn run_with_retry(job: &Job, timeout: Duration, cwd: &Path) -> Run {
    let first = run_one(job, timeout, cwd);
    if !matches!(first, Verdict::Failed(_)) {
        return Run {
            verdict: first,
            flaky: false,
        };
    }
    match run_one(job, timeout, cwd) {
        Verdict::Passed => Run {
            verdict: Verdict::Passed,
            flaky: true,
        },
        _ => Run {
            verdict: first,
            flaky: false,
        },
    }
}

/// Runs one test in a process of its own.
pub(crate) fn run_one(job: &Job, timeout: Duration, cwd: &Path) -> Verdict {
    match try_run_one(job, timeout, cwd) {
        Ok(verdict) => verdict,
        Err(err) => Verdict::Failed(format!("could not run {}: {err}", job.exe.display())),
    }
}

fn try_run_one(job: &Job, timeout: Duration, cwd: &Path) -> std::io::Result<Verdict> {
    if let Some(dir) = job.log.parent() {
        fs::create_dir_all(dir)?;
    }
    let log = File::create(&job.log)?;
    let mut child = Command::new(&job.exe)
        .args(["--exact", &job.test, "--test-threads=1", "--color=never"])
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()?;
    let group = child.id();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > timeout {
            kill_group(group);
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Verdict::Hung);
        }
        let pause = if started.elapsed() < Duration::from_secs(1) {
            5
        } else {
            50
        };
        std::thread::sleep(Duration::from_millis(pause));
    };
    // Children the test left behind (none, when it cleans up after itself).
    kill_group(group);
    let output = String::from_utf8_lossy(&fs::read(&job.log)?).into_owned();
    Ok(
        match libtest::outcome(&output, &job.test, status.success()) {
            Outcome::Passed => Verdict::Passed,
            Outcome::NotRun => Verdict::NotFound,
            Outcome::Failed(text) => match status.signal() {
                Some(sig) => Verdict::Failed(format!("killed by signal {sig}\n{text}")),
                None => Verdict::Failed(text),
            },
        },
    )
}

/// Sends SIGKILL to every process of the group `group` leads (nothing if none is left).
fn kill_group(group: u32) {
    let Ok(pgid) = libc::pid_t::try_from(group) else {
        return;
    };
    // SAFETY: kill(2) with a negative pid only sends a signal to that process group, which
    // this runner created for the test (`process_group(0)`); it touches no memory.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}
