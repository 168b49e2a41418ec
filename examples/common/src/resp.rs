//! RESP2, the Redis wire protocol: the request parser of the key-value example, its replies,
//! and the little a client needs (encoding a command, decoding a reply).
//!
//! A request is either an array of bulk strings (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) or an inline
//! command, a text line split on whitespace (`GET k\r\n`). [`Parser`] reads requests from the
//! front of a byte buffer as they arrive: it returns `None` until a whole request is there and
//! remembers how far it got, so a large request that trickles in is not re-scanned from its
//! start on every read. Every length a client declares is checked against [`Limits`] before
//! anything is buffered for it; malformed input is a [`ProtocolError`], after which the server
//! answers `-ERR Protocol error: ...` and closes that connection.

use std::fmt;
use std::io::Write;
use std::sync::Arc;

/// The largest bulk string a request may declare (Redis's `proto-max-bulk-len` default).
pub const MAX_BULK_LEN: usize = 512 << 20;
/// The most elements a request array may declare: Redis 6's limit (Redis 7 allows 2^31-1),
/// since every element costs a `Vec` before its data arrives.
pub const MAX_ARRAY_LEN: usize = 1 << 20;
/// The longest inline command line, without its line end.
pub const MAX_INLINE_LEN: usize = 64 << 10;
/// The most bytes one request may take on the wire, headers included (Redis's default
/// `client-query-buffer-limit`); without it, `MAX_ARRAY_LEN` bulks of `MAX_BULK_LEN` bytes
/// could make a connection buffer 512 TiB.
pub const MAX_REQUEST_LEN: usize = 1 << 30;
/// The longest `*N` or `$N` header line: a sign and 19 digits fit, anything longer cannot be a
/// valid length.
const MAX_COUNT_LINE: usize = 32;

/// The bounds a [`Parser`] enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest bulk string.
    pub max_bulk: usize,
    /// The most elements in a request array.
    pub max_array: usize,
    /// The longest inline line (bytes before the `\n`).
    pub max_inline: usize,
    /// The most bytes one request may take.
    pub max_request: usize,
}

impl Limits {
    /// The server's bounds: the constants above.
    pub const DEFAULT: Limits = Limits {
        max_bulk: MAX_BULK_LEN,
        max_array: MAX_ARRAY_LEN,
        max_inline: MAX_INLINE_LEN,
        max_request: MAX_REQUEST_LEN,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Malformed input; the message is what follows `Protocol error: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn new(msg: impl Into<String>) -> ProtocolError {
        ProtocolError(msg.into())
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Protocol error: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

/// A command: its name and arguments, as sent. Empty for an empty request (a blank inline
/// line or `*0`), which the server skips without a reply, as Redis does.
pub type Args = Vec<Vec<u8>>;

/// A streaming request parser.
///
/// Call [`Parser::parse`] with the unconsumed bytes of a connection. After it returns
/// `Ok(None)` (incomplete), call it again with the same bytes plus whatever arrived since: it
/// resumes where it stopped. After `Ok(Some((args, n)))`, drop the first `n` bytes before the
/// next call. After an error the connection is unusable.
#[derive(Debug, Default)]
pub struct Parser {
    limits: Limits,
    partial: Option<Partial>,
    /// The buffer length the partial request needs before the parser can move on, when it is
    /// inside a bulk whose length it has read.
    needs: Option<usize>,
}

/// An array request whose header has been read but not all of its elements.
#[derive(Debug)]
struct Partial {
    args: Args,
    want: usize,
    /// Where the next element starts.
    pos: usize,
}

impl Parser {
    /// A parser with the default [`Limits`].
    pub fn new() -> Parser {
        Parser::with_limits(Limits::DEFAULT)
    }

    /// A parser with the given bounds.
    pub fn with_limits(limits: Limits) -> Parser {
        Parser {
            limits,
            partial: None,
            needs: None,
        }
    }

    /// After `Ok(None)`: the buffer length the request needs before the parser can move on,
    /// if it knows (it is inside a bulk string whose length it has read). A reader can size
    /// its buffer to it instead of doubling past it; the length is only a client's claim, so
    /// grow towards it no faster than the bytes arrive.
    pub fn needs(&self) -> Option<usize> {
        self.needs
    }

    /// The heap bytes the parser holds for a partial request (its arguments so far), for
    /// tests of the memory bound.
    pub fn buffered(&self) -> usize {
        self.partial.as_ref().map_or(0, |p| {
            p.args.capacity() * std::mem::size_of::<Vec<u8>>()
                + p.args.iter().map(Vec::capacity).sum::<usize>()
        })
    }

    /// Parses the request at the front of `buf`: `Ok(Some((args, consumed)))` when it is
    /// complete, `Ok(None)` when more bytes are needed.
    pub fn parse(&mut self, buf: &[u8]) -> Result<Option<(Args, usize)>, ProtocolError> {
        let lim = self.limits;
        self.needs = None;
        if self.partial.is_none() {
            match buf.first() {
                None => return Ok(None),
                Some(b'*') => {}
                Some(_) => return parse_inline(buf, lim.max_inline),
            }
            let Some((line, next)) = header_line(buf, 1, "mbulk count")? else {
                return Ok(None);
            };
            let n = parse_i64(line)
                .filter(|&n| n <= 0 || n as u64 <= lim.max_array as u64)
                .ok_or_else(|| ProtocolError::new("invalid multibulk length"))?;
            // `*0`, and `*-1` (a null array) or any other count below zero, are skipped
            // without a reply, as Redis does.
            let Ok(n) = usize::try_from(n) else {
                return Ok(Some((Vec::new(), next)));
            };
            if n == 0 {
                return Ok(Some((Vec::new(), next)));
            }
            self.partial = Some(Partial {
                // The declared count is only a claim: do not reserve a million slots for it.
                args: Vec::with_capacity(n.min(64)),
                want: n,
                pos: next,
            });
        }
        let p = self.partial.as_mut().expect("a partial request");
        while p.args.len() < p.want {
            let Some(&kind) = buf.get(p.pos) else {
                return Ok(None);
            };
            if kind != b'$' {
                return Err(ProtocolError(format!(
                    "expected '$', got '{}'",
                    (kind as char).escape_default()
                )));
            }
            let Some((line, data)) = header_line(buf, p.pos + 1, "bulk count")? else {
                return Ok(None);
            };
            let len = parse_i64(line)
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n <= lim.max_bulk)
                .ok_or_else(|| ProtocolError::new("invalid bulk length"))?;
            let end = data + len;
            if end + 2 > lim.max_request {
                return Err(ProtocolError::new("request too large"));
            }
            if buf.len() < end + 2 {
                self.needs = Some(end + 2);
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(ProtocolError::new("expected CRLF after bulk data"));
            }
            p.args.push(buf[data..end].to_vec());
            p.pos = end + 2;
        }
        let p = self.partial.take().expect("a partial request");
        Ok(Some((p.args, p.pos)))
    }
}

/// Parses one request from a buffer that starts at a request boundary, with the default
/// limits (a fresh [`Parser`]; it re-reads an incomplete request from its start next time).
pub fn parse(buf: &[u8]) -> Result<Option<(Args, usize)>, ProtocolError> {
    Parser::new().parse(buf)
}

/// The `*N` or `$N` line whose digits start at `start`: its digits and where the next line
/// starts (`what` names it in errors, in Redis's words: `mbulk count`, `bulk count`). The line must end with CRLF; one that has not ended within [`MAX_COUNT_LINE`]
/// bytes is refused (Redis waits for 64 KiB first, but no valid count is that long). A line
/// that has ended is returned whatever its length, so that a long one is refused by the
/// caller as not a valid count, with Redis's words.
fn header_line<'a>(
    buf: &'a [u8],
    start: usize,
    what: &str,
) -> Result<Option<(&'a [u8], usize)>, ProtocolError> {
    let rest = &buf[start.min(buf.len())..];
    let Some(i) = rest.iter().position(|&b| b == b'\r' || b == b'\n') else {
        if rest.len() > MAX_COUNT_LINE {
            return Err(ProtocolError(format!("too big {what} string")));
        }
        return Ok(None);
    };
    match rest.get(i..i + 2) {
        Some(b"\r\n") => Ok(Some((&rest[..i], start + i + 2))),
        Some(_) => Err(ProtocolError(format!("expected CRLF after the {what}"))),
        None if rest[i] == b'\r' => Ok(None),
        None => Err(ProtocolError(format!("expected CRLF after the {what}"))),
    }
}

/// An inline command: one line, ended by `\n` (a `\r` before it is dropped), split into
/// arguments by [`split_inline`].
fn parse_inline(buf: &[u8], max: usize) -> Result<Option<(Args, usize)>, ProtocolError> {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > max {
            return Err(ProtocolError::new("too big inline request"));
        }
        return Ok(None);
    };
    if nl > max {
        return Err(ProtocolError::new("too big inline request"));
    }
    let line = &buf[..nl];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    Ok(Some((split_inline(line)?, nl + 1)))
}

/// Splits an inline command line into arguments as Redis does (its `sdssplitargs`):
///
/// * arguments are separated by blanks (space, tab, CR, LF; the blanks before an argument may
///   also be vertical tabs and form feeds);
/// * `"double quotes"` hold blanks and know the escapes `\n`, `\r`, `\t`, `\b`, `\a`,
///   `\xHH` (a byte in hex) and `\` before any other character (that character: `\"`,
///   `\\`);
/// * `'single quotes'` hold blanks and know only `\'`;
/// * a quote may start inside an argument (`ab"c d"` is `abc d`), but a closing quote must
///   be followed by a blank or the end of the line, and every quote must be closed, or the
///   line is refused with `unbalanced quotes in request`.
///
/// Unlike Redis, a NUL byte is an ordinary byte (Redis's C string functions stop at it).
///
/// ```
/// use examples_common::resp::split_inline;
/// assert_eq!(
///     split_inline(br#"SET "a b" 'it\'s' "\x41\n""#).unwrap(),
///     [&b"SET"[..], b"a b", b"it's", b"A\n"]
/// );
/// assert!(split_inline(b"SET \"unbalanced c").is_err());
/// ```
pub fn split_inline(line: &[u8]) -> Result<Args, ProtocolError> {
    fn unbalanced() -> ProtocolError {
        ProtocolError::new("unbalanced quotes in request")
    }
    // C's isspace: what may come before an argument, and after a closing quote.
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    // What ends an unquoted argument.
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    // A closing quote at `i` must be followed by a space or the end.
    let closes = |i: usize| line.get(i + 1).is_none_or(|&b| space(b));
    let hex = |b: u8| (b as char).to_digit(16);
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while line.get(i).is_some_and(|&b| space(b)) {
            i += 1;
        }
        if i == line.len() {
            return Ok(args);
        }
        let mut arg = Vec::new();
        // Inside "..." (Some(b'"')), '...' (Some(b'\'')), or neither.
        let mut quote: Option<u8> = None;
        loop {
            let Some(&b) = line.get(i) else {
                if quote.is_some() {
                    return Err(unbalanced());
                }
                break;
            };
            match quote {
                Some(b'"') => match (b, line.get(i + 1).copied()) {
                    (b'\\', Some(b'x')) => {
                        match (
                            line.get(i + 2).and_then(|&h| hex(h)),
                            line.get(i + 3).and_then(|&l| hex(l)),
                        ) {
                            (Some(h), Some(l)) => {
                                arg.push((h * 16 + l) as u8);
                                i += 3;
                            }
                            _ => {
                                arg.push(b'x');
                                i += 1;
                            }
                        }
                    }
                    (b'\\', Some(e)) => {
                        arg.push(match e {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                        i += 1;
                    }
                    (b'"', _) if !closes(i) => return Err(unbalanced()),
                    (b'"', _) => {
                        i += 1;
                        break;
                    }
                    (b, _) => arg.push(b),
                },
                Some(_) => match (b, line.get(i + 1).copied()) {
                    (b'\\', Some(b'\'')) => {
                        arg.push(b'\'');
                        i += 1;
                    }
                    (b'\'', _) if !closes(i) => return Err(unbalanced()),
                    (b'\'', _) => {
                        i += 1;
                        break;
                    }
                    (b, _) => arg.push(b),
                },
                None if blank(b) => break,
                None if b == b'"' || b == b'\'' => quote = Some(b),
                None => arg.push(b),
            }
            i += 1;
        }
        args.push(arg);
    }
}

/// Parses a decimal integer the way Redis does: an optional `-`, then digits, no `+`, no
/// spaces, no leading zeros (except `0` itself), no `-0`, within `i64`.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    match digits {
        [] => return None,
        [b'0'] => return (!neg).then_some(0),
        [b'0', ..] => return None,
        _ => {}
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        // Accumulate on the negative side so that i64::MIN fits.
        n = n.checked_mul(10)?.checked_sub(d)?;
    }
    if neg {
        Some(n)
    } else {
        n.checked_neg()
    }
}

/// A stored value or bulk reply: shared, so a GET clones a pointer under the store's lock.
/// An `Arc<Vec>` rather than an `Arc<[u8]>`: a SET moves the request's bytes in instead of
/// copying them (a 128 MiB value was held three times at once).
pub type Value = Arc<Vec<u8>>;

/// A RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+text`
    Simple(String),
    /// `-text`, e.g. `ERR syntax error`.
    Error(String),
    /// `:n`
    Integer(i64),
    /// `$len` and the bytes.
    Bulk(Value),
    /// `$-1`, the missing value. A client decodes the nil array `*-1` as this too.
    Nil,
    /// `*n` and the elements.
    Array(Vec<Reply>),
}

impl Reply {
    /// `+OK`
    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }

    /// A bulk reply holding a copy of `bytes`.
    pub fn bulk(bytes: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(Value::new(bytes.as_ref().to_vec()))
    }

    /// `-ERR msg`
    pub fn err(msg: impl fmt::Display) -> Reply {
        Reply::Error(format!("ERR {msg}"))
    }

    /// Appends the reply's wire form to `out`. Line breaks inside simple strings and errors
    /// become spaces, so that a message quoting the client's input cannot break the framing.
    pub fn encode(&self, out: &mut Vec<u8>) {
        fn line(out: &mut Vec<u8>, kind: u8, text: &str) {
            out.push(kind);
            out.extend(text.bytes().map(|b| match b {
                b'\r' | b'\n' => b' ',
                b => b,
            }));
            out.extend_from_slice(b"\r\n");
        }
        match self {
            Reply::Simple(s) => line(out, b'+', s),
            Reply::Error(s) => line(out, b'-', s),
            Reply::Integer(n) => {
                let _ = write!(out, ":{n}\r\n");
            }
            Reply::Bulk(b) => {
                let _ = write!(out, "${}\r\n", b.len());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
            Reply::Array(items) => {
                let _ = write!(out, "*{}\r\n", items.len());
                for item in items {
                    item.encode(out);
                }
            }
        }
    }

    /// The length of the reply's wire form, computed without building it (saturating at
    /// `usize::MAX`): what [`Reply::encode`] would append.
    ///
    /// ```
    /// use examples_common::resp::Reply;
    /// let r = Reply::Array(vec![Reply::bulk("abc"), Reply::Nil, Reply::Integer(-12)]);
    /// assert_eq!(r.wire_len(), r.to_bytes().len());
    /// ```
    pub fn wire_len(&self) -> usize {
        /// The digits of `n`, with its sign.
        fn digits(n: i128) -> usize {
            let sign = usize::from(n < 0);
            let mut n = n.unsigned_abs();
            let mut d = 1;
            while n >= 10 {
                n /= 10;
                d += 1;
            }
            sign + d
        }
        // A type byte, then a line and its CRLF.
        let line = |len: usize| len.saturating_add(3);
        match self {
            Reply::Simple(s) | Reply::Error(s) => line(s.len()),
            Reply::Integer(n) => line(digits(i128::from(*n))),
            Reply::Bulk(b) => line(digits(b.len() as i128)).saturating_add(b.len() + 2),
            Reply::Nil => 5,
            Reply::Array(items) => items
                .iter()
                .fold(line(digits(items.len() as i128)), |n, r| {
                    n.saturating_add(r.wire_len())
                }),
        }
    }

    /// The reply's wire form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

/// Encodes a command as a RESP array of bulk strings, the way clients send it.
pub fn encode_command<I>(args: I) -> Vec<u8>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    let args: Vec<I::Item> = args.into_iter().collect();
    let mut out = Vec::new();
    let _ = write!(out, "*{}\r\n", args.len());
    for a in &args {
        let a = a.as_ref();
        let _ = write!(out, "${}\r\n", a.len());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Decodes the reply at the front of `buf` (client side): `Ok(Some((reply, consumed)))`, or
/// `Ok(None)` if it is incomplete. It re-reads an incomplete reply from its start, which is
/// fine for a test client.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(Reply, usize)>, ProtocolError> {
    let Some(&kind) = buf.first() else {
        return Ok(None);
    };
    let Some(nl) = buf.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let line = &buf[1..nl];
    let next = nl + 2;
    let text = || String::from_utf8_lossy(line).into_owned();
    let int = || parse_i64(line).ok_or_else(|| ProtocolError(format!("bad integer {:?}", text())));
    match kind {
        b'+' => Ok(Some((Reply::Simple(text()), next))),
        b'-' => Ok(Some((Reply::Error(text()), next))),
        b':' => Ok(Some((Reply::Integer(int()?), next))),
        b'$' => match int()? {
            -1 => Ok(Some((Reply::Nil, next))),
            n if n < 0 => Err(ProtocolError(format!("bad bulk length {n}"))),
            n => {
                let end = next + n as usize;
                if buf.len() < end + 2 {
                    return Ok(None);
                }
                if &buf[end..end + 2] != b"\r\n" {
                    return Err(ProtocolError::new("bulk not followed by CRLF"));
                }
                Ok(Some((Reply::bulk(&buf[next..end]), end + 2)))
            }
        },
        b'*' => match int()? {
            -1 => Ok(Some((Reply::Nil, next))),
            n if n < 0 => Err(ProtocolError(format!("bad array length {n}"))),
            n => {
                let mut items = Vec::new();
                let mut pos = next;
                for _ in 0..n {
                    let Some((item, used)) = parse_reply(&buf[pos..])? else {
                        return Ok(None);
                    };
                    items.push(item);
                    pos += used;
                }
                Ok(Some((Reply::Array(items), pos)))
            }
        },
        other => Err(ProtocolError(format!(
            "bad reply type byte '{}'",
            (other as char).escape_default()
        ))),
    }
}
