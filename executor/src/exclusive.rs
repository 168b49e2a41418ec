//! [`Exclusive`]: a value that can only be reached through ownership or a unique borrow, so
//! that sharing the wrapper between threads shares nothing.
//!
//! ```text
//! let payload = Exclusive::new(boxed_any);   // Box<dyn Any + Send>: Send, not Sync
//! assert_sync(&payload);                     // fine: a shared reference reads nothing
//! let boxed_any = payload.into_inner();       // by value only
//! ```
//!
//! How it works: `Sync` promises that `&Exclusive<T>` may be used from several threads at
//! once. The wrapper has no method taking `&self` and its field is private to this module,
//! so a shared reference gives access to nothing at all: not to `T`'s `&self` methods, not
//! even to its address as a `&T`. Only the owner (by value, or through `&mut`, which is
//! unique) reaches `T`, which is what `Send` already governs.

/// `T`, reachable only by its owner; `Sync` whatever `T` is, `Send` when `T` is.
pub(crate) struct Exclusive<T> {
    inner: T,
}

// SAFETY: `Sync` allows `&Exclusive<T>` on several threads at once. Nothing can be done with
// such a reference: the field is private to this module and no method takes `&self` (nor is
// any trait implemented that would, such as `Debug`, `Clone`, `PartialEq` or `Deref`), so no
// thread ever reads or writes `T` through it. `T` is reached only by value (`into_inner`)
// or through `&mut self` (`get_mut`), a unique borrow, and moving those across threads is
// governed by `T: Send` (the auto impl of `Send` for the wrapper).
unsafe impl<T> Sync for Exclusive<T> {}

impl<T> Exclusive<T> {
    /// Wraps `inner`.
    pub(crate) fn new(inner: T) -> Self {
        Exclusive { inner }
    }

    /// The value back.
    pub(crate) fn into_inner(self) -> T {
        self.inner
    }

    /// The value, through a unique borrow of the wrapper.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}
