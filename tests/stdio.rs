//! `spinpark::io::{stdin, stdout, stderr}` on the real standard streams of a child process:
//! this test binary runs itself again with `SPINPARK_STDIO_CHILD` set, and the test named
//! `child` then acts as a small program reading its stdin and writing its stdout and stderr
//! through spinpark's streams, while the parent feeds and reads the child's pipes with std.
//! The child frames what it writes between markers, because libtest writes its own lines to
//! the same stdout. Plus the errors outside a runtime and during shutdown, in this process.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use futures_util::{AsyncReadExt, AsyncWriteExt, FutureExt};

const MODE: &str = "SPINPARK_STDIO_CHILD";
const BEGIN: &[u8] = b"<<spinpark-stdio-begin>>";
const END: &[u8] = b"<<spinpark-stdio-end>>";

/// `len` bytes of a pattern that does not repeat within 2 MiB, so a lost, doubled or
/// reordered chunk shows.
fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i % 251) as u8 ^ (i >> 16) as u8)
        .collect()
}

/// Runs this binary's `child` test in `mode` with `input` on its stdin; returns its exit
/// status, what it framed on stdout, and its whole stderr.
fn run_child(mode: &str, input: Vec<u8>) -> (std::process::ExitStatus, Vec<u8>, Vec<u8>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--test-threads=1"])
        .env(MODE, mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Fed from a thread: the child echoes while it reads, so both pipes must move at once.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        // Dropping `stdin` closes the pipe: the child sees the end of its input.
    });
    let mut stderr = child.stderr.take().unwrap();
    let errs = std::thread::spawn(move || {
        let mut all = Vec::new();
        stderr.read_to_end(&mut all).unwrap();
        all
    });
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    let errs = errs.join().unwrap();
    (status, framed(&out), errs)
}

/// What lies between the markers (the whole output, unframed, if they are missing, so that
/// the comparison fails and shows it).
fn framed(out: &[u8]) -> Vec<u8> {
    let find = |needle: &[u8]| out.windows(needle.len()).position(|w| w == needle);
    match (find(BEGIN), find(END)) {
        (Some(b), Some(e)) if b + BEGIN.len() <= e => out[b + BEGIN.len()..e].to_vec(),
        _ => out.to_vec(),
    }
}

/// The child's side: does nothing unless this process was started by [`run_child`].
#[test]
fn child() {
    let Ok(mode) = std::env::var(MODE) else {
        return;
    };
    let rt = spinpark::Runtime::new().unwrap();
    rt.block_on(async {
        let mut out = spinpark::io::stdout();
        out.write_all(BEGIN).await.unwrap();
        match mode.as_str() {
            // Copies stdin to stdout in 64 KiB reads until the end of input, then says on
            // stderr how many bytes it saw and how many reads returned 0 at the end.
            "echo" => {
                let mut input = spinpark::io::stdin();
                let mut buf = vec![0; 64 * 1024];
                let mut total = 0;
                loop {
                    let n = input.read(&mut buf).await.unwrap();
                    if n == 0 {
                        break;
                    }
                    total += n;
                    out.write_all(&buf[..n]).await.unwrap();
                }
                // At the end of input, reading again still says so.
                assert_eq!(input.read(&mut buf).await.unwrap(), 0);
                let mut err = spinpark::io::stderr();
                err.write_all(format!("echoed {total} bytes\n").as_bytes())
                    .await
                    .unwrap();
                err.flush().await.unwrap();
            }
            // Reads all of stdin at once, writes it back in one call.
            "read_to_end" => {
                let mut all = Vec::new();
                spinpark::io::stdin().read_to_end(&mut all).await.unwrap();
                out.write_all(&all).await.unwrap();
            }
            // 5 MiB in one write_all (more than one 2 MiB buffer), a vectored write, and
            // bytes without a newline, which std's line buffer holds until the flush.
            "big" => {
                out.write_all(&pattern(5 << 20)).await.unwrap();
                let parts = [std::io::IoSlice::new(b"ab"), std::io::IoSlice::new(b"cd")];
                let mut written = 0;
                while written < 4 {
                    // Both slices fit in one buffer: taken whole the first time.
                    written += out.write_vectored(&parts).await.unwrap();
                    assert_eq!(written, 4);
                }
                out.write_all(b"no newline").await.unwrap();
            }
            #[cfg(feature = "tokio-io")]
            "tokio" => {
                let mut all = Vec::new();
                tokio::io::AsyncReadExt::read_to_end(&mut spinpark::io::stdin(), &mut all)
                    .await
                    .unwrap();
                let mut err = spinpark::io::stderr();
                tokio::io::AsyncWriteExt::write_all(&mut err, b"via tokio's traits\n")
                    .await
                    .unwrap();
                tokio::io::AsyncWriteExt::write_all(&mut out, &all)
                    .await
                    .unwrap();
                tokio::io::AsyncWriteExt::shutdown(&mut err).await.unwrap();
                let mut small = [0; 4];
                // At the end of input a tokio read fills nothing.
                let n = tokio::io::AsyncReadExt::read(&mut spinpark::io::stdin(), &mut small)
                    .await
                    .unwrap();
                assert_eq!(n, 0);
            }
            other => panic!("unknown child mode {other}"),
        }
        out.write_all(END).await.unwrap();
        // Without this the marker could sit in std's buffer... until the process exits,
        // which flushes it: flushing here is what a program must do to see it earlier.
        out.flush().await.unwrap();
    });
}

#[test]
fn stdin_comes_back_on_stdout() {
    // More than one 2 MiB read, and a tail that is not a multiple of the reads.
    let input = pattern((3 << 20) + 12345);
    let (status, out, err) = run_child("echo", input.clone());
    let err = String::from_utf8_lossy(&err);
    assert!(status.success(), "child failed: {err}");
    assert_eq!(out.len(), input.len());
    assert!(out == input, "the bytes that came back differ");
    assert!(
        err.contains(&format!("echoed {} bytes", input.len())),
        "{err}"
    );
}

#[test]
fn empty_stdin_is_the_end_of_input_at_once() {
    let (status, out, err) = run_child("echo", Vec::new());
    let err = String::from_utf8_lossy(&err);
    assert!(status.success(), "child failed: {err}");
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    assert!(err.contains("echoed 0 bytes"), "{err}");
}

#[test]
fn read_to_end_takes_everything() {
    let input = pattern(100_000);
    let (status, out, err) = run_child("read_to_end", input.clone());
    assert!(status.success(), "{}", String::from_utf8_lossy(&err));
    assert!(out == input);
}

#[test]
fn a_large_write_arrives_whole_and_in_order() {
    let (status, out, err) = run_child("big", Vec::new());
    assert!(status.success(), "{}", String::from_utf8_lossy(&err));
    let mut want = pattern(5 << 20);
    want.extend_from_slice(b"abcdno newline");
    assert_eq!(out.len(), want.len());
    assert!(out == want);
}

#[cfg(feature = "tokio-io")]
#[test]
fn tokio_traits_read_and_write() {
    let input = pattern(70_000);
    let (status, out, err) = run_child("tokio", input.clone());
    let err = String::from_utf8_lossy(&err);
    assert!(status.success(), "{err}");
    assert!(out == input);
    assert!(err.contains("via tokio's traits"), "{err}");
}

#[test]
fn outside_a_runtime_is_an_error() {
    let mut out = spinpark::io::stdout();
    let err = out
        .write(b"x")
        .now_or_never()
        .expect("fails at once")
        .unwrap_err();
    assert!(
        err.to_string().contains("outside a spinpark runtime"),
        "{err}"
    );
    // Nothing was taken, so the stream works once inside a runtime.
    let rt = spinpark::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(out.write(b"").await.unwrap(), 0);
        out.flush().await.unwrap();
    });
    let mut buf = [0; 4];
    let err = spinpark::io::stdin()
        .read(&mut buf)
        .now_or_never()
        .expect("fails at once")
        .unwrap_err();
    assert!(err.to_string().contains("spinpark::io::stdin"), "{err}");
}

#[test]
fn writes_after_shutdown_are_the_runtime_shutdown_error() {
    let rt = spinpark::Runtime::new().unwrap();
    let handle = rt.handle().clone();
    rt.shutdown_timeout(std::time::Duration::ZERO);
    let err = handle
        .block_on(async { spinpark::io::stdout().write_all(b"x").await })
        .unwrap_err();
    assert!(spinpark::runtime::is_rt_shutdown_err(&err), "{err}");
    let err = handle
        .block_on(async { spinpark::io::stderr().write_all(b"x").await })
        .unwrap_err();
    assert!(spinpark::runtime::is_rt_shutdown_err(&err), "{err}");
}

#[test]
fn auto_traits() {
    fn check<T: Send + Sync + Unpin + std::fmt::Debug>(_: &T) {}
    check(&spinpark::io::stdin());
    check(&spinpark::io::stdout());
    check(&spinpark::io::stderr());
}
