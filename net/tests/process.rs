//! `process`: children spawned, fed, read, waited for, killed and dropped, on current-thread
//! and multi-thread runtimes. No timing assertions: loops that wait for the kernel are
//! bounded, and a generous timeout only keeps a broken build from hanging.

use std::future::Future;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use spinpark_net::time::{sleep, timeout};

/// Only for a broken build: every test here finishes in well under a second.
const PATIENCE: Duration = Duration::from_secs(60);

fn runtimes() -> [(&'static str, Runtime); 2] {
    [
        (
            "current-thread",
            Builder::new_current_thread().build().unwrap(),
        ),
        (
            "multi-thread",
            Builder::new().worker_threads(2).build().unwrap(),
        ),
    ]
}

/// Runs `test` on a current-thread and on a multi-thread runtime.
fn on_both<F, Fut>(test: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    for (flavor, rt) in runtimes() {
        rt.block_on(async {
            timeout(PATIENCE, test())
                .await
                .unwrap_or_else(|_| panic!("stuck on the {flavor} runtime"));
        });
    }
}

/// The state letter in `/proc/<pid>/stat` (`Z` for a zombie), `None` once the pid is gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which is in parentheses and may hold spaces.
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Waits (a bounded number of steps that let the runtime run) until `pid` is gone, i.e.
/// reaped: a zombie stays in /proc until then.
async fn assert_reaped(pid: u32) {
    for _ in 0..2000 {
        match proc_state(pid) {
            None => return,
            Some(_) => sleep(Duration::from_millis(5)).await,
        }
    }
    panic!("pid {pid} was not reaped: state {:?}", proc_state(pid));
}

#[test]
fn exit_codes_status_and_a_fused_wait() {
    on_both(|| async {
        let mut child = Command::new("sh").args(["-c", "exit 2"]).spawn().unwrap();
        let pid = child.id().expect("a running child has a pid");
        assert!(pid > 0);
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(2));
        // Fused, as std's and tokio's: the same status again, and no pid any more.
        assert_eq!(child.wait().await.unwrap().code(), Some(2));
        assert_eq!(child.try_wait().unwrap().unwrap().code(), Some(2));
        assert_eq!(child.id(), None);
        assert_reaped(pid).await;

        let status = Command::new("true").status().await.unwrap();
        assert!(status.success());
        let status = Command::new("false").status().await.unwrap();
        assert_eq!(status.code(), Some(1));
    });
}

#[test]
fn output_collects_stdout_stderr_and_status() {
    on_both(|| async {
        let out = Command::new("sh")
            .args(["-c", "echo hello; echo oops >&2; exit 3"])
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"hello\n");
        assert_eq!(out.stderr, b"oops\n");

        let out = Command::new("echo").arg("x").output().await.unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"x\n");
        assert!(out.stderr.is_empty());
    });
}

#[test]
fn wait_with_output_reads_both_streams_while_waiting() {
    // More than a pipe holds on each stream: a parent that waited first, or read one stream
    // to its end before the other, would deadlock with the child.
    on_both(|| async {
        let child = Command::new("sh")
            .args([
                "-c",
                "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2; \
                 head -c 300000 /dev/zero; exit 5",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.wait_with_output().await.unwrap();
        assert_eq!(out.status.code(), Some(5));
        assert_eq!(out.stdout.len(), 600_000);
        assert_eq!(out.stderr.len(), 200_000);
        assert!(out.stdout.iter().all(|&b| b == 0));
    });
}

#[test]
fn piped_stdin_to_stdout_round_trip() {
    on_both(|| async {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        // Several pipes' worth, written while the other side reads.
        let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let expected = data.clone();
        let writer = spawn(async move {
            stdin.write_all(&data).await.unwrap();
            // Dropping stdin is cat's end of file.
        });
        let mut got = Vec::new();
        stdout.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert_eq!(got.len(), expected.len());
        assert!(got == expected, "cat gave back other bytes");
        assert!(child.wait().await.unwrap().success());
    });
}

#[test]
fn wait_closes_stdin_so_a_reading_child_can_exit() {
    on_both(|| async {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        assert!(child.stdin.is_some());
        assert!(child.wait().await.unwrap().success());
        assert!(child.stdin.is_none());
    });
}

#[test]
fn try_wait_until_exit() {
    on_both(|| async {
        let mut child = Command::new("sh")
            .args(["-c", "read x; exit 4"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        assert_eq!(child.try_wait().unwrap(), None);
        assert!(child.id().is_some());
        drop(child.stdin.take()); // `read` sees end of file
        let mut status = None;
        for _ in 0..2000 {
            status = child.try_wait().unwrap();
            if status.is_some() {
                break;
            }
            sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(status.expect("the child never exited").code(), Some(4));
        assert_eq!(child.id(), None);
        assert_eq!(child.wait().await.unwrap().code(), Some(4));
    });
}

#[test]
fn kill_and_start_kill_report_a_signal_exit() {
    on_both(|| async {
        let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
        child.kill().await.unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert_eq!(status.code(), None);
        // Killing a reaped child is fine (tokio's kill_after_wait).
        child.start_kill().unwrap();
        child.kill().await.unwrap();

        let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
        let pid = child.id().unwrap();
        child.start_kill().unwrap();
        assert_eq!(child.wait().await.unwrap().signal(), Some(libc::SIGKILL));
        assert_reaped(pid).await;

        // A child that exited but was not reaped yet takes the kill harmlessly.
        let mut child = Command::new("sh").args(["-c", "exit 2"]).spawn().unwrap();
        child.start_kill().unwrap();
        child.wait().await.unwrap();
    });
}

#[test]
fn a_signal_from_elsewhere_is_reported() {
    on_both(|| async {
        let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
        let pid = child.id().unwrap() as libc::pid_t;
        // SAFETY: kill(2) on our own unreaped child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        assert_eq!(child.wait().await.unwrap().signal(), Some(libc::SIGTERM));
    });
}

#[test]
fn kill_on_drop_kills_and_reaps() {
    on_both(|| async {
        let mut cmd = Command::new("sleep");
        cmd.arg("1000").kill_on_drop(true);
        assert!(cmd.get_kill_on_drop());
        let child = cmd.spawn().unwrap();
        let pid = child.id().unwrap();
        assert!(proc_state(pid).is_some());
        drop(child);
        // Killed, then reaped by the runtime: the pid goes away.
        assert_reaped(pid).await;
    });
}

#[test]
fn kill_on_drop_closes_the_pipes_with_the_child() {
    on_both(|| async {
        let mut child = Command::new("sh")
            .args(["-c", "echo started; exec sleep 1000"])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut line = [0; 8];
        out.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"started\n");
        drop(child);
        // The only writer was killed: end of file.
        let mut rest = Vec::new();
        out.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    });
}

#[test]
fn without_kill_on_drop_a_dropped_child_runs_on_and_is_reaped() {
    on_both(|| async {
        let mut child = Command::new("sh")
            .args(["-c", "read x; echo done"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        drop(child);
        // Still running: it answers once fed.
        stdin.write_all(b"go\n").await.unwrap();
        let mut out = String::new();
        stdout.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "done\n");
        assert_reaped(pid).await;
    });
}

#[test]
fn a_dropped_child_never_stays_a_zombie() {
    on_both(|| async {
        let child = Command::new("true").spawn().unwrap();
        let pid = child.id().unwrap();
        // Make sure it has exited (a zombie now) before it is dropped.
        for _ in 0..2000 {
            if proc_state(pid) == Some('Z') {
                break;
            }
            sleep(Duration::from_millis(1)).await;
        }
        drop(child);
        assert_reaped(pid).await;

        // And one that exits after the drop.
        let child = Command::new("sleep").arg("0.05").spawn().unwrap();
        let pid = child.id().unwrap();
        drop(child);
        assert_reaped(pid).await;
    });
}

#[test]
fn a_hundred_children_at_once_are_all_reaped() {
    on_both(|| async {
        let tasks: Vec<_> = (0..100u32)
            .map(|i| {
                spawn(async move {
                    let mut child = Command::new("sh")
                        .args(["-c", &format!("exit {}", i % 7)])
                        .spawn()
                        .unwrap();
                    let pid = child.id().unwrap();
                    (i, pid, child.wait().await.unwrap())
                })
            })
            .collect();
        let mut pids = Vec::new();
        for t in tasks {
            let (i, pid, status) = t.await.unwrap();
            assert_eq!(status.code(), Some((i % 7) as i32));
            pids.push(pid);
        }
        for pid in pids {
            assert_reaped(pid).await;
        }
    });
}

#[test]
fn a_hundred_dropped_children_are_all_reaped() {
    on_both(|| async {
        let mut pids = Vec::new();
        for i in 0..100 {
            let child = Command::new("sh")
                .args(["-c", if i % 2 == 0 { "exit 0" } else { "sleep 0.01" }])
                .kill_on_drop(i % 3 == 0)
                .spawn()
                .unwrap();
            pids.push(child.id().unwrap());
        }
        for pid in pids {
            assert_reaped(pid).await;
        }
    });
}

#[test]
fn a_child_dropped_as_its_runtime_shuts_down_is_reaped_from_the_next_runtime() {
    // Dropped in a runtime that then shuts down before the child exits: the task that was to
    // reap it is dropped with the runtime, and the child waits in the queue for the next
    // spawn.
    let rt = Builder::new_current_thread().build().unwrap();
    let pid = rt.block_on(async {
        let child = Command::new("sleep").arg("0.2").spawn().unwrap();
        child.id().unwrap()
    });
    drop(rt);
    for (_, rt) in runtimes() {
        rt.block_on(async {
            // The next spawn takes the queue.
            Command::new("true").status().await.unwrap();
            timeout(PATIENCE, assert_reaped(pid)).await.unwrap();
        });
    }
}

#[test]
fn a_missing_program_is_std_s_not_found_error() {
    on_both(|| async {
        let e = Command::new("/definitely/not/a/program")
            .spawn()
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        let e = Command::new("no-such-program-spinpark-test")
            .output()
            .await
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = Command::new("true")
            .current_dir("/definitely/not/a/dir")
            .status()
            .await
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    });
}

#[test]
fn pre_exec_errors_fail_the_spawn() {
    on_both(|| async {
        let mut cmd = Command::new("true");
        // SAFETY: the closure only builds an error from a number (no allocation: an OS
        // error is a plain code).
        unsafe {
            cmd.pre_exec(|| Err(io::Error::from_raw_os_error(libc::EPERM)));
        }
        let e = cmd.spawn().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EPERM));
    });
}

#[test]
fn spawn_outside_a_runtime_is_an_error_and_starts_nothing() {
    let dir = std::env::temp_dir().join(format!("spinpark-process-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("ran");
    let e = Command::new("touch").arg(&marker).spawn().unwrap_err();
    assert!(e.to_string().contains("runtime"), "{e}");
    // The command was not started (touch would have made the file at once; give it a
    // moment anyway by running a child to completion the std way).
    std::process::Command::new("true").status().unwrap();
    assert!(!marker.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn spawned_in_one_runtime_waited_in_another() {
    // tokio's process_change_of_runtime: the first runtime is gone when the child is waited
    // for; the watch moves to the second.
    let mut child = Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            Command::new("sh")
                .args(["-c", "read x; exit 6"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        });
    for (_, rt) in runtimes() {
        rt.block_on(async {
            assert_eq!(child.wait().await.unwrap().code(), Some(6));
        });
    }
}

#[test]
fn a_child_s_stdout_feeds_another_child() {
    on_both(|| async {
        let mut echo = Command::new("echo")
            .arg("hello world")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin: Stdio = echo.stdout.take().unwrap().try_into().unwrap();
        let tr = Command::new("tr")
            .args(["a-z", "A-Z"])
            .stdin(stdin)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let (echo_status, out) = futures_util::join!(echo.wait(), tr.wait_with_output());
        assert!(echo_status.unwrap().success());
        assert_eq!(out.unwrap().stdout, b"HELLO WORLD\n");
    });
}

#[test]
fn std_handles_and_owned_fds() {
    on_both(|| async {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x; echo \"$x\"; echo e >&2"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = ChildStdin::from_std(child.stdin.take().unwrap()).unwrap();
        let mut stdout = ChildStdout::from_std(child.stdout.take().unwrap()).unwrap();
        let stderr = ChildStderr::from_std(child.stderr.take().unwrap()).unwrap();
        assert!(stdin.as_raw_fd() >= 0);
        assert!(format!("{stdin:?} {stdout:?} {stderr:?}").contains("fd"));
        stdin.write_all(b"ping\n").await.unwrap();
        drop(stdin);
        let mut line = String::new();
        stdout.read_to_string(&mut line).await.unwrap();
        assert_eq!(line, "ping\n");
        // Back to a blocking fd, readable the std way.
        let fd = stderr.into_owned_fd().unwrap();
        let mut rest = String::new();
        io::Read::read_to_string(&mut std::fs::File::from(fd), &mut rest).unwrap();
        assert_eq!(rest, "e\n");
        assert!(child.wait().unwrap().success());
    });
}

#[test]
fn a_cancelled_wait_can_be_resumed() {
    on_both(|| async {
        let mut child = Command::new("sh")
            .args(["-c", "read x; exit 9"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        {
            // Polled once (the child waits for input), then dropped.
            let wait = std::pin::pin!(child.wait());
            assert!(futures_util::poll!(wait).is_pending());
        }
        stdin.write_all(b"go\n").await.unwrap();
        assert_eq!(child.wait().await.unwrap().code(), Some(9));
    });
}

#[test]
fn builder_settings_reach_the_child() {
    on_both(|| async {
        let dir = std::env::temp_dir();
        let out = Command::new("sh")
            .arg0("my-name")
            .args(["-c", "echo $0 $A $B ${C-unset} $(pwd)"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .envs([("A", "1"), ("B", "2")])
            .env("C", "3")
            .env_remove("C")
            .current_dir(&dir)
            .process_group(0)
            .output()
            .await
            .unwrap();
        let pwd = dir.canonicalize().unwrap();
        let expected = format!("my-name 1 2 unset {}\n", pwd.display());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);

        let mut std = std::process::Command::new("echo");
        std.arg("from std");
        let mut cmd = Command::from(std);
        assert!(!cmd.get_kill_on_drop());
        cmd.as_std_mut().arg("too");
        assert_eq!(cmd.as_std().get_args().count(), 2);
        let out = cmd.output().await.unwrap();
        assert_eq!(out.stdout, b"from std too\n");
        assert_eq!(cmd.into_std().get_program(), "echo");
    });
}

#[test]
fn the_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Command>();
    send_sync::<Child>();
    send_sync::<ChildStdin>();
    send_sync::<ChildStdout>();
    send_sync::<ChildStderr>();
    fn send<T: Send>(_: &T) {}
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut child = Command::new("true").spawn().unwrap();
        send(&child.wait());
        send(&Command::new("true").status());
        send(&Command::new("true").output());
        child.wait().await.unwrap();
        let child = Command::new("true").spawn().unwrap();
        send(&child.wait_with_output());
        // `status` and `output` start the child at once: their futures outlive the builder.
        let status = {
            let mut cmd = Command::new("true");
            cmd.status()
        };
        let output = {
            let mut cmd = Command::new("true");
            cmd.output()
        };
        assert!(status.await.unwrap().success());
        assert!(output.await.unwrap().status.success());
    });
}
