//! Waiting until an instant on the load generator, as precisely as its layout allows.
//!
//! ```text
//! set_fine_timer_slack();
//! wait_until(Instant::now() + Duration::from_micros(20), true); // sleep, then spin
//! ```
//!
//! A plain sleep overshoots by the timer slack (50 us by default, lowered here to 1 ns) plus
//! the wake-up of a halted vCPU (tens of microseconds in a VM). When the client has CPUs of its
//! own (the remote layout) it sleeps until [`SPIN_MARGIN`] (200 us) before the deadline and spins on
//! its own CPU for the rest; when it shares the machine with the server (colocated) spinning
//! would steal the server's CPU, so it only sleeps.

use std::time::{Duration, Instant};

/// How long before a deadline a precise wait stops sleeping and starts spinning.
/// Waking from a sleep takes 50-150 us on a VM whose vCPU halted meanwhile.
pub const SPIN_MARGIN: Duration = Duration::from_micros(200);

/// Waits until `deadline`; with `spin`, sleeps to [`SPIN_MARGIN`] before it, then spins.
pub fn wait_until(deadline: Instant, spin: bool) {
    let now = Instant::now();
    if now >= deadline {
        return;
    }
    let left = deadline - now;
    if !spin {
        std::thread::sleep(left);
        return;
    }
    if left > SPIN_MARGIN {
        std::thread::sleep(left - SPIN_MARGIN);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

/// Linux rounds sleeps up by the thread's timer slack (50 us by default), which would swamp a
/// 20 us gap; ask for the finest.
pub fn set_fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and no pointers.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}
