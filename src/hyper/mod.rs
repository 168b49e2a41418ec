//! Serving hyper 1.x on spinpark (the `hyper` feature): an I/O wrapper, an executor and a
//! timer, the three things hyper asks of a runtime.
//!
//! ```no_run
//! use std::convert::Infallible;
//! use http_body_util::Full;
//! use hyper::{body::Bytes, server::conn::http1, service::service_fn, Request, Response};
//!
//! #[spinpark::main]
//! async fn main() -> std::io::Result<()> {
//!     let listener = spinpark::net::TcpListener::bind("127.0.0.1:8080").await?;
//!     loop {
//!         let (stream, _) = listener.accept().await?;
//!         stream.set_nodelay(true)?;
//!         spinpark::spawn(async move {
//!             let hello = service_fn(|_: Request<hyper::body::Incoming>| async {
//!                 Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("hello"))))
//!             });
//!             let conn = http1::Builder::new()
//!                 .timer(spinpark::hyper::Timer::new())
//!                 .serve_connection(spinpark::hyper::Io::new(stream), hello);
//!             if let Err(e) = conn.await {
//!                 eprintln!("connection: {e}");
//!             }
//!         });
//!     }
//! }
//! ```
//!
//! * [`Io`] wraps a [`TcpStream`](crate::net::TcpStream) (or, through [`ZeroFill`], any
//!   `futures-io` stream such as a TLS stream) as a `hyper::rt::Read + Write`. Reads from a
//!   `TcpStream` go straight into hyper's uninitialised buffer: nothing is zeroed.
//! * [`Executor`] spawns the tasks hyper needs (HTTP/2 runs one per connection and per
//!   stream) with [`spawn`](crate::spawn), on the runtime that is current when hyper calls it.
//! * [`Timer`] puts hyper's timeouts on [`spinpark::time`](crate::time). hyper panics when a
//!   timeout (`header_read_timeout`, HTTP/2 keep-alive, ...) is configured without a timer,
//!   so install it with `.timer(Timer::new())` on every builder. Since hyper 1.4, HTTP/1's
//!   `header_read_timeout` defaults to 30 s and is active whenever a timer is installed.
//!
//! * With the `hyper-client` feature, [`Connector`] connects hyper-util's pooled client
//!   (built by [`client_builder`]) and tonic's channels (`Endpoint::connect_with_connector`)
//!   over spinpark's own sockets, so a handler's downstream calls stay on the spinning
//!   workers: see the `client` module's docs and `docs/tokio.md`.
//!
//! Do not use hyper-util's `TokioExecutor` or `TokioTimer`, or its `TokioIo` around a
//! `tokio::net` socket, here: they compile, but need a tokio runtime and panic at run time
//! ("there is no reactor running") on spinpark. (`TokioIo` around a spinpark socket does work,
//! with the `tokio-io` feature, and does not zero-fill either.)

#[cfg(feature = "hyper-client")]
mod client;
mod executor;
mod io;
mod timer;

#[cfg(feature = "hyper-client")]
pub use client::{client_builder, Connecting, Connector, DEFAULT_CONNECT_TIMEOUT};

pub use executor::Executor;
pub use io::{Io, Stream, ZeroFill};
pub use timer::Timer;
