//! [`Output`]: a connection's replies waiting to be sent, never more than its output limit.
//!
//! ```text
//! let mut out = Output::new(settings.max_output);
//! out.add(reply, &mut stream).await?; // may write what is pending first
//! out.flush(&mut stream).await?;      // when the read buffer holds no more requests
//! ```
//!
//! How: a reply's size is known before it is encoded ([`Reply::wire_len`]: a `MGET` reply
//! holds shared pointers to the stored values, not copies, until it is encoded). A reply
//! that does not fit beside the replies already waiting is preceded by a write of those, so
//! pipelined replies never add up past the limit: the connection waits for the client to
//! read instead (and reads no more requests meanwhile). A reply that is larger than the limit
//! on its own is never built: the client gets `-ERR ... output limit ...` instead, after the
//! replies before it, and the connection is closed, since the replies after it would answer
//! the wrong requests. Without this, one 2.7 KB `MGET` naming an 8 MiB key 300 times made a
//! 2.4 GB buffer (redis-server with its default limits does the same).

use std::io;

use futures_util::io::AsyncWriteExt;

use crate::resp::Reply;

/// Replies waiting to be sent are written out once they reach this size, so a long pipeline
/// of small replies goes out in large writes without piling up.
pub const FLUSH_AT: usize = 64 << 10;
/// The output buffer returns to its normal size once written if it grew past this.
const SHRINK_ABOVE: usize = 1 << 20;

/// The replies a connection has not written yet, at most `max` bytes of them.
pub(super) struct Output {
    buf: Vec<u8>,
    max: usize,
}

impl Output {
    /// An empty output whose pending replies may take `max` bytes.
    pub(super) fn new(max: usize) -> Output {
        Output {
            buf: Vec::with_capacity(super::READ_CHUNK),
            max,
        }
    }

    /// Queues `reply`, writing the replies already waiting first if it would not fit beside
    /// them.
    ///
    /// # Errors
    /// The stream's error; or, for a reply larger than the limit by itself, `InvalidData`
    /// after `-ERR ... output limit ...` has been written in its place (the caller closes
    /// the connection).
    pub(super) async fn add<S>(&mut self, reply: Reply, stream: &mut S) -> io::Result<()>
    where
        S: futures_io::AsyncWrite + Unpin,
    {
        let size = reply.wire_len();
        if size > self.max {
            drop(reply);
            let msg = format!(
                "reply of {size} bytes exceeds the output limit of {} bytes \
                 (kv_server --max-output); closing the connection",
                self.max
            );
            Reply::err(&msg).encode(&mut self.buf);
            self.flush(stream).await?;
            return Err(io::Error::new(io::ErrorKind::InvalidData, msg));
        }
        if self.buf.len() + size > self.max {
            self.flush(stream).await?;
        }
        if size >= FLUSH_AT {
            // Exactly what it needs, rather than doubling past it.
            self.buf.reserve_exact(size);
        }
        reply.encode(&mut self.buf);
        if self.buf.len() >= FLUSH_AT {
            self.flush(stream).await?;
        }
        Ok(())
    }

    /// Queues `reply` without a size check: for the few short replies the connection itself
    /// makes (`+OK` to `QUIT`, a protocol error).
    pub(super) fn add_short(&mut self, reply: &Reply) {
        reply.encode(&mut self.buf);
    }

    /// Writes every pending reply.
    pub(super) async fn flush<S>(&mut self, stream: &mut S) -> io::Result<()>
    where
        S: futures_io::AsyncWrite + Unpin,
    {
        if !self.buf.is_empty() {
            stream.write_all(&self.buf).await?;
            self.buf.clear();
        }
        if self.buf.capacity() > SHRINK_ABOVE {
            self.buf = Vec::with_capacity(super::READ_CHUNK);
        }
        Ok(())
    }
}
