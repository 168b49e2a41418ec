//! [`Accept`]: the future of [`TcpListener::accept`], written once for TCP and Unix listeners
//! (`accept_future.rs`).

use std::net::SocketAddr;

use super::{TcpListener, TcpStream};

accept_future!(listener: TcpListener, stream: TcpStream, addr: SocketAddr);
