//! The listen backlog: `bind` queues up to `DEFAULT_BACKLOG` connections (the old fixed 128
//! made a burst of connects wait a second for a SYN retransmit), `bind_with_backlog` sets it.
//! The accept queue's length is read from /proc/net/tcp. 127.0.0.1, port 0, bounded loops.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;

use spinpark_executor::Builder;
use spinpark_net::tcp::DEFAULT_BACKLOG;
use spinpark_net::time::sleep;
use spinpark_net::TcpListener;

/// The number of connections waiting in the accept queue of the listener on `port`.
fn accept_queue(port: u16) -> Option<usize> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!("0100007F:{port:04X}");
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // local_address rem_address st tx_queue:rx_queue; 0A is LISTEN, whose rx_queue is the
        // accept queue's length.
        (f.get(1) == Some(&local.as_str()) && f.get(3) == Some(&"0A"))
            .then(|| usize::from_str_radix(f[4].split(':').nth(1)?, 16).ok())
            .flatten()
    })
}

fn somaxconn() -> usize {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Starts `n` connects without waiting for them (non-blocking sockets).
fn connect_many(addr: SocketAddr, n: usize) -> Vec<std::net::TcpStream> {
    (0..n)
        .map(|_| {
            // SAFETY: socket(2) takes no pointers; the fd is owned by the stream below.
            let fd = unsafe {
                libc::socket(
                    libc::AF_INET,
                    libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                    0,
                )
            };
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            // SAFETY: `fd` is a fresh socket owned by nobody else.
            let s = unsafe { <std::net::TcpStream as std::os::fd::FromRawFd>::from_raw_fd(fd) };
            let SocketAddr::V4(v4) = addr else {
                unreachable!()
            };
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(v4.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: `sin` is a valid sockaddr_in on our stack, with its size.
            unsafe {
                libc::connect(
                    s.as_raw_fd(),
                    (&sin as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            };
            s
        })
        .collect()
}

/// Connects `n` clients to a listener that never accepts; returns the longest accept queue
/// seen (waiting, in a bounded loop, for it to reach `enough`).
async fn queued(listener: &TcpListener, n: usize, enough: usize) -> usize {
    let addr = listener.local_addr().unwrap();
    let _clients = connect_many(addr, n);
    let mut most = 0;
    for _ in 0..2_000 {
        most = most.max(accept_queue(addr.port()).expect("the listener in /proc/net/tcp"));
        if most >= enough {
            break;
        }
        sleep(Duration::from_millis(5)).await;
    }
    most
}

#[test]
fn bind_queues_more_than_the_old_128_connections() {
    if somaxconn() < 300 || std::fs::metadata("/proc/net/tcp").is_err() {
        eprintln!("skipped: needs /proc/net/tcp and net.core.somaxconn >= 300");
        return;
    }
    assert_eq!(DEFAULT_BACKLOG, 1024);
    let rt = Builder::new().worker_threads(1).build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let n = queued(&listener, 300, 300).await;
        assert_eq!(n, 300, "the accept queue held {n} of 300 connections");
    });
}

#[test]
fn bind_with_backlog_sets_the_queue_length() {
    if std::fs::metadata("/proc/net/tcp").is_err() {
        eprintln!("skipped: needs /proc/net/tcp");
        return;
    }
    let rt = Builder::new().worker_threads(1).build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind_with_backlog("127.0.0.1:0", 8)
            .await
            .unwrap();
        let n = queued(&listener, 40, 9).await;
        // Linux queues backlog + 1 connections; the others wait in SYN_SENT.
        assert!(
            (8..=9).contains(&n),
            "the accept queue held {n} connections"
        );
    });
}
