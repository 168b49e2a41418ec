//! Runs the `graceful_shutdown` and `chat_server` examples as processes and talks to them:
//! SIGTERM lets the request in flight finish, and a chat line reaches the other client.
//! `cargo test` builds the examples first; when they are missing (a single `--test` run), the
//! tests say so and skip.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn example(name: &str) -> Option<PathBuf> {
    // target/debug/deps/examples_run-xxxx -> target/debug/examples/NAME
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("examples").join(name);
    p.exists().then_some(p)
}

/// Starts `name` on 127.0.0.1 port 0 and returns the child and the address it printed.
fn start(name: &str) -> Option<(Child, SocketAddr, BufReader<std::process::ChildStdout>)> {
    let Some(path) = example(name) else {
        println!("skipped: the {name} example is not built (run the whole `cargo test`)");
        return None;
    };
    let mut child = Command::new(path)
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .rsplit(' ')
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
