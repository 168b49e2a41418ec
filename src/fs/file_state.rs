//! A [`File`](super::File)'s state machine: at most one operation in flight on the blocking
//! pool, and the buffer that goes to it and comes back.
//!
//! ```text
//!            read: fill the buffer           write: buffer out (seek back the read-ahead first)
//!   Idle(buf) ------------------------------------------------------------------> Busy(handle)
//!       ^                                                                              |
//!       +---- the closure returns (Operation, buf); a failed write is kept in ---------+
//!             `last_write_err` for the next write or flush
//! ```
//!
//! How it answers each caller (the I/O traits in `file_io.rs` and `file_tokio_io.rs`, and
//! `File`'s own methods, go through these):
//!
//! * read: serve the read-ahead if there is any; else start a read of at most
//!   `min(wanted, max_buf_size)` bytes and wait for it. A write found in flight is waited
//!   for first (its error kept for later).
//! * write: report a kept write error if there is one; wait for whatever is in flight; copy
//!   up to `max_buf_size` bytes into the buffer and start writing them (preceded by a seek
//!   back over unread read-ahead, so the bytes land where the reader is); return the count
//!   at once. Refused once the runtime shuts down, when the pool might drop the closure.
//! * flush: report a kept write error, or wait for what is in flight and report its error
//!   if it was a write.
//! * seek: wait for what is in flight, then seek (a relative seek accounts for the unread
//!   read-ahead, which is dropped).
//!
//! A `JoinError` (the closure was dropped or panicked) leaves the state `Idle` with an empty
//! buffer and becomes an error for the caller (tokio's "task was cancelled"), so the file
//! stays usable.

use std::fs::File as StdFile;
use std::future::Future;
use std::io::{self, IoSlice, Seek, SeekFrom};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use spinpark_executor::JoinHandle;

use super::POOL;
use crate::blocking::Buf;

/// What a closure on the pool did, with its result.
#[derive(Debug)]
pub(super) enum Operation {
    Read(io::Result<usize>),
    Write(io::Result<()>),
    Seek(io::Result<u64>),
    /// `File::set_len`, after a seek back over unread read-ahead.
    SetLen(io::Result<()>),
}

#[derive(Debug)]
enum State {
    Idle(Buf),
    Busy(JoinHandle<(Operation, Buf)>),
}

/// The part of a `File` behind its lock.
#[derive(Debug)]
pub(super) struct Inner {
    state: State,
    /// A write that failed after its caller was told it succeeded, for the next write or
    /// flush to report.
    last_write_err: Option<io::Error>,
    /// The position the latest seek reached (tokio's `poll_complete` answers it when no seek
    /// is in flight).
    pos: u64,
    /// The target of the seek in flight, so that a `poll_seek` called again after `Pending`
    /// recognises its own seek.
    seeking: Option<SeekFrom>,
}

impl Inner {
    pub(super) fn new() -> Inner {
        Inner {
            state: State::Idle(Buf::default()),
            last_write_err: None,
            pos: 0,
            seeking: None,
        }
    }

    /// The buffer, when no operation is in flight.
    pub(super) fn idle_buf(&mut self) -> Option<&mut Buf> {
        match &mut self.state {
            State::Idle(buf) => Some(buf),
            State::Busy(_) => None,
        }
    }

    /// Takes the idle buffer out (leaving an empty one).
    fn take_buf(&mut self) -> Buf {
        match &mut self.state {
            State::Idle(buf) => std::mem::take(buf),
            State::Busy(_) => Buf::default(),
        }
    }

    /// Keeps a write error for the next write or flush (the first one, if there are two).
    fn keep_write_err(&mut self, e: io::Error) {
        self.last_write_err.get_or_insert(e);
    }

    /// Waits for the operation in flight, if any, and returns what it did; `None` when idle.
    pub(super) fn poll_inflight(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Option<Operation>>> {
        let State::Busy(handle) = &mut self.state else {
            return Poll::Ready(Ok(None));
        };
        let res = ready!(Pin::new(handle).poll(cx));
        match res {
            Ok((op, buf)) => {
                self.state = State::Idle(buf);
                if let Operation::Seek(Ok(pos)) = &op {
                    self.pos = *pos;
                }
                Poll::Ready(Ok(Some(op)))
            }
            Err(e) => {
                self.state = State::Idle(Buf::default());
                self.seeking = None;
                // tokio's text: "task was cancelled" (or "task panicked").
                Poll::Ready(Err(e.into()))
            }
        }
    }

    /// Ready once the buffer holds unread bytes, or the read just made found none (end of
    /// file), or at once when `want` is 0; then the caller copies out of
    /// [`Inner::idle_buf`] (which may be busy, and then has nothing, when `want` is 0).
    pub(super) fn poll_fill(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        max_buf_size: usize,
        want: usize,
    ) -> Poll<io::Result<()>> {
        if want == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            if let Some(buf) = self.idle_buf() {
                if !buf.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                let mut buf = self.take_buf();
                let std = std.clone();
                let len = want.min(max_buf_size);
                self.state = State::Busy(POOL.spawn(move || {
                    let res = buf.read_from(&*std, len);
                    (Operation::Read(res), buf)
                })?);
            }
            match ready!(self.poll_inflight(cx))? {
                Some(Operation::Read(res)) => return Poll::Ready(res.map(drop)),
                Some(Operation::Write(Err(e))) => self.keep_write_err(e),
                // A finished write or seek: the position moved, read from there.
                _ => {}
            }
        }
    }

    /// Copies up to `max_buf_size` bytes into the buffer with `fill` and starts writing
    /// them; see the module docs.
    pub(super) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        max_buf_size: usize,
        fill: impl FnOnce(&mut Buf, usize) -> usize,
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.last_write_err.take() {
            return Poll::Ready(Err(e));
        }
        loop {
            if self.idle_buf().is_some() {
                let mut buf = self.take_buf();
                let seek = (!buf.is_empty()).then(|| SeekFrom::Current(buf.discard_read()));
                let n = fill(&mut buf, max_buf_size);
                let std = std.clone();
                self.state = State::Busy(POOL.spawn_mandatory(move || {
                    let res = match seek {
                        Some(seek) => (&*std).seek(seek).and_then(|_| buf.write_to(&*std)),
                        None => buf.write_to(&*std),
                    };
                    (Operation::Write(res), buf)
                })?);
                return Poll::Ready(Ok(n));
            }
            if let Some(Operation::Write(Err(e))) = ready!(self.poll_inflight(cx))? {
                return Poll::Ready(Err(e));
            }
        }
    }

    /// `poll_write` of `src`.
    pub(super) fn poll_write_slice(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        max_buf_size: usize,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        if src.is_empty() {
            return Poll::Ready(self.last_write_err.take().map_or(Ok(0), Err));
        }
        self.poll_write(cx, std, max_buf_size, |buf, max| buf.copy_from(src, max))
    }

    /// `poll_write` of `bufs`, in order.
    pub(super) fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        max_buf_size: usize,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if bufs.iter().all(|b| b.is_empty()) {
            return Poll::Ready(self.last_write_err.take().map_or(Ok(0), Err));
        }
        self.poll_write(cx, std, max_buf_size, |buf, max| {
            buf.copy_from_bufs(bufs, max)
        })
    }

    /// Waits for what is in flight; the error of a write that failed (now or earlier).
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(e) = self.last_write_err.take() {
            return Poll::Ready(Err(e));
        }
        match ready!(self.poll_inflight(cx))? {
            Some(Operation::Write(res)) => Poll::Ready(res),
            _ => Poll::Ready(Ok(())),
        }
    }

    /// Waits for what is in flight, keeping a write error for later (before an operation
    /// that is not a write: `sync_all`, `set_len`, `into_std`, ...).
    pub(super) fn poll_complete_inflight(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Err(e) = ready!(self.poll_flush(cx)) {
            self.keep_write_err(e);
        }
        Poll::Ready(())
    }

    /// Starts a seek to `pos` (tokio's `start_seek`); an error if an operation is in flight.
    pub(super) fn start_seek(&mut self, std: &Arc<StdFile>, mut pos: SeekFrom) -> io::Result<()> {
        if self.idle_buf().is_none() {
            return Err(io::Error::other(
                "another file operation is in flight: call poll_complete before start_seek",
            ));
        }
        let target = pos;
        let mut buf = self.take_buf();
        // The file is ahead of the reader by the unread bytes, which the seek drops.
        let mut back = None;
        if !buf.is_empty() {
            let n = buf.discard_read();
            match &mut pos {
                SeekFrom::Current(offset) => match offset.checked_add(n) {
                    Some(o) => *offset = o,
                    None => back = Some(SeekFrom::Current(n)),
                },
                // Absolute targets do not depend on where the file is.
                SeekFrom::Start(_) | SeekFrom::End(_) => {}
            }
        }
        let std = std.clone();
        let handle = POOL.spawn(move || {
            let res = match back {
                Some(back) => (&*std).seek(back).and_then(|_| (&*std).seek(pos)),
                None => (&*std).seek(pos),
            };
            (Operation::Seek(res), buf)
        });
        match handle {
            Ok(handle) => {
                self.state = State::Busy(handle);
                self.seeking = Some(target);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Waits for the seek in flight and returns where it went (tokio's `poll_complete`);
    /// with none in flight, the position of the latest seek.
    #[cfg(feature = "tokio-io")]
    pub(super) fn poll_complete(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        loop {
            match ready!(self.poll_inflight(cx))? {
                None => return Poll::Ready(Ok(self.pos)),
                Some(Operation::Seek(res)) => {
                    self.seeking = None;
                    return Poll::Ready(res);
                }
                Some(Operation::Write(Err(e))) => self.keep_write_err(e),
                Some(_) => {}
            }
        }
    }

    /// Seeks to `pos` after what is in flight, in one call (futures-io's `poll_seek`).
    pub(super) fn poll_seek(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        pos: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        loop {
            if self.idle_buf().is_some() {
                self.start_seek(std, pos)?;
            }
            let mine = self.seeking == Some(pos);
            match ready!(self.poll_inflight(cx))? {
                Some(Operation::Seek(res)) => {
                    self.seeking = None;
                    if mine {
                        return Poll::Ready(res);
                    }
                }
                Some(Operation::Write(Err(e))) => self.keep_write_err(e),
                _ => {}
            }
        }
    }

    /// Takes the idle buffer for an operation the caller runs itself (`set_len`), after
    /// [`Inner::poll_complete_inflight`]; how far back the file must move first for the
    /// unread read-ahead, if any.
    pub(super) fn take_for_op(&mut self) -> (Buf, Option<SeekFrom>) {
        let mut buf = self.take_buf();
        let back = (!buf.is_empty()).then(|| SeekFrom::Current(buf.discard_read()));
        (buf, back)
    }

    /// Makes `handle`, the caller's own operation on the buffer from
    /// [`Inner::take_for_op`], the one in flight.
    pub(super) fn start(&mut self, handle: JoinHandle<(Operation, Buf)>) {
        self.state = State::Busy(handle);
    }
}
