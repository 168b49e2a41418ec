//! A `block_on` future that waits for a socket by looping on `try_read` and `yield_now`, as
//! tokio's own tests do, on a current-thread runtime with nothing else to run: each self-wake
//! must give the reactor a turn, or the readiness it waits for is never seen (it used to loop
//! for ever). Bounded: the loop gives up after many yields and the test fails instead.

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
