//! A channel holding one value that receivers watch for changes: tokio's `watch`, whose
//! `changed`, `wait_for` and `Sender::closed` take a unit of spinpark's budget.
//!
//! ```
//! use spinpark::sync::watch;
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let (tx, mut rx) = watch::channel("starting");
//! spinpark::spawn(async move {
//!     tx.send("ready").unwrap();
//! });
//! rx.changed().await.unwrap();
//! assert_eq!(*rx.borrow_and_update(), "ready");
//! # });
//! ```
//!
//! The endpoints are newtypes over tokio's; the three waits are tokio's, wrapped in
//! [`coop::cooperative`](crate::task::coop::cooperative) as tokio wraps them in its own.
//! [`Ref`] and the errors are tokio's.

use std::fmt;

use crate::task::coop::cooperative;
use error::{RecvError, SendError};

pub use tokio::sync::watch::Ref;

/// The errors (tokio's).
pub mod error {
    pub use tokio::sync::watch::error::{RecvError, SendError};
}

/// A channel holding `init`.
///
/// ```
/// let (tx, rx) = spinpark::sync::watch::channel(1);
/// tx.send(2).unwrap();
/// assert_eq!(*rx.borrow(), 2);
/// ```
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = tokio::sync::watch::channel(init);
    (Sender(tx), Receiver(rx))
}

/// Sets the channel's value; clone it for more senders.
pub struct Sender<T>(tokio::sync::watch::Sender<T>);

/// Reads the channel's value and waits for it to change; clone it for more receivers.
pub struct Receiver<T>(tokio::sync::watch::Receiver<T>);

impl<T> Receiver<T> {
    /// The current value (a read lock: do not hold it across `.await`), without marking it
    /// seen.
    pub fn borrow(&self) -> Ref<'_, T> {
        self.0.borrow()
    }

    /// The current value, marked seen.
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        self.0.borrow_and_update()
    }

    /// Whether a value not yet seen is there; an error once every sender is gone.
    pub fn has_changed(&self) -> Result<bool, RecvError> {
        self.0.has_changed()
    }

    /// Whether every sender is gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Marks the current value not seen.
    pub fn mark_changed(&mut self) {
        self.0.mark_changed()
    }

    /// Marks the current value seen.
    pub fn mark_unchanged(&mut self) {
        self.0.mark_unchanged()
    }

    /// Waits for a value not seen yet (then marks it seen); an error once every sender is
    /// gone. Takes a unit of the task's budget first, kept when it returns. Cancel safe.
    pub async fn changed(&mut self) -> Result<(), RecvError> {
        cooperative(self.0.changed()).await
    }

    /// Waits for a value for which `f` is true (the current one included), and returns it.
    /// Budgeted as [`changed`](Receiver::changed).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, mut rx) = spinpark::sync::watch::channel(0);
    /// spinpark::spawn(async move {
    ///     for i in 1..=5 {
    ///         tx.send(i).unwrap();
    ///     }
    /// });
    /// let v = *rx.wait_for(|v| *v >= 5).await.unwrap();
    /// assert_eq!(v, 5);
    /// # });
    /// ```
    pub async fn wait_for(&mut self, f: impl FnMut(&T) -> bool) -> Result<Ref<'_, T>, RecvError> {
        cooperative(self.0.wait_for(f)).await
    }

    /// Whether both receivers belong to the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }

    /// tokio's receiver, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::watch::Receiver<T> {
        self.0
    }
}

impl<T> Sender<T> {
    /// A sender of a new channel holding `init`, with no receiver yet.
    pub fn new(init: T) -> Self {
        Sender(tokio::sync::watch::Sender::new(init))
    }

    /// Sets the value and notifies the receivers; gives it back if there are none.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.0.send(value)
    }

    /// Changes the value in place and notifies the receivers (with or without any).
    pub fn send_modify<F: FnOnce(&mut T)>(&self, modify: F) {
        self.0.send_modify(modify)
    }

    /// Changes the value in place; notifies the receivers if `modify` returns true, and
    /// returns that.
    pub fn send_if_modified<F: FnOnce(&mut T) -> bool>(&self, modify: F) -> bool {
        self.0.send_if_modified(modify)
    }

    /// Sets the value, notifies the receivers (with or without any), and returns the old one.
    pub fn send_replace(&self, value: T) -> T {
        self.0.send_replace(value)
    }

    /// The current value (a read lock: do not hold it across `.await`).
    pub fn borrow(&self) -> Ref<'_, T> {
        self.0.borrow()
    }

    /// Whether every receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Waits until every receiver is gone, taking a unit of the task's budget first (kept when
    /// it returns).
    pub async fn closed(&self) {
        cooperative(self.0.closed()).await
    }

    /// A new receiver, which has seen the current value.
    pub fn subscribe(&self) -> Receiver<T> {
        Receiver(self.0.subscribe())
    }

    /// How many receivers there are.
    pub fn receiver_count(&self) -> usize {
        self.0.receiver_count()
    }

    /// How many senders there are.
    pub fn sender_count(&self) -> usize {
        self.0.sender_count()
    }

    /// Whether both senders belong to the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }

    /// tokio's sender, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::watch::Sender<T> {
        self.0
    }

    /// tokio's sender behind this one.
    pub fn as_tokio(&self) -> &tokio::sync::watch::Sender<T> {
        &self.0
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender(self.0.clone())
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        Receiver(self.0.clone())
    }
}

impl<T: Default> Default for Sender<T> {
    fn default() -> Self {
        Sender(tokio::sync::watch::Sender::default())
    }
}

impl<T> From<tokio::sync::watch::Sender<T>> for Sender<T> {
    fn from(tx: tokio::sync::watch::Sender<T>) -> Self {
        Sender(tx)
    }
}

impl<T> From<Sender<T>> for tokio::sync::watch::Sender<T> {
    fn from(tx: Sender<T>) -> Self {
        tx.0
    }
}

impl<T> From<tokio::sync::watch::Receiver<T>> for Receiver<T> {
    fn from(rx: tokio::sync::watch::Receiver<T>) -> Self {
        Receiver(rx)
    }
}

impl<T> From<Receiver<T>> for tokio::sync::watch::Receiver<T> {
    fn from(rx: Receiver<T>) -> Self {
        rx.0
    }
}

/// tokio's format.
impl<T: fmt::Debug> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// tokio's format.
impl<T: fmt::Debug> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
