//! The key-value example's server side: the store and the commands here, a connection's loop
//! and the accept loop in `kv/conn.rs`, its capped output in `kv/output.rs`, and the command
//! line. `examples/kv_server.rs` runs it; `tests/kv_server.rs` tests it in-process.
//!
//! ```
//! use examples_common::kv::{exec, Store};
//! use examples_common::resp::Reply;
//! let store = Store::new();
//! assert_eq!(exec(&store, &[b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()]), Reply::ok());
//! assert_eq!(exec(&store, &[b"GET".to_vec(), b"k".to_vec()]), Reply::bulk("v"));
//! ```
//!
//! The store is one `HashMap` behind a `std::sync::Mutex`, locked only inside [`exec`] and
//! never across an `.await`. Expiry is lazy: a key set with `EX`/`PX` keeps its deadline, and
//! a command that finds it past that deadline removes it and treats it as missing. Nothing
//! sweeps keys that are never touched again, so they keep their memory until overwritten.
//! What bounds a connection (its parser's limits, its output limit) is in [`Settings`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::resp::{parse_i64, Reply, Value};

mod conn;
mod output;

pub use conn::{
    read_window, serve, serve_conn, serve_conn_with, serve_with, Settings, DEFAULT_MAX_OUTPUT,
    READ_CHUNK,
};
pub use output::FLUSH_AT;

/// A stored value and its deadline, if it has one.
#[derive(Debug, Clone)]
struct Entry {
    value: Value,
    expires: Option<Instant>,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|t| now < t)
    }
}

type Map = HashMap<Vec<u8>, Entry>;

/// The shared key space. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Store {
    map: Arc<Mutex<Map>>,
}

impl Store {
    /// An empty store.
    pub fn new() -> Store {
        Store::default()
    }

    fn lock(&self) -> MutexGuard<'_, Map> {
        // Nothing panics while holding the lock; if something did, the map is still whole.
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The entry under `key` if it has not expired; an expired one is removed.
fn live<'m>(map: &'m mut Map, key: &[u8], now: Instant) -> Option<&'m mut Entry> {
    if map.get(key).is_some_and(|e| !e.live(now)) {
        map.remove(key);
    }
    map.get_mut(key)
}

const NOT_AN_INTEGER: &str = "value is not an integer or out of range";

/// Runs one command (`args` non-empty) against `store` and returns its reply.
pub fn exec(store: &Store, args: &[Vec<u8>]) -> Reply {
    exec_at(store, args, Instant::now())
}

/// [`exec`] at the time `now`, which decides expiry; tests pass their own clock. It copies
/// the arguments; the server uses [`exec_owned`], which stores values without a copy.
pub fn exec_at(store: &Store, args: &[Vec<u8>], now: Instant) -> Reply {
    exec_owned(store, args.to_vec(), now)
}

/// [`exec_at`] taking the arguments: a value being stored (SET, MSET) is moved into the store.
pub fn exec_owned(store: &Store, mut args: Vec<Vec<u8>>, now: Instant) -> Reply {
    let args = args.as_mut_slice();
    let Some(first) = args.first() else {
        return Reply::err("empty command");
    };
    let name = first.to_ascii_lowercase();
    // Arity as Redis writes it: n means exactly n words (the name included), -n at least n.
    type Handler = fn(&Store, &mut [Vec<u8>], Instant) -> Reply;
    let (arity, run): (isize, Handler) = match name.as_slice() {
        b"ping" => (-1, ping),
        b"echo" => (2, |_, a, _| Reply::bulk(&a[1])),
        b"get" => (2, get),
        b"set" => (-3, set),
        b"del" => (-2, del),
        b"exists" => (-2, exists),
        b"incr" => (2, incr),
        b"mget" => (-2, mget),
        b"mset" => (-3, mset),
        b"config" => (-2, config),
        b"command" => (-1, |_, _, _| Reply::Array(Vec::new())),
        _ => return unknown_command(args),
    };
    let n = args.len() as isize;
    if (arity > 0 && n != arity) || (arity < 0 && n < -arity) {
        return wrong_arity(&String::from_utf8_lossy(&name));
    }
    run(store, args, now)
}

fn wrong_arity(name: &str) -> Reply {
    Reply::err(format_args!(
        "wrong number of arguments for '{name}' command"
    ))
}

/// `ERR unknown command 'FOO', with args beginning with: 'a' 'b' `, quoting at most about
/// 128 bytes of the name and of the arguments.
fn unknown_command(args: &[Vec<u8>]) -> Reply {
    let clip = |b: &[u8], n: usize| String::from_utf8_lossy(&b[..b.len().min(n)]).into_owned();
    let mut quoted = String::new();
    for a in &args[1..] {
        if quoted.len() >= 128 {
            break;
        }
        quoted.push_str(&format!("'{}' ", clip(a, 128 - quoted.len())));
    }
    Reply::err(format_args!(
        "unknown command '{}', with args beginning with: {quoted}",
        clip(&args[0], 128)
    ))
}

fn ping(_: &Store, args: &mut [Vec<u8>], _: Instant) -> Reply {
    match args {
        [_] => Reply::Simple("PONG".into()),
        [_, msg] => Reply::bulk(msg),
        _ => wrong_arity("ping"),
    }
}

fn get(store: &Store, args: &mut [Vec<u8>], now: Instant) -> Reply {
    match live(&mut store.lock(), &args[1], now) {
        Some(e) => Reply::Bulk(e.value.clone()),
        None => Reply::Nil,
    }
}

/// `SET key value [NX|XX] [EX seconds|PX milliseconds|KEEPTTL]`, with Redis's rules: an option
/// may repeat (`NX NX`; the last `EX`/`PX` counts) but not meet its opposite (`NX XX`,
/// `EX 1 PX 1`, `EX 1 KEEPTTL`), and a deadline must be positive and, as Unix time in
/// milliseconds, fit in an i64.
fn set(store: &Store, args: &mut [Vec<u8>], now: Instant) -> Reply {
    enum Ttl {
        Clear,
        Keep,
        At(Instant),
    }
    let (mut nx, mut xx, mut keep) = (false, false, false);
    // The last EX or PX: whether it is EX, and its argument's index.
    let mut expire: Option<(bool, usize)> = None;
    let mut i = 3;
    while i < args.len() {
        let opt = args[i].to_ascii_lowercase();
        match opt.as_slice() {
            b"nx" if !xx => nx = true,
            b"xx" if !nx => xx = true,
            b"keepttl" if expire.is_none() => keep = true,
            b"ex" if !keep && expire.is_none_or(|(ex, _)| ex) && i + 1 < args.len() => {
                i += 1;
                expire = Some((true, i));
            }
            b"px" if !keep && expire.is_none_or(|(ex, _)| !ex) && i + 1 < args.len() => {
                i += 1;
                expire = Some((false, i));
            }
            _ => return Reply::err("syntax error"),
        }
        i += 1;
    }
    let ttl = match expire {
        None if keep => Ttl::Keep,
        None => Ttl::Clear,
        Some((ex, at)) => match expire_in(&args[at], ex, now) {
            Ok(deadline) => Ttl::At(deadline),
            Err(reply) => return reply,
        },
    };
    let only_if = (nx || xx).then_some(nx);
    let value = Value::new(std::mem::take(&mut args[2]));
    let mut map = store.lock();
    let old = live(&mut map, &args[1], now);
    if only_if.is_some_and(|nx| nx == old.is_some()) {
        return Reply::Nil;
    }
    let expires = match ttl {
        Ttl::Clear => None,
        Ttl::Keep => old.and_then(|e| e.expires),
        Ttl::At(t) => Some(t),
    };
    map.insert(args[1].clone(), Entry { value, expires });
    Reply::ok()
}

/// The deadline of `SET ... EX|PX n` (`ex`: seconds), or the error reply Redis gives: not an
/// integer; not positive, or past what Unix time in milliseconds as an i64 can hold.
fn expire_in(arg: &[u8], ex: bool, now: Instant) -> Result<Instant, Reply> {
    let invalid = || Reply::err("invalid expire time in 'set' command");
    let n = parse_i64(arg).ok_or_else(|| Reply::err(NOT_AN_INTEGER))?;
    let ms = if ex { n.checked_mul(1000) } else { Some(n) };
    let ms = ms.filter(|&ms| ms > 0).ok_or_else(invalid)?;
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    ms.checked_add(unix_ms).ok_or_else(invalid)?;
    now.checked_add(Duration::from_millis(ms as u64))
        .ok_or_else(invalid)
}

fn del(store: &Store, args: &mut [Vec<u8>], now: Instant) -> Reply {
    let mut map = store.lock();
    let n = args[1..]
        .iter()
        .filter(|k| map.remove(k.as_slice()).is_some_and(|e| e.live(now)))
        .count();
    Reply::Integer(n as i64)
}

/// Counts the keys that exist; a key named twice counts twice, as in Redis.
fn exists(store: &Store, args: &mut [Vec<u8>], now: Instant) -> Reply {
    let mut map = store.lock();
    let n = args[1..]
        .iter()
        .filter(|k| live(&mut map, k, now).is_some())
        .count();
    Reply::Integer(n as i64)
}

/// Adds one to the integer under the key (a missing key counts as 0); keeps its deadline.
fn incr(store: &Store, args: &mut [Vec<u8>], now: Instant) -> Reply {
    let mut map = store.lock();
    let (current, expires) = match live(&mut map, &args[1], now) {
        None => (0, None),
        Some(e) => match parse_i64(&e.value) {
            Some(n) => (n, e.expires),
            None => return Reply::err(NOT_AN_INTEGER),
        },
    };
    let Some(n) = current.checked_add(1) else {
        return Reply::err("increment or decrement would overflow");
    };
    let value = Value::new(n.to_string().into_bytes());
    map.insert(args[1].clone(), Entry { value, expires });
    Reply::Integer(n)
}

fn mget(store: &Store, args: &mut [Vec<u8>], now: Instant) -> Reply {
    let mut map = store.lock();
    let values = args[1..]
        .iter()
        .map(|k| match live(&mut map, k, now) {
            Some(e) => Reply::Bulk(e.value.clone()),
            None => Reply::Nil,
        })
        .collect();
    Reply::Array(values)
}

/// `MSET key value [key value ...]`: sets all of them at once, clearing their deadlines.
fn mset(store: &Store, args: &mut [Vec<u8>], _: Instant) -> Reply {
    if args.len() % 2 == 0 {
        return wrong_arity("mset");
    }
    let pairs: Vec<(Vec<u8>, Value)> = args[1..]
        .chunks_mut(2)
        .map(|kv| (kv[0].clone(), Value::new(std::mem::take(&mut kv[1]))))
        .collect();
    let mut map = store.lock();
    for (key, value) in pairs {
        map.insert(
            key,
            Entry {
                value,
                expires: None,
            },
        );
    }
    Reply::ok()
}

/// `CONFIG GET pattern...` answers an empty array: there is no configuration to show.
fn config(_: &Store, args: &mut [Vec<u8>], _: Instant) -> Reply {
    let sub = args[1].to_ascii_lowercase();
    match sub.as_slice() {
        b"get" if args.len() < 3 => wrong_arity("config|get"),
        b"get" => Reply::Array(Vec::new()),
        _ => Reply::err(format_args!(
            "unknown subcommand '{}'. Try CONFIG HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

/// The address the server listens on by default: Redis's port.
pub const DEFAULT_ADDR: &str = "127.0.0.1:6379";

/// The command line (`kv_server --help` prints it).
///
/// ```
/// use clap::Parser;
/// let opts = examples_common::kv::Options::try_parse_from(["kv_server", "--workers", "3"]).unwrap();
/// assert_eq!((opts.addr.as_str(), opts.runtime.workers), ("127.0.0.1:6379", Some(3)));
/// assert_eq!(opts.settings(), examples_common::kv::Settings::DEFAULT);
/// ```
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "kv_server",
    about = "An in-memory key-value server speaking the Redis protocol (RESP2), on spinpark"
)]
pub struct Options {
    /// Where to listen
    #[arg(long, value_name = "HOST:PORT", default_value = DEFAULT_ADDR)]
    pub addr: String,
    /// The most bytes of replies a connection may hold unsent (e.g. 64MiB): a reply larger
    /// than this (a GET of a larger value, an MGET adding up to more) is answered with an
    /// error and its connection closed; pipelined replies wait for the client to read instead
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = crate::size::parse)]
    pub max_output: usize,
    /// The runtime's flags.
    #[command(flatten)]
    pub runtime: crate::args::RuntimeArgs,
}

impl Options {
    /// The connection settings these flags set.
    ///
    /// ```
    /// use clap::Parser;
    /// let opts = examples_common::kv::Options::try_parse_from(["kv_server", "--max-output", "1MiB"]).unwrap();
    /// assert_eq!(opts.settings().max_output, 1 << 20);
    /// ```
    pub fn settings(&self) -> Settings {
        Settings {
            max_output: self.max_output,
            ..Settings::DEFAULT
        }
    }
}
