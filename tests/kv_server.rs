//! The key-value example (`examples/kv_server.rs`): its RESP parser, its commands, and the
//! server itself, run in-process on a spinpark runtime and driven over TCP by a small RESP
//! client written here.
//!
//! Every network test runs under a 30 s `spinpark::time::timeout` and panics if it runs out,
//! so a hung server fails the test instead of hanging it. Nothing asserts on timing: the one
//! test that sleeps (expiry) only waits longer than a 1 ms deadline.

use examples_common::{kv, resp};

use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::io::{AsyncReadExt, AsyncWriteExt};
use spinpark::net::{TcpListener, TcpStream};
use spinpark::time::timeout;

use kv::{exec_at, Store};
use resp::{encode_command, parse_i64, parse_reply, Limits, Parser, ProtocolError, Reply};

const LIMIT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// Harness: a server on 127.0.0.1:0 and a RESP client.

/// Runs `test` on a fresh two-worker runtime that also runs a server on an ephemeral port.
fn with_server<F, Fut>(test: F)
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: Future<Output = ()>,
{
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(kv::serve(listener, Store::new()));
        timeout(LIMIT, test(addr))
            .await
            .unwrap_or_else(|_| panic!("the test did not finish within {LIMIT:?}"));
    });
}

struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).unwrap();
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write");
    }

    async fn send(&mut self, args: &[&[u8]]) {
        self.send_raw(&encode_command(args)).await;
    }

    /// Reads more bytes; false at end of stream.
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 << 10];
        let n = self.stream.read(&mut chunk).await.expect("read");
        self.buf.extend_from_slice(&chunk[..n]);
        n > 0
    }

    async fn recv(&mut self) -> Reply {
        loop {
            match parse_reply(&self.buf) {
                Ok(Some((reply, used))) => {
                    self.buf.drain(..used);
                    return reply;
                }
                Ok(None) => {}
                Err(e) => panic!("the server sent a bad reply: {e}; buffer {:?}", self.buf),
            }
            if !self.fill().await {
                panic!("the server closed the connection; unparsed {:?}", self.buf);
            }
        }
    }

    /// Reads exactly `n` bytes of raw reply.
    async fn recv_raw(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            if !self.fill().await {
                panic!("closed after {:?}, wanted {n} bytes", self.buf);
            }
        }
        self.buf.drain(..n).collect()
    }

    async fn call(&mut self, args: &[&[u8]]) -> Reply {
        self.send(args).await;
        self.recv().await
    }

    /// A command written as words, e.g. `cmd("SET k v")`.
    async fn cmd(&mut self, line: &str) -> Reply {
        let words: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        self.call(&words).await
    }

    /// Asserts that the server closed the connection with nothing more to say.
    async fn expect_eof(&mut self) {
        let mut chunk = [0u8; 1024];
        let n = self.stream.read(&mut chunk).await.expect("read at close");
        assert_eq!(
            (n, self.buf.as_slice()),
            (0, &[][..]),
            "expected end of stream, got {:?}",
            &chunk[..n]
        );
    }
}

fn simple(s: &str) -> Reply {
    Reply::Simple(s.into())
}

fn ok() -> Reply {
    Reply::ok()
}

fn bulk(b: impl AsRef<[u8]>) -> Reply {
    Reply::bulk(b)
}

fn int(n: i64) -> Reply {
    Reply::Integer(n)
}

fn err(msg: &str) -> Reply {
    Reply::Error(msg.into())
}

fn empty_array() -> Reply {
    Reply::Array(Vec::new())
}

fn assert_protocol_error(reply: &Reply) {
    match reply {
        Reply::Error(e) if e.starts_with("ERR Protocol error: ") => {}
        other => panic!("expected -ERR Protocol error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Commands over TCP.

#[test]
fn ping_and_echo() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        assert_eq!(c.cmd("PING").await, simple("PONG"));
        assert_eq!(c.cmd("ping hello").await, bulk("hello"));
        assert_eq!(
            c.cmd("PING a b").await,
            err("ERR wrong number of arguments for 'ping' command")
        );
        assert_eq!(c.call(&[b"EcHo", b"a b\r\nc"]).await, bulk("a b\r\nc"));
        assert_eq!(
            c.cmd("ECHO").await,
            err("ERR wrong number of arguments for 'echo' command")
        );
    });
}

#[test]
fn set_get_binary_safe() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        let value: &[u8] = b"line one\r\nline two\r\n\0\xff$-1\r\n*3\r\n";
        let key: &[u8] = b"k\r\ney";
        assert_eq!(c.call(&[b"SET", key, value]).await, ok());
        assert_eq!(c.call(&[b"GET", key]).await, bulk(value));
        assert_eq!(c.call(&[b"set", b"empty", b""]).await, ok());
        assert_eq!(c.cmd("get empty").await, bulk(""));
        assert_eq!(c.cmd("GET missing").await, Reply::Nil);
        assert_eq!(c.cmd("SET k first").await, ok());
        assert_eq!(c.cmd("SET k second").await, ok());
        assert_eq!(c.cmd("GET k").await, bulk("second"));
        assert_eq!(
            c.cmd("GET a b").await,
            err("ERR wrong number of arguments for 'get' command")
        );
    });
}

#[test]
fn exact_wire_format() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        let cases: [(&str, &[u8]); 8] = [
            ("GET missing", b"$-1\r\n"),
            ("SET k v", b"+OK\r\n"),
            ("GET k", b"$1\r\nv\r\n"),
            ("EXISTS k", b":1\r\n"),
            ("MGET k nope", b"*2\r\n$1\r\nv\r\n$-1\r\n"),
            ("CONFIG GET save", b"*0\r\n"),
            ("COMMAND DOCS", b"*0\r\n"),
            (
                "GET",
                b"-ERR wrong number of arguments for 'get' command\r\n",
            ),
        ];
        for (line, want) in cases {
            let words: Vec<&str> = line.split_whitespace().collect();
            c.send_raw(&encode_command(&words)).await;
            let got = c.recv_raw(want.len()).await;
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(want),
                "reply to {line}"
            );
        }
    });
}

#[test]
fn del_and_exists_count_keys() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        assert_eq!(c.cmd("MSET a 1 b 2").await, ok());
        assert_eq!(c.cmd("EXISTS a").await, int(1));
        // A key named twice counts twice, as in Redis.
        assert_eq!(c.cmd("EXISTS a b c a").await, int(3));
        assert_eq!(c.cmd("DEL a b c").await, int(2));
        assert_eq!(c.cmd("EXISTS a b").await, int(0));
        assert_eq!(c.cmd("DEL a").await, int(0));
        assert_eq!(c.cmd("GET b").await, Reply::Nil);
        assert_eq!(
            c.cmd("DEL").await,
            err("ERR wrong number of arguments for 'del' command")
        );
        assert_eq!(
            c.cmd("EXISTS").await,
            err("ERR wrong number of arguments for 'exists' command")
        );
    });
}

#[test]
fn incr_counts_from_zero_and_rejects_non_integers() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        assert_eq!(c.cmd("INCR n").await, int(1));
        assert_eq!(c.cmd("incr n").await, int(2));
        assert_eq!(c.cmd("GET n").await, bulk("2"));
        assert_eq!(c.cmd("SET n -5").await, ok());
        assert_eq!(c.cmd("INCR n").await, int(-4));
        let not_int = err("ERR value is not an integer or out of range");
        for bad in ["abc", "1.5", "01", "+1", "9223372036854775808"] {
            assert_eq!(c.call(&[b"SET", b"s", bad.as_bytes()]).await, ok());
            assert_eq!(c.cmd("INCR s").await, not_int, "INCR of {bad:?}");
        }
        assert_eq!(c.call(&[b"SET", b"s", b" 1"]).await, ok());
        assert_eq!(c.cmd("INCR s").await, not_int);
        assert_eq!(
            c.cmd("GET s").await,
            bulk(" 1"),
            "a failed INCR changes nothing"
        );
        assert_eq!(c.cmd("SET max 9223372036854775807").await, ok());
        assert_eq!(
            c.cmd("INCR max").await,
            err("ERR increment or decrement would overflow")
        );
        assert_eq!(
            c.cmd("INCR a b").await,
            err("ERR wrong number of arguments for 'incr' command")
        );
    });
}

#[test]
fn mget_and_mset() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        assert_eq!(c.cmd("MSET a 1 b 2 c 3").await, ok());
        assert_eq!(
            c.cmd("MGET a nope c b").await,
            Reply::Array(vec![bulk("1"), Reply::Nil, bulk("3"), bulk("2")])
        );
        assert_eq!(c.cmd("MSET a 10").await, ok());
        assert_eq!(c.cmd("GET a").await, bulk("10"));
        let arity = err("ERR wrong number of arguments for 'mset' command");
        assert_eq!(c.cmd("MSET a").await, arity);
        assert_eq!(c.cmd("MSET a 1 b").await, arity);
        assert_eq!(
            c.cmd("GET b").await,
            bulk("2"),
            "a refused MSET sets nothing"
        );
        assert_eq!(
            c.cmd("MGET").await,
            err("ERR wrong number of arguments for 'mget' command")
        );
    });
}

#[test]
fn config_get_and_command_answer_empty_arrays() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        assert_eq!(c.cmd("CONFIG GET save").await, empty_array());
        assert_eq!(
            c.cmd("config get appendonly maxmemory").await,
            empty_array()
        );
        assert_eq!(c.cmd("COMMAND").await, empty_array());
        assert_eq!(c.cmd("COMMAND DOCS").await, empty_array());
        assert_eq!(c.cmd("command docs get set").await, empty_array());
        assert_eq!(c.cmd("COMMAND COUNT").await, empty_array());
        assert_eq!(
            c.cmd("CONFIG").await,
            err("ERR wrong number of arguments for 'config' command")
        );
        assert_eq!(
            c.cmd("CONFIG GET").await,
            err("ERR wrong number of arguments for 'config|get' command")
        );
        assert_eq!(
            c.cmd("CONFIG SET save x").await,
            err("ERR unknown subcommand 'SET'. Try CONFIG HELP.")
        );
    });
}

#[test]
fn set_options_over_the_wire() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        assert_eq!(c.cmd("SET gone v PX 1").await, ok());
        spinpark::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(c.cmd("GET gone").await, Reply::Nil);
        assert_eq!(c.cmd("EXISTS gone").await, int(0));

        assert_eq!(c.cmd("SET long v EX 100000").await, ok());
        assert_eq!(c.cmd("GET long").await, bulk("v"));
        assert_eq!(c.cmd("SET long2 v px 100000000").await, ok());
        assert_eq!(c.cmd("GET long2").await, bulk("v"));

        assert_eq!(c.cmd("SET n v NX").await, ok());
        assert_eq!(c.cmd("SET n w nx").await, Reply::Nil);
        assert_eq!(c.cmd("GET n").await, bulk("v"));
        assert_eq!(c.cmd("SET x v XX").await, Reply::Nil);
        assert_eq!(c.cmd("GET x").await, Reply::Nil);
        assert_eq!(c.cmd("SET n w XX PX 100000").await, ok());
        assert_eq!(c.cmd("GET n").await, bulk("w"));

        let syntax = err("ERR syntax error");
        for bad in [
            "SET k v NX XX",
            "SET k v EX 1 PX 1",
            "SET k v PX",
            "SET k v EX 1 KEEPTTL",
            "SET k v GETX",
        ] {
            assert_eq!(c.cmd(bad).await, syntax, "{bad}");
        }
        let invalid = err("ERR invalid expire time in 'set' command");
        for bad in [
            "SET k v EX 0",
            "SET k v PX -5",
            "SET k v EX 9223372036854775807",
        ] {
            assert_eq!(c.cmd(bad).await, invalid, "{bad}");
        }
        assert_eq!(
            c.cmd("SET k v EX ten").await,
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(c.cmd("EXISTS k").await, int(0), "refused SETs set nothing");
    });
}

#[test]
fn pipeline_of_100_commands_in_one_write() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        let mut batch = Vec::new();
        let mut want = Vec::new();
        for i in 0..100 {
            match i % 3 {
                0 => {
                    batch.extend(encode_command(["INCR", "counter"]));
                    want.push(int(i / 3 + 1));
                }
                1 => {
                    batch.extend(encode_command([
                        "SET".into(),
                        format!("k{i}"),
                        format!("v{i}"),
                    ]));
                    want.push(ok());
                }
                _ => {
                    batch.extend(encode_command(["GET".into(), format!("k{}", i - 1)]));
                    want.push(bulk(format!("v{}", i - 1)));
                }
            }
        }
        c.send_raw(&batch).await;
        for (i, want) in want.iter().enumerate() {
            assert_eq!(&c.recv().await, want, "reply {i}");
        }
        assert_eq!(c.cmd("GET counter").await, bulk("34"));
    });
}

#[test]
fn large_pipeline_of_large_values() {
    // 300 GETs of a 100 KiB value: 30 MB of replies to one read's worth of requests, sent in
    // several writes while the client is still reading.
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        let value = vec![b'x'; 100 << 10];
        assert_eq!(c.call(&[b"SET", b"big", &value]).await, ok());
        let mut batch = Vec::new();
        for _ in 0..300 {
            batch.extend(encode_command(["GET", "big"]));
        }
        batch.extend(encode_command(["PING"]));
        c.send_raw(&batch).await;
        for i in 0..300 {
            assert_eq!(c.recv().await, bulk(&value), "reply {i}");
        }
        assert_eq!(c.recv().await, simple("PONG"));
    });
}

#[test]
fn command_split_across_writes() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        let value = vec![b'v'; 40_000]; // longer than the server's 16 KiB reads
        let request = encode_command([&b"SET"[..], &b"split"[..], &value[..]]);
        for piece in request.chunks(7_001) {
            c.send_raw(piece).await;
            spinpark::time::sleep(Duration::from_millis(1)).await;
        }
        for byte in encode_command(["GET", "split"]) {
            c.send_raw(&[byte]).await;
        }
        assert_eq!(c.recv().await, ok());
        assert_eq!(c.recv().await, bulk(&value));
    });
}

#[test]
fn inline_commands() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        c.send_raw(b"PING\r\n").await;
        assert_eq!(c.recv_raw(7).await, b"+PONG\r\n");
        c.send_raw(b"SET k v\r\n").await;
        assert_eq!(c.recv_raw(5).await, b"+OK\r\n");
        c.send_raw(b"get k\r\n").await;
        assert_eq!(c.recv().await, bulk("v"));
        // Bare LF, extra whitespace, blank lines (no reply), and inline mixed with RESP.
        c.send_raw(b"\r\n  ECHO \t spaced   \n\nINCR n\r\n*1\r\n$4\r\nPING\r\nEXISTS k n\r\n")
            .await;
        assert_eq!(c.recv().await, bulk("spaced"));
        assert_eq!(c.recv().await, int(1));
        assert_eq!(c.recv().await, simple("PONG"));
        assert_eq!(c.recv().await, int(2));
        c.send_raw(b"NOPE x\r\n").await;
        assert_eq!(
            c.recv().await,
            err("ERR unknown command 'NOPE', with args beginning with: 'x' ")
        );
        assert_eq!(c.cmd("PING").await, simple("PONG"));
    });
}

#[test]
fn command_errors_keep_the_connection() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        assert_eq!(
            c.cmd("FOO a b").await,
            err("ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")
        );
        assert_eq!(
            c.cmd("FLUSHALL").await,
            err("ERR unknown command 'FLUSHALL', with args beginning with: ")
        );
        // A name with a line break in it cannot break the reply's framing.
        match c.call(&[b"BAD\r\nNAME", b"x\ry"]).await {
            Reply::Error(e) => {
                assert!(e.starts_with("ERR unknown command 'BAD  NAME'"), "{e}");
            }
            other => panic!("expected an error, got {other:?}"),
        }
        // A long argument list is quoted only in part.
        let many: Vec<String> = (0..100).map(|i| format!("argument{i}")).collect();
        let mut args: Vec<&[u8]> = vec![&b"XYZ"[..]];
        args.extend(many.iter().map(|s| s.as_bytes()));
        match c.call(&args).await {
            Reply::Error(e) => assert!(e.len() < 400 && !e.contains("argument99"), "{e}"),
            other => panic!("expected an error, got {other:?}"),
        }
        assert_eq!(
            c.cmd("GET").await,
            err("ERR wrong number of arguments for 'get' command")
        );
        assert_eq!(
            c.cmd("SET k").await,
            err("ERR wrong number of arguments for 'set' command")
        );
        assert_eq!(c.cmd("SET k v").await, ok());
        assert_eq!(c.cmd("GET k").await, bulk("v"));
        assert_eq!(c.cmd("PING").await, simple("PONG"));
    });
}

#[test]
fn protocol_error_closes_only_that_connection() {
    let oversized_inline = vec![b'a'; resp::MAX_INLINE_LEN + 1];
    let over_bulk = format!("*1\r\n${}\r\n", resp::MAX_BULK_LEN + 1);
    let over_array = format!("*{}\r\n", resp::MAX_ARRAY_LEN + 1);
    let cases: Vec<(&str, &[u8])> = vec![
        ("non-numeric bulk length", b"*2\r\n$abc\r\n"),
        ("negative bulk length", b"*1\r\n$-5\r\n"),
        ("bulk length over the bound", over_bulk.as_bytes()),
        ("array length over the bound", over_array.as_bytes()),
        ("non-numeric array length", b"*x\r\n"),
        ("bad type byte", b"*1\r\n+PING\r\n"),
        ("missing CRLF after bulk data", b"*1\r\n$4\r\nPINGxx"),
        ("bare LF after a length", b"*1\n"),
        ("oversized inline line", &oversized_inline),
    ];
    with_server(|addr| async move {
        let mut other = Client::connect(addr).await;
        assert_eq!(other.cmd("SET survivor yes").await, ok());
        for (what, input) in cases {
            let mut bad = Client::connect(addr).await;
            assert_eq!(bad.cmd("PING").await, simple("PONG"), "{what}");
            bad.send_raw(input).await;
            assert_protocol_error(&bad.recv().await);
            bad.expect_eof().await;
            assert_eq!(other.cmd("GET survivor").await, bulk("yes"), "after {what}");
        }
        // Replies to the commands before the malformed one still arrive, in order.
        let mut bad = Client::connect(addr).await;
        bad.send_raw(b"PING\r\nINCR n\r\n*1\r\n$-5\r\nPING\r\n")
            .await;
        assert_eq!(bad.recv().await, simple("PONG"));
        assert_eq!(bad.recv().await, int(1));
        assert_protocol_error(&bad.recv().await);
        bad.expect_eof().await;
        assert_eq!(other.cmd("INCR n").await, int(2));
    });
}

#[test]
fn concurrent_clients_share_one_store() {
    with_server(|addr| async move {
        let tasks: Vec<_> = (0..8)
            .map(|t| {
                spinpark::spawn(async move {
                    let mut c = Client::connect(addr).await;
                    let mut batch = Vec::new();
                    for i in 0..200 {
                        batch.extend(encode_command(["INCR", "shared"]));
                        batch.extend(encode_command([
                            "SET".into(),
                            format!("t{t}"),
                            i.to_string(),
                        ]));
                    }
                    c.send_raw(&batch).await;
                    for _ in 0..200 {
                        assert!(matches!(c.recv().await, Reply::Integer(1..=1600)));
                        assert_eq!(c.recv().await, ok());
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("client task panicked");
        }
        let mut c = Client::connect(addr).await;
        assert_eq!(c.cmd("GET shared").await, bulk("1600"));
        assert_eq!(
            c.cmd("MGET t0 t7").await,
            Reply::Array(vec![bulk("199"), bulk("199")])
        );
    });
}

// ---------------------------------------------------------------------------------------------
// The parser, without a network.

fn args(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn small_limits() -> Limits {
    Limits {
        max_bulk: 10,
        max_array: 4,
        max_inline: 16,
        max_request: 64,
    }
}

#[test]
fn parser_returns_none_until_a_request_is_complete() {
    let req = encode_command(["SET", "key", "a\r\nvalue"]);
    // A fresh parser on every prefix (re-parsing from the start).
    for n in 0..req.len() {
        assert_eq!(resp::parse(&req[..n]), Ok(None), "prefix of {n} bytes");
    }
    assert_eq!(
        resp::parse(&req),
        Ok(Some((args(&["SET", "key", "a\r\nvalue"]), req.len())))
    );
    // One parser fed a growing buffer, one byte at a time, as a connection does.
    let mut p = Parser::new();
    for n in 0..req.len() {
        assert_eq!(p.parse(&req[..n]), Ok(None), "prefix of {n} bytes");
    }
    assert_eq!(
        p.parse(&req),
        Ok(Some((args(&["SET", "key", "a\r\nvalue"]), req.len())))
    );
    // The parser is ready for the next request.
    let ping = encode_command(["PING"]);
    assert_eq!(p.parse(&ping), Ok(Some((args(&["PING"]), ping.len()))));
}

#[test]
fn parser_takes_one_request_at_a_time() {
    let mut buf = encode_command(["GET", "a"]);
    buf.extend_from_slice(b"ECHO hi\r\n");
    buf.extend(encode_command(["DEL", "b"]));
    buf.extend_from_slice(b"*2\r\n$3\r\nGET"); // incomplete
    let mut p = Parser::new();
    let mut seen = Vec::new();
    let mut start = 0;
    while let Some((a, used)) = p.parse(&buf[start..]).unwrap() {
        seen.push(a);
        start += used;
    }
    assert_eq!(
        seen,
        [
            args(&["GET", "a"]),
            args(&["ECHO", "hi"]),
            args(&["DEL", "b"])
        ]
    );
    assert_eq!(&buf[start..], b"*2\r\n$3\r\nGET");
    // The rest arrives: the parser resumes.
    let mut rest = buf[start..].to_vec();
    rest.extend_from_slice(b"\r\n$1\r\nz\r\n");
    assert_eq!(p.parse(&rest), Ok(Some((args(&["GET", "z"]), rest.len()))));
}

#[test]
fn parser_inline_requests() {
    assert_eq!(resp::parse(b"PING"), Ok(None));
    assert_eq!(resp::parse(b"PING\r"), Ok(None));
    assert_eq!(resp::parse(b"PING\r\n"), Ok(Some((args(&["PING"]), 6))));
    assert_eq!(
        resp::parse(b" set\ta   b \nGET"),
        Ok(Some((args(&["set", "a", "b"]), 12)))
    );
    assert_eq!(resp::parse(b"\r\n"), Ok(Some((Vec::new(), 2))));
    assert_eq!(resp::parse(b"*0\r\n"), Ok(Some((Vec::new(), 4))));
}

#[test]
fn parser_rejects_malformed_requests() {
    let bad: [&[u8]; 13] = [
        b"*2\r\n$abc\r\n",
        b"*1\r\n$-5\r\n",
        b"*1\r\n$-1\r\n",
        b"*-0\r\n",
        b"*x\r\n",
        b"*\r\n",
        b"*01\r\n",
        b"*+1\r\n",
        b"*1\r\n+PING\r\n",
        b"*1\r\n:1\r\n",
        b"*1\r\n$4\r\nPINGxx",
        b"*1\r\n$4\rX",
        b"*1\n",
    ];
    for input in bad {
        match resp::parse(input) {
            Err(ProtocolError(_)) => {}
            other => panic!("{:?} parsed as {other:?}", String::from_utf8_lossy(input)),
        }
    }
    // A length line that never ends is refused once it is too long to be a number.
    let endless = format!("*{}", "1".repeat(40));
    assert!(resp::parse(endless.as_bytes()).is_err());
    let endless = format!("*1\r\n${}", "1".repeat(40));
    assert!(resp::parse(endless.as_bytes()).is_err());
}

#[test]
fn parser_skips_null_and_negative_arrays_as_redis_does() {
    // Redis ignores a multibulk count of zero or below (`*-1` is RESP's null array).
    for input in [&b"*-1\r\n"[..], b"*-3\r\n", b"*0\r\n"] {
        assert_eq!(
            resp::parse(input),
            Ok(Some((Vec::new(), input.len()))),
            "{}",
            String::from_utf8_lossy(input)
        );
    }
    assert!(resp::parse(b"*-9223372036854775809\r\n").is_err());
}

#[test]
fn null_array_and_repeated_set_options_over_the_wire_match_redis() {
    with_server(|addr| async move {
        let mut c = Client::connect(addr).await;
        c.send_raw(b"*-1\r\n*-3\r\nPING\r\n").await;
        assert_eq!(
            c.recv().await,
            simple("PONG"),
            "the null arrays got no reply"
        );
        assert_eq!(c.cmd("SET a v NX NX").await, ok());
        assert_eq!(c.cmd("SET a w XX XX").await, ok());
        assert_eq!(c.cmd("GET a").await, bulk("w"));
        assert_eq!(c.cmd("SET a v NX nx").await, Reply::Nil);
        assert_eq!(c.cmd("SET b v KEEPTTL KEEPTTL").await, ok());
        // The last EX or PX counts, and only it is checked.
        assert_eq!(c.cmd("SET c v EX 1 EX 100000").await, ok());
        assert_eq!(c.cmd("SET c v PX ten PX 100000").await, ok());
        assert_eq!(c.cmd("GET c").await, bulk("v"));
        assert_eq!(
            c.cmd("SET c v EX 100000 EX 0").await,
            err("ERR invalid expire time in 'set' command")
        );
        let syntax = err("ERR syntax error");
        for bad in [
            "SET k v NX NX XX",
            "SET k v PX 1 EX 1",
            "SET k v KEEPTTL PX 1",
        ] {
            assert_eq!(c.cmd(bad).await, syntax, "{bad}");
        }
        // Past what a Unix time in milliseconds can hold.
        let invalid = err("ERR invalid expire time in 'set' command");
        for bad in [
            "SET k v PX 9223372036854775807",
            "SET k v EX 9223372036854775",
            "SET k v PX 9223372036854775000",
        ] {
            assert_eq!(c.cmd(bad).await, invalid, "{bad}");
        }
        assert_eq!(c.cmd("EXISTS k").await, int(0), "refused SETs set nothing");
    });
}

#[test]
fn parser_enforces_its_bounds_on_declared_lengths() {
    let lim = small_limits();
    let parse = |input: &[u8]| Parser::with_limits(lim).parse(input);
    // Bulk length: at the bound it waits for the data; over it, an error right away.
    assert_eq!(parse(b"*1\r\n$10\r\n"), Ok(None));
    assert_eq!(
        parse(b"*1\r\n$10\r\n0123456789\r\n"),
        Ok(Some((args(&["0123456789"]), 21)))
    );
    assert!(parse(b"*1\r\n$11\r\n").is_err());
    // Array length.
    assert_eq!(parse(b"*4\r\n"), Ok(None));
    assert!(parse(b"*5\r\n").is_err());
    // Inline line: 16 bytes before the LF are fine, 17 are not, with or without the LF.
    let line = |n: usize| vec![b'a'; n];
    assert_eq!(parse(&line(16)), Ok(None));
    let mut ok16 = line(16);
    ok16.push(b'\n');
    assert_eq!(parse(&ok16), Ok(Some((vec![line(16)], 17))));
    assert!(parse(&line(17)).is_err());
    let mut bad17 = line(17);
    bad17.push(b'\n');
    assert!(parse(&bad17).is_err());
    // A whole request: four 10-byte bulks take 4 + 4 * 17 = 72 bytes > 64.
    let mut p = Parser::with_limits(lim);
    let req = encode_command(["0123456789"; 4]);
    let third_end = 4 + 3 * 17;
    assert_eq!(p.parse(&req[..third_end]), Ok(None));
    assert!(p.parse(&req).is_err(), "a request over max_request");
    // The server's own bounds.
    assert_eq!(Limits::DEFAULT.max_bulk, 512 << 20);
    let at_bound = format!("*1\r\n${}\r\n", resp::MAX_BULK_LEN);
    assert_eq!(resp::parse(at_bound.as_bytes()), Ok(None));
    let over = format!("*1\r\n${}\r\n", resp::MAX_BULK_LEN + 1);
    assert!(resp::parse(over.as_bytes()).is_err());
    let at_bound = format!("*{}\r\n", resp::MAX_ARRAY_LEN);
    assert_eq!(resp::parse(at_bound.as_bytes()), Ok(None));
}

#[test]
fn parse_i64_is_strict() {
    assert_eq!(parse_i64(b"0"), Some(0));
    assert_eq!(parse_i64(b"42"), Some(42));
    assert_eq!(parse_i64(b"-42"), Some(-42));
    assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
    assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
    for bad in [
        "",
        "-",
        "-0",
        "01",
        "+1",
        " 1",
        "1 ",
        "1.0",
        "0x1",
        "9223372036854775808",
        "-9223372036854775809",
    ] {
        assert_eq!(parse_i64(bad.as_bytes()), None, "{bad:?}");
    }
}

#[test]
fn replies_encode_and_decode() {
    let replies = [
        simple("OK"),
        err("ERR nope"),
        int(-7),
        bulk(b"a\r\n\0b"),
        bulk(""),
        Reply::Nil,
        empty_array(),
        Reply::Array(vec![bulk("x"), Reply::Nil, Reply::Array(vec![int(1)])]),
    ];
    let mut wire = Vec::new();
    for r in &replies {
        r.encode(&mut wire);
    }
    let mut pos = 0;
    for want in &replies {
        let (got, used) = parse_reply(&wire[pos..]).unwrap().expect("complete");
        assert_eq!(&got, want);
        // The output limit sizes a reply before encoding it.
        assert_eq!(want.wire_len(), used, "{want:?}");
        pos += used;
    }
    assert_eq!(int(i64::MIN).wire_len(), int(i64::MIN).to_bytes().len());
    assert_eq!(pos, wire.len());
    assert_eq!(bulk("ab").to_bytes(), b"$2\r\nab\r\n");
    assert_eq!(Reply::Nil.to_bytes(), b"$-1\r\n");
    assert_eq!(err("ERR a\r\nb").to_bytes(), b"-ERR a  b\r\n");
    assert_eq!(parse_reply(b"$3\r\nab"), Ok(None));
}

// ---------------------------------------------------------------------------------------------
// Commands against a store, with a clock the test controls.

fn run(store: &Store, line: &str, now: Instant) -> Reply {
    exec_at(
        store,
        &args(&line.split_whitespace().collect::<Vec<_>>()),
        now,
    )
}

#[test]
fn expiry_is_checked_against_the_deadline() {
    let store = Store::new();
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    assert_eq!(run(&store, "SET k v PX 100", t0), ok());
    assert_eq!(run(&store, "GET k", t0 + ms(99)), bulk("v"));
    assert_eq!(run(&store, "GET k", t0 + ms(100)), Reply::Nil);
    assert_eq!(run(&store, "EXISTS k", t0 + ms(100)), int(0));

    assert_eq!(run(&store, "SET s v EX 2", t0), ok());
    assert_eq!(
        run(&store, "MGET s", t0 + ms(1999)),
        Reply::Array(vec![bulk("v")])
    );
    assert_eq!(
        run(&store, "MGET s", t0 + ms(2000)),
        Reply::Array(vec![Reply::Nil])
    );

    // An expired key is missing for DEL, NX, XX and INCR too.
    assert_eq!(run(&store, "SET d v PX 10", t0), ok());
    assert_eq!(run(&store, "DEL d", t0 + ms(10)), int(0));
    assert_eq!(run(&store, "SET n v PX 10", t0), ok());
    assert_eq!(run(&store, "SET n w NX", t0 + ms(10)), ok());
    assert_eq!(run(&store, "SET x v PX 10", t0), ok());
    assert_eq!(run(&store, "SET x w XX", t0 + ms(10)), Reply::Nil);
    assert_eq!(run(&store, "SET i 41 PX 10", t0), ok());
    assert_eq!(run(&store, "INCR i", t0 + ms(10)), int(1));
}

#[test]
fn which_commands_keep_or_clear_a_deadline() {
    let store = Store::new();
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    // INCR keeps it.
    assert_eq!(run(&store, "SET i 1 PX 100", t0), ok());
    assert_eq!(run(&store, "INCR i", t0 + ms(50)), int(2));
    assert_eq!(run(&store, "GET i", t0 + ms(100)), Reply::Nil);
    // SET KEEPTTL keeps it; a plain SET clears it; so does MSET.
    assert_eq!(run(&store, "SET k v PX 100", t0), ok());
    assert_eq!(run(&store, "SET k w KEEPTTL", t0 + ms(50)), ok());
    assert_eq!(run(&store, "GET k", t0 + ms(99)), bulk("w"));
    assert_eq!(run(&store, "GET k", t0 + ms(100)), Reply::Nil);
    assert_eq!(run(&store, "SET p v PX 100", t0), ok());
    assert_eq!(run(&store, "SET p w", t0 + ms(50)), ok());
    assert_eq!(run(&store, "GET p", t0 + ms(1000)), bulk("w"));
    assert_eq!(run(&store, "SET m v PX 100", t0), ok());
    assert_eq!(run(&store, "MSET m w", t0 + ms(50)), ok());
    assert_eq!(run(&store, "GET m", t0 + ms(1000)), bulk("w"));
    // A later SET with a deadline replaces the old one.
    assert_eq!(run(&store, "SET r v PX 100", t0), ok());
    assert_eq!(run(&store, "SET r v PX 500", t0 + ms(50)), ok());
    assert_eq!(run(&store, "GET r", t0 + ms(200)), bulk("v"));
    assert_eq!(run(&store, "GET r", t0 + ms(550)), Reply::Nil);
}

#[test]
fn command_names_are_case_insensitive() {
    let store = Store::new();
    let now = Instant::now();
    assert_eq!(run(&store, "sEt k 5 eX 10 Nx", now), ok());
    assert_eq!(run(&store, "InCr k", now), int(6));
    assert_eq!(run(&store, "mGeT k", now), Reply::Array(vec![bulk("6")]));
    assert_eq!(run(&store, "Config gEt x", now), empty_array());
}

// ---------------------------------------------------------------------------------------------
// The command line.

#[test]
fn command_line() {
    use clap::Parser;
    use examples_common::args::Spin;
    let parse = |s: &str| {
        kv::Options::try_parse_from(std::iter::once("kv_server").chain(s.split_whitespace()))
    };
    let o = parse("").unwrap();
    assert_eq!(
        (o.addr.as_str(), o.runtime.workers, o.runtime.spin),
        ("127.0.0.1:6379", None, Spin::Adaptive)
    );
    let o = parse("--addr 0.0.0.0:7000 --workers 3 --spin 50us").unwrap();
    assert_eq!(
        (o.addr.as_str(), o.runtime.workers, o.runtime.spin),
        (
            "0.0.0.0:7000",
            Some(3),
            Spin::Fixed(Duration::from_micros(50))
        )
    );
    assert_eq!(
        parse("--spin=0 --workers=1").unwrap().runtime.spin,
        Spin::Fixed(Duration::ZERO)
    );
    assert_eq!(o.settings(), kv::Settings::DEFAULT);
    assert_eq!(
        parse("--max-output 512KiB").unwrap().settings().max_output,
        512 << 10
    );
    let help = parse("--help").unwrap_err();
    assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
    assert!(help.to_string().contains("--workers"), "{help}");
    // A bad value is refused with the flag's name.
    for (bad, flag) in [
        ("--workers 0", "--workers"),
        ("--workers x", "--workers"),
        ("--addr", "--addr"),
        ("--spin 5", "--spin"),
        ("--max-output 0", "--max-output"),
        ("--max-output 1MB", "--max-output"),
        ("--bogus", "--bogus"),
    ] {
        let e = parse(bad).unwrap_err().to_string();
        assert!(e.contains(flag), "{bad}: {e}");
    }
    let d = examples_common::duration::parse;
    assert_eq!(d("0"), Ok(Duration::ZERO));
    assert_eq!(d("7ns"), Ok(Duration::from_nanos(7)));
    assert_eq!(d("50us"), Ok(Duration::from_micros(50)));
    assert_eq!(d("3ms"), Ok(Duration::from_millis(3)));
    assert_eq!(d("2s"), Ok(Duration::from_secs(2)));
    for bad in ["", "5", "5m", "us", "-1us", "1.5ms", "5 us"] {
        assert!(d(bad).is_err(), "{bad:?}");
    }
}
