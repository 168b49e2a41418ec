//! Dropped children that still run hold no descriptor each: 200 `sleep` children spawned
//! and dropped under a limit of 64 descriptors, with a listener bound meanwhile, and no
//! zombie once they exit. Runs in a child process of its own (this test binary again), since
//! the descriptor limit and the orphans are the whole process's.

use std::process::Stdio;
use std::time::Duration;

use spinpark_executor::Builder;
use spinpark_net::process::Command;
use spinpark_net::time::sleep;
use spinpark_net::TcpListener;

/// Set in the child process that runs the body.
const CHILD_ENV: &str = "SPINPARK_ORPHAN_FDS_CHILD";
/// The descriptor limit in that process: far below the number of orphans.
const FD_LIMIT: libc::rlim_t = 64;
const ORPHANS: usize = 200;

#[test]
fn dropped_running_children_hold_no_descriptor_each() {
    if std::env::var_os(CHILD_ENV).is_some() {
        body();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "dropped_running_children_hold_no_descriptor_each",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the child process failed: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// The state letter in `/proc/<pid>/stat` (`Z` for a zombie), `None` once the pid is gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

fn body() {
    let limit = libc::rlimit {
        rlim_cur: FD_LIMIT,
        rlim_max: FD_LIMIT,
    };
    // SAFETY: setrlimit reads the struct it is given, which lives across the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    let rt = Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let before = open_fds();
        let mut most = before;
        let mut pids = Vec::with_capacity(ORPHANS);
        for i in 0..ORPHANS {
            let child = Command::new("sleep")
                .arg("1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {i} of {ORPHANS}: {e}"));
            pids.push(child.id().unwrap());
            drop(child);
            if i % 20 == 10 {
                let listener = TcpListener::bind("127.0.0.1:0")
                    .await
                    .unwrap_or_else(|e| panic!("bind after {i} orphans: {e}"));
                most = most.max(open_fds());
                drop(listener);
            }
            most = most.max(open_fds());
        }
        // A few descriptors for the first SIGCHLD listener and a spawn's own pipe; nothing
        // that grows with the orphans.
        assert!(
            most <= before + 8,
            "descriptors went from {before} to {most} with {ORPHANS} orphans"
        );
        // They exit after a second; each must then be reaped (gone from /proc, not `Z`). The
        // bound only keeps a broken build from hanging.
        for pid in pids {
            let mut steps = 0;
            while let Some(state) = proc_state(pid) {
                steps += 1;
                assert!(steps < 3000, "child {pid} not reaped (state {state})");
                sleep(Duration::from_millis(10)).await;
            }
        }
        assert!(open_fds() <= before + 8);
    });
}
