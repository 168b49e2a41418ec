//! Signals raised at the process reach the runtime's reactor, once per raise. Its own test
//! binary, so SIGINT and SIGTERM cannot reach another test (each signal here has one test,
//! which installs its handler before raising it).

use std::time::Duration;

use futures_util::poll;
use spinpark_executor::{yield_now, Builder, Runtime};
use spinpark_net::signal::{ctrl_c, signal, SignalKind};
use spinpark_net::time::timeout;

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

fn raise(sig: libc::c_int) {
    // SAFETY: kill(2) with our own pid; the handler for `sig` is installed by the caller.
    let r = unsafe { libc::kill(libc::getpid(), sig) };
    assert_eq!(r, 0, "kill: {}", std::io::Error::last_os_error());
}

const PATIENCE: Duration = Duration::from_secs(60);

/// Lets any stray event be processed, then checks that `recv` has nothing more. No timer:
/// a late timer (were the reactor's wake-up ever lost again) cannot slow this down or hang
/// it.
async fn nothing_more(s: &mut spinpark_net::signal::Signal) -> bool {
    for _ in 0..100 {
        yield_now().await;
    }
    poll!(std::pin::pin!(s.recv())).is_pending()
}

#[test]
fn ctrl_c_sees_a_sigint_once() {
    rt().block_on(async {
        let mut sigint = signal(SignalKind::interrupt()).unwrap();
        let mut c = Box::pin(ctrl_c());
        assert!(poll!(c.as_mut()).is_pending(), "no SIGINT was raised yet");
        raise(libc::SIGINT);
        timeout(PATIENCE, c)
            .await
            .expect("ctrl_c did not see the SIGINT")
            .unwrap();
        assert_eq!(timeout(PATIENCE, sigint.recv()).await, Ok(Some(())));
        assert!(
            nothing_more(&mut sigint).await,
            "one SIGINT was delivered twice"
        );
    });
}

#[test]
fn each_sigterm_is_delivered_once() {
    rt().block_on(async {
        let mut term = signal(SignalKind::terminate()).unwrap();
        assert_eq!(term.kind(), SignalKind::terminate());
        for i in 0..3 {
            raise(libc::SIGTERM);
            assert_eq!(
                timeout(PATIENCE, term.recv()).await,
                Ok(Some(())),
                "SIGTERM #{i} was not delivered"
            );
            assert!(
                nothing_more(&mut term).await,
                "SIGTERM #{i} was delivered twice"
            );
        }
    });
}

#[test]
fn every_listener_in_every_runtime_sees_the_signal() {
    let (a, b) = (rt(), rt());
    let mut in_a = a
        .block_on(async { signal(SignalKind::user_defined1()) })
        .unwrap();
    let mut in_b = b
        .block_on(async { signal(SignalKind::user_defined1()) })
        .unwrap();
    let mut in_b2 = b
        .block_on(async { signal(SignalKind::user_defined1()) })
        .unwrap();
    raise(libc::SIGUSR1);
    // Receive on one listener first: the others must still be woken and see the delivery.
    b.block_on(async {
        assert_eq!(timeout(PATIENCE, in_b.recv()).await, Ok(Some(())));
        assert_eq!(timeout(PATIENCE, in_b2.recv()).await, Ok(Some(())));
    });
    let waiter = std::thread::spawn(move || {
        a.block_on(async {
            let got = timeout(PATIENCE, in_a.recv()).await;
            (got, nothing_more(&mut in_a).await)
        })
    });
    let (got, quiet) = waiter.join().unwrap();
    assert_eq!(got, Ok(Some(())));
    assert!(quiet, "SIGUSR1 was delivered twice");
}

#[test]
fn unhandleable_signals_are_refused_with_a_clear_error() {
    rt().block_on(async {
        for n in [0, -1, 65, 1000, libc::SIGKILL, libc::SIGSTOP, libc::SIGSEGV] {
            let e = signal(SignalKind::from_raw(n)).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{n}: {e}");
            assert!(e.to_string().contains(&n.to_string()), "{e}");
        }
    });
}

#[test]
fn signal_outside_a_runtime_is_an_error() {
    assert!(signal(SignalKind::user_defined2()).is_err());
}
