//! [`ForeignContext`]: another runtime's context, which every thread polling this runtime's
//! futures runs inside: workers and blocking-pool threads for their whole lives, `block_on`
//! callers for the call, and the thread that shuts the runtime down while it drops the tasks
//! that are left.
//!
//! ```ignore
//! struct Tagged;
//! impl ForeignContext for Tagged {
//!     fn enter(&self, f: &mut dyn FnMut()) {
//!         TAG.set(true);
//!         f();
//!         TAG.set(false);
//!     }
//! }
//! ```
//!
//! It is what keeps another runtime out of the executor proper: the tokio compatibility
//! context (`runtime/tokio_compat.rs`, behind the `tokio-compat` feature) is one of these, holding
//! tokio's `Handle::enter` guard across `f`. A guard that borrows from the context, as
//! tokio's does, cannot be handed out and stored, hence a callback around the thread's
//! body rather than a pair of start/stop hooks.

use std::sync::Arc;

/// Something to run a thread's body inside.
pub(crate) trait ForeignContext: Send + Sync + 'static {
    /// Runs `f` once, inside the context.
    fn enter(&self, f: &mut dyn FnMut());

    /// Called once when the runtime has shut down (after its workers exited and its blocking
    /// pool was stopped), to release what the context owns.
    fn shutdown(&self);
}

/// Runs `f` inside `context`, if there is one.
pub(crate) fn within<R>(context: Option<&Arc<dyn ForeignContext>>, f: impl FnOnce() -> R) -> R {
    let Some(context) = context else {
        return f();
    };
    let mut f = Some(f);
    let mut out = None;
    context.enter(&mut || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    });
    out.expect("ForeignContext::enter did not run its closure")
}
