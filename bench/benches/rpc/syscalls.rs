//! The system calls a server process makes in a measured window, counted by
//! `perf stat -e raw_syscalls:sys_enter -p PID`.
//!
//! ```text
//! let mut perf = Syscalls::attach(server.pid())?; // perf runs, its counter off
//! perf.enable()?; /* the load */ perf.disable()?;
//! let calls = perf.finish()?;                      // syscalls between enable and disable
//! ```
//!
//! perf starts with its counter disabled (`--delay=-1`) and a pair of FIFOs for commands and
//! acknowledgements (`--control fifo:CTL,ACK`); [`Syscalls::enable`] and [`Syscalls::disable`]
//! each write a command and wait for perf's `ack`, so the count covers the window between
//! them and nothing of perf's start or stop. [`Syscalls::finish`] stops perf with SIGINT and
//! reads the count from its CSV output (`-x,`, on stderr) with [`parse_count`]. A missing
//! perf, a kernel without the tracepoint, or a perf that exits or stops answering is an error
//! that says so, and the caller reports n/a. The count covers every thread of the process
//! (an `io_uring_enter` is one system call, whatever it submits and reaps).

use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The tracepoint that fires on every system call's entry.
pub const EVENT: &str = "raw_syscalls:sys_enter";

/// How long perf may take to start and to answer a command.
const ANSWER: Duration = Duration::from_secs(5);

/// A `perf stat` attached to one process, its counter switched on and off by command.
pub struct Syscalls {
    perf: Option<Child>,
    ctl: File,
    ack: File,
    dir: PathBuf,
}

impl Syscalls {
    /// Starts perf on process `pid` with its counter off.
    pub fn attach(pid: u32) -> Result<Syscalls, String> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "spinpark-perf-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let (ctl_path, ack_path) = (dir.join("ctl"), dir.join("ack"));
        let fifos = mkfifo(&ctl_path).and_then(|()| mkfifo(&ack_path));
        // Read and write: opening a FIFO so never waits for the other end (Linux).
        let open = |p: &Path| {
            File::options()
                .read(true)
                .write(true)
                .open(p)
                .map_err(|e| format!("{}: {e}", p.display()))
        };
        let opened = fifos.and_then(|()| Ok((open(&ctl_path)?, open(&ack_path)?)));
        let (ctl, ack) = match opened {
            Ok(f) => f,
            Err(e) => {
                std::fs::remove_dir_all(&dir).ok();
                return Err(e);
            }
        };
        let mut s = Syscalls {
            perf: None,
            ctl,
            ack,
            dir,
        };
        let spawned = Command::new("perf")
            .args(["stat", "-x,", "-e", EVENT, "--delay=-1", "--control"])
            .arg(format!(
                "fifo:{},{}",
                ctl_path.display(),
                ack_path.display()
            ))
            .args(["-p", &pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        match spawned {
            Ok(child) => s.perf = Some(child),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err("perf is not installed".into())
            }
            Err(e) => return Err(format!("cannot run perf: {e}")),
        }
        Ok(s)
    }

    /// Switches the counter on; returns once perf has.
    pub fn enable(&mut self) -> Result<(), String> {
        self.command("enable")
    }

    /// Switches the counter off; returns once perf has.
    pub fn disable(&mut self) -> Result<(), String> {
        self.command("disable")
    }

    /// Stops perf; returns the system calls counted while the counter was on.
    pub fn finish(mut self) -> Result<u64, String> {
        let perf = self.perf.take().expect("perf runs until finish");
        // SAFETY: kill only sends a signal to the process we started and have not reaped.
        unsafe {
            libc::kill(perf.id() as libc::pid_t, libc::SIGINT);
        }
        let out = perf.wait_with_output().map_err(|e| format!("perf: {e}"))?;
        parse_count(&String::from_utf8_lossy(&out.stderr), EVENT)
    }

    /// Writes `cmd` to perf's control FIFO and waits for its `ack`.
    fn command(&mut self, cmd: &str) -> Result<(), String> {
        writeln!(self.ctl, "{cmd}").map_err(|e| format!("perf control: {e}"))?;
        let deadline = Instant::now() + ANSWER;
        let mut got = Vec::new();
        // perf writes `ack\n` and a NUL.
        while !got.windows(4).any(|w| w == b"ack\n") {
            if let Some(reason) = self.exited() {
                return Err(reason);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "perf did not acknowledge {cmd:?} within {ANSWER:?}"
                ));
            }
            let mut pfd = libc::pollfd {
                fd: self.ack.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let wait = left.min(Duration::from_millis(100)).as_millis() as libc::c_int;
            // SAFETY: one valid pollfd on our stack, and the count passed is 1.
            if unsafe { libc::poll(&mut pfd, 1, wait) } > 0 {
                let mut buf = [0u8; 64];
                let n = self
                    .ack
                    .read(&mut buf)
                    .map_err(|e| format!("perf ack: {e}"))?;
                got.extend_from_slice(&buf[..n]);
            }
        }
        Ok(())
    }

    /// If perf has exited: why, from its output.
    fn exited(&mut self) -> Option<String> {
        let perf = self.perf.as_mut()?;
        perf.try_wait().ok().flatten()?;
        let mut err = String::new();
        if let Some(mut e) = perf.stderr.take() {
            e.read_to_string(&mut err).ok();
        }
        let last = err.lines().rev().find(|l| !l.trim().is_empty());
        Some(format!(
            "perf stopped: {}",
            last.map_or("no message".into(), |l| l.trim().to_string())
        ))
    }
}

impl Drop for Syscalls {
    fn drop(&mut self) {
        if let Some(mut perf) = self.perf.take() {
            let _ = perf.kill();
            let _ = perf.wait();
        }
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

fn mkfifo(path: &Path) -> Result<(), String> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("mkfifo {}: {e}", path.display()));
    }
    Ok(())
}

/// The count of `event` in `perf stat -x,` output (`count,unit,event,run time,percent,...`
/// per event, among perf's other lines); an error that says why there is none.
pub fn parse_count(output: &str, event: &str) -> Result<u64, String> {
    let line = output
        .lines()
        .map(|l| l.split(',').collect::<Vec<&str>>())
        .find(|f| f.len() >= 3 && f[2].trim() == event);
    let Some(fields) = line else {
        let last = output.lines().rev().find(|l| !l.trim().is_empty());
        return Err(format!(
            "no {event} count in perf's output ({})",
            last.map_or("it printed nothing", str::trim)
        ));
    };
    match fields[0].trim() {
        "<not supported>" => Err(format!("perf: {event} is not supported here")),
        "<not counted>" => Err(format!("perf counted no {event}")),
        n => n
            .parse()
            .map_err(|_| format!("perf's {event} count {n:?} is not a number")),
    }
}
