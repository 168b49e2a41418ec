//! [`Command`]: std's process builder, whose spawning functions give a [`Child`] on the
//! runtime.

use std::ffi::OsStr;
use std::future::Future;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command as StdCommand, ExitStatus, Output, Stdio};

use super::child::Child;
use super::exit::{self, Process};
use super::orphan;
use super::stdio::{ChildStderr, ChildStdin, ChildStdout};

/// A process builder, as `std::process::Command` (whose builder methods it repeats), whose
/// [`spawn`](Command::spawn), [`status`](Command::status) and [`output`](Command::output)
/// run the child on the current spinpark runtime: its exit is awaited, and its piped
/// standard streams are read and written, without blocking a worker.
///
/// ```
/// use spinpark::process::Command;
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let output = Command::new("echo").arg("hello").output().await.unwrap();
/// assert!(output.status.success());
/// assert_eq!(output.stdout, b"hello\n");
/// # });
/// ```
#[derive(Debug)]
pub struct Command {
    std: StdCommand,
    kill_on_drop: bool,
}

impl Command {
    /// A builder for running `program` (looked up in `PATH` unless it is a path), with no
    /// arguments, the parent's environment and working directory, and inherited standard
    /// streams (piped ones for [`output`](Command::output)).
    ///
    /// ```
    /// let cmd = spinpark::process::Command::new("ls");
    /// # drop(cmd);
    /// ```
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        Command::from(StdCommand::new(program))
    }

    /// The std builder inside, to read what was set.
    ///
    /// ```
    /// let mut cmd = spinpark::process::Command::new("ls");
    /// cmd.arg("-l");
    /// assert_eq!(cmd.as_std().get_args().collect::<Vec<_>>(), ["-l"]);
    /// ```
    pub fn as_std(&self) -> &StdCommand {
        &self.std
    }

    /// The std builder inside, to set what this type has no method for.
    ///
    /// ```
    /// let mut cmd = spinpark::process::Command::new("ls");
    /// cmd.as_std_mut().arg("-a");
    /// assert_eq!(cmd.as_std().get_args().count(), 1);
    /// ```
    pub fn as_std_mut(&mut self) -> &mut StdCommand {
        &mut self.std
    }

    /// The std builder inside, without this builder's own setting (`kill_on_drop`).
    ///
    /// ```
    /// let mut cmd = spinpark::process::Command::new("ls");
    /// cmd.arg("-l");
    /// let std: std::process::Command = cmd.into_std();
    /// assert_eq!(std.get_program(), "ls");
    /// ```
    pub fn into_std(self) -> StdCommand {
        self.std
    }

    /// Adds an argument.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("echo").arg("a b").output().await.unwrap();
    /// assert_eq!(out.stdout, b"a b\n");
    /// # });
    /// ```
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds arguments.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("echo").args(["a", "b"]).output().await.unwrap();
    /// assert_eq!(out.stdout, b"a b\n");
    /// # });
    /// ```
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable for the child.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("sh").args(["-c", "echo $X"]).env("X", "1").output().await.unwrap();
    /// assert_eq!(out.stdout, b"1\n");
    /// # });
    /// ```
    pub fn env<K, V>(&mut self, key: K, val: V) -> &mut Command
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.env(key, val);
        self
    }

    /// Sets several environment variables for the child.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("sh")
    ///     .args(["-c", "echo $A$B"])
    ///     .envs([("A", "1"), ("B", "2")])
    ///     .output()
    ///     .await
    ///     .unwrap();
    /// assert_eq!(out.stdout, b"12\n");
    /// # });
    /// ```
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Keeps an environment variable from the child.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("sh")
    ///     .args(["-c", "echo x${HOME}x"])
    ///     .env_remove("HOME")
    ///     .output()
    ///     .await
    ///     .unwrap();
    /// assert_eq!(out.stdout, b"xx\n");
    /// # });
    /// ```
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Starts the child with an empty environment (plus what [`env`](Command::env) adds).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("/usr/bin/env").env_clear().env("ONLY", "1").output().await.unwrap();
    /// assert_eq!(out.stdout, b"ONLY=1\n");
    /// # });
    /// ```
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// Sets the child's working directory.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("pwd").current_dir("/").output().await.unwrap();
    /// assert_eq!(out.stdout, b"/\n");
    /// # });
    /// ```
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// Sets the child's standard input: `Stdio::piped()` gives [`Child::stdin`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// use std::process::Stdio;
    /// let status = Command::new("cat").stdin(Stdio::null()).status().await.unwrap();
    /// assert!(status.success());
    /// # });
    /// ```
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdin(cfg);
        self
    }

    /// Sets the child's standard output: `Stdio::piped()` gives [`Child::stdout`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// use std::process::Stdio;
    /// let child = Command::new("echo").stdout(Stdio::piped()).spawn().unwrap();
    /// assert!(child.stdout.is_some());
    /// # });
    /// ```
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdout(cfg);
        self
    }

    /// Sets the child's standard error: `Stdio::piped()` gives [`Child::stderr`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// use std::process::Stdio;
    /// let child = Command::new("echo").stderr(Stdio::piped()).spawn().unwrap();
    /// assert!(child.stderr.is_some());
    /// # });
    /// ```
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stderr(cfg);
        self
    }

    /// Whether dropping the [`Child`] before it was reaped sends it `SIGKILL` (off by
    /// default: the child keeps running, and is reaped once it exits; see the module docs).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let child = Command::new("sleep").arg("100").kill_on_drop(true).spawn().unwrap();
    /// drop(child); // killed, then reaped
    /// # });
    /// ```
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }

    /// Whether [`kill_on_drop`](Command::kill_on_drop) is set.
    ///
    /// ```
    /// let mut cmd = spinpark::process::Command::new("true");
    /// assert!(!cmd.get_kill_on_drop());
    /// assert!(cmd.kill_on_drop(true).get_kill_on_drop());
    /// ```
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }

    /// Runs the child as user `id` (`setuid`; the parent needs the privilege).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// // Our own uid: allowed without privileges.
    /// // SAFETY: getuid takes no arguments and cannot fail.
    /// let uid = unsafe { libc::getuid() };
    /// assert!(Command::new("true").uid(uid).status().await.unwrap().success());
    /// # });
    /// ```
    pub fn uid(&mut self, id: u32) -> &mut Command {
        self.std.uid(id);
        self
    }

    /// Runs the child as group `id` (`setgid`; the parent needs the privilege).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// // SAFETY: getgid takes no arguments and cannot fail.
    /// let gid = unsafe { libc::getgid() };
    /// assert!(Command::new("true").gid(gid).status().await.unwrap().success());
    /// # });
    /// ```
    pub fn gid(&mut self, id: u32) -> &mut Command {
        self.std.gid(id);
        self
    }

    /// Sets the child's `argv[0]` (what it sees as its own name).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("sh").arg0("me").args(["-c", "echo $0"]).output().await.unwrap();
    /// assert_eq!(out.stdout, b"me\n");
    /// # });
    /// ```
    pub fn arg0<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg0(arg);
        self
    }

    /// Runs `f` in the child after `fork` and before `exec`; an error from it fails the
    /// spawn with that error.
    ///
    /// # Safety
    /// As std's `CommandExt::pre_exec`: `f` runs in a copy of the process that has only the
    /// forking thread, so it must only make async-signal-safe calls (no allocation, no lock
    /// another thread may have held).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let mut cmd = Command::new("true");
    /// // SAFETY: the closure makes no call at all.
    /// unsafe { cmd.pre_exec(|| Ok(())) };
    /// assert!(cmd.status().await.unwrap().success());
    /// # });
    /// ```
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Command
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: the caller upholds `pre_exec`'s contract, which is std's.
        unsafe { self.std.pre_exec(f) };
        self
    }

    /// Puts the child in process group `pgroup` (`0`: a new group led by the child).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let status = Command::new("true").process_group(0).status().await.unwrap();
    /// assert!(status.success());
    /// # });
    /// ```
    pub fn process_group(&mut self, pgroup: i32) -> &mut Command {
        self.std.process_group(pgroup);
        self
    }

    /// Starts the child on the current runtime. Its piped standard streams are on the
    /// runtime's reactor, and so is the watch on its exit (a pidfd, or `SIGCHLD` where the
    /// kernel has no pidfds).
    ///
    /// # Errors
    /// std's error when the child cannot be started (`NotFound` for a program that does not
    /// exist, `PermissionDenied`, ...), as tokio returns it; an error outside a spinpark
    /// runtime (tokio panics there), in which case no child is started.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let mut child = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
    /// assert_eq!(child.wait().await.unwrap().code(), Some(3));
    /// let e = Command::new("/no/such/program").spawn().unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    /// # });
    /// ```
    pub fn spawn(&mut self) -> io::Result<Child> {
        self.spawn_watched(exit::pidfd_enabled())
    }

    /// [`Command::spawn`], watching the exit through a pidfd only if `use_pidfd`.
    pub(super) fn spawn_watched(&mut self, use_pidfd: bool) -> io::Result<Child> {
        // Fail before starting a child nobody could wait for.
        if spinpark_executor::Handle::try_current().is_err() {
            return Err(io::Error::other(
                "spinpark::process::Command::spawn needs a spinpark runtime \
                 (call it from a task or from Runtime::block_on)",
            ));
        }
        orphan::reap_queued();
        let mut std_child = self.std.spawn()?;
        let pid = std_child.id() as libc::pid_t;
        let (stdin, stdout, stderr) = (
            std_child.stdin.take(),
            std_child.stdout.take(),
            std_child.stderr.take(),
        );
        // From here the pid is ours to reap (std's handle keeps nothing else we need).
        drop(std_child);
        let mut process = Process::new(pid, use_pidfd);
        let built = (|| {
            process.watch()?;
            Ok::<_, io::Error>((
                stdin.map(ChildStdin::from_std).transpose()?,
                stdout.map(ChildStdout::from_std).transpose()?,
                stderr.map(ChildStderr::from_std).transpose()?,
            ))
        })();
        match built {
            Ok((stdin, stdout, stderr)) => Ok(Child::new(
                process,
                self.kill_on_drop,
                stdin,
                stdout,
                stderr,
            )),
            Err(e) => {
                // The caller gets no `Child`: a child left running would be nobody's.
                orphan::adopt(process, true);
                Err(e)
            }
        }
    }

    /// Spawns the child with its standard streams closed on our side, and waits for its
    /// exit. The future does not borrow the builder: the child is started by this call.
    ///
    /// # Errors
    /// As [`spawn`](Command::spawn) (returned when the future is awaited), or waiting's.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let status = Command::new("sh").args(["-c", "exit 1"]).status().await.unwrap();
    /// assert_eq!(status.code(), Some(1));
    /// # });
    /// ```
    pub fn status(&mut self) -> impl Future<Output = io::Result<ExitStatus>> {
        let child = self.spawn();
        async {
            let mut child = child?;
            // Our ends of any pipes closed first, so the child cannot block on them.
            drop(child.stdin.take());
            drop(child.stdout.take());
            drop(child.stderr.take());
            child.wait().await
        }
    }

    /// Spawns the child with its standard output and error piped (this changes the
    /// builder, as tokio's does) and collects both and its exit status. The future does not
    /// borrow the builder: the child is started by this call.
    ///
    /// # Errors
    /// As [`spawn`](Command::spawn) (returned when the future is awaited), or reading's
    /// or waiting's.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let out = Command::new("sh").args(["-c", "echo out; echo err >&2"]).output().await.unwrap();
    /// assert_eq!(out.stdout, b"out\n");
    /// assert_eq!(out.stderr, b"err\n");
    /// # });
    /// ```
    pub fn output(&mut self) -> impl Future<Output = io::Result<Output>> {
        self.std.stdout(Stdio::piped());
        self.std.stderr(Stdio::piped());
        let child = self.spawn();
        async { child?.wait_with_output().await }
    }
}

impl From<StdCommand> for Command {
    /// std's builder as it is, with `kill_on_drop` off.
    fn from(std: StdCommand) -> Command {
        Command {
            std,
            kill_on_drop: false,
        }
    }
}
