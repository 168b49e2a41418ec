//! [`Buf`]: the buffer of a `fs::File` or a standard stream, which carries bytes between the
//! task and the blocking pool (read ahead on the way in, waiting to be written on the way out).
//!
//! ```text
//! bytes: [ consumed | unread or unwritten | spare, zeroed once ]
//!        0          pos                   end                  bytes.len()
//! ```
//!
//! How: `bytes` only grows, zero-filled the first time it does, so later reads and writes
//! reuse initialised memory and no `unsafe` is needed to read into it. A read or a write
//! never takes more than the `max` its caller passes (a file's `max_buf_size`, 2 MiB for the
//! standard streams), so that is also the most the buffer ever holds.

use std::io::{self, IoSlice, Read, Write};

/// Bytes read ahead of the task, or waiting to be written; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Buf {
    bytes: Vec<u8>,
    pos: usize,
    end: usize,
}

impl Buf {
    /// Bytes not yet handed to the reader (or not yet written).
    pub(crate) fn len(&self) -> usize {
        self.end - self.pos
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn clear(&mut self) {
        self.pos = 0;
        self.end = 0;
    }

    /// Makes the first `n` bytes usable.
    fn reserve(&mut self, n: usize) {
        if self.bytes.len() < n {
            self.bytes.resize(n, 0);
        }
    }

    /// Copies unread bytes into `dst`, as many as fit; returns how many.
    pub(crate) fn copy_to(&mut self, dst: &mut [u8]) -> usize {
        let n = self.len().min(dst.len());
        dst[..n].copy_from_slice(&self.bytes[self.pos..self.pos + n]);
        self.consume(n);
        n
    }

    /// The unread bytes.
    #[cfg(feature = "tokio-io")]
    pub(crate) fn unread(&self) -> &[u8] {
        &self.bytes[self.pos..self.end]
    }

    /// Marks `n` unread bytes as read.
    pub(crate) fn consume(&mut self, n: usize) {
        self.pos += n;
        if self.pos == self.end {
            self.clear();
        }
    }

    /// Drops the unread bytes and returns how far back the file's position must move to
    /// where the reader is (zero or negative).
    pub(crate) fn discard_read(&mut self) -> i64 {
        // A buffer holds at most `max_buf_size` bytes, far below i64::MAX.
        let back = -(self.len() as i64);
        self.clear();
        back
    }

    /// Fills the empty buffer with up to `max` bytes of `src`, for writing; returns how many.
    pub(crate) fn copy_from(&mut self, src: &[u8], max: usize) -> usize {
        debug_assert!(self.is_empty());
        let n = src.len().min(max);
        self.reserve(n);
        self.bytes[..n].copy_from_slice(&src[..n]);
        self.pos = 0;
        self.end = n;
        n
    }

    /// [`copy_from`](Buf::copy_from) for the slices of a vectored write, in order.
    pub(crate) fn copy_from_bufs(&mut self, bufs: &[IoSlice<'_>], max: usize) -> usize {
        debug_assert!(self.is_empty());
        let total = bufs.iter().fold(0usize, |t, b| t.saturating_add(b.len()));
        self.reserve(total.min(max));
        let mut n = 0;
        for b in bufs {
            let take = b.len().min(max - n);
            self.bytes[n..n + take].copy_from_slice(&b[..take]);
            n += take;
            if n == max {
                break;
            }
        }
        self.pos = 0;
        self.end = n;
        n
    }

    /// Reads up to `max` bytes of `file` into the empty buffer (retrying an interrupted
    /// read); on an error the buffer stays empty.
    pub(crate) fn read_from(&mut self, mut file: impl Read, max: usize) -> io::Result<usize> {
        debug_assert!(self.is_empty());
        self.reserve(max);
        let res = loop {
            match file.read(&mut self.bytes[..max]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => break res,
            }
        };
        self.pos = 0;
        self.end = *res.as_ref().unwrap_or(&0);
        res
    }

    /// Writes all of the buffer to `file` (retrying an interrupted write), and empties it
    /// whatever happened.
    pub(crate) fn write_to(&mut self, mut file: impl Write) -> io::Result<()> {
        let res = file.write_all(&self.bytes[self.pos..self.end]);
        self.clear();
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_then_copy_out_in_pieces() {
        let mut buf = Buf::default();
        assert_eq!(buf.read_from(&b"abcdef"[..], 4).unwrap(), 4);
        let mut dst = [0; 3];
        assert_eq!(buf.copy_to(&mut dst), 3);
        assert_eq!(&dst, b"abc");
        assert_eq!(buf.len(), 1);
        assert_eq!(buf.discard_read(), -1);
        assert!(buf.is_empty());
    }

    #[test]
    fn vectored_copy_stops_at_max() {
        let mut buf = Buf::default();
        let parts = [
            IoSlice::new(b"ab"),
            IoSlice::new(b"cd"),
            IoSlice::new(b"ef"),
        ];
        assert_eq!(buf.copy_from_bufs(&parts, 3), 3);
        let mut out = Vec::new();
        buf.write_to(&mut out).unwrap();
        assert_eq!(out, b"abc");
        assert!(buf.is_empty());
    }

    #[test]
    fn memory_stays_within_max() {
        let mut buf = Buf::default();
        buf.read_from(&[7u8; 100][..], 10).unwrap();
        assert_eq!(buf.len(), 10);
        assert!(buf.bytes.len() <= 10);
    }
}
