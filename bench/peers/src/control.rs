//! The control side of a peer server, as the bench's own servers have it
//! (`bench/benches/rpc/server.rs`): `PORT n` on stdout once the server listens, then a
//! `STATS user_us sys_us voluntary_cs involuntary_cs` line for each `STATS` line on stdin
//! (the whole process's usage, from `getrusage(RUSAGE_SELF)`), and exit at end of input.
//!
//! The runtime's worker thread reports its listening port (or why it could not listen)
//! through a [`Listening`]; the main thread prints it and answers on stdin. A server that
//! cannot start prints `ERROR reason` instead of the port (and the reason on stderr) and exits
//! with status 1, so the bench can say why it skipped that runtime.

use std::io::{self, BufRead, Write};
use std::sync::mpsc;

/// The worker thread's side: where it says whether it listens.
#[derive(Debug)]
pub struct Listening(mpsc::Sender<Result<u16, String>>);

impl Listening {
    /// A pair: the worker's side, and the receiver [`announce`] reads.
    pub fn channel() -> (Listening, mpsc::Receiver<Result<u16, String>>) {
        let (tx, rx) = mpsc::channel();
        (Listening(tx), rx)
    }

    /// Reports the port the server listens on, or why it does not.
    pub fn report(&self, outcome: Result<u16, String>) {
        // The main thread waits for this; it only goes away after exiting.
        let _ = self.0.send(outcome);
    }
}

/// Prints `PORT n` once the worker listens, or `ERROR reason` (and exits) if it cannot; a
/// worker that went away without a word is an error too.
pub fn announce(runtime: &str, listening: mpsc::Receiver<Result<u16, String>>) {
    let outcome = listening
        .recv()
        .unwrap_or_else(|_| Err(format!("the {runtime} thread stopped before listening")));
    let mut out = io::stdout().lock();
    match outcome {
        Ok(port) => {
            writeln!(out, "PORT {port}").ok();
            out.flush().ok();
        }
        Err(reason) => {
            eprintln!("{runtime} server: {reason}");
            writeln!(out, "ERROR {reason}").ok();
            out.flush().ok();
            std::process::exit(1);
        }
    }
}

/// Answers `STATS` lines on stdin until it closes, then exits the process.
pub fn answer_stats() -> ! {
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim() == "STATS" {
            let (user, sys, vol, invol) = usage();
            let mut out = io::stdout().lock();
            writeln!(out, "STATS {user} {sys} {vol} {invol}").ok();
            out.flush().ok();
        }
    }
    std::process::exit(0);
}

/// User and system CPU time (microseconds) and voluntary and involuntary context switches of
/// this process, all threads.
fn usage() -> (u64, u64, u64, u64) {
    // SAFETY: rusage is plain old data (all-zero is valid), and getrusage fills the struct on
    // our stack, which outlives the call.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (
        us(ru.ru_utime),
        us(ru.ru_stime),
        ru.ru_nvcsw as u64,
        ru.ru_nivcsw as u64,
    )
}
