//! A channel for one value: tokio's `oneshot`, whose receiving and `closed` waits take a unit
//! of spinpark's budget.
//!
//! ```
//! use spinpark::sync::oneshot;
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let (tx, rx) = oneshot::channel();
//! spinpark::spawn(async move {
//!     let _ = tx.send("done");
//! });
//! assert_eq!(rx.await, Ok("done"));
//! # });
//! ```
//!
//! [`Sender`] and [`Receiver`] are newtypes over tokio's; awaiting the receiver and
//! [`Sender::closed`] take a unit of the task's budget first and keep it only when they
//! complete, as tokio's do with tokio's budget. The errors are tokio's.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::budget::{forbid_blocking, poll_budgeted};

/// The errors (tokio's).
pub mod error {
    pub use tokio::sync::oneshot::error::{RecvError, TryRecvError};
}

use error::{RecvError, TryRecvError};

/// A channel for one value; the receiver is a future of it.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (tx, rx) = spinpark::sync::oneshot::channel::<u32>();
/// drop(tx);
/// assert!(rx.await.is_err()); // the sender went away
/// # });
/// ```
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    (Sender(tx), Receiver(rx))
}

/// Sends the channel's one value.
pub struct Sender<T>(tokio::sync::oneshot::Sender<T>);

/// Receives the channel's one value: await it, or [`try_recv`](Receiver::try_recv).
///
/// Awaiting it takes a unit of the task's budget once the value (or the sender's drop) is
/// there.
pub struct Receiver<T>(tokio::sync::oneshot::Receiver<T>);

impl<T> Sender<T> {
    /// Sends `value`; gives it back if the receiver is gone. Never waits.
    pub fn send(self, value: T) -> Result<(), T> {
        self.0.send(value)
    }

    /// Waits until the receiver is dropped or closed (for work nobody wants any more), taking
    /// a unit of the task's budget when it ends.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (mut tx, rx) = spinpark::sync::oneshot::channel::<()>();
    /// drop(rx);
    /// tx.closed().await;
    /// assert!(tx.is_closed());
    /// # });
    /// ```
    pub async fn closed(&mut self) {
        std::future::poll_fn(|cx| self.poll_closed(cx)).await
    }

    /// Whether the receiver is dropped or closed.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// [`closed`](Sender::closed) as a poll function (registers `cx`'s waker when pending).
    pub fn poll_closed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        poll_budgeted(cx, |cx| self.0.poll_closed(cx))
    }

    /// tokio's sender, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::oneshot::Sender<T> {
        self.0
    }
}

impl<T> Receiver<T> {
    /// Stops the channel: the sender's `send` fails from now on, while a value sent before is
    /// still received.
    pub fn close(&mut self) {
        self.0.close()
    }

    /// Whether the receiver has already given its result (awaited to completion or taken by
    /// `try_recv`).
    pub fn is_terminated(&self) -> bool {
        self.0.is_terminated()
    }

    /// Whether no value is waiting to be received.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value if it was sent, without waiting (and without budget).
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.0.try_recv()
    }

    /// Blocks the thread until the value comes: for synchronous code.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    ///
    /// ```
    /// let (tx, rx) = spinpark::sync::oneshot::channel();
    /// std::thread::spawn(move || tx.send(5).unwrap());
    /// assert_eq!(rx.blocking_recv(), Ok(5)); // a plain thread may block
    /// ```
    #[track_caller]
    pub fn blocking_recv(self) -> Result<T, RecvError> {
        forbid_blocking();
        self.0.blocking_recv()
    }

    /// tokio's receiver, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::oneshot::Receiver<T> {
        self.0
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let rx = &mut self.0;
        if rx.is_terminated() {
            // tokio's panic for a poll after completion, budget or not.
            return Pin::new(rx).poll(cx);
        }
        poll_budgeted(cx, |cx| Pin::new(rx).poll(cx))
    }
}

impl<T> From<tokio::sync::oneshot::Sender<T>> for Sender<T> {
    fn from(tx: tokio::sync::oneshot::Sender<T>) -> Self {
        Sender(tx)
    }
}

impl<T> From<Sender<T>> for tokio::sync::oneshot::Sender<T> {
    fn from(tx: Sender<T>) -> Self {
        tx.0
    }
}

impl<T> From<tokio::sync::oneshot::Receiver<T>> for Receiver<T> {
    fn from(rx: tokio::sync::oneshot::Receiver<T>) -> Self {
        Receiver(rx)
    }
}

impl<T> From<Receiver<T>> for tokio::sync::oneshot::Receiver<T> {
    fn from(rx: Receiver<T>) -> Self {
        rx.0
    }
}

impl<T: fmt::Debug> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: fmt::Debug> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
