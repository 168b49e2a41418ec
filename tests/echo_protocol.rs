//! The echo RPC protocol of the examples and the benchmark, served on spinpark: round trips,
//! and a malformed (oversized) frame closes that connection only.

use examples_common::echo_proto;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use echo_proto::{frame, serve_futures_io, Client};

const MAX: usize = 1024;

fn start_server(rt: &spinpark::Runtime) -> SocketAddr {
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        loop {
            let (s, _) = listener.accept().await.unwrap();
            spinpark::spawn(async move {
                let _ = serve_futures_io(s, MAX).await;
            });
        }
    });
    addr
}

#[test]
fn echo_round_trips_of_many_sizes() {
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    let addr = start_server(&rt);
    let mut c = Client::connect(addr).unwrap();
    c.stream()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    for size in [0usize, 1, 100, 1000, MAX] {
        let payload: Vec<u8> = (0..size).map(|i| (i * 13) as u8).collect();
        assert_eq!(c.call(&frame(&payload)).unwrap(), payload.as_slice());
    }
    // Pipelined: several frames in one write, answered in order.
    let mut batch = Vec::new();
    for i in 0..50u8 {
        batch.extend(frame(&[i; 10]));
    }
    c.send(&batch).unwrap();
    for i in 0..50u8 {
        assert_eq!(c.recv().unwrap(), &[i; 10]);
    }
}

#[test]
fn an_oversized_frame_closes_only_its_connection() {
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    let addr = start_server(&rt);
    let mut good = Client::connect(addr).unwrap();
    good.stream()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(good.call(&frame(b"before")).unwrap(), b"before");

    let mut bad = std::net::TcpStream::connect(addr).unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    bad.write_all(&((MAX as u32 + 1).to_be_bytes())).unwrap();
    let mut buf = [0u8; 16];
    let n = bad
        .read(&mut buf)
        .expect("the server neither answered nor closed");
    assert_eq!(
        n, 0,
        "the server should close a connection that sent an oversized frame"
    );

    // The other connection is untouched.
    assert_eq!(good.call(&frame(b"after")).unwrap(), b"after");
}

#[test]
fn payload_len_refuses_frames_over_the_limit() {
    assert_eq!(
        echo_proto::payload_len(10u32.to_be_bytes(), 10).unwrap(),
        10
    );
    let e = echo_proto::payload_len(11u32.to_be_bytes(), 10).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("exceeds"));
}

#[test]
fn a_frame_that_trickles_in_is_echoed_whole() {
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        let (s, _) = listener.accept().await.unwrap();
        let _ = serve_futures_io(s, 1 << 20).await;
    });
    let mut c = Client::connect(addr).unwrap();
    c.stream()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // Larger than the reader's read-ahead, sent in uneven pieces.
    let payload: Vec<u8> = (0..300_000u32).map(|i| (i * 7) as u8).collect();
    let wire = frame(&payload);
    for piece in wire.chunks(70_001) {
        c.send(piece).unwrap();
    }
    assert_eq!(c.recv().unwrap(), payload.as_slice());
}

#[test]
fn the_client_refuses_a_reply_longer_than_its_limit() {
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let hostile = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut req = [0u8; 5];
        s.read_exact(&mut req).unwrap();
        // Announce 64 MiB (over the client's 16 MiB default), then hang up.
        s.write_all(&(64u32 << 20).to_be_bytes()).unwrap();
    });
    let mut c = Client::connect(addr).unwrap();
    c.stream()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let e = c.call(&frame(b"x")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
    assert!(e.to_string().contains("the server's reply"), "{e}");
    hostile.join().unwrap();
}
