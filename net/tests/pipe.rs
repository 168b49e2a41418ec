//! `unix::pipe`: anonymous pipes and named FIFOs on the reactor.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::io::Interest;
use spinpark_net::time::timeout;
use spinpark_net::unix::pipe::{self, OpenOptions, Receiver, Sender};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

/// A FIFO in a directory of its own, removed on drop.
struct Fifo(PathBuf);

impl Fifo {
    fn new(name: &str) -> Fifo {
        let dir = std::env::temp_dir().join(format!("spinpark-pipe-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fifo");
        let _ = std::fs::remove_file(&path);
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        Fifo(path)
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

#[test]
fn bytes_cross_a_pipe_and_the_reader_sees_the_end() {
    rt().block_on(async {
        let (mut tx, mut rx) = pipe::pipe().unwrap();
        let writer = spawn(async move {
            for i in 0..100u32 {
                tx.write_all(&i.to_be_bytes()).await.unwrap();
            }
        });
        let mut got = Vec::new();
        timeout(Duration::from_secs(30), rx.read_to_end(&mut got))
            .await
            .expect("the reader never saw the end")
            .unwrap();
        writer.await.unwrap();
        let want: Vec<u8> = (0..100u32).flat_map(|i| i.to_be_bytes()).collect();
        assert_eq!(got, want);
    });
}

#[test]
fn try_io_runs_only_when_ready_and_would_block_clears() {
    rt().block_on(async {
        let (tx, rx) = pipe::pipe().unwrap();
        spinpark_executor::yield_now().await;
        let mut called = false;
        let _ = rx.try_io(|| {
            called = true;
            Ok(())
        });
        assert!(!called, "an empty pipe looked readable");
        tx.writable().await.unwrap();
        assert_eq!(tx.try_write(b"x").unwrap(), 1);
        timeout(Duration::from_secs(30), rx.readable())
            .await
            .expect("never readable")
            .unwrap();
        let r = rx.try_io(|| Err::<(), _>(io::ErrorKind::WouldBlock.into()));
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::WouldBlock);
        called = false;
        let _ = rx.try_io(|| {
            called = true;
            Ok(())
        });
        assert!(!called, "WouldBlock did not clear readable");
    });
}

#[test]
fn a_sender_without_a_reader_is_enxio_unless_read_write() {
    rt().block_on(async {
        let fifo = Fifo::new("enxio");
        let e = OpenOptions::new().open_sender(&fifo.0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENXIO));
        let mut tx = OpenOptions::new()
            .read_write(true)
            .open_sender(&fifo.0)
            .unwrap();
        tx.write_all(b"fifo").await.unwrap();
        let mut rx = OpenOptions::new().open_receiver(&fifo.0).unwrap();
        let mut buf = [0; 4];
        timeout(Duration::from_secs(30), rx.read_exact(&mut buf))
            .await
            .expect("no data")
            .unwrap();
        assert_eq!(&buf, b"fifo");
    });
}

#[test]
fn only_fifos_in_the_right_mode_are_taken() {
    rt().block_on(async {
        let fifo = Fifo::new("modes");
        let file = fifo.0.with_file_name("plain");
        std::fs::write(&file, b"").unwrap();
        let e = OpenOptions::new().open_receiver(&file).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let f = std::fs::File::open(&file).unwrap();
        assert_eq!(
            Receiver::from_file(f).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        let _rx = OpenOptions::new().open_receiver(&fifo.0).unwrap();
        // Non-blocking: a plain read-only open of a FIFO waits for a writer.
        let read_only = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo.0)
            .unwrap();
        assert_eq!(
            Sender::from_file(read_only).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    });
}

#[test]
fn ready_reports_end_of_stream_when_the_sender_goes() {
    rt().block_on(async {
        let (tx, rx) = pipe::pipe().unwrap();
        drop(tx);
        let ready = timeout(Duration::from_secs(30), rx.ready(Interest::READABLE))
            .await
            .expect("no readiness")
            .unwrap();
        assert!(ready.is_read_closed());
        assert_eq!(rx.try_read(&mut [0; 4]).unwrap(), 0);
    });
}
