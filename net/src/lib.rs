//! spinpark's reactor: TCP, UDP and Unix-domain sockets, signals, timers, child processes
//! and any other non-blocking fd on an edge-triggered epoll, polled by the runtime's spinning
//! workers.
//!
//! Most users reach this crate through `spinpark::net`, `spinpark::time`, `spinpark::signal`,
//! `spinpark::process` and `spinpark::io`.
//!
//! ```
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//! use spinpark_net::{TcpListener, TcpStream};
//!
//! let rt = spinpark_executor::Runtime::new().unwrap();
//! rt.block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
//!     let addr = listener.local_addr().unwrap();
//!     let server = spinpark_executor::spawn(async move {
//!         let (mut s, _) = listener.accept().await.unwrap();
//!         let mut buf = [0; 5];
//!         s.read_exact(&mut buf).await.unwrap();
//!         s.write_all(&buf).await.unwrap();
//!     });
//!     let mut c = TcpStream::connect(addr).await.unwrap();
//!     c.write_all(b"hello").await.unwrap();
//!     let mut buf = [0; 5];
//!     c.read_exact(&mut buf).await.unwrap();
//!     assert_eq!(&buf, b"hello");
//!     server.await.unwrap();
//! });
//! ```
//!
//! # How it works
//!
//! * One epoll instance per runtime, created on first use. Each socket is registered once,
//!   edge-triggered, for reading, writing and peer close; its readiness lives in a word with a
//!   tick so an edge is never lost between a `WouldBlock` and clearing the bit
//!   (`readiness.rs`).
//! * The reactor is the runtime's [`spinpark_executor::Driver`]: a spinning worker polls it
//!   without blocking, so a request that arrives while a worker spins is picked up by that
//!   worker with no thread woken; the last worker to park blocks until the next timer, in
//!   `poll(2)` on the epoll fd and an eventfd that only it reads (`reactor.rs`).
//! * Timers live in hierarchical timing wheels, one per worker (`timers/`), which a reactor
//!   turn fires after reading the clock once; the public futures built on them are in
//!   [`time`] (`time.rs`, `time/`).
//! * The socket types are thin wrappers: what a stream does is written once in `stream.rs`,
//!   how a listener accepts in `listener.rs`, and every libc call goes through one checked
//!   helper in `sys.rs`, whose errors name the call.
//! * Each I/O operation takes one unit of the task's cooperative budget, so a task whose
//!   socket is always ready still lets its neighbours run.

#![warn(missing_docs)]

mod addr;
mod auto_flush;
mod buf;
mod cork;
mod halves;
mod interest;
pub mod io;
mod io_source;
mod io_traits;
mod listener;
mod peers;
pub mod process;
mod reactor;
mod readiness;
pub mod signal;
mod stream;
mod stream_api;
mod sys;
pub mod tcp;
pub mod time;
mod timers;
pub mod udp;
pub mod unix;

pub use addr::{lookup_host, ToSocketAddrs};
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixSocket, UnixStream};
