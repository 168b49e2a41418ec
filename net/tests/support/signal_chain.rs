//! What the `signal_chain_*` tests share: a program's own signal handlers that count what
//! they see, and the `SIGCHLD` scenario run against them.
//!
//! Signal handlers are process-wide, so each case (the program's handler installed before the
//! runtime exists, or after its first spawn) is its own test binary.

// Each test binary uses part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::SeqCst};
use std::time::{Duration, Instant};

use spinpark_executor::Runtime;
use spinpark_net::process::Command;
use spinpark_net::time::sleep;

/// How long a test waits for something it expects (a watchdog, not a measurement).
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// `SIGCHLD`s the program's own handler saw.
pub(crate) static CHLD_SEEN: AtomicU64 = AtomicU64::new(0);

/// Deliveries the program's `SA_SIGINFO` action saw, and the `si_signo` and `si_pid` of the
/// last one.
pub(crate) static INFO_SEEN: AtomicU64 = AtomicU64::new(0);
pub(crate) static INFO_SIGNO: AtomicI32 = AtomicI32::new(0);
pub(crate) static INFO_PID: AtomicI32 = AtomicI32::new(0);

/// Deliveries the program's plain handler (no `SA_SIGINFO`) saw.
pub(crate) static PLAIN_SEEN: AtomicU64 = AtomicU64::new(0);

extern "C" fn count_chld(_: libc::c_int) {
    CHLD_SEEN.fetch_add(1, SeqCst);
}

extern "C" fn count_plain(_: libc::c_int) {
    PLAIN_SEEN.fetch_add(1, SeqCst);
}

extern "C" fn record_info(signo: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    INFO_SEEN.fetch_add(1, SeqCst);
    if info.is_null() {
        INFO_SIGNO.store(-1, SeqCst);
        return;
    }
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO action for the length of
    // the call; for a signal sent by kill(2) its pid field is the sender's.
    let (si_signo, si_pid) = unsafe { ((*info).si_signo, (*info).si_pid()) };
    assert_eq!(si_signo, signo);
    INFO_SIGNO.store(si_signo, SeqCst);
    INFO_PID.store(si_pid, SeqCst);
}

fn install(signum: libc::c_int, handler: libc::sighandler_t, flags: libc::c_int) {
    // SAFETY: sigaction is plain old data; all-zero is a valid starting value.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler;
    action.sa_flags = flags | libc::SA_RESTART;
    // SAFETY: `action` is a valid sigaction on our stack (its mask empty, from zeroed); the
    // handlers above only touch atomics, which is async-signal-safe.
    let r = unsafe { libc::sigaction(signum, &action, std::ptr::null_mut()) };
    assert_eq!(r, 0, "sigaction: {}", std::io::Error::last_os_error());
}

/// The program's own `SIGCHLD` handler, a plain one that counts deliveries (reaping nothing).
pub(crate) fn install_program_sigchld() {
    install(
        libc::SIGCHLD,
        count_chld as *const () as libc::sighandler_t,
        0,
    );
}

/// The program's own `SA_SIGINFO` action for `signum`, which records the `siginfo_t`.
pub(crate) fn install_program_siginfo(signum: libc::c_int) {
    install(
        signum,
        record_info as *const () as libc::sighandler_t,
        libc::SA_SIGINFO,
    );
}

/// The program's own plain handler for `signum`.
pub(crate) fn install_program_plain(signum: libc::c_int) {
    install(signum, count_plain as *const () as libc::sighandler_t, 0);
}

/// Waits (bounded) until `counter` is past `than`.
pub(crate) fn wait_past(counter: &AtomicU64, than: u64) -> bool {
    let start = Instant::now();
    while counter.load(SeqCst) <= than {
        if start.elapsed() > PATIENCE {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// The process state letter of `pid`, or `None` once it is gone (reaped).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.trim_start().chars().next()
}

/// [`wait_past`] inside the runtime: the runtime goes on running its tasks meanwhile (on a
/// current-thread runtime, only while this waits).
pub(crate) async fn wait_past_async(counter: &AtomicU64, than: u64) -> bool {
    let start = Instant::now();
    while counter.load(SeqCst) <= than {
        if start.elapsed() > PATIENCE {
            return false;
        }
        sleep(Duration::from_millis(1)).await;
    }
    true
}

/// The scenario: one child waited for on the runtime, 100 running children dropped (the
/// runtime's orphan reaper then listens for `SIGCHLD`, installing its handler), then 50
/// children run with std, one after the other. The program's handler must go on seeing
/// `SIGCHLD`: after the dropped ones exit, and for every std child.
pub(crate) fn sigchld_scenario(rt: &Runtime) {
    rt.block_on(async {
        let status = Command::new("true").spawn().unwrap().wait().await.unwrap();
        assert!(status.success());
        let before_drop = CHLD_SEEN.load(SeqCst);
        let pids: Vec<u32> = (0..100)
            .map(|_| {
                let child = Command::new("sleep").arg("0.1").spawn().unwrap();
                child.id().unwrap()
                // dropped here, running: it joins the orphan list
            })
            .collect();
        // The orphans are reaped by the runtime (its handler works), and their exits reached
        // the program's handler too.
        let start = Instant::now();
        for &pid in &pids {
            while state(pid).is_some() {
                assert!(
                    start.elapsed() < PATIENCE,
                    "dropped child {pid} was not reaped: state {:?}",
                    state(pid)
                );
                sleep(Duration::from_millis(5)).await;
            }
        }
        assert!(
            wait_past_async(&CHLD_SEEN, before_drop).await,
            "the program's SIGCHLD handler saw none of the 100 dropped children's exits"
        );
        for i in 0..50 {
            let before = CHLD_SEEN.load(SeqCst);
            let status = std::process::Command::new("true").status().unwrap();
            assert!(status.success());
            assert!(
                wait_past_async(&CHLD_SEEN, before).await,
                "the program's SIGCHLD handler missed std child #{i} (it saw {} in all)",
                CHLD_SEEN.load(SeqCst)
            );
        }
    });
}
