//! The echo RPC wire protocol, shared by the examples and the benchmark.
//!
//! A request is a 4-byte big-endian length N followed by N payload bytes; the response is the
//! same frame. A frame longer than the server's limit (16 MiB by default) is refused: the
//! server logs one line and closes that connection only.
//!
//! The declared length is only a claim: [`FrameReader`] grows a frame's buffer as its bytes
//! arrive (never more than [`READ_AHEAD`] or the bytes already received ahead of them), so
//! headers that announce 16 MiB and send nothing cost a few bytes each, not 16 MiB.

use std::io;

/// The default largest payload a server accepts.
pub const DEFAULT_MAX_FRAME: usize = 16 << 20;

/// The most a [`FrameReader`] reserves for a frame beyond what it holds, until it holds more
/// than this: then the buffer at most doubles with each read.
pub const READ_AHEAD: usize = 64 << 10;

/// A frame buffer larger than this is released once its frame has been answered, so a
/// connection that sent one big frame does not keep its memory.
pub const KEEP_CAPACITY: usize = 64 << 10;

/// Reads frames from a byte stream in pieces, with memory bounded by the bytes received.
///
/// ```
/// use examples_common::echo_proto::{frame, FrameReader};
/// let wire = frame(b"hello");
/// let mut reader = FrameReader::new(1024);
/// let mut input = &wire[..];
/// loop {
///     let spare = reader.spare();
///     let n = spare.len().min(input.len());
///     spare[..n].copy_from_slice(&input[..n]);
///     input = &input[n..];
///     if reader.filled(n).unwrap() {
///         break;
///     }
/// }
/// assert_eq!(reader.frame(), wire.as_slice());
/// reader.consume();
/// assert!(reader.is_empty());
/// ```
///
/// Call [`FrameReader::spare`] for the region to read into, then [`FrameReader::filled`] with
/// the number of bytes read; when it returns `true`, [`FrameReader::frame`] is a whole frame
/// (header included), and [`FrameReader::consume`] starts the next. The buffer's capacity stays
/// below `2 * received + READ_AHEAD + KEEP_CAPACITY`, `received` being the current frame's bytes.
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    /// The bytes of the current frame received so far (`buf` may be longer while a read is
    /// under way: zeros past `have`).
    have: usize,
    /// The whole frame's length, header included, once the header is in.
    want: Option<usize>,
    max: usize,
}

impl FrameReader {
    /// A reader that refuses payloads over `max` bytes.
    pub fn new(max: usize) -> FrameReader {
        FrameReader {
            buf: Vec::new(),
            have: 0,
            want: None,
            max,
        }
    }

    /// The region the next bytes go to: never past the end of the current frame (so a read
    /// never takes bytes of the next one), and at most `max(READ_AHEAD, received)` bytes.
    pub fn spare(&mut self) -> &mut [u8] {
        let left = match self.want {
            None => 4 - self.have,
            Some(want) => want - self.have,
        };
        let chunk = left.min(READ_AHEAD.max(self.have));
        self.buf.truncate(self.have);
        self.buf.reserve_exact(chunk);
        self.buf.resize(self.have + chunk, 0);
        &mut self.buf[self.have..]
    }

    /// Records that `n` bytes were read into [`FrameReader::spare`]. `Ok(true)`: a whole frame
    /// is in. An `InvalidData` error for a header over the limit.
    pub fn filled(&mut self, n: usize) -> io::Result<bool> {
        assert!(
            self.have + n <= self.buf.len(),
            "filled more than spare gave"
        );
        self.have += n;
        self.buf.truncate(self.have);
        if self.want.is_none() && self.have == 4 {
            let header = self.buf[..4].try_into().expect("four bytes");
            self.want = Some(4 + payload_len(header, self.max)?);
        }
        Ok(self.want == Some(self.have))
    }

    /// The whole frame, header included, after [`FrameReader::filled`] returned `true`.
    pub fn frame(&self) -> &[u8] {
        &self.buf[..self.have]
    }

    /// Starts the next frame, releasing the buffer if a big frame made it large.
    pub fn consume(&mut self) {
        self.have = 0;
        self.want = None;
        self.buf.clear();
        if self.buf.capacity() > KEEP_CAPACITY {
            self.buf = Vec::new();
        }
    }

    /// No byte of a frame received: the stream is at a frame boundary.
    pub fn is_empty(&self) -> bool {
        self.have == 0
    }

    /// The buffer's capacity, for tests of the memory bound.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// The error for a stream that ended inside a frame.
    pub fn eof_error(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the connection closed {} bytes into a frame", self.have),
        )
    }
}

/// Checks a frame header against `max`; returns the payload length.
pub fn payload_len(header: [u8; 4], max: usize) -> io::Result<usize> {
    let n = u32::from_be_bytes(header) as usize;
    if n > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {n} bytes exceeds the {max}-byte limit"),
        ));
    }
    Ok(n)
}

/// Encodes `payload` as a frame.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(4 + payload.len());
    f.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Serves one connection on spinpark (or any futures-io stream): reads a header, then the
/// payload, and writes the whole frame back with one write. Returns when the peer closes;
/// an oversized frame is an `InvalidData` error, after which the caller drops the connection.
pub async fn serve_futures_io<S>(stream: S, max: usize) -> io::Result<u64>
where
    S: futures_io::AsyncRead + futures_io::AsyncWrite + Unpin,
{
    serve_futures_io_writes(stream, max, false).await
}

/// [`serve_futures_io`] writing each reply in two writes, its 4-byte length prefix and then
/// its body (the most common reply shape after one write).
pub async fn serve_futures_io_split<S>(stream: S, max: usize) -> io::Result<u64>
where
    S: futures_io::AsyncRead + futures_io::AsyncWrite + Unpin,
{
    serve_futures_io_writes(stream, max, true).await
}

async fn serve_futures_io_writes<S>(stream: S, max: usize, split: bool) -> io::Result<u64>
where
    S: futures_io::AsyncRead + futures_io::AsyncWrite + Unpin,
{
    use futures_util::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    let mut frames = FrameReader::new(max);
    let mut served = 0;
    loop {
        let n = stream.read(frames.spare()).await?;
        if n == 0 {
            return match frames.is_empty() {
                true => Ok(served),
                false => Err(frames.eof_error()),
            };
        }
        if frames.filled(n)? {
            let frame = frames.frame();
            let (first, rest) = frame.split_at(if split { 4 } else { frame.len() });
            stream.get_mut().write_all(first).await?;
            if !rest.is_empty() {
                stream.get_mut().write_all(rest).await?;
            }
            frames.consume();
            served += 1;
        }
    }
}

/// A blocking client connection, for load generators and tests. It trusts the server no more
/// than a server trusts it: a reply longer than the client's limit ([`DEFAULT_MAX_FRAME`]
/// unless [`Client::max_frame`] says otherwise) is an `InvalidData` error, not an allocation.
#[derive(Debug)]
pub struct Client {
    stream: std::net::TcpStream,
    buf: Vec<u8>,
    max: usize,
}

impl Client {
    /// Connects with `TCP_NODELAY`.
    pub fn connect(addr: std::net::SocketAddr) -> io::Result<Client> {
        let stream = std::net::TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Client {
            stream,
            buf: Vec::new(),
            max: DEFAULT_MAX_FRAME,
        })
    }

    /// Sets the largest reply payload the client accepts.
    pub fn max_frame(mut self, max: usize) -> Client {
        self.max = max;
        self
    }

    /// Sends one request frame without waiting for the response.
    pub fn send(&mut self, request: &[u8]) -> io::Result<()> {
        use std::io::Write;
        self.stream.write_all(request)
    }

    /// Reads one response frame into the client's buffer and returns its payload.
    pub fn recv(&mut self) -> io::Result<&[u8]> {
        use std::io::Read;
        let mut header = [0u8; 4];
        self.stream.read_exact(&mut header)?;
        let n = payload_len(header, self.max)
            .map_err(|e| io::Error::new(e.kind(), format!("the server's reply: {e}")))?;
        self.buf.resize(n, 0);
        self.stream.read_exact(&mut self.buf)?;
        Ok(&self.buf)
    }

    /// One round trip: sends `request` (a whole frame) and returns the response's payload.
    pub fn call(&mut self, request: &[u8]) -> io::Result<&[u8]> {
        self.send(request)?;
        self.recv()
    }

    /// The underlying socket.
    pub fn stream(&self) -> &std::net::TcpStream {
        &self.stream
    }
}
