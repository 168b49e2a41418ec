//! Unix-domain sockets over the reactor, on the model of `tcp.rs`: round trips, many
//! connections, bulk transfer, halves, faults. Sockets live in a fresh directory under the
//! system temp dir, removed at the end.

use std::io;
use std::net::Shutdown;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder, JoinHandle, Runtime};
use spinpark_net::time::timeout;
use spinpark_net::{UnixListener, UnixStream};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

async fn guard<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match timeout(Duration::from_secs(60), f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: no progress in 60 s"),
    }
}

/// A fresh directory for one test's sockets; removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("spinpark-unix-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn sock(&self) -> PathBuf {
        self.0.join("s.sock")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn echo_server(path: &Path) -> JoinHandle<()> {
    let listener = UnixListener::bind(path).unwrap();
    spawn(async move {
        loop {
            let (mut s, _) = listener.accept().await.unwrap();
            spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
    })
}

#[test]
fn echo_round_trips() {
    let dir = TempDir::new("echo");
    rt().block_on(guard("echo", async {
        let server = echo_server(&dir.sock());
        let mut c = UnixStream::connect(dir.sock()).await.unwrap();
        assert_eq!(
            c.peer_addr().unwrap().as_pathname(),
            Some(dir.sock().as_path())
        );
        for i in 0..1000u32 {
            let msg = i.to_be_bytes();
            c.write_all(&msg).await.unwrap();
            let mut back = [0u8; 4];
            c.read_exact(&mut back).await.unwrap();
            assert_eq!(back, msg);
        }
        server.abort();
    }));
}

#[test]
fn many_connections_at_once() {
    let dir = TempDir::new("many");
    rt().block_on(guard("many", async {
        let server = echo_server(&dir.sock());
        let mut clients = Vec::new();
        for i in 0..200u32 {
            let path = dir.sock();
            clients.push(spawn(async move {
                let mut c = UnixStream::connect(path).await.unwrap();
                for j in 0..20u32 {
                    let msg = (i * 1000 + j).to_le_bytes();
                    c.write_all(&msg).await.unwrap();
                    let mut back = [0u8; 4];
                    c.read_exact(&mut back).await.unwrap();
                    assert_eq!(back, msg);
                }
            }));
        }
        for c in clients {
            c.await.unwrap();
        }
        server.abort();
    }));
}

#[test]
fn bulk_transfer_with_owned_halves() {
    rt().block_on(guard("bulk", async {
        let (a, b) = UnixStream::pair().unwrap();
        let (mut ar, mut aw) = a.into_split();
        let data: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
        let expected = data.clone();
        // b echoes everything back through its borrowed halves. (Called by path: with
        // futures' AsyncReadExt in scope, `b.split()` would pick its by-value `split`.)
        let echo = spawn(async move {
            let mut b = b;
            let (mut r, mut w) = UnixStream::split(&mut b);
            futures_util::io::copy(&mut r, &mut w).await.unwrap();
        });
        let writer = spawn(async move {
            aw.write_all(&data).await.unwrap();
            aw.close().await.unwrap();
            aw
        });
        let mut back = Vec::new();
        ar.read_to_end(&mut back).await.unwrap();
        assert!(back == expected, "data corrupted in transit");
        let aw = writer.await.unwrap();
        echo.await.unwrap();
        let a = ar.reunite(aw).unwrap();
        assert!(a.is_read_closed_or_eof().await);
    }));
}

trait EofExt {
    async fn is_read_closed_or_eof(&self) -> bool;
}

impl EofExt for UnixStream {
    async fn is_read_closed_or_eof(&self) -> bool {
        let mut b = [0u8; 1];
        matches!((&*self).read(&mut b).await, Ok(0))
    }
}

#[test]
fn vectored_writes_arrive_in_order() {
    rt().block_on(guard("vectored", async {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let parts: [&[u8]; 3] = [b"one ", b"two ", b"three"];
        let slices: Vec<io::IoSlice<'_>> = parts.iter().map(|p| io::IoSlice::new(p)).collect();
        let n = a.write_vectored(&slices).await.unwrap();
        assert_eq!(n, 13);
        let mut buf = [0u8; 13];
        b.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"one two three");
    }));
}

#[test]
fn faults_are_clear_errors() {
    let dir = TempDir::new("faults");
    rt().block_on(guard("faults", async {
        // Nothing at the path.
        let e = UnixStream::connect(dir.0.join("missing"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e}");
        // A path too long for sockaddr_un: an error of our own, which names the path.
        let long = dir.0.join("x".repeat(200));
        let e = UnixStream::connect(&long).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().contains(&"x".repeat(200)), "{e}");
        // Binding twice.
        let _l = UnixListener::bind(dir.sock()).unwrap();
        let e = UnixListener::bind(dir.sock()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert_eq!(e.raw_os_error(), Some(libc::EADDRINUSE), "{e}");
        // Writing to a closed peer is an error, not a SIGPIPE.
        let (mut a, b) = UnixStream::pair().unwrap();
        drop(b);
        let mut failed = false;
        for _ in 0..100 {
            if a.write_all(&[0u8; 1024]).await.is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed, "writes to a closed peer kept succeeding");
        // Half-close: the peer reads end of stream, and can still write back.
        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.shutdown_with(Shutdown::Write).unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(b.read(&mut buf).await.unwrap(), 0);
        b.write_all(b"back").await.unwrap();
        a.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"back");
    }));
}

#[test]
fn try_read_and_readable() {
    rt().block_on(guard("try", async {
        let (a, b) = UnixStream::pair().unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(
            a.try_read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        b.writable().await.unwrap();
        assert_eq!(b.try_write(b"abc").unwrap(), 3);
        a.readable().await.unwrap();
        assert_eq!(a.try_read(&mut buf).unwrap(), 3);
        let std = a.into_std().unwrap();
        drop(std);
        assert_eq!((&b).read(&mut buf).await.unwrap(), 0);
    }));
}

#[test]
fn a_vectored_write_of_more_slices_than_iov_max_keeps_the_socket_writable() {
    use std::io::IoSlice;
    rt().block_on(async {
        let (mut stream, mut other) = UnixStream::pair().unwrap();
        const SLICES: usize = 2000;
        let bytes: Vec<u8> = (0..SLICES).map(|i| i as u8).collect();
        let slices: Vec<IoSlice<'_>> = bytes.chunks(1).map(IoSlice::new).collect();
        // sendmsg takes 1024 slices at most: a short count that says nothing about the socket
        // buffer, which has room for far more.
        let n = guard("write_vectored", stream.write_vectored(&slices))
            .await
            .unwrap();
        assert!(n > 0 && n <= 1024, "{n} bytes from 1-byte slices");
        // Nobody has read anything, so no new readiness edge can have arrived: the socket must
        // still count as writable, and a plain write goes straight through.
        assert_eq!(stream.try_write(b"t").unwrap(), 1);
        let mut got = vec![0u8; n + 1];
        guard("reading it all", other.read_exact(&mut got))
            .await
            .unwrap();
        assert_eq!(&got[..n], &bytes[..n]);
        assert_eq!(got[n], b't');
    });
}

/// An abstract name unique to this process and `what`, with the leading NUL that selects
/// Linux's abstract namespace (nothing is created in the file system).
fn abstract_name(what: &str) -> String {
    format!("\0spinpark-test-{}-{what}", std::process::id())
}

#[test]
fn abstract_names_bind_connect_and_report_their_addresses() {
    use std::os::linux::net::SocketAddrExt;
    let name = abstract_name("round-trip");
    let bare = &name.as_bytes()[1..];
    rt().block_on(guard("abstract", async {
        let listener = UnixListener::bind(&name).unwrap();
        assert_eq!(
            listener.local_addr().unwrap().as_abstract_name(),
            Some(bare)
        );
        let mut client = UnixStream::connect(&name).await.unwrap();
        let (mut server, peer) = listener.accept().await.unwrap();
        // The client did not bind: its address is unnamed on both ends.
        assert!(peer.is_unnamed(), "{peer:?}");
        assert!(client.local_addr().unwrap().is_unnamed());
        assert_eq!(client.peer_addr().unwrap().as_abstract_name(), Some(bare));
        assert_eq!(server.local_addr().unwrap().as_abstract_name(), Some(bare));
        client.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        server.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping");
        // Nothing appeared in the file system, and the name is taken while bound.
        assert!(!Path::new(&name[1..]).exists());
        let e = UnixListener::bind(&name).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EADDRINUSE), "{e}");
        // Closed, the name is free again at once (no file to remove).
        drop((listener, server));
        let again = UnixListener::bind(&name).unwrap();
        drop(again);
        let e = UnixStream::connect(&name).await.unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ECONNREFUSED), "{e}");
    }));
}

#[test]
fn abstract_names_may_hold_any_bytes_up_to_the_address_size() {
    use std::os::linux::net::SocketAddrExt;
    rt().block_on(guard("abstract names", async {
        // NUL and other bytes after the leading NUL are part of the name.
        let odd = format!("{}\0with nul\n", abstract_name("odd"));
        let l = UnixListener::bind(&odd).unwrap();
        assert_eq!(
            l.local_addr().unwrap().as_abstract_name(),
            Some(&odd.as_bytes()[1..])
        );
        drop(UnixStream::connect(&odd).await.unwrap());
        // sun_path holds 108 bytes: the leading NUL and 107 of name.
        let longest = format!("\0{}", "n".repeat(107));
        drop(UnixListener::bind(&longest).unwrap());
        let too_long = format!("\0{}", "n".repeat(108));
        let e = UnixListener::bind(&too_long).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        let e = UnixStream::connect(&too_long).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        // A NUL inside a path (not leading) is still refused.
        let e = UnixListener::bind("/tmp/a\0b").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    }));
}

#[test]
fn unnamed_sockets_report_unnamed_addresses() {
    rt().block_on(async {
        let (a, b) = UnixStream::pair().unwrap();
        for s in [&a, &b] {
            assert!(s.local_addr().unwrap().is_unnamed());
            assert!(s.peer_addr().unwrap().is_unnamed());
        }
    });
}
