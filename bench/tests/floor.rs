//! The floor server (`benches/rpc/floor.rs`) and the busy-polling client
//! (`benches/rpc/poll_client.rs`): echoes across partial reads and several connections, and
//! what a bad or greedy client can make it do. Everything on 127.0.0.1, port 0; every wait is
//! bounded.

use examples_common::echo_proto;

#[allow(dead_code)]
#[path = "../benches/rpc/floor.rs"]
mod floor;
#[allow(dead_code)]
#[path = "../benches/rpc/poll_client.rs"]
mod poll_client;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use echo_proto::frame;
use floor::{Floor, READ_BUF};
use poll_client::PollClient;

const TIMEOUT: Duration = Duration::from_secs(10);

/// A floor server on its own thread, stopped (and joined) on drop.
struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    fn start(max: usize) -> Running {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut floor = Floor::new(listener, max).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || floor.run(&flag));
        Running {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.set_write_timeout(Some(TIMEOUT)).unwrap();
    s
}

fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut v = vec![0; n];
    s.read_exact(&mut v).unwrap();
    v
}

/// Some payload bytes that are not all alike, so a misplaced byte shows.
fn payload(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

/// Turns `floor` until `done` holds, at most `turns` times (with a short pause now and then,
/// so that bytes in flight arrive); returns whether it held.
fn turn_until(floor: &mut Floor, turns: usize, mut done: impl FnMut(&Floor) -> bool) -> bool {
    for i in 0..turns {
        if done(floor) {
            return true;
        }
        floor.turn();
        if i % 64 == 63 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    done(floor)
}

/// Whether the server closed `s`: end of stream, or a reset.
fn closed(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 16];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return true,
            Err(e) => panic!("expected the server to close the connection, got {e}"),
        }
    }
}

#[test]
fn echoes_frames_split_across_reads_on_several_connections() {
    let server = Running::start(echo_proto::DEFAULT_MAX_FRAME);
    let mut conns: Vec<TcpStream> = (0..3).map(|_| connect(server.addr)).collect();
    let frames: Vec<Vec<u8>> = (0..3).map(|i| frame(&payload(100 + i, i as u8))).collect();
    // Every connection's frame in pieces, interleaved: 2 header bytes each, then the other 2,
    // then the payload in two halves, pausing so the pieces arrive as separate reads.
    let cuts = |f: &Vec<u8>| [0, 2, 4, 4 + (f.len() - 4) / 2, f.len()];
    for step in 0..4 {
        for (c, f) in conns.iter_mut().zip(&frames) {
            let k = cuts(f);
            c.write_all(&f[k[step]..k[step + 1]]).unwrap();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for (c, f) in conns.iter_mut().zip(&frames) {
        assert_eq!(read_n(c, f.len()), *f);
    }
    // Two frames (one empty) in one write, then a frame larger than the read buffer and the
    // frame reader's read-ahead, which takes many reads and (likely) several writes.
    let two = [frame(b"first"), frame(b"")].concat();
    conns[0].write_all(&two).unwrap();
    assert_eq!(read_n(&mut conns[0], two.len()), two);
    let big = frame(&payload(200 * 1024 + 7, 9));
    assert!(big.len() > 4 * READ_BUF);
    let mut writer = conns[1].try_clone().unwrap();
    let sent = big.clone();
    let t = std::thread::spawn(move || writer.write_all(&sent).unwrap());
    assert_eq!(read_n(&mut conns[1], big.len()), big);
    t.join().unwrap();
    // The other connections are still served.
    conns[2].write_all(&frames[2]).unwrap();
    assert_eq!(read_n(&mut conns[2], frames[2].len()), frames[2]);
}

#[test]
fn closes_only_the_connection_with_an_oversize_frame_without_allocating_it() {
    const MAX: usize = 1024;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut floor = Floor::new(listener, MAX).unwrap();
    let mut good = connect(addr);
    let mut bad = connect(addr);
    assert!(turn_until(&mut floor, 10_000, |f| f.connections() == 2));
    // A header one byte over the limit, and some of the payload it announces.
    bad.write_all(&((MAX + 1) as u32).to_be_bytes()).unwrap();
    bad.write_all(&[7; 100]).unwrap();
    assert!(turn_until(&mut floor, 10_000, |f| f.connections() == 1));
    assert!(
        floor.memory() <= READ_BUF + 64,
        "{} bytes held after refusing the frame",
        floor.memory()
    );
    assert!(closed(&mut bad));
    // The limit itself is accepted, on the other connection.
    let f = frame(&payload(MAX, 3));
    good.write_all(&f).unwrap();
    let mut got = Vec::new();
    good.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    assert!(turn_until(&mut floor, 10_000, |_| {
        match good.read(&mut buf) {
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
        got.len() >= f.len()
    }));
    assert_eq!(got, f);
}

#[test]
fn a_header_announcing_a_large_frame_costs_only_the_bytes_sent() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut floor = Floor::new(listener, echo_proto::DEFAULT_MAX_FRAME).unwrap();
    let mut c = connect(addr);
    c.write_all(&(echo_proto::DEFAULT_MAX_FRAME as u32).to_be_bytes())
        .unwrap();
    c.write_all(&[1; 10]).unwrap();
    assert!(turn_until(&mut floor, 10_000, |f| f.connections() == 1));
    for _ in 0..100 {
        floor.turn();
    }
    assert_eq!(
        floor.connections(),
        1,
        "a frame within the limit is waited for"
    );
    assert!(
        floor.memory() < READ_BUF + 2 * echo_proto::READ_AHEAD,
        "{} bytes held for a 16 MiB claim",
        floor.memory()
    );
}

#[test]
fn a_client_that_never_reads_replies_cannot_grow_the_server() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut floor = Floor::new(listener, echo_proto::DEFAULT_MAX_FRAME).unwrap();
    let mut c = connect(addr);
    c.set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    // Sends up to 32 MiB of 256 KiB frames and reads nothing; stops when a write times out.
    let sender = std::thread::spawn(move || {
        let f = frame(&vec![5; 256 * 1024]);
        let mut sent = 0;
        for _ in 0..128 {
            if c.write_all(&f).is_err() {
                break;
            }
            sent += f.len();
        }
        (c, sent)
    });
    let mut peak = 0;
    turn_until(&mut floor, 2_000_000, |f| {
        peak = peak.max(f.memory());
        sender.is_finished()
    });
    let (_c, sent) = sender.join().unwrap();
    assert!(sent < 32 << 20, "the server kept reading ({sent} bytes)");
    assert!(
        peak < 4 << 20,
        "{peak} bytes held for a client that reads nothing"
    );
}

#[test]
fn poll_client_round_trips_with_the_floor_server() {
    let server = Running::start(echo_proto::DEFAULT_MAX_FRAME);
    let mut c = PollClient::connect(server.addr).unwrap().timeout(TIMEOUT);
    for i in 0..50u8 {
        let p = payload(i as usize * 7, i);
        assert_eq!(c.call(&frame(&p)).unwrap(), p.as_slice());
    }
}

/// A scripted peer for the polling client: accepts one connection, reads `expect` request
/// bytes, then sends `pieces` with a pause between them, then closes.
fn scripted(expect: usize, pieces: Vec<Vec<u8>>) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        read_n(&mut s, expect);
        for p in pieces {
            s.write_all(&p).unwrap();
            std::thread::sleep(Duration::from_millis(3));
        }
        // Wait for the client to close (bounded by the read timeout), then close.
        let _ = s.read(&mut [0u8; 1]);
    });
    (addr, t)
}

#[test]
fn poll_client_assembles_a_reply_from_pieces_and_keeps_what_follows() {
    let a = frame(&payload(300, 1));
    let b = frame(b"next");
    let req = frame(b"q");
    let mut tail = a[150..].to_vec();
    tail.extend_from_slice(&b[..3]);
    let pieces = vec![
        a[..2].to_vec(),
        a[2..4].to_vec(),
        a[4..150].to_vec(),
        tail,
        b[3..].to_vec(),
    ];
    let (addr, t) = scripted(req.len(), pieces);
    let mut c = PollClient::connect(addr).unwrap().timeout(TIMEOUT);
    assert_eq!(c.call(&req).unwrap(), &a[4..]);
    assert_eq!(c.recv().unwrap(), b"next");
    drop(c);
    t.join().unwrap();
}

#[test]
fn poll_client_refuses_an_oversize_reply_and_a_cut_one() {
    let req = frame(b"q");
    let (addr, t) = scripted(req.len(), vec![frame(&[0; 9])]);
    let mut c = PollClient::connect(addr)
        .unwrap()
        .max_frame(8)
        .timeout(TIMEOUT);
    assert_eq!(c.call(&req).unwrap_err().kind(), ErrorKind::InvalidData);
    drop(c);
    t.join().unwrap();

    // The peer closes 10 bytes into a 100-byte reply.
    let cut = frame(&[1; 100])[..10].to_vec();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        read_n(&mut s, 5);
        s.write_all(&cut).unwrap();
    });
    let mut c = PollClient::connect(addr).unwrap().timeout(TIMEOUT);
    assert_eq!(c.call(&req).unwrap_err().kind(), ErrorKind::UnexpectedEof);
    t.join().unwrap();
}

#[test]
fn poll_client_gives_up_on_a_silent_server() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut c = PollClient::connect(addr)
        .unwrap()
        .timeout(Duration::from_millis(50));
    // The connection is in the backlog, never accepted: the request is sent, no reply comes.
    assert_eq!(
        c.call(&frame(b"q")).unwrap_err().kind(),
        ErrorKind::TimedOut
    );
}
