//! One key-value connection's loop, and the accept loop that starts one per client, with
//! their [`Settings`]: the parser's bounds and the output limit.
//!
//! ```no_run
//! # async fn f() -> std::io::Result<()> {
//! use examples_common::kv::{serve_with, Settings, Store};
//! let listener = spinpark::net::TcpListener::bind("127.0.0.1:6379").await?;
//! let settings = Settings { max_output: 16 << 20, ..Settings::DEFAULT };
//! serve_with(listener, Store::new(), settings).await
//! # }
//! ```
//!
//! How: a connection reads into a buffer, runs every complete command in it in order, and
//! queues their replies in its output (`output.rs`), which writes them with one write once
//! the buffer holds no more complete requests (or sooner, if they pass
//! [`FLUSH_AT`](super::FLUSH_AT) bytes or the output limit). Command errors are replies; a
//! protocol error is answered, then only that connection is closed; so is a reply larger
//! than the output limit, answered `-ERR` in its place. `QUIT` is answered `+OK` and closes
//! the connection; an HTTP request (`POST`, `Host:`) closes it without a reply, as Redis
//! does.

use std::io;
use std::time::Instant;

use futures_util::io::{AsyncReadExt, AsyncWriteExt};

use super::output::Output;
use super::{exec_owned, Store};
use crate::log_limit::LogLimit;
use crate::resp::{Limits, Parser, Reply};

/// How much a connection reads at a time.
pub const READ_CHUNK: usize = 16 << 10;
/// A connection's read buffer returns to its normal size once idle if it grew past this.
const SHRINK_ABOVE: usize = 1 << 20;

/// The most bytes of replies a connection holds unsent by default (`--max-output`): a
/// reply larger than this is refused with `-ERR` and the connection closed. A `GET` of a
/// value this large needs a larger limit.
pub const DEFAULT_MAX_OUTPUT: usize = 64 << 20;

/// What bounds a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// The request parser's bounds.
    pub limits: Limits,
    /// The most bytes of replies held unsent; see [`DEFAULT_MAX_OUTPUT`].
    pub max_output: usize,
}

impl Settings {
    /// The parser's default bounds and [`DEFAULT_MAX_OUTPUT`].
    pub const DEFAULT: Settings = Settings {
        limits: Limits::DEFAULT,
        max_output: DEFAULT_MAX_OUTPUT,
    };
}

impl Default for Settings {
    fn default() -> Self {
        Settings::DEFAULT
    }
}

/// What a parsed request means for its connection, before it is run.
enum Session {
    /// A command for [`exec`](super::exec).
    Command,
    /// An empty request: no reply.
    Skip,
    /// `QUIT` (any arguments, any case): `+OK`, then the connection is closed and whatever
    /// follows it is ignored.
    Quit,
    /// `POST` or `Host:` as a command name: an HTTP request sent to the Redis port (a browser
    /// tricked into posting to it, a cross-protocol attack); the connection is closed without
    /// a reply, as Redis does.
    Refuse,
}

impl Session {
    fn of(args: &[Vec<u8>]) -> Session {
        let Some(name) = args.first() else {
            return Session::Skip;
        };
        if name.eq_ignore_ascii_case(b"quit") {
            Session::Quit
        } else if name.eq_ignore_ascii_case(b"post") || name.eq_ignore_ascii_case(b"host:") {
            Session::Refuse
        } else {
            Session::Command
        }
    }
}

/// Serves one connection with the default [`Settings`] until the peer closes it or sends
/// `QUIT` (`Ok`), or sends malformed input (an `InvalidData` error, after the
/// `-ERR Protocol error: ...` reply has been sent), asks for a reply over the output limit
/// (`InvalidData`, after an `-ERR` reply) or sends an HTTP request (`InvalidData`, without a
/// reply).
pub async fn serve_conn<S>(stream: S, store: Store) -> io::Result<()>
where
    S: futures_io::AsyncRead + futures_io::AsyncWrite + Unpin,
{
    serve_conn_with(stream, store, Settings::DEFAULT).await
}

/// [`serve_conn`] with other settings.
pub async fn serve_conn_with<S>(mut stream: S, store: Store, settings: Settings) -> io::Result<()>
where
    S: futures_io::AsyncRead + futures_io::AsyncWrite + Unpin,
{
    let r = serve_requests(&mut stream, &store, settings).await;
    if r.is_err() {
        // Send FIN now (after whatever error reply was written); dropping the stream closes it.
        let _ = stream.close().await;
    }
    r
}

/// The loop of [`serve_conn_with`]; an error ends the connection.
async fn serve_requests<S>(stream: &mut S, store: &Store, settings: Settings) -> io::Result<()>
where
    S: futures_io::AsyncRead + futures_io::AsyncWrite + Unpin,
{
    let mut parser = Parser::with_limits(settings.limits);
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut out = Output::new(settings.max_output);
    loop {
        let filled = read_window(&mut buf, parser.needs());
        let n = match stream.read(&mut buf[filled..]).await {
            Ok(n) => n,
            Err(e) => {
                buf.truncate(filled);
                return Err(e);
            }
        };
        buf.truncate(filled + n);
        if n == 0 {
            return Ok(()); // The peer closed; an unfinished request is dropped.
        }
        // Run every complete request in the buffer, in order.
        let mut start = 0;
        let failed = loop {
            match parser.parse(&buf[start..]) {
                Ok(Some((args, used))) => {
                    start += used;
                    match Session::of(&args) {
                        Session::Command => {
                            let reply = exec_owned(store, args, Instant::now());
                            out.add(reply, stream).await?;
                        }
                        Session::Skip => {}
                        Session::Quit => {
                            out.add_short(&Reply::ok());
                            out.flush(stream).await?;
                            let _ = stream.close().await;
                            return Ok(());
                        }
                        Session::Refuse => {
                            // As Redis: the replies still waiting are dropped too.
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                "an HTTP request on the Redis port (POST or Host:): \
                                 closed without a reply, as Redis does",
                            ));
                        }
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        buf.drain(..start);
        if let Some(e) = failed {
            out.add_short(&Reply::err(&e));
            out.flush(stream).await?;
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
        out.flush(stream).await?;
        if buf.is_empty() && buf.capacity() > SHRINK_ABOVE {
            buf = Vec::with_capacity(READ_CHUNK);
        }
    }
}

/// Makes room at the end of a connection's read buffer for the next read (zeroed bytes past
/// the data) and returns where it starts. `needs` is [`Parser::needs`]: inside a bulk string
/// the read goes no further than its end, and the buffer grows towards it by doubling (the
/// length is only a client's claim: no faster than the bytes arrive), so that it ends at the
/// request's size instead of doubling past it.
///
/// ```
/// let mut buf = Vec::new();
/// let start = examples_common::kv::read_window(&mut buf, None);
/// assert_eq!((start, buf.len()), (0, examples_common::kv::READ_CHUNK));
/// ```
pub fn read_window(buf: &mut Vec<u8>, needs: Option<usize>) -> usize {
    let filled = buf.len();
    let mut chunk = READ_CHUNK;
    if let Some(need) = needs.filter(|&need| need > filled) {
        chunk = chunk.min(need - filled);
        if buf.capacity() < filled + chunk {
            let target = need.min(2 * filled.max(READ_CHUNK));
            buf.reserve_exact(target - filled);
        }
    }
    buf.resize(filled + chunk, 0);
    filled
}

/// [`serve_with`] with the default [`Settings`].
pub async fn serve(listener: spinpark::net::TcpListener, store: Store) -> io::Result<()> {
    serve_with(listener, store, Settings::DEFAULT).await
}

/// Accepts connections forever, serving each with `settings` on a task of its own with
/// `TCP_NODELAY`. Returns only if accepting fails for a reason that is not about one
/// connection (the listener already waits out running out of descriptors).
/// Per-connection errors print at most 10 lines a second, then a count.
pub async fn serve_with(
    listener: spinpark::net::TcpListener,
    store: Store,
    settings: Settings,
) -> io::Result<()> {
    static CONN_ERRORS: LogLimit = LogLimit::new(10);
    loop {
        let (stream, peer) = listener.accept().await?;
        if let Err(e) = stream.set_nodelay(true) {
            CONN_ERRORS.log(format_args!("kv_server: TCP_NODELAY for {peer}: {e}"));
        }
        let store = store.clone();
        spinpark::spawn(async move {
            if let Err(e) = serve_conn_with(stream, store, settings).await {
                CONN_ERRORS.log(format_args!(
                    "kv_server: closed the connection from {peer}: {e}"
                ));
            }
        });
    }
}
