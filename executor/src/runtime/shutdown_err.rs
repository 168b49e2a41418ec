//! The `io::Error` an operation returns because its runtime shut down, and
//! [`is_rt_shutdown_err`], which recognises it by its type (not its text).

use std::error::Error;
use std::fmt;
use std::io;

/// What an `io::Error` of kind `Other` carries when the operation failed because its
/// runtime shut down: a type of its own, so that [`is_rt_shutdown_err`] can tell it from any
/// other error by downcasting, whatever its message says.
#[derive(Debug)]
struct RuntimeShutDown {
    message: &'static str,
}

impl fmt::Display for RuntimeShutDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message)
    }
}

impl Error for RuntimeShutDown {}

/// The error of an I/O operation that failed because its runtime shut down, saying
/// `message`; [`is_rt_shutdown_err`] recognises it. For the reactor (`spinpark-net`).
#[doc(hidden)]
pub fn rt_shutdown_err(message: &'static str) -> io::Error {
    io::Error::other(RuntimeShutDown { message })
}

/// Whether `err` is the error an I/O operation returned because the runtime its resource
/// belongs to shut down (a socket, an `AsyncFd`, a signal listener whose runtime was
/// dropped, or one made on a runtime that is shutting down), as tokio's
/// `runtime::is_rt_shutdown_err`.
///
/// The check is by type: an error built elsewhere with the same text is not one, nor is a
/// [`JoinError`](crate::JoinError) converted into an `io::Error`, nor an error wrapping this
/// one.
///
/// ```
/// use spinpark::net::TcpListener;
/// let rt1 = spinpark::Builder::new_current_thread().build().unwrap();
/// let rt2 = spinpark::Builder::new_current_thread().build().unwrap();
/// let listener = rt1.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
/// drop(rt1); // the listener's runtime
/// rt2.block_on(async {
///     let err = listener.accept().await.unwrap_err();
///     assert!(spinpark::runtime::is_rt_shutdown_err(&err));
/// });
/// // The same words from elsewhere are not the runtime's error.
/// let other = std::io::Error::other("the spinpark runtime has shut down");
/// assert!(!spinpark::runtime::is_rt_shutdown_err(&other));
/// ```
pub fn is_rt_shutdown_err(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::Other && err.get_ref().is_some_and(|e| e.is::<RuntimeShutDown>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognised_by_type_not_text() {
        let err = rt_shutdown_err("the runtime has shut down");
        assert!(is_rt_shutdown_err(&err));
        assert_eq!(err.to_string(), "the runtime has shut down");
        assert!(!is_rt_shutdown_err(&io::Error::other(
            "the runtime has shut down"
        )));
        assert!(!is_rt_shutdown_err(&io::Error::from(io::ErrorKind::Other)));
        // Wrapped in another error: not the runtime's own.
        assert!(!is_rt_shutdown_err(&io::Error::other(err)));
        let same_type_other_kind =
            io::Error::new(io::ErrorKind::NotFound, RuntimeShutDown { message: "x" });
        assert!(!is_rt_shutdown_err(&same_type_other_kind));
    }
}
