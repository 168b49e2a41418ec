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
