//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use futures_util::AsyncWriteExt;
//! let mut out = spinpark::io::stdout();
//! out.write_all(b"written on the blocking pool\n").await?;
//! out.flush().await?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```

pub use spinpark_net::io::*;

mod stdio;
#[cfg(feature = "tokio-io")]
mod stdio_tokio_io;

pub use stdio::{stderr, stdin, stdout, Stderr, Stdin, Stdout};

/// `AsyncFd` and its guards under tokio's path, `tokio::io::unix`.
pub mod unix {
    pub use spinpark_net::io::{
        AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, AsyncFdRegisterError, AsyncFdTryNewError,
        TryIoError,
    };
}
