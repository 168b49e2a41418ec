//! A program's own signal handlers, installed before the runtime exists, keep running once the
//! runtime installs its handlers for the same signals (it calls the action it replaced, as
//! signal-hook-registry, and so tokio, does): a counting `SIGCHLD` handler across the orphan
//! reaper's `SIGCHLD` listener, and an `SA_SIGINFO` action, which gets the real `siginfo_t`.
//! Its own test binary: the handlers are process-wide.

#[path = "support/signal_chain.rs"]
mod support;

use std::sync::atomic::Ordering::SeqCst;

use spinpark_executor::Builder;
use spinpark_net::signal::{signal, SignalKind};
use spinpark_net::time::timeout;
use support::*;

#[test]
fn the_programs_sigchld_handler_runs_on() {
    install_program_sigchld();
    for rt in [
        Builder::new().worker_threads(1).build().unwrap(),
        Builder::new_current_thread().build().unwrap(),
    ] {
        sigchld_scenario(&rt);
    }
}

#[test]
fn the_programs_siginfo_action_gets_the_delivery() {
    install_program_siginfo(libc::SIGUSR1);
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let mut usr1 = signal(SignalKind::user_defined1()).unwrap();
        // SAFETY: kill(2) with our own pid; both handlers for SIGUSR1 are installed.
        let r = unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
        assert_eq!(r, 0);
        assert_eq!(timeout(PATIENCE, usr1.recv()).await, Ok(Some(())));
    });
    assert!(wait_past(&INFO_SEEN, 0), "the program's action never ran");
    assert_eq!(INFO_SIGNO.load(SeqCst), libc::SIGUSR1);
    // SAFETY: getpid cannot fail.
    assert_eq!(INFO_PID.load(SeqCst), unsafe { libc::getpid() });
}
