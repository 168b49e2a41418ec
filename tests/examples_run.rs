//! Runs the `graceful_shutdown` and `chat_server` examples as processes and talks to them:
//! SIGTERM lets the request in flight finish, SIGINT stops the server while clients churn,
//! and a chat line reaches the other client.
//! `cargo test` builds the examples first; when they are missing (a single `--test` run), the
//! tests say so and skip.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn example(name: &str) -> Option<PathBuf> {
    // target/debug/deps/examples_run-xxxx -> target/debug/examples/NAME
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("examples").join(name);
    p.exists().then_some(p)
}

/// Starts `name` on 127.0.0.1 port 0 and returns the child and the address it printed.
fn start(name: &str) -> Option<(Child, SocketAddr, BufReader<std::process::ChildStdout>)> {
    start_with(name, &["127.0.0.1:0"], Stdio::inherit())
}

/// [`start`] with these arguments, and the child's stderr going to `stderr`.
fn start_with(
    name: &str,
    args: &[&str],
    stderr: Stdio,
) -> Option<(Child, SocketAddr, BufReader<std::process::ChildStdout>)> {
    let Some(path) = example(name) else {
        println!("skipped: the {name} example is not built (run the whole `cargo test`)");
        return None;
    };
    let mut child = Command::new(path)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    // "listening on 127.0.0.1:PORT", or "... on http://127.0.0.1:PORT".
    let addr = first
        .trim()
        .rsplit([' ', '/'])
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("{name} printed {first:?}, not its address"));
    Some((child, addr, out))
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

fn read_line(s: &mut TcpStream) -> String {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while s.read(&mut b).unwrap() == 1 && b[0] != b'\n' {
        line.push(b[0]);
    }
    String::from_utf8(line).unwrap()
}

#[test]
fn graceful_shutdown_finishes_the_request_in_flight_on_sigterm() {
    let Some((mut child, addr, mut out)) = start("graceful_shutdown") else {
        return;
    };
    let mut c = connect(addr);
    c.write_all(b"hello\n").unwrap();
    assert_eq!(read_line(&mut c), "done hello");
    // A request that works for 500 ms, then SIGTERM while it runs (or, on a slow machine,
    // before the server read it: it has arrived, so it is still answered).
    c.write_all(b"500\n").unwrap();
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    assert_eq!(
        read_line(&mut c),
        "done 500",
        "the request in flight was cut off"
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "exit status {status}");
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("every connection finished"), "{rest}");
    assert!(
        TcpStream::connect(addr).is_err(),
        "still accepting after exit"
    );
}

/// Waits up to `limit` for `child` to exit (a watchdog, not a timing assertion).
fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// A client that connects, sends a request and hangs up, over and over, until `stop`.
fn churn(addr: SocketAddr, stop: Arc<AtomicBool>, done: Arc<AtomicU64>) {
    while !stop.load(Relaxed) {
        // Refused once the server stops listening: keep trying until told to stop.
        if let Ok(mut s) = TcpStream::connect(addr) {
            let _ = s.write_all(b"1\n");
            done.fetch_add(1, Relaxed);
        }
    }
}

/// The case: with `ctrl_c()` made anew on every turn of the accept loop, a SIGINT that
/// arrives between two turns finds no listener (and, the handler being installed, does not
/// kill the process either): it was lost 7 times in 10. Each run starts the server, has
/// clients churn against it, sends one SIGINT and requires a clean exit.
#[test]
fn graceful_shutdown_stops_on_every_sigint_while_clients_churn() {
    const RUNS: usize = 10;
    const CLIENTS: usize = 4;
    let mut lost = Vec::new();
    for run in 0..RUNS {
        // Its stderr is dropped: clients that hang up mid-reply make it log resets.
        let Some((mut child, addr, mut out)) =
            start_with("graceful_shutdown", &["127.0.0.1:0"], Stdio::null())
        else {
            return;
        };
        // Drain its stdout so that its prints never block it.
        let drain = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = out.read_to_string(&mut rest);
            rest
        });
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let (stop, done) = (stop.clone(), done.clone());
                std::thread::spawn(move || churn(addr, stop, done))
            })
            .collect();
        // Under load: wait until the clients have made some connections (bounded).
        let deadline = Instant::now() + Duration::from_secs(30);
        while done.load(Relaxed) < 2000 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if done.load(Relaxed) == 0 {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("run {run}: no client got through");
        }
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        let status = wait_for_exit(&mut child, Duration::from_secs(30));
        stop.store(true, Relaxed);
        for c in clients {
            c.join().unwrap();
        }
        match status {
            Some(status) => {
                assert!(status.success(), "run {run}: exit status {status}");
                let printed = drain.join().unwrap();
                assert!(printed.contains("shutting down"), "run {run}: {printed}");
            }
            None => {
                lost.push(run);
                child.kill().unwrap();
                child.wait().unwrap();
                drain.join().unwrap();
            }
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {RUNS} SIGINTs were lost (runs {lost:?})",
        lost.len()
    );
}

#[test]
fn chat_server_broadcasts_a_line_to_the_other_clients() {
    let Some((mut child, addr, _out)) = start("chat_server") else {
        return;
    };
    let mut a = connect(addr);
    let mut b = connect(addr);
    // b learns that somebody joined after it; wait for b's own join to be seen by a, so both
    // are subscribed before the line is sent.
    let b_port = b.local_addr().unwrap().port();
    loop {
        let l = read_line(&mut a);
        if l.contains(&format!(":{b_port} joined")) {
            break;
        }
    }
    a.write_all(b"hello everyone\n").unwrap();
    let mut got = None;
    for _ in 0..10 {
        let l = read_line(&mut b);
        if l.ends_with(": hello everyone") {
            got = Some(l);
            break;
        }
    }
    assert!(got.is_some(), "b never saw a's line");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Every example prints its usage for `--help` and exits 0 (it does not start serving).
#[test]
fn every_example_answers_help() {
    let names = [
        "chat_server",
        "echo_client",
        "echo_server",
        "graceful_shutdown",
        "grpc_server",
        "http_server",
        "kv_server",
    ];
    for name in names {
        let Some(path) = example(name) else {
            println!("skipped: the {name} example is not built (run the whole `cargo test`)");
            continue;
        };
        let mut child = Command::new(path)
            .arg("--help")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // The usage fits in the pipe: wait first, so that a server started by mistake fails
        // the test instead of blocking the read.
        let status = wait_for_exit(&mut child, Duration::from_secs(30)).unwrap_or_else(|| {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{name} --help did not exit (it started serving?)")
        });
        let mut out = String::new();
        let mut stdout = child.stdout.take().unwrap();
        stdout.read_to_string(&mut out).unwrap();
        assert!(status.success(), "{name} --help: {status}");
        assert!(out.contains("Usage:"), "{name} --help printed {out:?}");
    }
}

/// The HTTP and gRPC examples close connections that stay idle, stall in the TLS handshake
/// or trickle their headers, within the timeouts given on the command line (1 to 2 s here;
/// the defaults are 10 s for the handshake, 30 s for HTTP/1 headers, 60 s idle). Before,
/// nothing closed them: a few hundred such sockets fill a server's descriptor limit.
#[cfg(feature = "hyper")]
mod timeouts {
    use super::*;

    /// The timeouts of the HTTP server below.
    const SHORT: [&str; 6] = [
        "--handshake-timeout",
        "1s",
        "--header-timeout",
        "2s",
        "--idle-timeout",
        "1s",
    ];
    /// How long the tests wait for the server to close a connection (a watchdog).
    const WATCHDOG: Duration = Duration::from_secs(60);

    /// A server process, killed when the test ends, passed or not.
    struct Running(Child);

    impl Drop for Running {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn start_server(name: &str, extra: &[&str]) -> Option<(Running, SocketAddr)> {
        let mut args = vec!["--addr", "127.0.0.1:0", "--workers", "2"];
        args.extend(extra);
        // Its stderr is dropped: every closed connection is a logged timeout.
        let (child, addr, out) = start_with(name, &args, Stdio::null())?;
        std::thread::spawn(move || {
            let mut out = out;
            let _ = out.read_to_string(&mut String::new());
        });
        Some((Running(child), addr))
    }

    /// Reads until the server closes `s` (end of stream or reset); false if it is still
    /// open at `deadline`. Anything the server sends first (an error response) is skipped.
    fn closed_by(s: &mut TcpStream, deadline: Instant) -> bool {
        let mut buf = [0u8; 1024];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            s.set_read_timeout(Some(left)).unwrap();
            match s.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false, // timed out
            }
        }
    }

    /// Opens `n` connections, sends `first` on each, and requires the server to close all of
    /// them; returns how long the last one took.
    fn all_closed(addr: SocketAddr, n: usize, first: &[u8], what: &str) -> Duration {
        let start = Instant::now();
        let mut conns: Vec<TcpStream> = (0..n)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(first).unwrap();
                s
            })
            .collect();
        let deadline = start + WATCHDOG;
        let open = conns
            .iter_mut()
            .map(|s| closed_by(s, deadline))
            .filter(|&closed| !closed)
            .count();
        assert_eq!(
            open, 0,
            "{open} of {n} {what} connections still open after {WATCHDOG:?}"
        );
        let took = start.elapsed();
        println!("{n} {what} connections closed by the server within {took:?}");
        took
    }

    #[test]
    fn http_server_closes_idle_connections() {
        let Some((_server, addr)) = start_server("http_server", &SHORT) else {
            return;
        };
        // Nothing sent: cut by the handshake timeout (the protocol is never known).
        all_closed(addr, 200, b"", "silent");
        // One request, then nothing: cut by the idle (or keep-alive header) timeout.
        let get = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
        all_closed(addr, 200, get, "kept-alive");
        // Still serving.
        let mut c = connect(addr);
        c.write_all(get).unwrap();
        let mut reply = [0u8; 12];
        c.read_exact(&mut reply).unwrap();
        assert_eq!(&reply, b"HTTP/1.1 200");
    }

    #[test]
    fn http_server_closes_stalled_tls_handshakes() {
        let Some((_server, addr)) = start_server("http_server", &[&SHORT[..], &["--tls"]].concat())
        else {
            return;
        };
        // A TLS record header announcing a 512-byte handshake message, and the first bytes of
        // a ClientHello; the rest never comes.
        let partial = [
            0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
        ];
        all_closed(addr, 200, &partial, "mid-ClientHello");
    }

    /// Sends `text` one byte a second on `n` connections at once, and requires the server to
    /// close every one before the text is all sent.
    fn trickle_is_cut(addr: SocketAddr, n: usize, text: &'static [u8], what: &str) {
        let start = Instant::now();
        let threads: Vec<_> = (0..n)
            .map(|_| {
                std::thread::spawn(move || {
                    let mut s = TcpStream::connect(addr).unwrap();
                    for &b in text {
                        if s.write_all(&[b]).is_err() {
                            return true; // reset by the server
                        }
                        if closed_by(&mut s, Instant::now() + Duration::from_secs(1)) {
                            return true;
                        }
                    }
                    false
                })
            })
            .collect();
        let cut = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&c| c)
            .count();
        assert_eq!(cut, n, "{what}: only {cut} of {n} connections were cut");
        println!(
            "{n} connections trickling {what} one byte a second cut within {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn grpc_server_cuts_headers_sent_one_byte_a_second() {
        // Idle longer than the pace, so that the trickles are cut by the stage they are in.
        let flags = [
            "--handshake-timeout",
            "2s",
            "--header-timeout",
            "4s",
            "--idle-timeout",
            "10s",
        ];
        let Some((_server, addr)) = start_server("grpc_server", &flags) else {
            return;
        };
        // HTTP/1 headers (a minute at this pace; the first byte tells HTTP/1): the header
        // timeout (4 s).
        let h1: &[u8] = b"GET /greeter.Greeter/SayHello HTTP/1.1\r\nHost: localhost\r\nX-A: b";
        // The HTTP/2 preface itself (24 s at this pace): the handshake timeout (2 s).
        let h2: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
        let a = std::thread::spawn(move || trickle_is_cut(addr, 5, h1, "HTTP/1 headers"));
        trickle_is_cut(addr, 5, h2, "the HTTP/2 preface");
        a.join().unwrap();
    }
}
