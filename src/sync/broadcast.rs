//! A multi-producer, multi-consumer channel where every receiver sees every value: tokio's
//! `broadcast`, whose `recv` takes a unit of spinpark's budget.
//!
//! ```
//! use spinpark::sync::broadcast;
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let (tx, mut rx1) = broadcast::channel(16);
//! let mut rx2 = tx.subscribe();
//! tx.send("news").unwrap();
//! assert_eq!(rx1.recv().await, Ok("news"));
//! assert_eq!(rx2.recv().await, Ok("news"));
//! # });
//! ```
//!
//! The endpoints are newtypes over tokio's; `recv` is tokio's, wrapped in
//! [`coop::cooperative`](crate::task::coop::cooperative) as tokio wraps it in its own. A
//! receiver that falls more than the capacity behind gets `RecvError::Lagged` (tokio's errors).

use super::budget::forbid_blocking;
use crate::task::coop::cooperative;
use error::{RecvError, SendError, TryRecvError};

/// The errors (tokio's).
pub mod error {
    pub use tokio::sync::broadcast::error::{RecvError, SendError, TryRecvError};
}

/// A channel keeping the last `capacity` values for its receivers.
///
/// # Panics
///
/// If `capacity` is 0 or too large, as tokio's.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (tx, mut rx) = spinpark::sync::broadcast::channel(2);
/// for i in 0..3 {
///     tx.send(i).unwrap();
/// }
/// // The oldest value was overwritten.
/// assert!(rx.recv().await.is_err());
/// assert_eq!(rx.recv().await, Ok(1));
/// # });
/// ```
#[track_caller]
pub fn channel<T: Clone>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = tokio::sync::broadcast::channel(capacity);
    (Sender(tx), Receiver(rx))
}

/// The sending half; clone it for more producers, [`subscribe`](Sender::subscribe) for more
/// receivers.
pub struct Sender<T>(tokio::sync::broadcast::Sender<T>);

/// A sender that does not keep the channel open.
pub struct WeakSender<T>(tokio::sync::broadcast::WeakSender<T>);

/// A receiving half: sees every value sent after it subscribed.
pub struct Receiver<T>(tokio::sync::broadcast::Receiver<T>);

impl<T> Sender<T> {
    /// A sender of a new channel with no receiver yet.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0 or too large, as tokio's.
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        Sender(tokio::sync::broadcast::Sender::new(capacity))
    }

    /// Sends to every receiver, without waiting; returns how many receivers there are, or
    /// the value back if there are none.
    pub fn send(&self, value: T) -> Result<usize, SendError<T>> {
        self.0.send(value)
    }

    /// A new receiver, seeing the values sent from now on.
    pub fn subscribe(&self) -> Receiver<T> {
        Receiver(self.0.subscribe())
    }

    /// A [`WeakSender`] of the same channel.
    pub fn downgrade(&self) -> WeakSender<T> {
        WeakSender(self.0.downgrade())
    }

    /// Values not yet seen by every receiver.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether every receiver has seen every value.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many receivers there are.
    pub fn receiver_count(&self) -> usize {
        self.0.receiver_count()
    }

    /// Whether both senders belong to the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }

    /// Waits until the channel has no receiver left.
    pub async fn closed(&self) {
        self.0.closed().await
    }

    /// How many `Sender`s the channel has.
    pub fn strong_count(&self) -> usize {
        self.0.strong_count()
    }

    /// How many `WeakSender`s the channel has.
    pub fn weak_count(&self) -> usize {
        self.0.weak_count()
    }

    /// tokio's sender, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::broadcast::Sender<T> {
        self.0
    }

    /// tokio's sender behind this one.
    pub fn as_tokio(&self) -> &tokio::sync::broadcast::Sender<T> {
        &self.0
    }
}

impl<T> WeakSender<T> {
    /// A [`Sender`], if the channel still has one.
    pub fn upgrade(&self) -> Option<Sender<T>> {
        self.0.upgrade().map(Sender)
    }

    /// How many `Sender`s the channel has.
    pub fn strong_count(&self) -> usize {
        self.0.strong_count()
    }

    /// How many `WeakSender`s the channel has.
    pub fn weak_count(&self) -> usize {
        self.0.weak_count()
    }

    /// tokio's weak sender, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::broadcast::WeakSender<T> {
        self.0
    }
}

impl<T> Receiver<T> {
    /// Values this receiver has not seen yet.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether this receiver has seen every value.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether both receivers belong to the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }

    /// How many `Sender`s the channel has.
    pub fn sender_strong_count(&self) -> usize {
        self.0.sender_strong_count()
    }

    /// How many `WeakSender`s the channel has.
    pub fn sender_weak_count(&self) -> usize {
        self.0.sender_weak_count()
    }

    /// Whether every sender is gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// tokio's receiver, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::broadcast::Receiver<T> {
        self.0
    }
}

impl<T: Clone> Receiver<T> {
    /// A new receiver of the same channel, starting at the newest value (not at this one's
    /// position).
    pub fn resubscribe(&self) -> Self {
        Receiver(self.0.resubscribe())
    }

    /// Waits for the next value (a clone), taking a unit of the task's budget first (kept
    /// when it returns). Cancel safe.
    pub async fn recv(&mut self) -> Result<T, RecvError> {
        cooperative(self.0.recv()).await
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
    pub fn blocking_recv(&mut self) -> Result<T, RecvError> {
        forbid_blocking();
        self.0.blocking_recv()
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender(self.0.clone())
    }
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        WeakSender(self.0.clone())
    }
}

tokio_conversions!(
    Sender => tokio::sync::broadcast::Sender<T>,
    WeakSender => tokio::sync::broadcast::WeakSender<T>,
    Receiver => tokio::sync::broadcast::Receiver<T>,
);
