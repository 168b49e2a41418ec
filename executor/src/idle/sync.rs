//! The one place that picks real or model-checked synchronization primitives.
//!
//! Under `--cfg loom` every atomic and lock used by the idle protocol comes from `loom`, so
//! that `loom` can explore the interleavings of the idle word and the watch; otherwise they
//! are `std`'s.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64};
#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64};
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;

/// Runs a unit test's body: inside a `loom` model under `--cfg loom` (loom's primitives work
/// only there; the body then runs once per interleaving, with one thread it runs once), as it
/// is otherwise.
#[cfg(test)]
pub(crate) fn model(body: impl Fn() + Sync + Send + 'static) {
    #[cfg(loom)]
    loom::model(body);
    #[cfg(not(loom))]
    body();
}
