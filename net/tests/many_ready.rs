//! Many sockets ready at once: a reactor turn reads up to 64 events and files them a few at a
//! time (`DISPATCH_BATCH` in `reactor.rs`); every socket's task must be woken and read its
//! byte, whichever batch its event fell in. A batch dropped or cut short leaves its readers
//! waiting, and the bounded wait below fails the test instead of hanging it.

use std::time::Duration;

use futures_util::AsyncReadExt;
use spinpark_executor::{spawn, Builder};
use spinpark_net::time::{sleep, timeout};
use spinpark_net::UnixStream;

/// More than one `epoll_wait` returns (64), and many batches of 8.
const SOCKETS: usize = 150;

#[test]
fn every_socket_ready_in_one_turn_wakes_its_task() {
    // One worker: every event goes through the same turns, in as few as the kernel allows.
    let rt = Builder::new().worker_threads(1).build().unwrap();
    rt.block_on(async {
        let mut writers = Vec::with_capacity(SOCKETS);
        let mut readers = Vec::with_capacity(SOCKETS);
        for i in 0..SOCKETS {
            let (mut a, b) = UnixStream::pair().unwrap();
            writers.push(b);
            readers.push(spawn(async move {
                let mut byte = [0u8; 1];
                a.read_exact(&mut byte).await.unwrap();
                (i, byte[0])
            }));
        }
        // Let the readers run until they wait on the reactor (if some have not by then, they
        // read their byte directly: the test still passes, with fewer events in the turn).
        sleep(Duration::from_millis(50)).await;
        // Every socket becomes readable before the worker's next turn can look.
        for (i, w) in writers.iter().enumerate() {
            assert_eq!(w.try_write(&[i as u8]).unwrap(), 1);
        }
        for (i, reader) in readers.into_iter().enumerate() {
            let got = timeout(Duration::from_secs(30), reader)
                .await
                .unwrap_or_else(|_| panic!("reader {i} was never woken"))
                .unwrap();
            assert_eq!(got, (i, i as u8));
        }
        drop(writers);
    });
}
