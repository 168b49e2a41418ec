//! The unbounded `mpsc` channel (re-exported by [`super::mpsc`]): receiving takes a unit of
//! spinpark's budget; sending never waits, so it takes none, as in tokio.

use std::task::{Context, Poll};

use super::budget::{forbid_blocking, poll_budgeted};
use super::mpsc::error::{SendError, TryRecvError};

/// A channel with no bound: `send` never waits (memory is the limit).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (tx, mut rx) = spinpark::sync::mpsc::unbounded_channel();
/// for i in 0..1000 {
///     tx.send(i).unwrap();
/// }
/// drop(tx);
/// let mut n = 0;
/// while rx.recv().await.is_some() {
///     n += 1; // the drain yields to other tasks every 128 values
/// }
/// assert_eq!(n, 1000);
/// # });
/// ```
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (UnboundedSender(tx), UnboundedReceiver(rx))
}

/// The sending half of an unbounded channel; clone it for more producers.
pub struct UnboundedSender<T>(tokio::sync::mpsc::UnboundedSender<T>);

/// A sender that does not keep the channel open.
pub struct WeakUnboundedSender<T>(tokio::sync::mpsc::WeakUnboundedSender<T>);

/// The receiving half of an unbounded channel.
pub struct UnboundedReceiver<T>(tokio::sync::mpsc::UnboundedReceiver<T>);

impl<T> UnboundedSender<T> {
    /// Sends without waiting; gives the value back if the receiver is gone.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.0.send(value)
    }

    /// Waits until the receiver is gone.
    pub async fn closed(&self) {
        self.0.closed().await
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Whether both senders belong to the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }

    /// A [`WeakUnboundedSender`] of the same channel.
    pub fn downgrade(&self) -> WeakUnboundedSender<T> {
        WeakUnboundedSender(self.0.downgrade())
    }

    /// How many `UnboundedSender`s the channel has.
    pub fn strong_count(&self) -> usize {
        self.0.strong_count()
    }

    /// How many `WeakUnboundedSender`s the channel has.
    pub fn weak_count(&self) -> usize {
        self.0.weak_count()
    }

    /// tokio's sender, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::mpsc::UnboundedSender<T> {
        self.0
    }

    /// tokio's sender behind this one.
    pub fn as_tokio(&self) -> &tokio::sync::mpsc::UnboundedSender<T> {
        &self.0
    }
}

impl<T> WeakUnboundedSender<T> {
    /// An [`UnboundedSender`], if the channel still has one.
    pub fn upgrade(&self) -> Option<UnboundedSender<T>> {
        self.0.upgrade().map(UnboundedSender)
    }

    /// How many `UnboundedSender`s the channel has.
    pub fn strong_count(&self) -> usize {
        self.0.strong_count()
    }

    /// How many `WeakUnboundedSender`s the channel has.
    pub fn weak_count(&self) -> usize {
        self.0.weak_count()
    }

    /// tokio's weak sender, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::mpsc::WeakUnboundedSender<T> {
        self.0
    }
}

impl<T> UnboundedReceiver<T> {
    /// Waits for the next value; `None` once every sender is gone and the channel is empty.
    /// Takes a unit of the task's budget when it returns. Cancel safe.
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Waits for values and moves up to `limit` of them into `buffer`; returns how many.
    pub async fn recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        std::future::poll_fn(|cx| self.poll_recv_many(cx, buffer, limit)).await
    }

    /// The next value if one is there, without waiting (and without budget).
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.0.try_recv()
    }

    /// Blocks the thread until a value comes: for synchronous code.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Option<T> {
        forbid_blocking();
        self.0.blocking_recv()
    }

    /// Blocks the thread until values come.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    #[track_caller]
    pub fn blocking_recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        forbid_blocking();
        self.0.blocking_recv_many(buffer, limit)
    }

    /// Closes the channel to senders; values already in it can still be received.
    pub fn close(&mut self) {
        self.0.close()
    }

    /// Whether the channel is closed.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Whether no value is waiting.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Values waiting.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`recv`](UnboundedReceiver::recv) as a poll function (budgeted the same way).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        poll_budgeted(cx, |cx| self.0.poll_recv(cx))
    }

    /// [`recv_many`](UnboundedReceiver::recv_many) as a poll function.
    pub fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        poll_budgeted(cx, |cx| self.0.poll_recv_many(cx, buffer, limit))
    }

    /// How many `UnboundedSender`s the channel has.
    pub fn sender_strong_count(&self) -> usize {
        self.0.sender_strong_count()
    }

    /// How many `WeakUnboundedSender`s the channel has.
    pub fn sender_weak_count(&self) -> usize {
        self.0.sender_weak_count()
    }

    /// tokio's receiver, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::mpsc::UnboundedReceiver<T> {
        self.0
    }
}

impl<T> Clone for UnboundedSender<T> {
    fn clone(&self) -> Self {
        UnboundedSender(self.0.clone())
    }
}

impl<T> Clone for WeakUnboundedSender<T> {
    fn clone(&self) -> Self {
        WeakUnboundedSender(self.0.clone())
    }
}

tokio_conversions!(
    UnboundedSender => tokio::sync::mpsc::UnboundedSender<T>,
    WeakUnboundedSender => tokio::sync::mpsc::WeakUnboundedSender<T>,
    UnboundedReceiver => tokio::sync::mpsc::UnboundedReceiver<T>,
);
