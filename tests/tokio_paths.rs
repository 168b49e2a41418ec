//! Items that code written for tokio names by tokio's paths, reached through spinpark's: the
//! test passes by compiling, and checks that each path leads to the item that works.

use std::future::poll_fn;
use std::task::{ready, Poll};
use std::time::Duration;

use spinpark::task::coop::{poll_proceed, RestoreOnPending};

/// `task::coop::RestoreOnPending`, which `poll_proceed` returns, as in tokio.
#[test]
fn restore_on_pending_is_at_tokios_path() {
    let rt = spinpark::Builder::new_current_thread().build().unwrap();
    let ran = rt.block_on(async {
        spinpark::spawn(poll_fn(|cx| {
            let coop: RestoreOnPending = ready!(poll_proceed(cx));
            coop.made_progress();
            Poll::Ready(true)
        }))
        .await
        .unwrap()
    });
    assert!(ran);
}

/// `time::error::{Error, Elapsed}`; `Elapsed` is also `time::Elapsed`, the same type.
#[test]
fn time_error_is_at_tokios_path() {
    let rt = spinpark::Builder::new_current_thread().build().unwrap();
    let e: spinpark::time::error::Elapsed = rt
        .block_on(spinpark::time::timeout(
            Duration::from_millis(1),
            std::future::pending::<()>(),
        ))
        .unwrap_err();
    let same: spinpark::time::Elapsed = e;
    assert_eq!(same.to_string(), "deadline has elapsed");
    let err = spinpark::time::error::Error::shutdown();
    assert!(err.is_shutdown());
}

/// `runtime::is_rt_shutdown_err`.
#[test]
fn is_rt_shutdown_err_is_at_tokios_path() {
    let check: fn(&std::io::Error) -> bool = spinpark::runtime::is_rt_shutdown_err;
    assert!(!check(&std::io::Error::other("x")));
}

/// `signal::unix::{signal, Signal, SignalKind}`, the same items as `signal::*`.
#[test]
fn unix_signals_are_at_tokios_path() {
    use spinpark::signal::unix::{signal, Signal, SignalKind};
    let kind: spinpark::signal::SignalKind = SignalKind::user_defined2();
    let rt = spinpark::Builder::new_current_thread().build().unwrap();
    let listener: Signal = rt.block_on(async { signal(kind) }).unwrap();
    let _same: spinpark::signal::Signal = listener;
}
