//! Containing panics from user code that runs where unwinding must not happen: a task's
//! destructor, a task's output's destructor, a thread hook.
//!
//! ```text
//! let payload = catch(|| drop(future));     // Err(payload) if the destructor panicked
//! drop_quietly(output);                      // nobody can be told: the panic is contained
//! let text = message(&payload);              // "boom", for an error message
//! ```
//!
//! How it works: `catch_unwind`, plus care for the payload: a payload's own destructor may
//! panic too (the "panic while panicking" that aborts), so a payload nobody will look at is
//! dropped under `catch_unwind` as well, and leaked if even that panics.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A caught panic's payload.
pub(crate) type Payload = Box<dyn Any + Send + 'static>;

/// Runs `f`, catching a panic. Unwind safety is the caller's business: every caller either
/// discards what `f` touched or only reads state that a panic cannot leave half-updated.
pub(crate) fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Payload> {
    catch_unwind(AssertUnwindSafe(f))
}

/// Drops `value`; a panic from its destructor is contained (the panic hook has already
/// reported it, as for any panic).
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(payload) = catch(move || drop(value)) {
        forget_payload(payload);
    }
}

/// Drops a payload nobody will look at; leaks it if its own destructor panics.
pub(crate) fn forget_payload(payload: Payload) {
    if let Err(again) = catch(move || drop(payload)) {
        std::mem::forget(again);
    }
}

/// A panic's message, when it has one (`panic!` with a literal or a format string).
pub(crate) fn message(payload: &Payload) -> Option<&str> {
    payload
        .downcast_ref::<&'static str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}
