//! What the integration tests cannot reach: the `SIGCHLD` path (this kernel has pidfds, so
//! `spawn` never takes it), and the queue of orphans no runtime was there to take.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

use spinpark_executor::{Builder, Runtime};

use super::{exit, orphan, Command};

fn current_thread() -> Runtime {
    Builder::new_current_thread().build().unwrap()
}

fn multi_thread() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// The process state letter in `/proc/<pid>/stat`, or `None` once the pid is gone.
fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the command name, which is in parentheses and may hold spaces.
    let after = &stat[stat.rfind(')')? + 1..];
    after.trim_start().chars().next()
}

/// Waits (at most 10 s, in steps that let the runtime run) until `pid` is gone: reaped.
async fn wait_gone(pid: i32) {
    for _ in 0..1000 {
        if state(pid).is_none() {
            return;
        }
        crate::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("pid {pid} is still there, in state {:?}", state(pid));
}

#[test]
fn pidfds_are_used_here() {
    // This machine's kernel has pidfd_open; were it missing, the tests below would still
    // pass, through SIGCHLD.
    let rt = current_thread();
    rt.block_on(async {
        let mut child = Command::new("true").spawn().unwrap();
        let dbg = format!("{child:?}");
        assert!(exit::pidfd_enabled());
        assert!(dbg.contains("pidfd"), "{dbg}");
        child.wait().await.unwrap();
    });
}

#[test]
fn sigchld_path_waits_for_exit_and_kill() {
    for rt in [current_thread(), multi_thread()] {
        rt.block_on(async {
            let mut cmd = Command::new("sh");
            cmd.args(["-c", "exit 7"]);
            let mut child = cmd.spawn_watched(false).unwrap();
            assert!(format!("{child:?}").contains("SIGCHLD"));
            assert_eq!(child.wait().await.unwrap().code(), Some(7));

            let mut child = Command::new("sleep")
                .arg("100")
                .spawn_watched(false)
                .unwrap();
            assert_eq!(child.try_wait().unwrap(), None);
            child.start_kill().unwrap();
            let status = child.wait().await.unwrap();
            assert_eq!(status.signal(), Some(libc::SIGKILL));
        });
    }
}

#[test]
fn sigchld_path_many_children_at_once() {
    let rt = multi_thread();
    rt.block_on(async {
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                spinpark_executor::spawn(async move {
                    let mut child = Command::new("sh")
                        .args(["-c", &format!("exit {}", i % 5)])
                        .spawn_watched(false)
                        .unwrap();
                    (i, child.wait().await.unwrap())
                })
            })
            .collect();
        for t in tasks {
            let (i, status) = t.await.unwrap();
            assert_eq!(status.code(), Some(i % 5));
        }
    });
}

#[test]
fn sigchld_path_output() {
    let rt = current_thread();
    rt.block_on(async {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = cmd
            .spawn_watched(false)
            .unwrap()
            .wait_with_output()
            .await
            .unwrap();
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    });
}

#[test]
fn sigchld_path_dropped_child_is_reaped() {
    let rt = current_thread();
    rt.block_on(async {
        let child = Command::new("true").spawn_watched(false).unwrap();
        let pid = child.id().unwrap() as i32;
        drop(child);
        wait_gone(pid).await;
    });
}

#[test]
fn a_child_dropped_outside_a_runtime_is_queued_then_reaped_by_the_next_spawn() {
    let rt = current_thread();
    let child = rt.block_on(async { Command::new("true").spawn().unwrap() });
    let pid = child.id().unwrap() as i32;
    drop(rt);
    // No runtime here: the child goes to the queue (from which another test's spawn may
    // take it already).
    drop(child);
    let rt = current_thread();
    rt.block_on(async {
        // The next spawn takes the queue: the child is reaped there, or by a task.
        let mut other = Command::new("true").spawn().unwrap();
        other.wait().await.unwrap();
        wait_gone(pid).await;
    });
    assert!(!orphan::queued().contains(&pid));
}
