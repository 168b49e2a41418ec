//! What tells runtimes apart, and what a runtime's threads call around their sleeps: its id
//! and name (`Handle::id`, `Handle::name`) and the park hooks (`Builder::on_thread_park`,
//! `Builder::on_thread_unpark`).
//!
//! ```
//! let a = spinpark::Runtime::new().unwrap();
//! let b = spinpark::Runtime::new().unwrap();
//! assert_ne!(a.handle().id(), b.handle().id());
//! ```
//!
//! A hook that panics is contained: the panic is dropped, and the worker goes on (a worker
//! that unwound would take the runtime's liveness with it).

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use super::worker::ThreadHook;
use crate::task::panics;

/// A runtime's id, name and park hooks.
pub(crate) struct Identity {
    pub(crate) id: NonZeroU64,
    pub(crate) name: Option<String>,
    /// A `LocalRuntime`'s (built by `Builder::build_local`).
    pub(crate) local: bool,
    on_park: Option<ThreadHook>,
    on_unpark: Option<ThreadHook>,
}

impl Identity {
    pub(crate) fn new(
        name: Option<String>,
        local: bool,
        on_park: Option<ThreadHook>,
        on_unpark: Option<ThreadHook>,
    ) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        // Relaxed: only uniqueness matters, which the read-modify-write gives.
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        Self {
            id: NonZeroU64::new(id).expect("2^64 runtimes"),
            name,
            local,
            on_park,
            on_unpark,
        }
    }

    /// A worker of this runtime is about to block (futex or reactor): runs the park hook;
    /// returns whether there was one (it may have made work, which the worker then looks
    /// for, timers and I/O included, before it blocks).
    pub(crate) fn parking(&self) -> bool {
        run_hook(self.on_park.as_ref())
    }

    /// A worker of this runtime has woken from a block.
    pub(crate) fn unparked(&self) {
        run_hook(self.on_unpark.as_ref());
    }
}

/// Runs `hook` if there is one, containing a panic; returns whether there was one.
fn run_hook(hook: Option<&ThreadHook>) -> bool {
    let Some(f) = hook else {
        return false;
    };
    if let Err(p) = panics::catch(|| f()) {
        panics::forget_payload(p);
    }
    true
}
