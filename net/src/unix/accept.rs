//! [`Accept`]: the future of [`UnixListener::accept`], written once for TCP and Unix listeners
//! (`accept_future.rs`).

use super::{SocketAddr, UnixListener, UnixStream};

accept_future!(listener: UnixListener, stream: UnixStream, addr: SocketAddr);
