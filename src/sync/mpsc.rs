//! Many-producer, single-consumer channels: tokio's `mpsc`, whose receives and bounded sends
//! take a unit of spinpark's budget.
//!
//! ```
//! use spinpark::sync::mpsc;
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let (tx, mut rx) = mpsc::channel(100);
//! for id in 0..3 {
//!     let tx = tx.clone();
//!     spinpark::spawn(async move { tx.send(id).await.unwrap() });
//! }
//! drop(tx);
//! let mut got = Vec::new();
//! while let Some(id) = rx.recv().await {
//!     got.push(id);
//! }
//! got.sort();
//! assert_eq!(got, [0, 1, 2]);
//! # });
//! ```
//!
//! The endpoints are newtypes over tokio's. Receiving (`recv`, `recv_many`, `poll_recv*`)
//! takes a unit of the task's budget before looking at the channel and keeps it when
//! something (a value, or the end) was received; a bounded `send`/`reserve*` takes one once
//! it has its slot. So a task draining a full channel yields now and then, where with
//! `tokio::sync::mpsc` on spinpark it would hold its worker until the channel is empty.
//! [`Sender::send_timeout`] runs on spinpark's timer. `Permit`, `PermitIterator` and the
//! errors are tokio's, except [`error::SendTimeoutError`] (see there).

use std::task::{Context, Poll};
use std::time::Duration;

use super::budget::{forbid_blocking, poll_budgeted, AfterAcquire};
use error::{SendError, SendTimeoutError, TryRecvError, TrySendError};

pub use super::mpsc_unbounded::{
    unbounded_channel, UnboundedReceiver, UnboundedSender, WeakUnboundedSender,
};
pub use tokio::sync::mpsc::{Permit, PermitIterator};

/// The channels' errors: tokio's, and a [`SendTimeoutError`] of spinpark's own.
pub mod error {
    use std::fmt;

    #[allow(deprecated)]
    #[doc(hidden)]
    pub use tokio::sync::mpsc::error::RecvError;
    pub use tokio::sync::mpsc::error::{SendError, TryRecvError, TrySendError};

    /// Why [`Sender::send_timeout`](super::Sender::send_timeout) gave the value back.
    ///
    /// tokio has the same enum behind its `time` feature, which would compile tokio's timers
    /// into every program using this module (and let a leftover `tokio::time` call compile
    /// and then panic for want of tokio's runtime); this one has the same variants, methods
    /// and texts.
    ///
    /// ```
    /// use spinpark::sync::mpsc::error::SendTimeoutError;
    ///
    /// let e = SendTimeoutError::Timeout(7);
    /// assert_eq!(e.to_string(), "timed out waiting on send operation");
    /// assert_eq!(e.into_inner(), 7);
    /// ```
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub enum SendTimeoutError<T> {
        /// The channel stayed full for the whole timeout.
        Timeout(T),
        /// The receiver is gone (dropped or closed).
        Closed(T),
    }

    impl<T> SendTimeoutError<T> {
        /// The value that was not sent.
        pub fn into_inner(self) -> T {
            match self {
                SendTimeoutError::Timeout(v) | SendTimeoutError::Closed(v) => v,
            }
        }
    }

    /// `Timeout(..)` or `Closed(..)`: the value is not shown (it need not be `Debug`).
    impl<T> fmt::Debug for SendTimeoutError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(match self {
                SendTimeoutError::Timeout(_) => "Timeout(..)",
                SendTimeoutError::Closed(_) => "Closed(..)",
            })
        }
    }

    impl<T> fmt::Display for SendTimeoutError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(match self {
                SendTimeoutError::Timeout(_) => "timed out waiting on send operation",
                SendTimeoutError::Closed(_) => "channel closed",
            })
        }
    }

    impl<T> std::error::Error for SendTimeoutError<T> {}
}

/// A bounded channel holding at most `buffer` values: `send` waits while it is full.
///
/// # Panics
///
/// If `buffer` is 0 (or more than tokio's semaphore can count), as tokio's.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (tx, mut rx) = spinpark::sync::mpsc::channel(1);
/// tx.send(1).await.unwrap();
/// assert!(tx.try_send(2).is_err()); // full
/// assert_eq!(rx.recv().await, Some(1));
/// # });
/// ```
#[track_caller]
pub fn channel<T>(buffer: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = tokio::sync::mpsc::channel(buffer);
    (Sender(tx), Receiver(rx))
}

/// The sending half of a bounded channel; clone it for more producers.
pub struct Sender<T>(tokio::sync::mpsc::Sender<T>);

/// A sender that does not keep the channel open; [`upgrade`](WeakSender::upgrade) it to send.
pub struct WeakSender<T>(tokio::sync::mpsc::WeakSender<T>);

/// A slot reserved by [`Sender::reserve_owned`], owning its sender.
pub struct OwnedPermit<T>(tokio::sync::mpsc::OwnedPermit<T>);

/// The receiving half of a bounded channel.
pub struct Receiver<T>(tokio::sync::mpsc::Receiver<T>);

impl<T> Sender<T> {
    /// Waits for a free slot (taking a unit of the task's budget once it has one), then sends.
    /// Gives the value back if the receiver is gone. Not cancel safe in the sense that a
    /// cancelled `send` drops its value; [`reserve`](Sender::reserve) first to keep it.
    pub async fn send(&self, value: T) -> Result<(), SendError<T>> {
        match self.reserve().await {
            Ok(permit) => {
                permit.send(value);
                Ok(())
            }
            Err(_) => Err(SendError(value)),
        }
    }

    /// Waits until the receiver is gone.
    pub async fn closed(&self) {
        self.0.closed().await
    }

    /// Sends if a slot is free now, without waiting (and without budget).
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.0.try_send(value)
    }

    /// [`send`](Sender::send), giving up after `timeout` (on spinpark's timer) with the value
    /// back in [`SendTimeoutError::Timeout`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use spinpark::sync::mpsc::{self, error::SendTimeoutError};
    ///
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, _rx) = mpsc::channel(1);
    /// tx.send(1).await.unwrap();
    /// let full = tx.send_timeout(2, Duration::from_millis(10)).await;
    /// assert_eq!(full, Err(SendTimeoutError::Timeout(2)));
    /// # });
    /// ```
    pub async fn send_timeout(
        &self,
        value: T,
        timeout: Duration,
    ) -> Result<(), SendTimeoutError<T>> {
        match crate::time::timeout(timeout, self.reserve()).await {
            Ok(Ok(permit)) => {
                permit.send(value);
                Ok(())
            }
            Ok(Err(_)) => Err(SendTimeoutError::Closed(value)),
            Err(_) => Err(SendTimeoutError::Timeout(value)),
        }
    }

    /// Blocks the thread until the value is sent: for synchronous code.
    ///
    /// # Panics
    ///
    /// On a runtime's worker or inside `block_on`, with tokio's message.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, mut rx) = spinpark::sync::mpsc::channel(1);
    /// spinpark::spawn_blocking(move || tx.blocking_send(3).unwrap());
    /// assert_eq!(rx.recv().await, Some(3));
    /// # });
    /// ```
    #[track_caller]
    pub fn blocking_send(&self, value: T) -> Result<(), SendError<T>> {
        forbid_blocking();
        self.0.blocking_send(value)
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Waits for a free slot and reserves it (taking a unit of the task's budget once it has
    /// it); the [`Permit`] sends without waiting, or gives the slot back when dropped.
    /// Cancel safe.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, mut rx) = spinpark::sync::mpsc::channel(1);
    /// let permit = tx.reserve().await.unwrap();
    /// permit.send("hi");
    /// assert_eq!(rx.recv().await, Some("hi"));
    /// # });
    /// ```
    pub async fn reserve(&self) -> Result<Permit<'_, T>, SendError<()>> {
        AfterAcquire::new(self.0.reserve()).await
    }

    /// Waits for `n` free slots and reserves them all at once.
    pub async fn reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, SendError<()>> {
        AfterAcquire::new(self.0.reserve_many(n)).await
    }

    /// [`reserve`](Sender::reserve), the permit owning the sender (it can move elsewhere).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, mut rx) = spinpark::sync::mpsc::channel(1);
    /// let permit = tx.reserve_owned().await.unwrap();
    /// let tx = permit.send(1); // the sender comes back
    /// assert_eq!(rx.recv().await, Some(1));
    /// # drop(tx);
    /// # });
    /// ```
    pub async fn reserve_owned(self) -> Result<OwnedPermit<T>, SendError<()>> {
        AfterAcquire::new(self.0.reserve_owned())
            .await
            .map(OwnedPermit)
    }

    /// Reserves a slot if one is free, without waiting.
    pub fn try_reserve(&self) -> Result<Permit<'_, T>, TrySendError<()>> {
        self.0.try_reserve()
    }

    /// Reserves `n` slots if that many are free, without waiting.
    pub fn try_reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, TrySendError<()>> {
        self.0.try_reserve_many(n)
    }

    /// [`try_reserve`](Sender::try_reserve), the permit owning the sender; the sender comes
    /// back in the error.
    pub fn try_reserve_owned(self) -> Result<OwnedPermit<T>, TrySendError<Self>> {
        self.0
            .try_reserve_owned()
            .map(OwnedPermit)
            .map_err(|e| match e {
                TrySendError::Full(tx) => TrySendError::Full(Sender(tx)),
                TrySendError::Closed(tx) => TrySendError::Closed(Sender(tx)),
            })
    }

    /// Whether both senders belong to the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }

    /// Free slots now.
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// A [`WeakSender`] of the same channel.
    pub fn downgrade(&self) -> WeakSender<T> {
        WeakSender(self.0.downgrade())
    }

    /// The channel's buffer size, as given to [`channel`].
    pub fn max_capacity(&self) -> usize {
        self.0.max_capacity()
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
    pub fn into_tokio(self) -> tokio::sync::mpsc::Sender<T> {
        self.0
    }

    /// tokio's sender behind this one.
    pub fn as_tokio(&self) -> &tokio::sync::mpsc::Sender<T> {
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
    pub fn into_tokio(self) -> tokio::sync::mpsc::WeakSender<T> {
        self.0
    }
}

impl<T> OwnedPermit<T> {
    /// Sends `value` in the reserved slot and gives the sender back.
    pub fn send(self, value: T) -> Sender<T> {
        Sender(self.0.send(value))
    }

    /// Gives the slot back unused, and the sender with it.
    pub fn release(self) -> Sender<T> {
        Sender(self.0.release())
    }

    /// Whether both permits belong to the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }

    /// Whether this permit and `sender` belong to the same channel.
    pub fn same_channel_as_sender(&self, sender: &Sender<T>) -> bool {
        self.0.same_channel_as_sender(&sender.0)
    }

    /// tokio's permit, for code that takes tokio's type.
    pub fn into_tokio(self) -> tokio::sync::mpsc::OwnedPermit<T> {
        self.0
    }
}

impl<T> Receiver<T> {
    /// Waits for the next value; `None` once every sender is gone and the channel is empty.
    /// Takes a unit of the task's budget when it returns. Cancel safe.
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Waits for values and moves up to `limit` of them into `buffer`; returns how many (0:
    /// the channel is closed and empty, or `limit` is 0). One unit of budget per call.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (tx, mut rx) = spinpark::sync::mpsc::channel(8);
    /// for i in 0..5 {
    ///     tx.send(i).await.unwrap();
    /// }
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.recv_many(&mut buf, 3).await, 3);
    /// assert_eq!(buf, [0, 1, 2]);
    /// # });
    /// ```
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

    /// Blocks the thread until values come, as [`recv_many`](Receiver::recv_many).
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

    /// Whether the channel is closed (by [`close`](Receiver::close), or every sender gone).
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

    /// Free slots now.
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// The channel's buffer size.
    pub fn max_capacity(&self) -> usize {
        self.0.max_capacity()
    }

    /// [`recv`](Receiver::recv) as a poll function: takes a unit of budget first (returning
    /// `Pending`, the task woken, if none is left), kept only if it returns `Ready`.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        poll_budgeted(cx, |cx| self.0.poll_recv(cx))
    }

    /// [`recv_many`](Receiver::recv_many) as a poll function.
    pub fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        poll_budgeted(cx, |cx| self.0.poll_recv_many(cx, buffer, limit))
    }

    /// How many `Sender`s the channel has.
    pub fn sender_strong_count(&self) -> usize {
        self.0.sender_strong_count()
    }

    /// How many `WeakSender`s the channel has.
    pub fn sender_weak_count(&self) -> usize {
        self.0.sender_weak_count()
    }

    /// tokio's receiver, for code that takes tokio's type (`tokio_stream`'s `ReceiverStream`).
    pub fn into_tokio(self) -> tokio::sync::mpsc::Receiver<T> {
        self.0
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
    Sender => tokio::sync::mpsc::Sender<T>,
    WeakSender => tokio::sync::mpsc::WeakSender<T>,
    OwnedPermit => tokio::sync::mpsc::OwnedPermit<T>,
    Receiver => tokio::sync::mpsc::Receiver<T>,
);
