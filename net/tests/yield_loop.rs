//! A `block_on` future that waits for a socket by looping on `try_read` and `yield_now`, as
//! tokio's own tests do, on a current-thread runtime with nothing else to run: each self-wake
//! must give the reactor a turn, or the readiness it waits for is never seen (it used to loop
//! for ever). Bounded: the loop gives up after many yields and the test fails instead. And a
//! timer that comes due while tasks yield in a loop is served between their slices.

use std::io::{ErrorKind, Write};

use spinpark_executor::{yield_now, Builder};
use spinpark_net::TcpListener;

#[test]
fn a_yield_loop_in_block_on_sees_its_socket_become_readable() {
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::thread::spawn(move || {
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            c.write_all(b"hello").unwrap();
            c
        });
        let (stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 16];
        let mut got = None;
        for _ in 0..2_000_000 {
            match stream.try_read(&mut buf) {
                Ok(n) => {
                    got = Some(n);
                    break;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => yield_now().await,
                Err(e) => panic!("{e}"),
            }
        }
        let _c = client.join().unwrap();
        assert_eq!(
            got,
            Some(5),
            "the readiness was never seen while the future yielded"
        );
        assert_eq!(&buf[..5], b"hello");
    });
}

/// Tasks that yield between slices of CPU work keep their worker busy; a timer that comes
/// due meanwhile must still be served between two slices, as on tokio (whose yielding task
/// waits for the worker's next reactor turn), not only at the periodic reactor poll (every 61
/// tasks or a couple of milliseconds, by which time the timer is late by that much).
///
/// No timing assertion: the burner checks an ordering. Once the timer's deadline, plus the
/// wheel's millisecond of resolution, has passed before it yields, the timer's task must have
/// run by the time the burner runs again.
#[test]
fn a_timer_due_while_a_task_yields_in_a_loop_fires_before_it_runs_again() {
    use spinpark_net::time::{sleep_until, Duration, Instant};
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;

    for flavor in ["current_thread", "one worker"] {
        let rt = match flavor {
            "current_thread" => Builder::new_current_thread().build().unwrap(),
            _ => Builder::new().worker_threads(1).build().unwrap(),
        };
        rt.block_on(async {
            for round in 0..10 {
                let fired = Arc::new(AtomicBool::new(false));
                let deadline = Instant::now() + Duration::from_millis(3);
                let timer = {
                    let fired = fired.clone();
                    spinpark_executor::spawn(async move {
                        sleep_until(deadline).await;
                        fired.store(true, SeqCst);
                    })
                };
                let burner = spinpark_executor::spawn(async move {
                    // Bounded: about a second of slices at most.
                    for _ in 0..10_000 {
                        let slice = Instant::now();
                        while slice.elapsed() < Duration::from_micros(100) {
                            std::hint::spin_loop();
                        }
                        let due = Instant::now() >= deadline + Duration::from_millis(2);
                        yield_now().await;
                        if due {
                            return fired.load(SeqCst);
                        }
                    }
                    panic!("the deadline never passed");
                });
                assert!(
                    burner.await.unwrap(),
                    "{flavor}, round {round}: the burner ran again before the due timer fired"
                );
                timer.await.unwrap();
            }
        });
    }
}
