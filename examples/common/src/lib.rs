//! Code shared by spinpark's examples (`examples/`), the `rpc` benchmark and the integration
//! tests: the echo protocol, the key-value server and its RESP protocol, command-line
//! parsing, and (with the `hyper` feature) the HTTP, TLS and gRPC services. Not published; a workspace member so that each user links it as a crate instead
//! of including its files with `#[path]`.
//!
//! ```
//! use std::time::Duration;
//! assert_eq!(examples_common::duration::parse("250us"), Ok(Duration::from_micros(250)));
//! assert_eq!(examples_common::echo_proto::frame(b"hi"), [0, 0, 0, 2, b'h', b'i']);
//! ```

pub mod args;
pub mod duration;
pub mod echo_proto;
pub mod kv;
pub mod log_limit;
pub mod resp;
pub mod size;

#[cfg(feature = "hyper")]
pub mod body_deadline;
#[cfg(feature = "hyper")]
pub mod conn_timeouts;
#[cfg(feature = "hyper")]
pub mod grpc;
#[cfg(feature = "hyper")]
pub mod http;
#[cfg(feature = "hyper")]
pub mod tls;
