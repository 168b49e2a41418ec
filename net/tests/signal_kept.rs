//! A delivery no listener has reported yet is kept for the next listener of its signal, as
//! in tokio: a listener dropped, the signal raised, a new listener made, and the new one
//! receives it; a listener made afresh in each turn of a `select!` loop (as `ctrl_c()` in a
//! loop is) sees a signal raised between two turns. A delivery a listener has reported is not
//! reported again to a listener made after it.
//!
//! Its own test binary (signal handlers and counts are process-wide), and the tests take a
//! lock so they never overlap. Signals are raised with `raise(3)`, which runs the handler on
//! the raising thread before it returns, so each "delivered between two listeners" is exactly
//! that, not a race.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use futures_util::poll;
use spinpark_executor::{yield_now, Builder, Runtime};
use spinpark_net::signal::{signal, Signal, SignalKind};
use spinpark_net::time::timeout;

fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// How long a test waits for a delivery it expects (a watchdog, not a measurement).
const PATIENCE: Duration = Duration::from_secs(10);

fn raise(sig: libc::c_int) {
    // SAFETY: raise(3) sends `sig` to this thread; the caller installed its handler first
    // (by making a listener), so the handler runs instead of the default action.
    let r = unsafe { libc::raise(sig) };
    assert_eq!(r, 0, "raise: {}", std::io::Error::last_os_error());
}

/// Lets any stray event be processed, then checks that `recv` has nothing more.
async fn nothing_more(s: &mut Signal) -> bool {
    for _ in 0..100 {
        yield_now().await;
    }
    poll!(std::pin::pin!(s.recv())).is_pending()
}

#[test]
fn a_signal_raised_between_two_listeners_reaches_the_next_one() {
    let _serial = serial();
    let kind = SignalKind::user_defined1();
    rt().block_on(async {
        // The first listener installs the handler, and goes.
        drop(signal(kind).unwrap());
        raise(libc::SIGUSR1);
        let mut next = signal(kind).unwrap();
        assert_eq!(
            timeout(PATIENCE, next.recv()).await,
            Ok(Some(())),
            "the SIGUSR1 raised while no listener existed was lost"
        );
        // Reported once: neither this listener nor a later one sees it again.
        assert!(nothing_more(&mut next).await, "reported twice");
        let mut later = signal(kind).unwrap();
        assert!(
            nothing_more(&mut later).await,
            "a listener made after the delivery was reported saw it again"
        );
    });
}

/// The next delivery of `kind`, on a listener made when first polled: what `ctrl_c()` is for
/// SIGINT.
async fn next_delivery(kind: SignalKind) {
    signal(kind).unwrap().recv().await;
}

#[test]
fn a_fresh_listener_in_each_select_turn_misses_nothing() {
    let _serial = serial();
    let kind = SignalKind::user_defined2();
    rt().block_on(async {
        let mut turns = 0;
        let got = loop {
            assert!(
                turns < 1000,
                "the SIGUSR2 raised between two turns was lost"
            );
            if turns == 3 {
                // Between turns: the last turn's listener is gone, this one's not made yet.
                raise(libc::SIGUSR2);
            }
            // A listener made anew in every turn, as `ctrl_c()` written inside the loop is.
            tokio::select! {
                _ = next_delivery(kind) => break turns,
                _ = yield_now() => turns += 1,
            }
        };
        assert_eq!(
            got, 3,
            "received in another turn than the one after the raise"
        );
    });
}

#[test]
fn listeners_alive_at_a_delivery_each_receive_it_once() {
    let _serial = serial();
    let sig = libc::SIGRTMIN() + 2;
    let kind = SignalKind::from_raw(sig);
    rt().block_on(async {
        let mut a = signal(kind).unwrap();
        let mut b = signal(kind).unwrap();
        raise(sig);
        assert_eq!(timeout(PATIENCE, a.recv()).await, Ok(Some(())));
        assert_eq!(timeout(PATIENCE, b.recv()).await, Ok(Some(())));
        assert!(nothing_more(&mut a).await && nothing_more(&mut b).await);
        // Reported already (by both): a listener made now does not see it.
        let mut c = signal(kind).unwrap();
        assert!(
            nothing_more(&mut c).await,
            "an old delivery was reported again"
        );
        // Two deliveries while nobody listens are kept as one for the next listener.
        drop((a, b, c));
        raise(sig);
        raise(sig);
        let mut d = signal(kind).unwrap();
        assert_eq!(timeout(PATIENCE, d.recv()).await, Ok(Some(())));
        assert!(
            nothing_more(&mut d).await,
            "kept deliveries are merged into one"
        );
    });
}
