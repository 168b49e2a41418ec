//! Socket errors are the OS errors themselves, as the standard library and tokio return them:
//! `raw_os_error()` gives the errno and `kind()` its kind, for a refused connect (TCP and
//! Unix), an address in use, a reset read, a write to a closed peer, and a registration the
//! reactor refuses. A write to a closed peer is `EPIPE`, never a SIGPIPE: these tests restore
//! SIGPIPE's default action (which ends the process) while they write, so a write without
//! `MSG_NOSIGNAL` would kill this test binary.

use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{Builder, Runtime};
use spinpark_net::io::AsyncFd;
use spinpark_net::time::timeout;
use spinpark_net::{TcpListener, TcpSocket, TcpStream, UdpSocket, UnixListener, UnixStream};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

async fn guard<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match timeout(Duration::from_secs(60), f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: no progress in 60 s"),
    }
}

/// Asserts that `e` is the OS error `code`, with the kind the standard library gives it.
#[track_caller]
fn assert_os(e: &io::Error, code: i32) {
    let std = io::Error::from_raw_os_error(code);
    assert_eq!(e.raw_os_error(), Some(code), "{e} (expected {std})");
    assert_eq!(e.kind(), std.kind(), "{e}");
}

/// A 127.0.0.1 port nothing listens on (bound, then closed).
fn closed_port() -> std::net::SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// A path in the temp dir unique to this process and `name`; removed first.
fn temp_path(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("spinpark-oserr-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn a_refused_tcp_connect_is_econnrefused() {
    rt().block_on(guard("refused", async {
        let closed = closed_port();
        let e = TcpStream::connect(closed).await.unwrap_err();
        assert_os(&e, libc::ECONNREFUSED);
        let e = TcpSocket::new_v4()
            .unwrap()
            .connect(closed)
            .await
            .unwrap_err();
        assert_os(&e, libc::ECONNREFUSED);
    }));
}

#[test]
fn a_unix_connect_to_a_missing_or_dead_socket_keeps_its_errno() {
    rt().block_on(guard("unix connect", async {
        let missing = temp_path("missing");
        let e = UnixStream::connect(&missing).await.unwrap_err();
        assert_os(&e, libc::ENOENT);
        // The socket file is still there, but nobody listens on it.
        let dead = temp_path("dead");
        drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
        let e = UnixStream::connect(&dead).await.unwrap_err();
        assert_os(&e, libc::ECONNREFUSED);
        std::fs::remove_file(&dead).unwrap();
    }));
}

#[test]
fn binding_an_address_in_use_is_eaddrinuse() {
    rt().block_on(guard("bind", async {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let taken = l.local_addr().unwrap();
        let e = TcpListener::bind(taken).await.unwrap_err();
        assert_os(&e, libc::EADDRINUSE);
        let e = TcpSocket::new_v4().unwrap().bind(taken).unwrap_err();
        assert_os(&e, libc::EADDRINUSE);
        let u = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let e = UdpSocket::bind(u.local_addr().unwrap()).await.unwrap_err();
        assert_os(&e, libc::EADDRINUSE);
        let path = temp_path("in-use");
        let _ul = UnixListener::bind(&path).unwrap();
        let e = UnixListener::bind(&path).unwrap_err();
        assert_os(&e, libc::EADDRINUSE);
        std::fs::remove_file(&path).unwrap();
    }));
}

#[test]
fn a_read_after_the_peer_resets_is_econnreset() {
    rt().block_on(guard("reset", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut s, _) = listener.accept().await.unwrap();
        // SO_LINGER on with a zero timeout: closing sends a reset instead of a FIN.
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: passes a pointer to a linger on our stack and its size; the kernel only
        // reads it.
        let r = unsafe {
            libc::setsockopt(
                peer.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0, "SO_LINGER: {}", io::Error::last_os_error());
        drop(peer);
        let mut buf = [0u8; 16];
        let e = s.read(&mut buf).await.unwrap_err();
        assert_os(&e, libc::ECONNRESET);
    }));
}

/// Serializes the tests that change SIGPIPE's action, and restores "ignore" (what Rust
/// programs start with) when dropped.
struct SigpipeDefault(#[allow(dead_code)] MutexGuard<'static, ()>);

impl SigpipeDefault {
    fn set() -> Self {
        static SERIAL: Mutex<()> = Mutex::new(());
        let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: sets a signal's disposition to the default action; no handler is involved.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        SigpipeDefault(guard)
    }
}

impl Drop for SigpipeDefault {
    fn drop(&mut self) {
        // SAFETY: as above, back to ignoring the signal.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    }
}

#[test]
fn a_write_to_a_closed_unix_peer_is_epipe_not_sigpipe() {
    let _sigpipe = SigpipeDefault::set();
    rt().block_on(guard("unix epipe", async {
        let (mut a, b) = UnixStream::pair().unwrap();
        drop(b);
        let e = a.write(b"x").await.unwrap_err();
        assert_os(&e, libc::EPIPE);
        let e = a.try_write(b"x").unwrap_err();
        assert_os(&e, libc::EPIPE);
        let e = a
            .write_vectored(&[io::IoSlice::new(b"a"), io::IoSlice::new(b"b")])
            .await
            .unwrap_err();
        assert_os(&e, libc::EPIPE);
        let (_r, mut w) = a.into_split();
        let e = w.write(b"x").await.unwrap_err();
        assert_os(&e, libc::EPIPE);
    }));
}

#[test]
fn a_tcp_write_after_close_is_epipe_not_sigpipe() {
    let _sigpipe = SigpipeDefault::set();
    rt().block_on(guard("tcp epipe", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut c = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (s, _) = listener.accept().await.unwrap();
        // Our own side shut for writing: every write is EPIPE.
        c.shutdown_with(std::net::Shutdown::Write).unwrap();
        let e = c.write(b"x").await.unwrap_err();
        assert_os(&e, libc::EPIPE);
        // The peer gone: the first write draws a reset, then writes fail with the errno the
        // kernel picks (EPIPE, or ECONNRESET if the reset is still pending).
        drop(s);
        let (_r, mut w) = listener_pair(&listener).await;
        let mut err = None;
        for _ in 0..1000 {
            match w.write(&[0u8; 1024]).await {
                Ok(_) => spinpark_net::time::sleep(Duration::from_millis(1)).await,
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        let e = err.expect("writes to a closed peer kept succeeding");
        let code = e.raw_os_error();
        assert!(
            code == Some(libc::EPIPE) || code == Some(libc::ECONNRESET),
            "{e}: {code:?}"
        );
        assert_os(&e, code.unwrap());
    }));
}

/// A connection to `listener` whose server side is closed at once: the client's write half.
async fn listener_pair(
    listener: &TcpListener,
) -> (
    spinpark_net::tcp::OwnedReadHalf,
    spinpark_net::tcp::OwnedWriteHalf,
) {
    let c = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    drop(listener.accept().await.unwrap());
    c.into_split()
}

#[test]
fn a_registration_the_reactor_refuses_keeps_its_errno() {
    use std::os::unix::fs::OpenOptionsExt;
    let path = temp_path("regular-file");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .unwrap();
    rt().block_on(async {
        // epoll refuses regular files with EPERM.
        let e = AsyncFd::new(file).unwrap_err();
        assert_os(&e, libc::EPERM);
    });
    std::fs::remove_file(&path).unwrap();
}
