//! Task-local values: [`task_local!`](crate::task_local) declares a [`LocalKey`], whose
//! [`scope`](LocalKey::scope) gives a future a value that code it runs can read, as tokio's.
//!
//! ```
//! spinpark_executor::task_local! {
//!     static REQUEST_ID: u64;
//! }
//!
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let task = spinpark::spawn(REQUEST_ID.scope(7, async {
//!     spinpark::yield_now().await; // the value follows the future across polls
//!     REQUEST_ID.get()
//! }));
//! assert_eq!(task.await.unwrap(), 7);
//! assert!(REQUEST_ID.try_get().is_err()); // not set out here
//! # });
//! ```
//!
//! How it works: each key is a thread-local slot. A [`TaskLocalFuture`] holds its value while
//! it is not running, and swaps it into the slot around every poll of its future (and around
//! the future's drop), then swaps it back out, so the value is visible exactly while that
//! future's code runs, on whichever worker polls it. Nothing here needs a runtime: a scope
//! works under any executor, and around plain code with [`LocalKey::sync_scope`].

use std::cell::RefCell;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Declares task-local keys: `static NAME: Type;`, any number of them, with attributes and a
/// visibility, as tokio's `task_local!`. Each is a [`LocalKey`].
///
/// ```
/// spinpark_executor::task_local! {
///     /// The user a request acts for.
///     pub static USER: String;
///     static DEPTH: u32;
/// }
///
/// let depth = DEPTH.sync_scope(1, || DEPTH.get() + 1);
/// assert_eq!(depth, 2);
/// ```
#[macro_export]
macro_rules! task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
        $crate::task_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
    };
}

/// One key of [`task_local!`]: a thread-local slot wrapped in a [`LocalKey`].
#[macro_export]
#[doc(hidden)]
macro_rules! __task_local_key {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::task::LocalKey<$t> = {
            ::std::thread_local! {
                static __SLOT: ::std::cell::RefCell<::std::option::Option<$t>> =
                    const { ::std::cell::RefCell::new(::std::option::Option::None) };
            }
            $crate::task::LocalKey::__new(&__SLOT)
        };
    };
}

/// A task-local key, declared with [`task_local!`](crate::task_local). Its value is set by
/// [`scope`](LocalKey::scope) (for a future) or [`sync_scope`](LocalKey::sync_scope) (for a
/// closure) and read inside with [`with`](LocalKey::with) or [`get`](LocalKey::get).
///
/// ```
/// spinpark_executor::task_local! { static TRACE: &'static str; }
/// let out = TRACE.sync_scope("abc", || TRACE.with(|t| t.len()));
/// assert_eq!(out, 3);
/// ```
pub struct LocalKey<T: 'static> {
    slot: &'static std::thread::LocalKey<RefCell<Option<T>>>,
}

impl<T: 'static> LocalKey<T> {
    #[doc(hidden)]
    pub const fn __new(slot: &'static std::thread::LocalKey<RefCell<Option<T>>>) -> Self {
        LocalKey { slot }
    }

    /// Runs `future` with the key set to `value` whenever the future runs (polls and drop).
    ///
    /// ```
    /// spinpark_executor::task_local! { static N: u32; }
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// assert_eq!(N.scope(5, async { N.get() * 2 }).await, 10);
    /// # });
    /// ```
    pub fn scope<F: Future>(&'static self, value: T, future: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture {
            key: self,
            value: Some(value),
            future: Some(future),
            _pinned: PhantomPinned,
        }
    }

    /// Runs `f` with the key set to `value`, and returns what it returns.
    ///
    /// # Panics
    /// If the key is borrowed by an enclosing [`with`](LocalKey::with) on this thread.
    ///
    /// ```
    /// spinpark_executor::task_local! { static N: u32; }
    /// assert_eq!(N.sync_scope(3, || N.get()), 3);
    /// ```
    #[track_caller]
    pub fn sync_scope<F: FnOnce() -> R, R>(&'static self, value: T, f: F) -> R {
        let mut value = Some(value);
        self.swapped(&mut value, f)
    }

    /// Swaps `value` into the slot, runs `f`, and swaps the slot's value back into `value`,
    /// however `f` ends (a panic unwinds through the guard).
    #[track_caller]
    fn swapped<R>(&'static self, value: &mut Option<T>, f: impl FnOnce() -> R) -> R {
        struct Back<'a, T: 'static> {
            key: &'static std::thread::LocalKey<RefCell<Option<T>>>,
            value: &'a mut Option<T>,
        }
        impl<T: 'static> Drop for Back<'_, T> {
            fn drop(&mut self) {
                // The slot is not borrowed now: `with` borrows only inside its closure.
                let _ = self
                    .key
                    .try_with(|s| std::mem::swap(&mut *s.borrow_mut(), self.value));
            }
        }
        let entered = self.slot.try_with(|s| match s.try_borrow_mut() {
            Ok(mut slot) => {
                std::mem::swap(&mut *slot, value);
                true
            }
            Err(_) => false,
        });
        match entered {
            Ok(true) => {}
            Ok(false) => panic!(
                "cannot enter a task-local scope while the task-local is borrowed (inside its \
                 `with`)"
            ),
            Err(_) => panic!("cannot enter a task-local scope while the thread is exiting"),
        }
        let _back = Back {
            key: self.slot,
            value,
        };
        f()
    }

    /// Runs `f` with a reference to the key's value.
    ///
    /// # Panics
    /// If the key is not set here (outside its scope); see [`try_with`](LocalKey::try_with).
    ///
    /// ```
    /// spinpark_executor::task_local! { static NAME: String; }
    /// NAME.sync_scope("spin".to_string(), || NAME.with(|n| assert_eq!(n, "spin")));
    /// ```
    #[track_caller]
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs `f` with a reference to the key's value, or fails outside its scope.
    ///
    /// ```
    /// spinpark_executor::task_local! { static N: u32; }
    /// assert!(N.try_with(|n| *n).is_err());
    /// assert_eq!(N.sync_scope(1, || N.try_with(|n| *n)), Ok(1));
    /// ```
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        // `f` runs with the slot borrowed: a scope entered inside it panics instead of
        // swapping the value out from under the reference.
        let mut f = Some(f);
        let out = self.slot.try_with(|s| {
            let slot = s.try_borrow().ok()?;
            let value = slot.as_ref()?;
            Some((f.take().expect("called once"))(value))
        });
        out.ok().flatten().ok_or(AccessError(()))
    }
}

impl<T: Clone + 'static> LocalKey<T> {
    /// A copy of the key's value.
    ///
    /// # Panics
    /// Outside the key's scope; see [`try_get`](LocalKey::try_get).
    ///
    /// ```
    /// spinpark_executor::task_local! { static N: u32; }
    /// assert_eq!(N.sync_scope(9, || N.get()), 9);
    /// ```
    #[track_caller]
    pub fn get(&'static self) -> T {
        self.with(T::clone)
    }

    /// A copy of the key's value, or an error outside its scope.
    ///
    /// ```
    /// spinpark_executor::task_local! { static N: u32; }
    /// assert!(N.try_get().is_err());
    /// ```
    pub fn try_get(&'static self) -> Result<T, AccessError> {
        self.try_with(T::clone)
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("LocalKey { .. }")
    }
}

/// A future that runs inside a task-local scope; made by [`LocalKey::scope`].
///
/// ```
/// spinpark_executor::task_local! { static N: u32; }
/// let mut fut = Box::pin(N.scope(1, async {}));
/// assert_eq!(fut.as_mut().take_value(), Some(1)); // the future would now run without it
/// ```
pub struct TaskLocalFuture<T: 'static, F> {
    key: &'static LocalKey<T>,
    /// The value, while the future is not running.
    value: Option<T>,
    /// `None` once the future has completed (it is dropped then, inside the scope).
    future: Option<F>,
    /// `!Unpin` whatever `F` is, as tokio's: code written against it pins it as it would
    /// tokio's.
    _pinned: PhantomPinned,
}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// Takes the value out of the scope (`None` if it was taken already): from now on the
    /// future runs with the key unset.
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        // SAFETY: `value` is not structurally pinned (only `future` is); taking it moves
        // nothing that is pinned.
        unsafe { self.get_unchecked_mut() }.value.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    #[track_caller]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of `self` (only
        // dropped in place, by setting the `Option` to `None`), and no `&mut F` escapes but
        // as the `Pin` below; `key` and `value` are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let key = this.key;
        let (value, future) = (&mut this.value, &mut this.future);
        key.swapped(value, || {
            let Some(f) = future.as_mut() else {
                panic!("a TaskLocalFuture was polled after it completed");
            };
            // SAFETY: see above; the future stays where it is for as long as `self` is pinned.
            let out = unsafe { Pin::new_unchecked(f) }.poll(cx);
            if out.is_ready() {
                // Dropped here, inside the scope, like the rest of its code.
                *future = None;
            }
            out
        })
    }
}

impl<T: 'static, F> Drop for TaskLocalFuture<T, F> {
    fn drop(&mut self) {
        // An unfinished future is dropped inside the scope too (its destructor may read the
        // value). If the slot is borrowed (dropped inside the key's own `with`), it is dropped
        // as it is, outside.
        if self.future.is_none() {
            return;
        }
        let (key, value, future) = (self.key, &mut self.value, &mut self.future);
        let inside = key.slot.try_with(|s| s.try_borrow_mut().is_ok());
        if inside == Ok(true) {
            key.swapped(value, || *future = None);
        }
    }
}

impl<T: 'static + fmt::Debug, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture")
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

/// The error of reading a task-local key outside its scope.
///
/// ```
/// spinpark_executor::task_local! { static N: u32; }
/// let err = N.try_get().unwrap_err();
/// assert_eq!(err.to_string(), "task-local value not set");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError(());

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task-local value not set")
    }
}

impl Error for AccessError {}
