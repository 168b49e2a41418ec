//! A program's own signal handlers, installed once the runtime runs (after its first spawned
//! child), keep running once the runtime installs its handlers for the same signals: a
//! counting `SIGCHLD` handler across the orphan reaper's `SIGCHLD` listener, and a plain
//! handler for a signal a listener is then made for. Its own test binary: the handlers are
//! process-wide.

#[path = "support/signal_chain.rs"]
mod support;

use spinpark_executor::Builder;
use spinpark_net::process::Command;
use spinpark_net::signal::{signal, SignalKind};
use spinpark_net::time::timeout;
use support::*;

#[test]
fn the_programs_sigchld_handler_runs_on() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    // The runtime's first spawn (a pidfd watch: no handler yet), then the program's handler.
    rt.block_on(async {
        let status = Command::new("true").spawn().unwrap().wait().await.unwrap();
        assert!(status.success());
    });
    install_program_sigchld();
    sigchld_scenario(&rt);
    sigchld_scenario(&Builder::new_current_thread().build().unwrap());
}

#[test]
fn the_programs_plain_handler_runs_on() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        // The runtime runs before the program installs its handler.
        spinpark_executor::spawn(async {}).await.unwrap();
        install_program_plain(libc::SIGUSR2);
        let mut usr2 = signal(SignalKind::user_defined2()).unwrap();
        for i in 0..3 {
            // SAFETY: kill(2) with our own pid; both handlers for SIGUSR2 are installed.
            let r = unsafe { libc::kill(libc::getpid(), libc::SIGUSR2) };
            assert_eq!(r, 0);
            assert_eq!(timeout(PATIENCE, usr2.recv()).await, Ok(Some(())));
            assert!(
                wait_past(&PLAIN_SEEN, i),
                "the program's handler missed SIGUSR2 #{i}"
            );
        }
    });
}
