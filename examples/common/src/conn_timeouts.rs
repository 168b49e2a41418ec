//! Per-connection timeouts for the HTTP and gRPC examples, so that clients that connect and
//! then send nothing, stop mid-handshake or trickle bytes (headers or a body) cannot hold a
//! descriptor forever:
//! [`Timeouts`] (what a deployment would set, each a command-line flag) and [`TimedIo`], the
//! hyper I/O wrapper that enforces the handshake and idle deadlines on any runtime.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use examples_common::conn_timeouts::Timeouts;
//!
//! let t = Timeouts::default();
//! assert_eq!(t.handshake, Duration::from_secs(10));
//! # fn f(stream: spinpark::net::TcpStream, t: Timeouts) {
//! // Accepted just now: the handshake deadline runs from here.
//! let io = t.timed(
//!     spinpark::hyper::Io::new(stream),
//!     spinpark::hyper::Timer::new(),
//!     Instant::now(),
//! );
//! # }
//! ```
//!
//! How each stage is bounded:
//!
//! * **Handshake** (`handshake`, from accept): the TLS handshake (the caller wraps it in a
//!   timeout ending at the same deadline), then the bytes hyper-util's connection builder
//!   reads to tell HTTP/2 from HTTP/1 (the 24-byte HTTP/2 preface, or the first byte that
//!   differs from it). hyper-util waits for those without a timeout; [`TimedIo`] watches them
//!   and fails the read once the deadline passes, whatever trickled in.
//! * **HTTP/1 request headers** (`header_read`): hyper's own `header_read_timeout`. hyper
//!   arms it whenever it starts waiting for a request head, so it also bounds the wait for
//!   the next request on a keep-alive connection.
//! * **Request bodies** (`body`, `body_min_rate`), HTTP/1 and HTTP/2: from the request head,
//!   a body has `body` (20 s), plus one second for every `body_min_rate` bytes (1024)
//!   received, so a body sent at 1 KiB/s or faster may take as long as it needs, and one
//!   trickled a byte (or a small DATA frame) at a time is cut after about 20 s. hyper has no
//!   such timeout and the idle one is reset by every byte; the services are wrapped with
//!   [`Timeouts::with_body_deadline`] (see [`crate::body_deadline`]).
//! * **Idle** (`idle`): after the handshake, a connection on which no byte is read or written
//!   for this long, while hyper waits on the socket, is closed (a request body or a response
//!   that stalls, an HTTP/2 peer that stops answering). [`TimedIo`] checks it lazily: a
//!   transfer only records the time, and the one timer is moved when it fires early.
//! * **HTTP/2 keep-alive** (`h2_keep_alive`): hyper pings the client that often and closes
//!   the connection if the ping is not answered within the same time. A client that answers
//!   pings keeps its connection, streams or not, as with browsers.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Read, ReadBuf, ReadBufCursor, Sleep, Timer, Write};

use crate::body_deadline::WithBodyDeadline;

/// The first bytes of every HTTP/2 connection (RFC 9113, section 3.4).
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// How long each stage of a connection may take (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From accept to knowing the protocol: the TLS handshake and HTTP/2 preface (or the
    /// start of an HTTP/1 request). Default 10 s.
    pub handshake: Duration,
    /// HTTP/1: a request's headers, and the wait for the next request. Default 30 s.
    pub header_read: Duration,
    /// After the handshake: no byte moving either way for this long closes the connection.
    /// Default 60 s.
    pub idle: Duration,
    /// HTTP/2: the ping interval, and how long a ping may go unanswered; `None` sends no
    /// pings. Default 20 s.
    pub h2_keep_alive: Option<Duration>,
    /// A request body's time from its request head, before what it earns by `body_min_rate`.
    /// Default 20 s.
    pub body: Duration,
    /// Each this many bytes of request body received earn it one more second (0: the body
    /// deadline is fixed). Default 1024.
    pub body_min_rate: u32,
}

impl Timeouts {
    /// The defaults above.
    pub const DEFAULT: Timeouts = Timeouts {
        handshake: Duration::from_secs(10),
        header_read: Duration::from_secs(30),
        idle: Duration::from_secs(60),
        h2_keep_alive: Some(Duration::from_secs(20)),
        body: Duration::from_secs(20),
        body_min_rate: 1024,
    };

    /// Installs `timer` and these timeouts on hyper-util's connection builder (HTTP/1's
    /// header-read timeout, HTTP/2's keep-alive pings).
    ///
    /// ```
    /// use examples_common::conn_timeouts::Timeouts;
    /// let mut builder =
    ///     hyper_util::server::conn::auto::Builder::new(spinpark::hyper::Executor::new());
    /// Timeouts::default().configure(&mut builder, spinpark::hyper::Timer::new());
    /// ```
    pub fn configure<E, T>(
        &self,
        builder: &mut hyper_util::server::conn::auto::Builder<E>,
        timer: T,
    ) where
        T: Timer + Clone + Send + Sync + 'static,
    {
        builder
            .http1()
            .timer(timer.clone())
            .header_read_timeout(self.header_read);
        let mut h2 = builder.http2();
        h2.timer(timer).keep_alive_interval(self.h2_keep_alive);
        if let Some(d) = self.h2_keep_alive {
            h2.keep_alive_timeout(d);
        }
    }
}

impl Timeouts {
    /// Wraps a connection accepted at `accepted` in a [`TimedIo`] with these deadlines: the
    /// handshake must be done by `accepted + handshake`, and afterwards the connection may
    /// sit idle for `idle`.
    ///
    /// ```no_run
    /// # async fn f(stream: spinpark::net::TcpStream) {
    /// use examples_common::conn_timeouts::Timeouts;
    /// let io = Timeouts::default().timed(
    ///     spinpark::hyper::Io::new(stream),
    ///     spinpark::hyper::Timer::new(),
    ///     std::time::Instant::now(),
    /// );
    /// # drop(io);
    /// # }
    /// ```
    pub fn timed<I, T: Timer>(&self, io: I, timer: T, accepted: Instant) -> TimedIo<I, T> {
        TimedIo::new(io, timer, after(accepted, self.handshake), self.idle)
    }

    /// Wraps the hyper service `svc` so that each request's body has these body deadlines
    /// (`body`, `body_min_rate`; see [`crate::body_deadline`]).
    ///
    /// ```
    /// use examples_common::body_deadline::BodyDeadline;
    /// use examples_common::conn_timeouts::Timeouts;
    /// type Timed = BodyDeadline<hyper::body::Incoming, spinpark::hyper::Timer>;
    /// let svc = Timeouts::default().with_body_deadline(
    ///     hyper::service::service_fn(examples_common::http::handle::<Timed>),
    ///     spinpark::hyper::Timer::new(),
    /// );
    /// # drop(svc);
    /// ```
    pub fn with_body_deadline<S, T>(&self, svc: S, timer: T) -> WithBodyDeadline<S, T> {
        WithBodyDeadline::new(svc, timer, self.body, self.body_min_rate)
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts::DEFAULT
    }
}

/// Where a [`TimedIo`] is.
#[derive(Debug, Clone, Copy)]
enum Stage {
    /// Before the protocol is known: this many bytes have matched the HTTP/2 preface.
    Handshake { matched: usize },
    /// After.
    Open,
}

/// A hyper connection's I/O with the handshake and idle deadlines of [`Timeouts`]: once a
/// deadline passes, the read (or write) hyper is waiting on fails with `TimedOut`, and hyper
/// closes the connection.
///
/// ```no_run
/// # async fn f(stream: spinpark::net::TcpStream) {
/// use std::time::{Duration, Instant};
/// use examples_common::conn_timeouts::TimedIo;
/// let io = TimedIo::new(
///     spinpark::hyper::Io::new(stream),
///     spinpark::hyper::Timer::new(),
///     Instant::now() + Duration::from_secs(10),
///     Duration::from_secs(60),
/// );
/// # drop(io);
/// # }
/// ```
pub struct TimedIo<I, T> {
    inner: I,
    timer: T,
    /// Fires at the handshake deadline, then at (or before) the idle deadline.
    sleep: Pin<Box<dyn Sleep>>,
    idle: Duration,
    /// The last time a byte was read or written.
    last: Instant,
    stage: Stage,
}

impl<I, T> std::fmt::Debug for TimedIo<I, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedIo")
            .field("idle", &self.idle)
            .field("last", &self.last)
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl<I, T: Timer> TimedIo<I, T> {
    /// Wraps `inner`: the protocol must be known by `handshake_deadline`, and after that no
    /// more than `idle` may pass without a byte moving.
    pub fn new(inner: I, timer: T, handshake_deadline: Instant, idle: Duration) -> Self {
        let sleep = timer.sleep_until(handshake_deadline);
        TimedIo {
            inner,
            timer,
            sleep,
            idle,
            last: Instant::now(),
            stage: Stage::Handshake { matched: 0 },
        }
    }

    /// Records a transfer of `n` bytes.
    fn moved(&mut self, n: usize) {
        if n > 0 {
            self.last = Instant::now();
        }
    }

    /// Looks at the first bytes read: the protocol is known once they differ from the
    /// HTTP/2 preface or are all of it. Then the idle deadline takes over.
    fn sniff(&mut self, bytes: &[u8]) {
        if let Stage::Handshake { matched } = self.stage {
            let rest = &H2_PREFACE[matched..];
            let n = bytes.len().min(rest.len());
            if bytes[..n] != rest[..n] || matched + n == H2_PREFACE.len() {
                self.stage = Stage::Open;
                self.timer
                    .reset(&mut self.sleep, after(self.last, self.idle));
            } else {
                self.stage = Stage::Handshake {
                    matched: matched + n,
                };
            }
        }
    }

    /// `Ready` with the error once the current deadline has passed; otherwise registers for
    /// it. Called when the inner I/O is pending.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        loop {
            if self.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            match self.stage {
                Stage::Handshake { .. } => {
                    return Poll::Ready(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no HTTP request or HTTP/2 preface within the handshake timeout",
                    ))
                }
                Stage::Open => {
                    let due = after(self.last, self.idle);
                    if due <= Instant::now() {
                        return Poll::Ready(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("idle for {:?}", self.idle),
                        ));
                    }
                    // Bytes moved since the timer was set: wait for the new deadline.
                    self.timer.reset(&mut self.sleep, due);
                }
            }
        }
    }
}

impl<I: Read + Unpin, T: Timer + Unpin> Read for TimedIo<I, T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = match this.stage {
            // At most the preface's length, through a small buffer of our own, so that the
            // bytes can be looked at (hyper-util reads 24 bytes at a time here anyway).
            Stage::Handshake { matched } => {
                let mut first = [0u8; H2_PREFACE.len()];
                let want = (H2_PREFACE.len() - matched).min(buf.remaining());
                let mut tmp = ReadBuf::new(&mut first[..want]);
                match Pin::new(&mut this.inner).poll_read(cx, tmp.unfilled()) {
                    Poll::Ready(Ok(())) => {
                        let got = tmp.filled();
                        buf.put_slice(got);
                        let n = got.len();
                        this.moved(n);
                        this.sniff(&first[..n]);
                        Poll::Ready(Ok(()))
                    }
                    other => other,
                }
            }
            Stage::Open => {
                let r = Pin::new(&mut this.inner).poll_read(cx, buf);
                // The cursor went to the inner read, so the count is not known here: a
                // completed read counts as a transfer (an end of stream ends the
                // connection anyway).
                if r.is_ready() {
                    this.moved(1);
                }
                r
            }
        };
        match polled {
            Poll::Pending => this.poll_deadline(cx).map(Err),
            ready => ready,
        }
    }
}

impl<I: Write + Unpin, T: Timer + Unpin> Write for TimedIo<I, T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                this.moved(n);
                Poll::Ready(Ok(n))
            }
            Poll::Pending => this.poll_deadline(cx).map(Err),
            err => err,
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(Ok(n)) => {
                this.moved(n);
                Poll::Ready(Ok(n))
            }
            Poll::Pending => this.poll_deadline(cx).map(Err),
            err => err,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Pending => this.poll_deadline(cx).map(Err),
            r => r,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_shutdown(cx) {
            Poll::Pending => this.poll_deadline(cx).map(Err),
            r => r,
        }
    }
}

/// `t + d`, or a century after `t` where that overflows `Instant` (`--idle-timeout` of any
/// size means "practically never", not a panic).
fn after(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .unwrap_or_else(|| t + Duration::from_secs(100 * 365 * 24 * 3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_from_huge_timeouts_do_not_overflow() {
        let now = Instant::now();
        for d in [Duration::MAX, Duration::from_secs(u64::MAX / 2)] {
            assert!(after(now, d) > now + Duration::from_secs(365 * 24 * 3600));
        }
        assert_eq!(
            after(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
    }
}
