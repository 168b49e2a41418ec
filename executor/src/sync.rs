//! The one place that picks real or model-checked synchronization primitives.
//!
//! Under `--cfg loom` every atomic used by the idle protocol comes from `loom`, so that
//! `loom` can explore the interleavings of the idle word; otherwise they are `std`'s.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32};
