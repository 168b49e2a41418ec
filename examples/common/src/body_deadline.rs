//! The request-body deadline of the HTTP and gRPC examples: [`BodyDeadline`] wraps a request
//! body and fails it once it is late, and [`WithBodyDeadline`] wraps a hyper service so that
//! every request it is given has its body wrapped.
//!
//! ```
//! use std::time::Duration;
//! use examples_common::body_deadline::BodyDeadline;
//! use examples_common::conn_timeouts::Timeouts;
//!
//! // 20 s for a body, plus 1 s for every 1024 bytes received.
//! let t = Timeouts::default();
//! assert_eq!((t.body, t.body_min_rate), (Duration::from_secs(20), 1024));
//! // The requests the handler gets: hyper's bodies, with the deadline.
//! type Timed = BodyDeadline<hyper::body::Incoming, spinpark::hyper::Timer>;
//! let svc = t.with_body_deadline(
//!     hyper::service::service_fn(examples_common::http::handle::<Timed>),
//!     spinpark::hyper::Timer::new(),
//! );
//! # drop(svc);
//! ```
//!
//! Why: hyper's `header_read_timeout` bounds the request head only, and the connection's
//! idle timeout is reset by every byte, so a client that sends a body one byte every few
//! seconds (or one small HTTP/2 DATA frame) would hold its request, and the connection, for
//! ever.
//!
//! How: the deadline runs from when the service is called (the request head has been read):
//! `body` to start with, and one more second for every `body_min_rate` bytes received, so a
//! body that keeps up that average rate may take as long as it needs (an upload of a large
//! file on a slow link) while a trickle runs out after about `body`. It is checked only while
//! the handler waits for the body: bytes already received are handed over however late the
//! handler asks for them. A late body fails with `TimedOut`; a handler that forwards the
//! error (the echo route streams the body back) fails its response, and hyper then closes an
//! HTTP/1 connection or resets the HTTP/2 stream. A body the handler never reads is not
//! watched: hyper stops reading it once the response is sent (HTTP/1 closes the connection
//! instead of draining it; HTTP/2 resets the stream).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body, Buf, Frame, SizeHint};
use hyper::rt::{Sleep, Timer};
use hyper::Request;

/// Errors of a wrapped body: the inner body's, or the deadline's `TimedOut`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body that must arrive by a deadline which moves on with every byte received
/// (see the module docs).
pub struct BodyDeadline<B, T> {
    inner: B,
    timer: T,
    /// When the request was handed to the service.
    start: Instant,
    /// The deadline with nothing received.
    grace: Duration,
    /// Bytes per second that earn one more second (0: the deadline never moves).
    min_rate: u32,
    received: u64,
    /// Armed at `armed_for` while the handler waits for the body.
    sleep: Option<(Pin<Box<dyn Sleep>>, Instant)>,
}

impl<B, T> std::fmt::Debug for BodyDeadline<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyDeadline")
            .field("grace", &self.grace)
            .field("min_rate", &self.min_rate)
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

impl<B, T: Timer> BodyDeadline<B, T> {
    /// Wraps `inner`, a body whose request arrived at `start`: it has `grace`, plus one second
    /// for every `min_rate` bytes received.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use examples_common::body_deadline::BodyDeadline;
    /// let body = http_body_util::Empty::<hyper::body::Bytes>::new();
    /// let timed = BodyDeadline::new(
    ///     body,
    ///     spinpark::hyper::Timer::new(),
    ///     Instant::now(),
    ///     Duration::from_secs(20),
    ///     1024,
    /// );
    /// # drop(timed);
    /// ```
    pub fn new(inner: B, timer: T, start: Instant, grace: Duration, min_rate: u32) -> Self {
        BodyDeadline {
            inner,
            timer,
            start,
            grace,
            min_rate,
            received: 0,
            sleep: None,
        }
    }

    /// When the body must be complete, given what has been received.
    fn deadline(&self) -> Instant {
        let earned = match self.min_rate {
            0 => Duration::ZERO,
            rate => {
                Duration::from_nanos(self.received.saturating_mul(1_000_000_000) / u64::from(rate))
            }
        };
        // Saturate far in the future rather than overflow.
        let far = self.start + Duration::from_secs(100 * 365 * 24 * 3600);
        self.start
            .checked_add(self.grace.saturating_add(earned))
            .map_or(far, |d| d.min(far))
    }

    /// `Ready` with the error once the deadline has passed; otherwise a timer is armed for it.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        loop {
            let due = self.deadline();
            if Instant::now() >= due {
                self.sleep = None;
                return Poll::Ready(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "request body too slow: {} bytes in {:?} \
                         (allowed {:?}, plus 1 s per {} bytes)",
                        self.received,
                        self.start.elapsed(),
                        self.grace,
                        self.min_rate
                    ),
                ));
            }
            match &mut self.sleep {
                Some((sleep, at)) if *at == due => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    // Fired: look at the clock again.
                    self.sleep = None;
                }
                Some((sleep, at)) => {
                    self.timer.reset(sleep, due);
                    *at = due;
                }
                None => self.sleep = Some((self.timer.sleep_until(due), due)),
            }
        }
    }
}

impl<B, T> Body for BodyDeadline<B, T>
where
    B: Body + Unpin,
    B::Error: Into<BoxError>,
    T: Timer + Unpin,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received = this.received.saturating_add(data.remaining() as u64);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => {
                this.sleep = None;
                Poll::Ready(None)
            }
            Poll::Pending => this.poll_deadline(cx).map(|e| Some(Err(e.into()))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A hyper service whose requests' bodies are wrapped in a [`BodyDeadline`] when it is
/// called; see [`Timeouts::with_body_deadline`](crate::conn_timeouts::Timeouts).
#[derive(Debug, Clone)]
pub struct WithBodyDeadline<S, T> {
    inner: S,
    timer: T,
    grace: Duration,
    min_rate: u32,
}

impl<S, T> WithBodyDeadline<S, T> {
    /// Wraps `inner`: each request's body gets `grace`, plus one second for every `min_rate`
    /// bytes received, from when the service is called.
    ///
    /// ```
    /// use std::time::Duration;
    /// use examples_common::body_deadline::{BodyDeadline, WithBodyDeadline};
    /// type Timed = BodyDeadline<hyper::body::Incoming, spinpark::hyper::Timer>;
    /// let svc = WithBodyDeadline::new(
    ///     hyper::service::service_fn(examples_common::http::handle::<Timed>),
    ///     spinpark::hyper::Timer::new(),
    ///     Duration::from_secs(20),
    ///     1024,
    /// );
    /// # drop(svc);
    /// ```
    pub fn new(inner: S, timer: T, grace: Duration, min_rate: u32) -> Self {
        WithBodyDeadline {
            inner,
            timer,
            grace,
            min_rate,
        }
    }
}

impl<S, T, B> hyper::service::Service<Request<B>> for WithBodyDeadline<S, T>
where
    S: hyper::service::Service<Request<BodyDeadline<B, T>>>,
    T: Timer + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, req: Request<B>) -> Self::Future {
        let start = Instant::now();
        let (timer, grace, rate) = (self.timer.clone(), self.grace, self.min_rate);
        self.inner
            .call(req.map(|body| BodyDeadline::new(body, timer, start, grace, rate)))
    }
}
