//! The floor server: one thread that only busy-polls its sockets, the best latency a server
//! on its CPU could give, to measure the runtimes against (`--only floor`).
//!
//! ```text
//! let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
//! let mut floor = Floor::new(listener, DEFAULT_MAX_FRAME)?;
//! floor.run(&AtomicBool::new(false)); // never returns unless the flag is set
//! ```
//!
//! The listener and every connection are nonblocking; [`Floor::turn`] accepts what is pending
//! and reads each connection once, and [`Floor::run`] calls it in a loop that never sleeps,
//! never parks and asks no poller (no epoll): a reply is on its way as soon as the request's
//! bytes are in the socket. It answers the same echo frames as the other servers
//! (`echo_proto`), with their buffering: one 16 KiB read buffer per connection (a request
//! costs one `read` and one `write`), frames assembled by a [`FrameReader`] (memory bounded
//! by the bytes received; a header over the limit closes that connection, as the others do,
//! before anything is allocated for it). A connection whose peer does not read its replies
//! is not read either until the reply is out, so a client cannot queue work in the server.
//! Accepting is polled every [`ACCEPT_EVERY`] turns while connections are open (every turn
//! when there are none), so that the loop spends its time on the connections' reads.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::echo_proto::FrameReader;

/// Bytes read from a connection at a time (the other servers' `BufReader` capacity).
pub const READ_BUF: usize = 16 * 1024;

/// While connections are open, `accept` is tried once per this many turns.
pub const ACCEPT_EVERY: u32 = 32;

/// Most reads one connection gets per turn (a pipelining client does not starve the others).
const READS_PER_TURN: usize = 8;

/// One connection: its socket, the bytes read and not yet framed, and the frame under way.
#[derive(Debug)]
struct Conn {
    stream: TcpStream,
    inbuf: Box<[u8]>,
    /// `inbuf[start..end]` is read and not yet handed to `frames`.
    start: usize,
    end: usize,
    frames: FrameReader,
    /// A complete frame is being echoed: how much of it is written.
    written: Option<usize>,
}

/// What [`Conn::serve`] leaves of a connection.
enum Status {
    Open,
    Closed,
}

impl Conn {
    fn new(stream: TcpStream, max: usize) -> io::Result<Conn> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            inbuf: vec![0; READ_BUF].into_boxed_slice(),
            start: 0,
            end: 0,
            frames: FrameReader::new(max),
            written: None,
        })
    }

    /// Writes what it can of the reply under way; `Ok(true)` once it is all out.
    fn flush(&mut self) -> io::Result<bool> {
        while let Some(at) = self.written {
            let frame = self.frames.frame();
            if at == frame.len() {
                self.frames.consume();
                self.written = None;
                break;
            }
            match self.stream.write(&frame[at..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written = Some(at + n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Moves buffered bytes into the frame under way; `Ok(true)` when a frame is complete.
    fn frame_buffered(&mut self) -> io::Result<bool> {
        while self.start < self.end {
            let spare = self.frames.spare();
            let n = spare.len().min(self.end - self.start);
            spare[..n].copy_from_slice(&self.inbuf[self.start..self.start + n]);
            self.start += n;
            if self.frames.filled(n)? {
                self.written = Some(0);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Echoes what can be echoed without waiting: replies first, then buffered frames, then
    /// at most [`READS_PER_TURN`] reads. An error closes the connection (the caller logs it).
    fn serve(&mut self) -> io::Result<Status> {
        let mut reads = 0;
        loop {
            if !self.flush()? {
                return Ok(Status::Open);
            }
            if self.frame_buffered()? {
                continue;
            }
            if reads == READS_PER_TURN {
                return Ok(Status::Open);
            }
            reads += 1;
            match self.stream.read(&mut self.inbuf) {
                Ok(0) if self.frames.is_empty() => return Ok(Status::Closed),
                Ok(0) => return Err(self.frames.eof_error()),
                Ok(n) => (self.start, self.end) = (0, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Status::Open),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Heap bytes this connection holds.
    #[allow(dead_code)] // for `Floor::memory`, which the tests read
    fn memory(&self) -> usize {
        self.inbuf.len() + self.frames.capacity()
    }
}

/// The floor server: a nonblocking listener and its connections, polled by one thread.
#[derive(Debug)]
pub struct Floor {
    listener: TcpListener,
    conns: Vec<Conn>,
    max: usize,
    turns: u32,
}

impl Floor {
    /// Serves `listener`'s connections, refusing payloads over `max` bytes.
    pub fn new(listener: TcpListener, max: usize) -> io::Result<Floor> {
        listener.set_nonblocking(true)?;
        Ok(Floor {
            listener,
            conns: Vec::new(),
            max,
            turns: 0,
        })
    }

    /// One pass: accepts pending connections (see [`ACCEPT_EVERY`]), then serves each
    /// connection once, dropping those that closed or failed (a failure is logged).
    pub fn turn(&mut self) {
        if self.conns.is_empty() || self.turns.is_multiple_of(ACCEPT_EVERY) {
            self.accept();
        }
        self.turns = self.turns.wrapping_add(1);
        self.conns.retain_mut(|c| match c.serve() {
            Ok(Status::Open) => true,
            Ok(Status::Closed) => false,
            Err(e) => {
                eprintln!("floor server: closing a connection: {e}");
                false
            }
        });
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => match Conn::new(stream, self.max) {
                    Ok(c) => self.conns.push(c),
                    Err(e) => eprintln!("floor server: setting up a connection: {e}"),
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("floor server: accept: {e}");
                    return;
                }
            }
        }
    }

    /// Turns until `stop` is set, without ever sleeping.
    pub fn run(&mut self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            self.turn();
        }
    }

    /// Open connections.
    #[allow(dead_code)] // for the tests (`bench/tests/floor.rs`)
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Heap bytes the connections hold (read buffers and frames), for tests of the bound.
    #[allow(dead_code)] // for the tests (`bench/tests/floor.rs`)
    pub fn memory(&self) -> usize {
        self.conns.iter().map(Conn::memory).sum()
    }
}
