//! [`Child`]: a spawned child, its exit awaited on the runtime.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Output};
use std::task::{ready, Context, Poll};

use spinpark_executor::coop;

use super::exit::Process;
use super::orphan;
use super::stdio::{ChildStderr, ChildStdin, ChildStdout};

/// A child process started by [`Command::spawn`](super::Command::spawn): its piped standard
/// streams, and its exit, awaited with [`wait`](Child::wait) without blocking a worker.
///
/// Dropping a `Child` does not stop the child (unless
/// [`kill_on_drop`](super::Command::kill_on_drop) was set), as with std's; the runtime still
/// reaps it once it exits, so no zombie is left (see the module docs).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use spinpark::process::Command;
/// let mut child = Command::new("sleep").arg("100").spawn().unwrap();
/// assert!(child.id().is_some());
/// assert!(child.try_wait().unwrap().is_none());
/// child.kill().await.unwrap();
/// assert!(child.id().is_none()); // reaped
/// # });
/// ```
#[derive(Debug)]
pub struct Child {
    /// `None` once reaped.
    process: Option<Process>,
    /// The exit status, once reaped.
    status: Option<ExitStatus>,
    kill_on_drop: bool,
    /// The write end of the child's standard input, if it was spawned with
    /// `Stdio::piped()`. [`wait`](Child::wait) drops it (closes the pipe) first, so that a
    /// child reading its input is not left waiting for more; `take()` it to keep it.
    pub stdin: Option<ChildStdin>,
    /// The read end of the child's standard output, if it was spawned with
    /// `Stdio::piped()`.
    pub stdout: Option<ChildStdout>,
    /// The read end of the child's standard error, if it was spawned with
    /// `Stdio::piped()`.
    pub stderr: Option<ChildStderr>,
}

impl Child {
    pub(super) fn new(
        process: Process,
        kill_on_drop: bool,
        stdin: Option<ChildStdin>,
        stdout: Option<ChildStdout>,
        stderr: Option<ChildStderr>,
    ) -> Child {
        Child {
            process: Some(process),
            status: None,
            kill_on_drop,
            stdin,
            stdout,
            stderr,
        }
    }

    /// The child's pid, or `None` once it has been reaped (by [`wait`](Child::wait) or
    /// [`try_wait`](Child::try_wait)): the pid may belong to another process by then.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let mut child = Command::new("true").spawn().unwrap();
    /// assert!(child.id().unwrap() > 0);
    /// child.wait().await.unwrap();
    /// assert_eq!(child.id(), None);
    /// # });
    /// ```
    pub fn id(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.pid() as u32)
    }

    /// Sends the child `SIGKILL` without waiting for it to exit (then [`wait`](Child::wait)
    /// reaps it). `Ok` at once if it has been reaped already; a child that exited but was
    /// not reaped yet takes the signal harmlessly.
    ///
    /// # Errors
    /// `kill(2)`'s error.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// use std::os::unix::process::ExitStatusExt;
    /// let mut child = Command::new("sleep").arg("100").spawn().unwrap();
    /// child.start_kill().unwrap();
    /// let status = child.wait().await.unwrap();
    /// assert_eq!(status.signal(), Some(libc::SIGKILL));
    /// # });
    /// ```
    pub fn start_kill(&mut self) -> io::Result<()> {
        match &self.process {
            Some(process) => {
                process.kill()?;
                // Killed: no need to kill again on drop.
                self.kill_on_drop = false;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Sends the child `SIGKILL` and waits for it to exit (reaping it).
    ///
    /// # Errors
    /// As [`start_kill`](Child::start_kill) and [`wait`](Child::wait).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let mut child = Command::new("sleep").arg("100").spawn().unwrap();
    /// child.kill().await.unwrap();
    /// assert!(child.try_wait().unwrap().is_some());
    /// # });
    /// ```
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await?;
        Ok(())
    }

    /// Waits for the child to exit and reaps it; after that, every call returns the same
    /// status at once. Closes the child's standard input first (drops
    /// [`stdin`](Child::stdin)). Cancel-safe: dropping the future leaves the child as it was.
    ///
    /// # Errors
    /// `waitpid(2)`'s (`ECHILD` if other code reaped the child), or an error if no runtime
    /// is there to watch the child from (outside one, or while the current one shuts down).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let mut child = Command::new("sh").args(["-c", "exit 2"]).spawn().unwrap();
    /// assert_eq!(child.wait().await.unwrap().code(), Some(2));
    /// assert_eq!(child.wait().await.unwrap().code(), Some(2));
    /// # });
    /// ```
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        poll_fn(|cx| self.poll_wait(cx)).await
    }

    /// One step of [`wait`](Child::wait): takes a unit of the task's cooperative budget
    /// when it completes.
    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        if let Some(status) = self.status {
            return Poll::Ready(Ok(status));
        }
        let coop = ready!(coop::poll_proceed(cx));
        let process = self
            .process
            .as_mut()
            .expect("a child not reaped has its process");
        let status = ready!(process.poll_exit(cx));
        coop.made_progress();
        Poll::Ready(status.inspect(|&status| self.reaped(status)))
    }

    /// Reaps the child if it has exited, without waiting: `Ok(None)` while it runs. Once
    /// it returned a status, every call (and [`wait`](Child::wait)) returns the same.
    ///
    /// # Errors
    /// `waitpid(2)`'s (`ECHILD` if other code reaped the child).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// let mut child = Command::new("sleep").arg("100").spawn().unwrap();
    /// assert_eq!(child.try_wait().unwrap(), None);
    /// child.kill().await.unwrap();
    /// assert!(child.try_wait().unwrap().is_some());
    /// # });
    /// ```
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let process = self
            .process
            .as_ref()
            .expect("a child not reaped has its process");
        let status = process.try_wait()?;
        if let Some(status) = status {
            self.reaped(status);
        }
        Ok(status)
    }

    fn reaped(&mut self, status: ExitStatus) {
        self.status = Some(status);
        self.process = None;
        self.kill_on_drop = false;
    }

    /// Waits for the child to exit while reading all of its piped standard output and
    /// error (the streams still in [`stdout`](Child::stdout) and [`stderr`](Child::stderr);
    /// a stream not piped, or taken, gives an empty buffer). Closes its standard input
    /// first, as [`wait`](Child::wait).
    ///
    /// # Errors
    /// The first error of reading either stream or of waiting.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::process::Command;
    /// use std::process::Stdio;
    /// let child = Command::new("sh")
    ///     .args(["-c", "echo out; echo err >&2; exit 4"])
    ///     .stdout(Stdio::piped())
    ///     .stderr(Stdio::piped())
    ///     .spawn()
    ///     .unwrap();
    /// let out = child.wait_with_output().await.unwrap();
    /// assert_eq!(out.status.code(), Some(4));
    /// assert_eq!(out.stdout, b"out\n");
    /// assert_eq!(out.stderr, b"err\n");
    /// # });
    /// ```
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        drop(self.stdin.take());
        let mut stdout = Drain::new(self.stdout.take());
        let mut stderr = Drain::new(self.stderr.take());
        let status = poll_fn(|cx| {
            // All three make progress in each poll; the first error ends the wait.
            let out = stdout.poll(cx)?;
            let err = stderr.poll(cx)?;
            let status = ready!(self.poll_wait(cx))?;
            ready!(out);
            ready!(err);
            Poll::Ready(Ok::<_, io::Error>(status))
        })
        .await?;
        Ok(Output {
            status,
            stdout: stdout.buf,
            stderr: stderr.buf,
        })
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(process) = self.process.take() {
            orphan::adopt(process, self.kill_on_drop);
        }
    }
}

/// Reads one of the child's output streams to its end, for
/// [`wait_with_output`](Child::wait_with_output).
struct Drain<R> {
    reader: Option<R>,
    buf: Vec<u8>,
}

/// How much a [`Drain`] reads per call at first; each full read doubles it, up to
/// [`MAX_CHUNK`].
const FIRST_CHUNK: usize = 4096;
const MAX_CHUNK: usize = 1 << 20;

impl<R: futures_io::AsyncRead + Unpin> Drain<R> {
    fn new(reader: Option<R>) -> Drain<R> {
        Drain {
            reader,
            buf: Vec::new(),
        }
    }

    /// Reads until end of stream (then drops the reader) or `Pending`.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(reader) = self.reader.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let mut chunk = FIRST_CHUNK;
        loop {
            let len = self.buf.len();
            self.buf.resize(len + chunk, 0);
            let r = Pin::new(&mut *reader).poll_read(cx, &mut self.buf[len..]);
            let n = match r {
                Poll::Ready(Ok(n)) => n,
                _ => 0,
            };
            self.buf.truncate(len + n);
            match r {
                Poll::Ready(Ok(0)) => {
                    self.reader = None;
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(Ok(n)) if n == chunk => chunk = (chunk * 2).min(MAX_CHUNK),
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
