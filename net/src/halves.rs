//! The owned write half's behaviour, written once for TCP and Unix streams: dropping it shuts
//! down the write side; reuniting it with its read half gives the stream back.
//!
//! ```text
//! pub struct OwnedReadHalf(Arc<TcpStream>);
//! pub struct OwnedWriteHalf(OwnedWrite<TcpStream>);
//!
//! let (read, write) = halves::into_split(stream);
//! let stream = write.reunite(read)?; // Err((read, write)) if they are not a pair
//! write.forget();                     // or: gone without the shutdown
//! ```
//!
//! How: both halves share the stream in an `Arc`; the write half remembers whether its drop
//! should shut down the write side, which `reunite` turns off before giving the stream back.

use std::os::fd::AsRawFd;
use std::sync::Arc;

/// A stream whose write side an owned write half shuts down (its FIN goes after every byte
/// written: `cork.rs`).
pub(crate) trait ShutWrite {
    /// Shuts down the write side.
    fn shut_write(&self) -> std::io::Result<()>;
}

/// An owned write half's stream `T`.
#[derive(Debug)]
pub(crate) struct OwnedWrite<T: AsRawFd + ShutWrite> {
    stream: Arc<T>,
    shutdown_on_drop: bool,
}

/// Splits `stream` into the read half's share and the write half.
pub(crate) fn into_split<T: AsRawFd + ShutWrite>(stream: T) -> (Arc<T>, OwnedWrite<T>) {
    let stream = Arc::new(stream);
    let write = OwnedWrite {
        stream: stream.clone(),
        shutdown_on_drop: true,
    };
    (stream, write)
}

impl<T: AsRawFd + ShutWrite> OwnedWrite<T> {
    pub(crate) fn stream(&self) -> &T {
        &self.stream
    }

    /// Gives the half up without shutting down the write side (tokio's `forget`): the
    /// stream closes once the read half goes too.
    pub(crate) fn forget(mut self) {
        self.shutdown_on_drop = false;
    }

    /// The stream again, if `read` is this half's other half; both back otherwise.
    pub(crate) fn reunite(mut self, read: Arc<T>) -> Result<T, (Arc<T>, Self)> {
        if !Arc::ptr_eq(&read, &self.stream) {
            return Err((read, self));
        }
        self.shutdown_on_drop = false;
        drop(self);
        Ok(
            Arc::try_unwrap(read)
                .unwrap_or_else(|_| unreachable!("both halves were just given up")),
        )
    }
}

impl<T: AsRawFd + ShutWrite> Drop for OwnedWrite<T> {
    fn drop(&mut self) {
        if self.shutdown_on_drop {
            // The peer may already be gone; there is nobody to report that to.
            let _ = self.stream.shut_write();
        }
    }
}
