//! [`Executor`]: hyper's `Executor` on spinpark's [`spawn`](crate::spawn).
//!
//! ```no_run
//! # async fn f(stream: spinpark::net::TcpStream) {
//! use hyper::server::conn::http2;
//! # let svc = hyper::service::service_fn(|_: hyper::Request<hyper::body::Incoming>| async {
//! #     Ok::<_, std::convert::Infallible>(hyper::Response::new(String::new()))
//! # });
//! let conn = http2::Builder::new(spinpark::hyper::Executor::new())
//!     .timer(spinpark::hyper::Timer::new())
//!     .serve_connection(spinpark::hyper::Io::new(stream), svc);
//! # let _ = conn.await;
//! # }
//! ```
//!
//! Each future hyper hands over becomes a detached task on the current runtime; its output
//! (hyper's futures return `()`) is dropped.

use std::future::Future;

/// Spawns hyper's background futures (HTTP/2 connection and stream tasks) on the current
/// spinpark runtime.
///
/// ```
/// let exec = spinpark::hyper::Executor::new();
/// let _builder = hyper::server::conn::http2::Builder::new(exec);
/// ```
///
/// # Panics
/// `execute` panics when called outside a spinpark runtime (like [`spawn`](crate::spawn)).
#[derive(Debug, Clone, Copy, Default)]
pub struct Executor {
    _private: (),
}

impl Executor {
    /// An executor spawning on whichever spinpark runtime is current when hyper calls it.
    pub fn new() -> Executor {
        Executor { _private: () }
    }
}

impl<F> ::hyper::rt::Executor<F> for Executor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        // Detached: hyper keeps its own handle on what the task does (channels inside h2).
        drop(crate::spawn(fut));
    }
}
