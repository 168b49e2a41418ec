//! The echo protocol's framing, as the bench's own servers speak it, and the cursor the
//! owned-buffer servers (monoio, compio) split their read buffer with.
//!
//! A request is a 4-byte big-endian length N and N payload bytes; the reply is the same frame.
//! A payload over [`MAX_FRAME`] (16 MiB, the bench's default limit) is refused: the server
//! logs one line and closes that connection only. An owned-buffer server reads into one
//! `Vec<u8>` per connection and hands each whole frame in it to `write_all` as a slice of that
//! same buffer (one `write_all` per reply, no copy); [`Cursor`] tracks where the answered
//! frames end, and before the next read moves a partial frame to the front of the buffer and
//! makes room behind it.

use std::io;
use std::ops::Range;

/// The largest payload a server accepts.
pub const MAX_FRAME: usize = 16 << 20;

/// A connection's first read buffer: the bench's servers read through 16 KiB buffers too.
pub const READ_BUF: usize = 16 * 1024;

/// The payload length a header announces; an `InvalidData` error over [`MAX_FRAME`].
pub fn payload_len(header: [u8; 4]) -> io::Result<usize> {
    let n = u32::from_be_bytes(header) as usize;
    if n > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {n} bytes exceeds the {MAX_FRAME}-byte limit"),
        ));
    }
    Ok(n)
}

/// The length (header included) of the whole frame at the start of `bytes`, or `None` while
/// part of it has not arrived.
pub fn whole_frame(bytes: &[u8]) -> io::Result<Option<usize>> {
    let Some(header) = bytes.first_chunk::<4>() else {
        return Ok(None);
    };
    let len = 4 + payload_len(*header)?;
    Ok((bytes.len() >= len).then_some(len))
}

/// Where the unanswered bytes of a connection's read buffer start.
#[derive(Debug, Default)]
pub struct Cursor {
    start: usize,
}

impl Cursor {
    /// The next whole frame of `buf` (its range in `buf`), moving past it.
    pub fn next_frame(&mut self, buf: &[u8]) -> io::Result<Option<Range<usize>>> {
        let Some(len) = whole_frame(&buf[self.start..])? else {
            return Ok(None);
        };
        let frame = self.start..self.start + len;
        self.start = frame.end;
        Ok(Some(frame))
    }

    /// Before a read: drops the answered frames from the front of `buf` and leaves spare
    /// capacity behind what is left (doubling it when a partial frame fills the buffer).
    pub fn make_room(&mut self, buf: &mut Vec<u8>) {
        buf.drain(..self.start);
        self.start = 0;
        if buf.len() == buf.capacity() {
            buf.reserve(buf.len().max(READ_BUF));
        }
    }

    /// What the end of the stream means: `Ok` at a frame boundary, else an error.
    pub fn at_eof(&self, buf: &[u8]) -> io::Result<()> {
        let left = buf.len() - self.start;
        if left == 0 {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the connection closed {left} bytes into a frame"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn splits_whole_frames_and_keeps_a_partial_one_for_the_next_read() {
        let mut buf = Vec::with_capacity(8);
        buf.extend(frame(b"ab"));
        buf.extend(frame(b"cde"));
        buf.extend(&frame(b"fghi")[..5]);
        let mut c = Cursor::default();
        assert_eq!(c.next_frame(&buf).unwrap(), Some(0..6));
        assert_eq!(c.next_frame(&buf).unwrap(), Some(6..13));
        assert_eq!(c.next_frame(&buf).unwrap(), None);
        assert!(c.at_eof(&buf).is_err());
        c.make_room(&mut buf);
        assert_eq!(buf, &frame(b"fghi")[..5]);
        assert!(buf.capacity() > buf.len());
        buf.extend(b"ghi");
        assert_eq!(c.next_frame(&buf).unwrap(), Some(0..8));
        assert!(c.at_eof(&buf).is_ok());
    }

    #[test]
    fn refuses_a_header_over_the_limit() {
        let header = ((MAX_FRAME + 1) as u32).to_be_bytes();
        assert_eq!(
            whole_frame(&header).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        assert_eq!(
            whole_frame(&(MAX_FRAME as u32).to_be_bytes()).unwrap(),
            None
        );
    }
}
