//! Synchronization for tasks, with tokio's API: channels (`mpsc`, `oneshot`, `broadcast`,
//! `watch`), `Mutex`, `RwLock`, `Semaphore`, `Notify`, `Barrier`, `OnceCell`, `SetOnce`.
//!
//! ```
//! use spinpark::sync::{mpsc, oneshot};
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let (tx, mut rx) = mpsc::channel(16);
//! let (done_tx, done_rx) = oneshot::channel();
//! spinpark::spawn(async move {
//!     let mut sum = 0;
//!     while let Some(n) = rx.recv().await {
//!         sum += n;
//!     }
//!     done_tx.send(sum).unwrap();
//! });
//! for n in 1..=10 {
//!     tx.send(n).await.unwrap();
//! }
//! drop(tx);
//! assert_eq!(done_rx.await.unwrap(), 55);
//! # });
//! ```
//!
//! These are tokio's primitives (the `sync` feature pulls tokio with its `sync` feature only,
//! no runtime), with three things made spinpark's:
//!
//! * **The cooperative budget.** Each wait that tokio charges to tokio's task budget
//!   (receiving from `mpsc`, `oneshot`, `broadcast`; `watch`'s `changed`/`wait_for`/`closed`;
//!   acquiring a `Semaphore`, `Mutex` or `RwLock`; a bounded `mpsc` send or reserve) takes a
//!   unit of spinpark's budget ([`crate::task::coop`]) at the same point, with the same figures
//!   (128 units per task poll, one per completed wait). So a task draining a full channel
//!   yields to its worker's other tasks now and then. tokio's own `tokio::sync` reads a budget
//!   that only tokio's scheduler sets: on spinpark it never yields.
//! * **`blocking_*` methods** panic, with tokio's message, on a runtime's worker and inside
//!   `block_on`, where blocking the thread would stall tasks (or deadlock); on a
//!   `spawn_blocking` thread, in `block_in_place` and on plain threads they block.
//! * **`mpsc::Sender::send_timeout`** runs on spinpark's timer, not tokio's.
//!
//! How: the types that wait are newtypes over tokio's, each method forwarding to tokio's, the
//! waits wrapped to consult the budget; the rest (`Notify`, `Barrier`, `OnceCell`, `SetOnce`,
//! guards, permits, error types) are tokio's, re-exported. Methods that return one of the
//! wrapped types return spinpark's (`subscribe`, `upgrade`, `OwnedPermit::release`...).
//! Every wrapper converts to and from tokio's type (`From`, `into_tokio`, `as_tokio`) for
//! crates that take tokio's. `OnceCell::get_or_init` and `Barrier::wait` consult tokio's
//! budget deep inside tokio (the semaphore or `watch` they are built on) only where a task
//! waited for another (the cell's initialiser, a barrier's last arrival); tokio charges
//! nothing for a cell already set or for a generation's leader. They are re-exported
//! unwrapped, so those few waits go unbudgeted here.

/// For a newtype `$ours<T>(tokio's type)`: `From` both ways, and tokio's `Debug` output.
macro_rules! tokio_conversions {
    ($($ours:ident => $theirs:ty),* $(,)?) => {$(
        impl<T> From<$theirs> for $ours<T> {
            fn from(inner: $theirs) -> Self {
                $ours(inner)
            }
        }

        impl<T> From<$ours<T>> for $theirs {
            fn from(outer: $ours<T>) -> Self {
                outer.0
            }
        }

        /// tokio's format.
        impl<T> std::fmt::Debug for $ours<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    )*};
}

mod budget;

pub mod broadcast;
pub mod mpsc;
mod mpsc_unbounded;
mod mutex;
pub mod oneshot;
mod rwlock;
mod semaphore;
pub mod watch;

pub use mutex::Mutex;
pub use rwlock::RwLock;
pub use semaphore::Semaphore;

pub use tokio::sync::{
    AcquireError, Barrier, BarrierWaitResult, MappedMutexGuard, MutexGuard, Notify, OnceCell,
    OwnedMappedMutexGuard, OwnedMutexGuard, OwnedRwLockMappedWriteGuard, OwnedRwLockReadGuard,
    OwnedRwLockWriteGuard, OwnedSemaphorePermit, RwLockMappedWriteGuard, RwLockReadGuard,
    RwLockWriteGuard, SemaphorePermit, SetError, SetOnce, SetOnceError, TryAcquireError,
    TryLockError,
};

/// The named futures of `Notify` (tokio's).
pub mod futures {
    pub use tokio::sync::futures::{Notified, OwnedNotified};
}
