//! The echo RPC wire protocol, shared by the examples and the benchmark.
//!
//! A request is a 4-byte big-endian length N followed by N payload bytes; the response is the
//! same frame. A frame longer than the server's limit (16 MiB by default) is refused: the
//! server logs one line and closes that connection only.

use std::io;

/// The default largest payload a server accepts.
pub const DEFAULT_MAX_FRAME: usize = 16 << 20;

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
    use futures_util::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    let mut frame = Vec::new();
    let mut served = 0;
    loop {
        let mut header = [0u8; 4];
        match stream.read_exact(&mut header).await {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(served),
            Err(e) => return Err(e),
        }
        let n = payload_len(header, max)?;
        frame.clear();
        frame.extend_from_slice(&header);
        frame.resize(4 + n, 0);
        stream.read_exact(&mut frame[4..]).await?;
        stream.get_mut().write_all(&frame).await?;
        served += 1;
    }
}

/// A blocking client connection, for load generators and tests.
#[derive(Debug)]
pub struct Client {
    stream: std::net::TcpStream,
    buf: Vec<u8>,
}

impl Client {
    /// Connects with `TCP_NODELAY`.
    pub fn connect(addr: std::net::SocketAddr) -> io::Result<Client> {
        let stream = std::net::TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Client {
            stream,
            buf: Vec::new(),
        })
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
        let n = payload_len(header, usize::MAX)?;
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
