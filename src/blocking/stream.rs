//! [`Blocking`]: a std reader or writer (the standard streams) whose every read, write and
//! flush runs on the blocking pool, one at a time, through a [`Buf`].
//!
//! ```text
//!            read: fill the buffer (at most min(wanted, 2 MiB))
//!            write: copy up to 2 MiB in, write it all out     flush: flush the std handle
//!   Idle(handle, buf) -------------------------------------------------> Busy(join handle)
//!       ^                                                                      |
//!       +------ the closure returns (result, buf, handle) ---------------------+
//! ```
//!
//! How it answers each caller (`io::stdio` goes through these):
//!
//! * read: serve what an earlier read left in the buffer; else move the handle and the
//!   buffer into a closure that reads at most `min(wanted, 2 MiB)` bytes, and wait for it.
//! * write: wait for what is in flight (reporting its error, if it failed); copy up to
//!   2 MiB of the caller's bytes into the buffer, start writing all of them, and return the
//!   count at once. Mandatory: refused once the runtime shuts down, when the pool might drop
//!   the closure, so that bytes the caller was told were taken are not lost unheard.
//! * flush: wait for what is in flight; if anything was written since the last flush, flush
//!   the std handle (std's stdout holds a line buffer) on the pool and wait for that.
//!
//! The std handles are cheap references to process-wide streams, so a handle lost with a
//! closure the pool dropped or that panicked (a `JoinError`) is made again: the stream stays
//! usable, and the caller gets the error.

use std::future::Future;
use std::io::{self, IoSlice, Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use spinpark_executor::JoinHandle;

use super::{Buf, Pool, DEFAULT_MAX_BUF_SIZE};

/// What a closure on the pool gives back: its result, the buffer and the handle.
type Done<T> = (io::Result<usize>, Buf, T);

#[derive(Debug)]
enum State<T> {
    Idle(T, Buf),
    Busy(JoinHandle<Done<T>>),
    /// Only while a method moves the handle out.
    Moving,
}

/// A std handle driven on the blocking pool; see the module docs.
#[derive(Debug)]
pub(crate) struct Blocking<T> {
    state: State<T>,
    /// Something was written since the last flush.
    need_flush: bool,
    pool: Pool,
    /// Makes the handle again when a closure that held it is lost.
    make: fn() -> T,
}

impl<T: Send + 'static> Blocking<T> {
    /// A handle made by `make`, run on `pool`.
    pub(crate) fn new(pool: Pool, make: fn() -> T) -> Blocking<T> {
        Blocking {
            state: State::Idle(make(), Buf::default()),
            need_flush: false,
            pool,
            make,
        }
    }

    /// Waits for the operation in flight, if any, and returns its result (`Ok(0)` when
    /// idle); the state is `Idle` afterwards.
    fn poll_inflight(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let State::Busy(handle) = &mut self.state else {
            return Poll::Ready(Ok(0));
        };
        match ready!(Pin::new(handle).poll(cx)) {
            Ok((res, buf, std)) => {
                self.state = State::Idle(std, buf);
                Poll::Ready(res)
            }
            Err(e) => {
                self.state = State::Idle((self.make)(), Buf::default());
                Poll::Ready(Err(if e.is_cancelled() {
                    (self.pool.refused)()
                } else {
                    e.into()
                }))
            }
        }
    }

    /// Moves the idle handle and buffer into `op` on the pool (refused when `mandatory` and
    /// the runtime shuts down); on an error nothing changes.
    fn start<F>(&mut self, mandatory: bool, op: F) -> io::Result<()>
    where
        F: FnOnce(&mut T, &mut Buf) -> io::Result<usize> + Send + 'static,
    {
        let handle = if mandatory {
            self.pool.current_mandatory()?
        } else {
            self.pool.current()?
        };
        let State::Idle(mut std, mut buf) = std::mem::replace(&mut self.state, State::Moving)
        else {
            unreachable!("start is called when idle");
        };
        self.state = State::Busy(handle.spawn_blocking(move || {
            let res = op(&mut std, &mut buf);
            (res, buf, std)
        }));
        Ok(())
    }

    /// The buffer, when no operation is in flight.
    fn idle_buf(&mut self) -> Option<&mut Buf> {
        match &mut self.state {
            State::Idle(_, buf) => Some(buf),
            _ => None,
        }
    }
}

impl<T: Read + Send + 'static> Blocking<T> {
    /// Ready once the buffer holds unread bytes or a read just found none (end of input),
    /// or at once when `want` is 0; the caller then copies out of [`Blocking::read_buf`].
    pub(crate) fn poll_fill(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<io::Result<()>> {
        if want == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            match self.idle_buf() {
                Some(buf) if !buf.is_empty() => return Poll::Ready(Ok(())),
                Some(_) => {
                    let len = want.min(DEFAULT_MAX_BUF_SIZE);
                    self.start(false, move |std, buf| buf.read_from(std, len))?;
                }
                None => {
                    // A read's count is in the buffer; only its error matters here.
                    ready!(self.poll_inflight(cx))?;
                    return Poll::Ready(Ok(()));
                }
            }
        }
    }

    /// What was read and not yet taken, once [`Blocking::poll_fill`] is ready (empty at
    /// the end of input).
    pub(crate) fn read_buf(&mut self) -> Option<&mut Buf> {
        self.idle_buf()
    }
}

impl<T: Write + Send + 'static> Blocking<T> {
    /// Copies up to 2 MiB into the buffer with `fill` and starts writing them; see the
    /// module docs.
    fn poll_write_with(
        &mut self,
        cx: &mut Context<'_>,
        fill: impl FnOnce(&mut Buf) -> usize,
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_inflight(cx))?;
        let Some(buf) = self.idle_buf() else {
            unreachable!("idle after poll_inflight");
        };
        let n = fill(buf);
        if n == 0 {
            return Poll::Ready(Ok(0));
        }
        if let Err(e) = self.start(true, |std, buf| buf.write_to(std).map(|()| 0)) {
            // Nothing was taken: the caller may try again.
            if let Some(buf) = self.idle_buf() {
                buf.consume(n);
            }
            return Poll::Ready(Err(e));
        }
        self.need_flush = true;
        Poll::Ready(Ok(n))
    }

    /// Writes up to 2 MiB of `src` in the background; see the module docs.
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_with(cx, |buf| buf.copy_from(src, DEFAULT_MAX_BUF_SIZE))
    }

    /// [`Blocking::poll_write`] of `bufs`, in order.
    pub(crate) fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_with(cx, |buf| buf.copy_from_bufs(bufs, DEFAULT_MAX_BUF_SIZE))
    }

    /// Waits for the write in flight, then flushes the std handle if anything was written
    /// since the last flush.
    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_inflight(cx))?;
            if !self.need_flush {
                return Poll::Ready(Ok(()));
            }
            self.start(true, |std, _| std.flush().map(|()| 0))?;
            self.need_flush = false;
        }
    }
}
