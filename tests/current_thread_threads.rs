//! A current-thread runtime starts no thread: building it, and serving TCP and firing timers
//! inside `block_on`, leave the process's thread count where it was.
//!
//! One test in this file on purpose: the count is the whole process's (`/proc/self/task`),
//! and other tests running beside it would start threads of their own.

use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark::net::{TcpListener, TcpStream};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .count()
}

#[test]
fn a_current_thread_runtime_runs_everything_on_the_caller() {
    let (tx, rx) = std::sync::mpsc::channel();
    // The test body runs on a thread of its own, so that the watchdog below can give up on it;
    // that thread exists before the first count.
    std::thread::spawn(move || {
        let before = threads();
        let rt = spinpark::Builder::new_current_thread().build().unwrap();
        let after_build = threads();
        let (during, echoed) = rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = spinpark::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = [0; 5];
                s.read_exact(&mut buf).await.unwrap();
                spinpark::time::sleep(Duration::from_millis(5)).await;
                s.write_all(&buf).await.unwrap();
            });
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(b"hello").await.unwrap();
            let mut buf = [0; 5];
            c.read_exact(&mut buf).await.unwrap();
            server.await.unwrap();
            let mut every = spinpark::time::interval(Duration::from_millis(1));
            for _ in 0..3 {
                every.tick().await;
            }
            (threads(), buf)
        });
        let _ = tx.send((before, after_build, during, echoed));
    });
    let (before, after_build, during, echoed) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the current-thread runtime hung or panicked");
    assert_eq!(&echoed, b"hello");
    assert_eq!(after_build, before, "building the runtime started a thread");
    assert_eq!(
        during, before,
        "serving TCP and timers inside block_on started a thread"
    );
}
