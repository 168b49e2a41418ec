//! Timers and sockets of a runtime that has shut down: they fail with a
//! clear message (a timer panics, as tokio's do; a socket returns an `io::Error`), and never
//! wait forever, whether they were first polled before or after the shutdown.
//!
//! Every scenario runs under a watchdog, so a hang is a test failure.

use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use spinpark_executor::{Builder, Handle, Runtime};
use spinpark_net::time::{interval, sleep, timeout};
use spinpark_net::TcpStream;

const WATCHDOG: Duration = Duration::from_secs(20);

/// Runs `f` on its own thread, failing the test if it takes longer than [`WATCHDOG`]; returns
/// what it returned, or the message of its panic as `Err`.
fn within<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(r) => r.map_err(|p| {
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        }),
        Err(_) => panic!("{what}: still not done after {WATCHDOG:?} (hang)"),
    }
}

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// A runtime that has used its reactor, shut down; and a handle to it.
fn shut_down_after_io() -> Handle {
    let rt = rt();
    rt.block_on(sleep(Duration::from_millis(1)));
    let h = rt.handle().clone();
    drop(rt);
    h
}

/// A runtime that never did I/O (no reactor), shut down; and a handle to it.
fn shut_down_before_io() -> Handle {
    let rt = rt();
    let h = rt.handle().clone();
    drop(rt);
    h
}

fn assert_shut_down_panic(r: Result<(), String>) {
    let msg = r.expect_err("must panic, not return");
    assert!(msg.contains("shut down"), "unclear panic message: {msg}");
}

#[test]
fn a_sleep_first_polled_after_shutdown_panics() {
    let h = shut_down_after_io();
    assert_shut_down_panic(within("sleep, reactor made before shutdown", move || {
        h.block_on(sleep(Duration::from_millis(10)))
    }));
    let h = shut_down_before_io();
    assert_shut_down_panic(within("sleep, no reactor", move || {
        h.block_on(sleep(Duration::from_millis(10)))
    }));
    let h = shut_down_after_io();
    assert_shut_down_panic(within("timeout", move || {
        let _ = h.block_on(timeout(
            Duration::from_secs(60),
            std::future::pending::<()>(),
        ));
    }));
}

#[test]
fn a_sleep_pending_on_another_thread_when_the_runtime_is_dropped_panics() {
    let rt = rt();
    let h = rt.handle().clone();
    let (polled_tx, polled_rx) = mpsc::channel();
    let sleeper = std::thread::spawn(move || {
        within("block_on(sleep) across the drop", move || {
            h.block_on(async move {
                let mut s = std::pin::pin!(sleep(Duration::from_secs(60)));
                // Poll once (registering the timer), then say so, then wait.
                std::future::poll_fn(|cx| {
                    assert!(s.as_mut().poll(cx).is_pending());
                    std::task::Poll::Ready(())
                })
                .await;
                polled_tx.send(()).unwrap();
                s.await
            })
        })
    });
    polled_rx.recv().unwrap();
    within("runtime drop", move || drop(rt)).unwrap();
    assert_shut_down_panic(sleeper.join().unwrap());
}

#[test]
fn connect_after_shutdown_fails_with_a_clear_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    for (what, h) in [
        ("no reactor", shut_down_before_io()),
        ("reactor made before shutdown", shut_down_after_io()),
    ] {
        let r = within(what, move || h.block_on(TcpStream::connect(addr)).map(drop))
            .expect("connect must return an error, not panic");
        let e = r.expect_err("connecting with a shut-down runtime must fail");
        assert!(e.to_string().contains("shut down"), "{what}: {e}");
    }
}

#[test]
fn an_interval_of_duration_max_does_not_overflow() {
    let rt = rt();
    let r = within("interval", move || {
        rt.block_on(async {
            let mut i = interval(Duration::MAX);
            i.tick().await;
            // The next tick is (practically) never: it must be pending, not panic.
            timeout(Duration::from_millis(5), i.tick()).await.is_err()
        })
    });
    assert_eq!(r, Ok(true));
}

#[test]
fn bytes_received_before_the_runtime_went_away_can_still_be_read() {
    // As tokio's: try_read after the runtime is gone still reads what the kernel holds; once
    // nothing is left, reads report the runtime's shutdown (never hang).
    use futures_util::AsyncReadExt;
    let rt = spinpark_executor::Builder::new_current_thread()
        .build()
        .unwrap();
    let (mut s, _c) = rt.block_on(async {
        let l = spinpark_net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        std::io::Write::write_all(&mut c, b"hello").unwrap();
        let (s, _) = l.accept().await.unwrap();
        // Received before the runtime goes.
        let mut peek = [0u8; 8];
        for _ in 0..100_000 {
            if s.peek(&mut peek).await.unwrap() >= 5 {
                break;
            }
        }
        (s, c)
    });
    drop(rt);
    assert_eq!(s.try_read(&mut [0u8; 5]).unwrap(), 5);
    let e = s.try_read(&mut [0u8; 5]).unwrap_err();
    assert!(spinpark::runtime::is_rt_shutdown_err(&e), "{e}");
    let rt2 = spinpark_executor::Builder::new_current_thread()
        .build()
        .unwrap();
    let e = rt2.block_on(async { s.read(&mut [0u8; 5]).await.unwrap_err() });
    assert!(spinpark::runtime::is_rt_shutdown_err(&e), "{e}");
}
