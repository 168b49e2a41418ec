//! `spinpark::runtime::is_rt_shutdown_err`: true for the errors of I/O whose runtime shut
//! down, false for anything else (the cases of tokio's `rt_shutdown_err` tests).

use std::io;

use spinpark::net::TcpListener;
use spinpark::runtime::{is_rt_shutdown_err, Builder, Runtime};

fn rt() -> Runtime {
    Builder::new_current_thread().build().unwrap()
}

#[test]
fn accept_on_a_listener_whose_runtime_was_dropped() {
    let rt1 = rt();
    let rt2 = rt();
    let listener = rt1.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    drop(rt1);
    rt2.block_on(async {
        let err = listener.accept().await.unwrap_err();
        assert!(is_rt_shutdown_err(&err), "{err:?}");
    });
}

#[test]
fn registering_with_a_runtime_that_shut_down() {
    let rt1 = rt();
    let handle = rt1.handle().clone();
    // Make the runtime's reactor exist, then shut the runtime down.
    rt1.block_on(async { TcpListener::bind("127.0.0.1:0").await.unwrap() });
    drop(rt1);
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std_listener.set_nonblocking(true).unwrap();
    let _guard = handle.enter();
    let err = TcpListener::from_std(std_listener).unwrap_err();
    assert!(is_rt_shutdown_err(&err), "{err:?}");
}

#[test]
fn other_errors_are_not() {
    for err in [
        io::Error::other("some other error"),
        io::Error::new(io::ErrorKind::NotFound, "not found"),
        io::Error::new(io::ErrorKind::TimedOut, "timed out"),
        io::Error::from(io::ErrorKind::Interrupted),
        io::Error::from(io::ErrorKind::Other),
    ] {
        assert!(!is_rt_shutdown_err(&err), "{err:?}");
    }
}

#[test]
fn the_same_text_from_elsewhere_is_not() {
    let rt1 = rt();
    let rt2 = rt();
    let listener = rt1.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    drop(rt1);
    let err = rt2.block_on(listener.accept()).unwrap_err();
    assert!(is_rt_shutdown_err(&err));
    let copy = io::Error::other(err.to_string());
    assert!(!is_rt_shutdown_err(&copy));
    // Wrapped in another error, it is that error's.
    let wrapped = io::Error::other(err);
    assert!(!is_rt_shutdown_err(&wrapped));
}

#[test]
fn join_errors_are_not() {
    let rt = rt();
    let panicked = rt.spawn(async { panic!("oops") });
    let err: io::Error = rt.block_on(panicked).unwrap_err().into();
    assert!(!is_rt_shutdown_err(&err));

    let aborted = rt.spawn(std::future::pending::<()>());
    aborted.abort();
    let err: io::Error = rt.block_on(aborted).unwrap_err().into();
    assert!(!is_rt_shutdown_err(&err));
}
