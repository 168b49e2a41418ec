//! Runs the downstream examples as processes against services made here.
//! `examples/http_gateway`: a live downstream (the gateway relays its answer), one that is down
//! (`502` naming the refused connect), and one that never answers (`504` once the gateway's
//! deadline passes; the gateway keeps serving). `examples/redis_read_through`: a miss, then a
//! hit, from a Redis-protocol cache (the kv example), then answers from the source once the
//! cache is gone. `cargo test --features hyper-client,tokio-io` builds the examples first; when
//! one is missing (a single `--test` run without `--example NAME`), its test says so and skips.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn example(name: &str) -> Option<PathBuf> {
    // target/debug/deps/downstream_examples-xxxx -> target/debug/examples/NAME
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("examples").join(name);
    p.exists().then_some(p)
}

/// The gateway process, killed on drop.
struct Gateway {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn gateway(downstream: SocketAddr) -> Option<Gateway> {
    let Some(path) = example("http_gateway") else {
        println!(
            "skipped: the http_gateway example is not built (cargo test --features hyper-client)"
        );
        return None;
    };
    let mut child = Command::new(path)
        .args(["--addr", "127.0.0.1:0", "--workers", "2"])
        .args(["--downstream", &format!("http://{downstream}")])
        .args(["--timeout", "300ms", "--connect-timeout", "300ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .trim()
        .rsplit(' ')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("http_gateway printed {first:?}, not its address"));
    Some(Gateway { child, addr })
}

/// One `GET path` on a fresh connection; the whole response (the gateway closes after it).
fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: gateway\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response)
        .expect("the gateway did not answer within 30 s");
    response
}

/// A downstream answering every request with its path, one thread per connection.
fn live_downstream() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut r = BufReader::new(conn);
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                    let path = line.split(' ').nth(1).unwrap_or("?").to_string();
                    let mut header = String::new();
                    while r.read_line(&mut header).is_ok_and(|n| n > 2) {
                        header.clear();
                    }
                    let body = format!("downstream saw {path}");
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if r.get_mut().write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                    line.clear();
                }
            });
        }
    });
    addr
}

#[test]
fn http_gateway_relays_and_reports_a_down_or_silent_downstream() {
    // Live.
    let Some(gw) = gateway(live_downstream()) else {
        return;
    };
    let r = get(gw.addr, "/items/7?x=1");
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert!(r.ends_with("downstream saw /items/7?x=1"), "{r}");
    drop(gw);

    // Down: the port was just free.
    let down = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let gw = gateway(down).unwrap();
    let r = get(gw.addr, "/");
    assert!(r.starts_with("HTTP/1.1 502"), "{r}");
    assert!(r.contains("refused"), "{r}");
    drop(gw);

    // Silent: accepts, never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let gw = gateway(silent.local_addr().unwrap()).unwrap();
    for _ in 0..2 {
        let r = get(gw.addr, "/");
        assert!(r.starts_with("HTTP/1.1 504"), "{r}");
        assert!(r.contains("no answer within 300ms"), "{r}");
    }
    drop(silent);
}

/// The kv example server (a Redis-protocol server) on its own spinpark runtime; dropping the
/// runtime takes it away.
fn kv_server() -> (spinpark::Runtime, SocketAddr) {
    use examples_common::kv;
    let rt = spinpark::Builder::new().worker_threads(1).build().unwrap();
    let addr = rt.block_on(async {
        let listener = spinpark::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(kv::serve(listener, kv::Store::new()));
        addr
    });
    (rt, addr)
}

/// `redis_read_through` against `cache`; killed on drop.
fn read_through(cache: SocketAddr) -> Option<Gateway> {
    let Some(path) = example("redis_read_through") else {
        println!(
            "skipped: the redis_read_through example is not built \
             (cargo test --features hyper-client,tokio-io)"
        );
        return None;
    };
    let mut child = Command::new(path)
        .args(["--addr", "127.0.0.1:0", "--workers", "2"])
        .args(["--redis", &cache.to_string(), "--redis-timeout", "2s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    // "cache: redis at ..." first, then "listening on ADDR".
    let mut line = String::new();
    while !line.starts_with("listening on") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "it ended early");
    }
    let addr = line.trim().rsplit(' ').next().unwrap().parse().unwrap();
    Some(Gateway { child, addr })
}

fn x_cache(response: &str) -> &str {
    response
        .lines()
        .find_map(|l| l.strip_prefix("x-cache: "))
        .unwrap_or_else(|| panic!("no x-cache header in {response}"))
}

#[test]
fn redis_read_through_misses_hits_and_bypasses_a_down_cache() {
    // A Redis-protocol cache: the kv example here (redis-server behaves the same for GET/SET EX).
    let (cache, addr) = kv_server();
    let Some(app) = read_through(addr) else {
        return;
    };
    let first = get(app.addr, "/item/42");
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert_eq!(x_cache(&first), "miss");
    let second = get(app.addr, "/item/42");
    assert_eq!(x_cache(&second), "hit");
    let body = |r: &str| r.split("\r\n\r\n").nth(1).unwrap().to_string();
    assert_eq!(body(&first), body(&second));
    assert!(get(app.addr, "/nothing").starts_with("HTTP/1.1 404"));

    // The cache goes away: answers still come, from the source.
    drop(cache);
    for _ in 0..2 {
        let r = get(app.addr, "/item/42");
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert_eq!(x_cache(&r), "bypass");
        assert_eq!(body(&r), body(&first));
    }
}
