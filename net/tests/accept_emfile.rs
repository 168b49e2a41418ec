//! Running out of file descriptors slows accepting down; it neither spins nor stops the
//! server, whether it listens on TCP or on a Unix socket (one accept policy for both). The
//! server runs in a child process (this same test binary, re-executed) whose RLIMIT_NOFILE is
//! lowered; the parent drives it over loopback or the socket file.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

const CHILD_ENV: &str = "SPINPARK_EMFILE_CHILD";

/// The child's accept errors (its "log").
static ACCEPT_ERRORS: AtomicU64 = AtomicU64::new(0);

#[test]
fn accept_backs_off_on_emfile_and_recovers() {
    run(Kind::Tcp, "accept_backs_off_on_emfile_and_recovers");
}

#[test]
fn unix_accept_backs_off_on_emfile_and_recovers() {
    run(Kind::Unix, "unix_accept_backs_off_on_emfile_and_recovers");
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Tcp,
    Unix,
}

/// A client connection to the child's server, of either kind.
trait Conn: Read + Write {}
impl<T: Read + Write> Conn for T {}

fn socket_path() -> PathBuf {
    std::env::temp_dir().join(format!("spinpark-emfile-{}.sock", std::process::id()))
}

fn run(kind: Kind, name: &str) {
    if let Some(v) = std::env::var_os(CHILD_ENV) {
        return child(kind, PathBuf::from(v));
    }
    let path = socket_path();
    let _ = std::fs::remove_file(&path);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_child = child.stdin.take().unwrap();
    let mut from_child = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut expect = |what: &str| -> String {
        loop {
            line.clear();
            let n = from_child.read_line(&mut line).unwrap();
            assert!(n > 0, "child exited before saying {what}");
            // The test harness may print its own text on the same line first.
            if let Some(at) = line.find(what) {
                return line[at + what.len()..].trim().to_string();
            }
        }
    };
    let port: u16 = expect("PORT").parse().unwrap();
    let connect = || -> Box<dyn Conn> {
        let t = Some(Duration::from_secs(60));
        if kind == Kind::Tcp {
            let s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_read_timeout(t).unwrap();
            Box::new(s)
        } else {
            let s = std::os::unix::net::UnixStream::connect(&path).unwrap();
            s.set_read_timeout(t).unwrap();
            Box::new(s)
        }
    };
    // A connection accepted while descriptors are available works.
    let mut a = connect();
    a.write_all(b"a").unwrap();
    let mut one = [0u8; 1];
    a.read_exact(&mut one).unwrap();
    assert_eq!(&one, b"a");
    // The child uses up its descriptors; our next connection waits in its backlog.
    writeln!(to_child, "EXHAUST").unwrap();
    expect("EXHAUSTED");
    let mut b = connect();
    b.write_all(b"b").unwrap();
    // The existing connection is still served meanwhile.
    a.write_all(b"c").unwrap();
    a.read_exact(&mut one).unwrap();
    assert_eq!(&one, b"c");
    writeln!(to_child, "REPORT").unwrap();
    let errors: u64 = expect("ACCEPT_ERRORS_DURING_EXHAUSTION").parse().unwrap();
    let cpu_ms: u64 = expect("CPU_MS_DURING_EXHAUSTION").parse().unwrap();
    writeln!(to_child, "RELEASE").unwrap();
    // Descriptors are back: the waiting connection is accepted and served.
    b.read_exact(&mut one)
        .expect("the server never accepted again after EMFILE");
    assert_eq!(&one, b"b");
    drop(to_child);
    assert!(child.wait().unwrap().success());
    let _ = std::fs::remove_file(&path);
    // Running out of descriptors is not an error of `accept`: it waits and retries.
    assert_eq!(
        errors, 0,
        "accept returned {errors} errors while out of descriptors"
    );
    // While exhausted (at least the child's 300 ms pause before REPORT), accepting was retried
    // on a timer, not in a busy loop, which would have burned a core: about 300 ms of CPU.
    // This bounds CPU used, not time taken, and is loose on purpose.
    assert!(
        cpu_ms < 150,
        "the server burned {cpu_ms} ms of CPU while out of descriptors"
    );
}

/// An echo server on a listener of `kind` that accepts in a loop.
fn child(kind: Kind, path: PathBuf) {
    use futures_util::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    use spinpark_net::{TcpListener, UnixListener};
    let lim = libc::rlimit {
        rlim_cur: 128,
        rlim_max: 128,
    };
    // SAFETY: setrlimit reads a valid rlimit struct on our stack.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
    let rt = spinpark_executor::Builder::new()
        .worker_threads(2)
        .spin(Duration::ZERO)
        .build()
        .unwrap();
    // A server that logs accept errors and goes on, as servers do; counting stands in for
    // the logging.
    fn log_error() {
        ACCEPT_ERRORS.fetch_add(1, SeqCst);
    }
    fn serve<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(mut s: S) {
        spinpark_executor::spawn(async move {
            let mut b = [0u8; 1];
            while s.read_exact(&mut b).await.is_ok() {
                if s.write_all(&b).await.is_err() {
                    break;
                }
            }
        });
    }
    if kind == Kind::Tcp {
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        println!("PORT {}", listener.local_addr().unwrap().port());
        rt.spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((s, _)) => serve(s),
                    Err(_) => log_error(),
                }
            }
        });
    } else {
        let listener = rt.block_on(async { UnixListener::bind(&path) }).unwrap();
        println!("PORT 0");
        rt.spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((s, _)) => serve(s),
                    Err(_) => log_error(),
                }
            }
        });
    }
    let stdin = std::io::stdin();
    let mut hog: Vec<std::fs::File> = Vec::new();
    let mut cpu_at_exhaust = 0;
    let mut errors_at_exhaust = 0;
    for line in stdin.lock().lines() {
        match line.unwrap().trim() {
            "EXHAUST" => {
                while let Ok(f) = std::fs::File::open("/dev/null") {
                    hog.push(f);
                    assert!(hog.len() < 1_000_000, "no descriptor limit");
                }
                cpu_at_exhaust = process_cpu_ms();
                errors_at_exhaust = ACCEPT_ERRORS.load(SeqCst);
                println!("EXHAUSTED");
            }
            "REPORT" => {
                std::thread::sleep(Duration::from_millis(300));
                println!(
                    "ACCEPT_ERRORS_DURING_EXHAUSTION {}",
                    ACCEPT_ERRORS.load(SeqCst) - errors_at_exhaust
                );
                println!(
                    "CPU_MS_DURING_EXHAUSTION {}",
                    process_cpu_ms() - cpu_at_exhaust
                );
            }
            "RELEASE" => hog.clear(),
            _ => {}
        }
    }
    drop(rt);
}

fn process_cpu_ms() -> u64 {
    // SAFETY: rusage is plain old data (all-zero is valid), and getrusage fills the valid
    // struct on our stack.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ms = |t: libc::timeval| t.tv_sec as u64 * 1000 + t.tv_usec as u64 / 1000;
    ms(ru.ru_utime) + ms(ru.ru_stime)
}
