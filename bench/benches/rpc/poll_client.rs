//! A client that busy-polls its socket, as the reference experiment's clients do: the
//! client side of `--only floor`, so that the client never adds a wake-up of its own.
//!
//! ```text
//! let mut c = PollClient::connect(addr)?;
//! let payload = c.call(&echo_proto::frame(b"hi"))?; // spins on read until the reply is in
//! ```
//!
//! The socket is nonblocking: [`PollClient::send`] retries a write that would block,
//! [`PollClient::recv`] retries `read` (with a spin-loop hint) until the whole frame is in.
//! Replies are read into a buffer that keeps bytes past the frame for the next call; a reply
//! header over the client's limit is an `InvalidData` error, not an allocation, and a reply
//! that has not arrived after the timeout (10 s unless [`PollClient::timeout`] says otherwise)
//! is a `TimedOut` error, so a stuck server cannot hang the client.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::echo_proto::{payload_len, DEFAULT_MAX_FRAME};

/// The smallest read the client asks for.
const READ_CHUNK: usize = 4096;

/// Spins between two looks at the clock while waiting.
const SPINS_PER_CLOCK: u32 = 1024;

/// A nonblocking echo client that spins instead of waiting.
#[derive(Debug)]
pub struct PollClient {
    stream: TcpStream,
    buf: Vec<u8>,
    /// `buf[..have]` is read; `buf[..used]` is the frame the last `recv` returned.
    have: usize,
    used: usize,
    max: usize,
    timeout: Duration,
}

impl PollClient {
    /// Connects (blocking), then sets `TCP_NODELAY` and nonblocking mode.
    pub fn connect(addr: SocketAddr) -> io::Result<PollClient> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(PollClient {
            stream,
            buf: vec![0; READ_CHUNK],
            have: 0,
            used: 0,
            max: DEFAULT_MAX_FRAME,
            timeout: Duration::from_secs(10),
        })
    }

    /// Sets the largest reply payload the client accepts.
    pub fn max_frame(mut self, max: usize) -> PollClient {
        self.max = max;
        self
    }

    /// Sets how long a send or a reply may take before it is a `TimedOut` error.
    #[allow(dead_code)] // for the tests (`bench/tests/poll_client.rs`)
    pub fn timeout(mut self, timeout: Duration) -> PollClient {
        self.timeout = timeout;
        self
    }

    /// Writes a whole request frame, spinning while the socket's buffer is full.
    pub fn send(&mut self, request: &[u8]) -> io::Result<()> {
        let mut waited = Waiter::new(self.timeout);
        let mut at = 0;
        while at < request.len() {
            match self.stream.write(&request[at..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => waited.spin("a send")?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Spins on `read` until one whole reply frame is in; returns its payload.
    pub fn recv(&mut self) -> io::Result<&[u8]> {
        // Drop the previous reply, keep what followed it.
        self.buf.copy_within(self.used..self.have, 0);
        self.have -= self.used;
        self.used = 0;
        let mut waited = Waiter::new(self.timeout);
        loop {
            let mut need = 4;
            if self.have >= 4 {
                let header = self.buf[..4].try_into().expect("four bytes");
                let n = payload_len(header, self.max)
                    .map_err(|e| io::Error::new(e.kind(), format!("the server's reply: {e}")))?;
                need = 4 + n;
                if self.have >= need {
                    self.used = need;
                    return Ok(&self.buf[4..need]);
                }
            }
            if self.buf.len() < need.max(self.have + READ_CHUNK) {
                self.buf.resize(need.max(self.have + READ_CHUNK), 0);
            }
            match self.stream.read(&mut self.buf[self.have..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the server closed {} bytes into a reply", self.have),
                    ))
                }
                Ok(n) => self.have += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => waited.spin("a reply")?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// One round trip: sends `request` (a whole frame) and returns the reply's payload.
    pub fn call(&mut self, request: &[u8]) -> io::Result<&[u8]> {
        self.send(request)?;
        self.recv()
    }
}

/// Counts spins, looking at the clock now and then, until a timeout.
struct Waiter {
    spins: u32,
    deadline: Option<Instant>,
    timeout: Duration,
}

impl Waiter {
    fn new(timeout: Duration) -> Waiter {
        Waiter {
            spins: 0,
            deadline: None,
            timeout,
        }
    }

    /// One spin; a `TimedOut` error (about `what`) once the timeout has passed.
    fn spin(&mut self, what: &str) -> io::Result<()> {
        std::hint::spin_loop();
        self.spins += 1;
        if self.spins.is_multiple_of(SPINS_PER_CLOCK) {
            let now = Instant::now();
            let deadline = *self.deadline.get_or_insert(now + self.timeout);
            if now >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{what} took over {:?}", self.timeout),
                ));
            }
        }
        Ok(())
    }
}
