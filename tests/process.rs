//! `spinpark::process` with tokio's I/O traits (the `tokio-io` feature): tokio's own
//! `tests/process_*.rs`, ported by changing paths (and, where a test slept to let something
//! happen, waiting for that thing instead).
#![cfg(feature = "tokio-io")]

use std::future::poll_fn;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::process::Stdio;
use std::task::Poll;
use std::time::Duration;

use spinpark::process::{ChildStdin, Command};
use spinpark::time::timeout;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// Only for a broken build: each test finishes in well under a second.
const LIMIT: Duration = Duration::from_secs(30);

// process_smoke.rs
#[spinpark::test]
async fn smoke() {
    let mut child = Command::new("sh").arg("-c").arg("exit 2").spawn().unwrap();
    assert!(child.id().expect("missing id") > 0);
    assert_eq!(child.wait().await.unwrap().code(), Some(2));
    // Fused, as std's.
    assert_eq!(child.wait().await.unwrap().code(), Some(2));
    assert_eq!(child.id(), None);
    drop(child.kill());
}

// process_kill_after_wait.rs
#[spinpark::test]
async fn kill_after_wait() {
    let mut child = Command::new("sh").args(["-c", "exit 2"]).spawn().unwrap();
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    child.start_kill().unwrap();
    child.kill().await.unwrap();
}

// process_arg0.rs
#[spinpark::test]
async fn arg0() {
    let mut cmd = Command::new("sh");
    cmd.arg0("test_string").arg("-c").arg("echo $0");
    let output = cmd.output().await.unwrap();
    assert_eq!(output.stdout, b"test_string\n");
}

// process_issue_42.rs: batches of children exiting at about the same time, so that one
// readiness event consumed for one child would starve another.
#[spinpark::test(flavor = "multi_thread", worker_threads = 4)]
async fn issue_42() {
    let batches = (0..10).map(|_| {
        spinpark::spawn(async {
            let children = (0..10).map(|i| {
                let mut child = Command::new("echo")
                    .arg(format!("I am spawned process #{i}"))
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .kill_on_drop(true)
                    .spawn()
                    .unwrap();
                async move { child.wait().await }
            });
            for status in futures_util::future::join_all(children).await {
                assert!(status.unwrap().success());
            }
        })
    });
    timeout(LIMIT, futures_util::future::join_all(batches))
        .await
        .unwrap()
        .into_iter()
        .for_each(|r| r.unwrap());
}

// process_issue_2174.rs: a writer blocked on a full stdin pipe fails once the child is
// killed (instead of hanging). tokio's sleeps for a second to fill the pipe; this waits
// until a write is pending instead.
#[spinpark::test]
async fn issue_2174() {
    let mut child = Command::new("sleep")
        .arg("1000")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // Fill the pipe until a write is pending.
    spinpark::task::unconstrained(poll_fn(|cx| loop {
        match Pin::new(&mut input).poll_write(cx, &[0u8; 8192]) {
            Poll::Ready(Ok(_)) => {}
            Poll::Ready(Err(e)) => panic!("{e}"),
            Poll::Pending => return Poll::Ready(()),
        }
    }))
    .await;
    let writer = spinpark::spawn(async move {
        let data = [0u8; 8192];
        loop {
            input.write_all(&data).await?;
        }
        #[allow(unreachable_code)]
        Ok::<(), std::io::Error>(())
    });
    child.kill().await.unwrap();
    let e = timeout(LIMIT, writer).await.unwrap().unwrap().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
}

// process_kill_on_drop.rs, without its sleeps: the grandchild outlives the killed child and
// is the one that writes.
#[spinpark::test]
async fn kill_on_drop() {
    let mut child = Command::new("sh")
        .args([
            "-c",
            "
            # A grandchild that is not killed: it waits for its input (on fd 3: a
            # background job's own stdin is /dev/null) to close.
            exec 3<&0
            (read x <&3; echo child ran) &
            echo ready
            # Await our death (exec: the process killed is the one that sleeps).
            exec sleep 1000 >/dev/null
            ",
        ])
        .kill_on_drop(true)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).await.unwrap();
    assert_eq!(line, "ready\n");
    drop(child);
    // Only now may the grandchild write.
    drop(stdin);
    let mut msg = String::new();
    timeout(LIMIT, out.read_to_string(&mut msg))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(msg, "child ran\n");
}

// process_change_of_runtime.rs (the first test; the second expects tokio's panic outside a
// runtime, where spinpark returns an error).
#[test]
fn process_spawned_and_wait_in_different_runtime() {
    let mut child = spinpark::Runtime::new().unwrap().block_on(async {
        Command::new("true")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    });
    spinpark::Runtime::new().unwrap().block_on(async {
        let _ = child.wait().await.unwrap();
    });
}

#[test]
fn process_spawned_outside_runtime_is_an_error() {
    let e = Command::new("true")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_err();
    assert!(e.to_string().contains("needs a spinpark runtime"), "{e}");
}

// process_issue_8042.rs
async fn read_chunks<R: AsyncRead + Unpin>(
    reader: &mut R,
    stdin: &mut ChildStdin,
    first: &[u8],
    second: &[u8],
) {
    let mut buf = vec![0; first.len()];
    reader.read_exact(&mut buf).await.unwrap();
    assert_eq!(buf, first);
    // The child waits for our acknowledgement, so this read must return Pending.
    poll_fn(|cx| {
        let mut bytes = [0; 1];
        let mut buf = ReadBuf::new(&mut bytes);
        assert!(Pin::new(&mut *reader).poll_read(cx, &mut buf).is_pending());
        Poll::Ready(())
    })
    .await;
    stdin.write_all(b"continue\n").await.unwrap();
    buf.resize(second.len(), 0);
    reader.read_exact(&mut buf).await.unwrap();
    assert_eq!(buf, second);
    stdin.write_all(b"exit\n").await.unwrap();
    assert_eq!(reader.read(&mut buf).await.unwrap(), 0);
}

#[spinpark::test]
async fn child_stdout_receives_second_chunk_before_exit() {
    let mut child = Command::new("sh")
        .args([
            "-c",
            "printf 'chunk1\\n'; read gate; printf 'chunk2\\n'; read gate",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    timeout(
        LIMIT,
        read_chunks(&mut stdout, &mut stdin, b"chunk1\n", b"chunk2\n"),
    )
    .await
    .expect("stdout stalled while the child was still alive");
    let status = timeout(LIMIT, child.wait()).await.unwrap().unwrap();
    assert!(status.success());
}

#[spinpark::test]
async fn child_stderr_receives_second_chunk_before_exit() {
    let mut child = Command::new("sh")
        .args([
            "-c",
            "printf 'err1\\n' >&2; read gate; printf 'err2\\n' >&2; read gate",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    timeout(
        LIMIT,
        read_chunks(&mut stderr, &mut stdin, b"err1\n", b"err2\n"),
    )
    .await
    .expect("stderr stalled while the child was still alive");
    let status = timeout(LIMIT, child.wait()).await.unwrap().unwrap();
    assert!(status.success());
}

#[spinpark::test]
async fn child_stdin_rearms_after_pipe_is_full() {
    let (gate, child_gate) = std::os::unix::net::UnixStream::pair().unwrap();
    gate.set_nonblocking(true).unwrap();
    let mut gate = spinpark::net::UnixStream::from_std(gate).unwrap();
    let mut child = Command::new("sh")
        .args(["-c", "read gate <&2; wc -c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(OwnedFd::from(child_gate)))
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut written = 0;
    timeout(LIMIT, async {
        // The child waits on a separate socket while we fill its stdin pipe. Unconstrained,
        // so that Pending means the pipe is full.
        spinpark::task::unconstrained(poll_fn(|cx| loop {
            match Pin::new(&mut stdin).poll_write(cx, &[b'x'; 8192]) {
                Poll::Ready(Ok(n)) => {
                    assert!(n > 0);
                    written += n;
                }
                Poll::Ready(Err(err)) => panic!("writing stdin failed: {err}"),
                Poll::Pending if written == 0 => return Poll::Pending,
                Poll::Pending => return Poll::Ready(()),
            }
        }))
        .await;
        gate.write_all(b"continue\n").await.unwrap();
        stdin.write_all(b"x").await.unwrap();
        drop(stdin);
        let mut output = String::new();
        stdout.read_to_string(&mut output).await.unwrap();
        assert_eq!(output.trim().parse::<usize>().unwrap(), written + 1);
        assert!(child.wait().await.unwrap().success());
    })
    .await
    .expect("stdin stalled after the child started reading");
}
