//! `spinpark::fs` on real files: whole-file functions, directories and links, `read_dir`,
//! and `File`'s buffered background reads and writes (round trips, the ordering of a write
//! before a read or seek, write errors surfacing on flush, `into_std`, a file dropped with a
//! write in flight), each `File` test on a multi-thread, a one-worker and a current-thread
//! runtime. Every file lives in a directory of its own under the system's temp directory,
//! removed at the end.

use std::future::Future;
use std::io::{IoSlice, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt, FutureExt};
use spinpark::fs::{self, File, OpenOptions};

/// A directory of its own under the temp directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "spinpark-fs-test-{}-{name}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The runtimes every `File` test runs on.
fn runtimes() -> Vec<(&'static str, spinpark::Runtime)> {
    vec![
        ("multi-thread", spinpark::Runtime::new().unwrap()),
        (
            "one worker",
            spinpark::Builder::new_multi_thread()
                .worker_threads(1)
                .build()
                .unwrap(),
        ),
        (
            "current-thread",
            spinpark::Builder::new_current_thread().build().unwrap(),
        ),
    ]
}

/// Runs `test` (given a fresh directory) on each runtime of [`runtimes`].
fn on_each_runtime<F, Fut>(name: &str, test: F)
where
    F: Fn(TempDir) -> Fut,
    Fut: Future<Output = ()>,
{
    for (flavour, rt) in runtimes() {
        let dir = TempDir::new(&format!("{name}-{}", flavour.replace(' ', "-")));
        eprintln!("{name} on a {flavour} runtime");
        rt.block_on(test(dir));
    }
}

/// `n` bytes that differ from position to position (so a misplaced chunk shows).
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[test]
fn whole_file_functions_round_trip() {
    on_each_runtime("whole", |dir| async move {
        let path = dir.join("a");
        fs::write(&path, b"first").await.unwrap();
        fs::write(&path, "second").await.unwrap();
        assert_eq!(fs::read(&path).await.unwrap(), b"second");
        assert_eq!(fs::read_to_string(&path).await.unwrap(), "second");

        let big = pattern(5 << 20);
        fs::write(&path, big.clone()).await.unwrap();
        assert_eq!(fs::read(&path).await.unwrap(), big);

        fs::write(&path, [0xff, 0xfe]).await.unwrap();
        let err = fs::read_to_string(&path).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    });
}

#[test]
fn bad_input_is_an_error() {
    on_each_runtime("bad", |dir| async move {
        let nul = fs::read("a\0b").await.unwrap_err();
        assert_eq!(nul.kind(), std::io::ErrorKind::InvalidInput);
        assert!(fs::read(dir.path()).await.is_err()); // a directory
        assert!(File::create(dir.path()).await.is_err());
        let missing = fs::read_dir(dir.join("missing")).await.unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        let none = OpenOptions::new().open(dir.join("x")).await.unwrap_err();
        assert_eq!(none.kind(), std::io::ErrorKind::InvalidInput);
        let exists = File::create_new(dir.path()).await.unwrap_err();
        assert_eq!(exists.kind(), std::io::ErrorKind::AlreadyExists);

        // set_len on a file open for reading only: an error, and the file reads on.
        std::fs::write(dir.join("r"), b"abc").unwrap();
        let mut file = File::open(dir.join("r")).await.unwrap();
        assert!(file.set_len(1).await.is_err());
        let mut all = Vec::new();
        file.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"abc");
    });
}

#[test]
fn outside_a_runtime_is_an_error() {
    let err = fs::read("/proc/self/stat")
        .now_or_never()
        .expect("fails at once")
        .unwrap_err();
    assert!(
        err.to_string().contains("outside a spinpark runtime"),
        "{err}"
    );

    // A File made outside works inside, and errs (without panicking) outside.
    let mut file = File::from_std(std::fs::File::open("/proc/self/stat").unwrap());
    let mut buf = [0; 16];
    assert!(file.read(&mut buf).now_or_never().unwrap().is_err());
    let rt = spinpark::Runtime::new().unwrap();
    assert!(rt.block_on(file.read(&mut buf)).unwrap() > 0);
}

#[test]
fn file_round_trip_with_append_seek_and_set_len() {
    on_each_runtime("round-trip", |dir| async move {
        let path = dir.join("f");
        let data = pattern(3 << 20); // more than one 2 MiB buffer
        let mut file = File::create(&path).await.unwrap();
        file.write_all(&data).await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), data);

        let mut append = OpenOptions::new().append(true).open(&path).await.unwrap();
        append.write_all(b"tail").await.unwrap();
        append.flush().await.unwrap();

        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .await
            .unwrap();
        let mut all = Vec::new();
        file.read_to_end(&mut all).await.unwrap();
        assert_eq!(&all[..data.len()], &data[..]);
        assert_eq!(&all[data.len()..], b"tail");

        assert_eq!(
            file.seek(SeekFrom::End(-4)).await.unwrap(),
            data.len() as u64
        );
        let mut tail = [0; 4];
        file.read_exact(&mut tail).await.unwrap();
        assert_eq!(&tail, b"tail");

        assert_eq!(file.seek(SeekFrom::Start(10)).await.unwrap(), 10);
        file.set_len(12).await.unwrap();
        assert_eq!(file.metadata().await.unwrap().len(), 12);
        let mut rest = Vec::new();
        file.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, &data[10..12]);

        file.set_len(20).await.unwrap(); // extends with zeros
        file.seek(SeekFrom::Start(0)).await.unwrap();
        let mut all = Vec::new();
        file.read_to_end(&mut all).await.unwrap();
        assert_eq!(&all[..12], &data[..12]);
        assert_eq!(&all[12..], [0; 8]);
    });
}

#[test]
fn a_write_is_in_place_before_the_next_read_or_seek() {
    on_each_runtime("order", |dir| async move {
        let path = dir.join("f");
        // create_new opens for reading and writing.
        let mut file = File::create_new(&path).await.unwrap();
        // In flight; the read waits for it, then reads from after it: end of file.
        file.write_all(b"abc").await.unwrap();
        let mut buf = [0; 8];
        assert_eq!(file.read(&mut buf).await.unwrap(), 0);
        assert_eq!(file.seek(SeekFrom::Start(0)).await.unwrap(), 0);
        assert_eq!(file.read(&mut buf).await.unwrap(), 3);
        assert_eq!(&buf[..3], b"abc");

        // Another handle sees the bytes once flushed.
        file.write_all(b"def").await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abcdef");
    });
}

/// Polls a read of up to `want` bytes once and drops it, as a `select!` that cancelled it
/// would: `true` if the read was still in flight, so that its bytes are now read ahead of
/// the reader (the next read takes them from the buffer), `false` if it completed at once
/// (then the file was seeked back to 0).
async fn abandon_a_read(file: &mut File, want: usize) -> bool {
    use futures_util::AsyncRead;
    let mut buf = vec![0; want];
    let waker = futures_util::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    match std::pin::Pin::new(&mut *file).poll_read(&mut cx, &mut buf) {
        std::task::Poll::Pending => true,
        std::task::Poll::Ready(_) => {
            file.seek(SeekFrom::Start(0)).await.unwrap();
            false
        }
    }
}

/// Opens `path` (holding `contents`) for reading and writing with some of it read ahead of
/// the reader, who is at position 0; `None` if no read stayed in flight long enough to
/// abandon (never seen: the pool's thread must wake first).
async fn file_with_read_ahead(path: &Path, contents: &[u8]) -> Option<File> {
    std::fs::write(path, contents).unwrap();
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .await
        .unwrap();
    for _ in 0..100 {
        if abandon_a_read(&mut file, 1024).await {
            return Some(file);
        }
    }
    eprintln!("every read completed in its first poll: read-ahead not exercised");
    None
}

#[test]
fn read_ahead_is_accounted_for_by_seek_write_and_set_len() {
    on_each_runtime("read-ahead", |dir| async move {
        let path = dir.join("f");
        // A seek from the current position counts from the reader, not the file.
        let Some(mut file) = file_with_read_ahead(&path, b"hello world").await else {
            return;
        };
        let mut five = [0; 5];
        file.read_exact(&mut five).await.unwrap(); // from the buffer: 6 bytes left in it
        assert_eq!(&five, b"hello");
        assert_eq!(file.seek(SeekFrom::Current(0)).await.unwrap(), 5);
        file.read_exact(&mut [0; 1]).await.unwrap();

        // A write lands where the reader is, not after the read-ahead.
        let Some(mut file) = file_with_read_ahead(&path, b"hello world").await else {
            return;
        };
        file.read_exact(&mut [0; 6]).await.unwrap();
        file.write_all(b"XX").await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello XXrld");

        // set_len leaves the reader where it was.
        let Some(mut file) = file_with_read_ahead(&path, b"hello world").await else {
            return;
        };
        file.read_exact(&mut [0; 2]).await.unwrap();
        file.set_len(5).await.unwrap();
        let mut rest = Vec::new();
        file.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"llo");

        // So does into_std.
        let Some(mut file) = file_with_read_ahead(&path, b"hello").await else {
            return;
        };
        file.read_exact(&mut [0; 1]).await.unwrap();
        let mut std = file.into_std().await;
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut std, &mut rest).unwrap();
        assert_eq!(rest, "ello");
    });
}

#[test]
fn vectored_writes_keep_their_order() {
    on_each_runtime("vectored", |dir| async move {
        let path = dir.join("f");
        let mut file = File::create(&path).await.unwrap();
        let parts = [IoSlice::new(b"ab"), IoSlice::new(b""), IoSlice::new(b"cd")];
        assert_eq!(file.write_vectored(&parts).await.unwrap(), 4);
        file.flush().await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abcd");
    });
}

#[test]
fn a_read_or_write_moves_at_most_max_buf_size() {
    on_each_runtime("max-buf", |dir| async move {
        let path = dir.join("f");
        std::fs::write(&path, pattern(3 << 20)).unwrap();
        let mut file = File::open(&path).await.unwrap();
        assert_eq!(file.max_buf_size(), 2 << 20);
        let mut huge = vec![0; 8 << 20];
        assert_eq!(file.read(&mut huge).await.unwrap(), 2 << 20);
        file.set_max_buf_size(1000);
        assert_eq!(file.read(&mut huge).await.unwrap(), 1000);

        let mut out = File::create(dir.join("g")).await.unwrap();
        out.set_max_buf_size(7);
        assert_eq!(out.write(&huge[..100]).await.unwrap(), 7);
        out.write_all(&huge[7..100]).await.unwrap();
        out.flush().await.unwrap();
        assert_eq!(std::fs::read(dir.join("g")).unwrap(), &huge[..100]);
    });
}

#[test]
#[should_panic(expected = "`max_buf_size` must be greater than 0")]
fn a_zero_max_buf_size_panics_as_tokio() {
    let mut file = File::from_std(std::fs::File::open("/proc/self/stat").unwrap());
    file.set_max_buf_size(0);
}

#[test]
fn write_errors_surface_on_flush() {
    on_each_runtime("write-err", |dir| async move {
        // Not open for writing: the write is taken, and fails on the pool.
        let path = dir.join("f");
        std::fs::write(&path, b"").unwrap();
        let mut file = File::open(&path).await.unwrap();
        assert_eq!(file.write(b"abc").await.unwrap(), 3);
        assert!(file.flush().await.is_err());
        file.flush().await.unwrap(); // reported once

        // Reported by the next write instead, when there is one.
        assert_eq!(file.write(b"abc").await.unwrap(), 3);
        assert!(file.write(b"def").await.is_err());

        // A failed write found by a read is kept for the next flush.
        assert_eq!(file.write(b"abc").await.unwrap(), 3);
        assert_eq!(file.read(&mut [0; 4]).await.unwrap(), 0);
        assert!(file.flush().await.is_err());

        // A device that is always full.
        if Path::new("/dev/full").exists() {
            let mut full = OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .await
                .unwrap();
            full.write_all(b"x").await.unwrap();
            let err = full.flush().await.unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
            // sync_all waits for the write but keeps its error for the flush.
            full.write_all(b"x").await.unwrap();
            let _ = full.sync_all().await;
            assert_eq!(
                full.flush().await.unwrap_err().raw_os_error(),
                Some(libc::ENOSPC)
            );
        }
    });
}

#[test]
fn into_std_after_writes_has_the_bytes() {
    on_each_runtime("into-std", |dir| async move {
        let path = dir.join("f");
        let data = pattern(1 << 20);
        let mut file = File::create(&path).await.unwrap();
        file.write_all(&data).await.unwrap(); // not flushed
        let std = file.into_std().await;
        assert_eq!(std.metadata().unwrap().len(), data.len() as u64);
        assert_eq!(std::fs::read(&path).unwrap(), data);

        // try_into_std: the std file if nothing holds it, else the File back.
        let mut file = File::create(&path).await.unwrap();
        file.write_all(b"abc").await.unwrap();
        match file.try_into_std() {
            Ok(_) => {} // the write had finished
            Err(mut file) => {
                file.flush().await.unwrap();
                drop(file.into_std().await);
            }
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
    });
}

#[test]
fn a_dropped_file_still_writes_what_it_took() {
    let data = pattern(4 << 20);
    for (flavour, rt) in runtimes() {
        let dir = TempDir::new(&format!("dropped-{}", flavour.replace(' ', "-")));
        let path = dir.join("f");
        rt.block_on(async {
            let mut file = File::create(&path).await.unwrap();
            // Two writes of 2 MiB: the first is waited for by the second, which is in
            // flight when the file is dropped.
            file.write_all(&data).await.unwrap();
        });
        drop(rt); // waits for the blocking pool
        assert_eq!(std::fs::read(&path).unwrap(), data, "{flavour}");
    }
}

#[test]
fn a_file_survives_a_pool_that_shut_down() {
    let dir = TempDir::new("dead-pool");
    let path = dir.join("f");
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let rt = spinpark::Runtime::new().unwrap();
    let handle = rt.handle().clone();
    rt.shutdown_timeout(std::time::Duration::ZERO);
    let _enter = handle.enter();
    let std = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut file = File::from_std(std);
    let mut buf = [0; 8];
    // The pool drops each closure at once, so each operation fails in its first poll.
    let text =
        |res: Option<std::io::Result<()>>| res.expect("fails at once").unwrap_err().to_string();
    for _ in 0..2 {
        // Every operation fails with tokio's text; none panics; the file stays usable.
        let cancelled = "task was cancelled";
        assert_eq!(
            text(file.read(&mut buf).map(|r| r.map(drop)).now_or_never()),
            cancelled
        );
        assert_eq!(
            text(
                file.seek(SeekFrom::Start(0))
                    .map(|r| r.map(drop))
                    .now_or_never()
            ),
            cancelled
        );
        assert_eq!(text(file.set_len(0).now_or_never()), cancelled);
        // A write is refused before it is taken, so its bytes are not silently dropped.
        let refused = "background task failed";
        assert_eq!(
            text(file.write(b"z").map(|r| r.map(drop)).now_or_never()),
            refused
        );
        assert!(matches!(file.flush().now_or_never(), Some(Ok(()))));
    }
    assert_eq!(
        text(fs::read(&path).map(|r| r.map(drop)).now_or_never()),
        "background task failed"
    );
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap().len(), 4096); // nothing was written
}

#[test]
fn file_methods_on_a_shared_file() {
    on_each_runtime("shared", |dir| async move {
        let path = dir.join("f");
        let mut file = File::create(&path).await.unwrap();
        file.write_all(b"0123456789").await.unwrap();
        let file = std::sync::Arc::new(file);
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let file = file.clone();
                spinpark::spawn(async move { file.sync_all().await })
            })
            .collect();
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        assert_eq!(file.metadata().await.unwrap().len(), 10);
        let clone = file.try_clone().await.unwrap();
        assert_eq!(clone.max_buf_size(), file.max_buf_size());
        file.sync_data().await.unwrap();

        let when = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        file.set_modified(when).await.unwrap();
        assert_eq!(file.metadata().await.unwrap().modified().unwrap(), when);
        let mut perm = file.metadata().await.unwrap().permissions();
        perm.set_readonly(true);
        file.set_permissions(perm).await.unwrap();
        assert!(fs::metadata(&path).await.unwrap().permissions().readonly());
    });
}

#[test]
fn directories_links_and_paths() {
    on_each_runtime("paths", |dir| async move {
        fs::create_dir(dir.join("d")).await.unwrap();
        assert!(fs::create_dir(dir.join("d")).await.is_err());
        fs::create_dir_all(dir.join("d/e/f")).await.unwrap();
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir.join("g/h"))
            .await
            .unwrap();
        assert!(fs::DirBuilder::new().create(dir.join("g/h")).await.is_err());
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.join("g/h"))
                .await
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }

        fs::write(dir.join("a"), b"data").await.unwrap();
        assert_eq!(fs::copy(dir.join("a"), dir.join("b")).await.unwrap(), 4);
        fs::rename(dir.join("b"), dir.join("d/c")).await.unwrap();
        assert!(!fs::try_exists(dir.join("b")).await.unwrap());
        assert_eq!(fs::read(dir.join("d/c")).await.unwrap(), b"data");

        fs::hard_link(dir.join("a"), dir.join("hard"))
            .await
            .unwrap();
        fs::symlink("a", dir.join("soft")).await.unwrap();
        assert_eq!(
            fs::read_link(dir.join("soft")).await.unwrap(),
            Path::new("a")
        );
        assert!(fs::symlink_metadata(dir.join("soft"))
            .await
            .unwrap()
            .is_symlink());
        assert!(fs::metadata(dir.join("soft")).await.unwrap().is_file());
        assert_eq!(
            fs::canonicalize(dir.join("soft")).await.unwrap(),
            std::fs::canonicalize(dir.join("a")).unwrap()
        );
        {
            use std::os::unix::fs::MetadataExt;
            let a = fs::metadata(dir.join("a")).await.unwrap();
            assert_eq!(a.nlink(), 2);
        }

        fs::remove_file(dir.join("hard")).await.unwrap();
        assert!(fs::remove_file(dir.join("hard")).await.is_err());
        assert!(fs::remove_dir(dir.join("d")).await.is_err()); // not empty
        fs::remove_dir(dir.join("g/h")).await.unwrap();
        fs::remove_dir_all(dir.join("d")).await.unwrap();
        assert!(!fs::try_exists(dir.join("d")).await.unwrap());
    });
}

#[test]
fn read_dir_lists_every_entry() {
    on_each_runtime("read-dir", |dir| async move {
        // More than one chunk of entries.
        let mut expected = Vec::new();
        for i in 0..100 {
            let name = format!("file{i:03}");
            std::fs::write(dir.join(&name), i.to_string()).unwrap();
            expected.push(name);
        }
        std::fs::create_dir(dir.join("sub")).unwrap();
        expected.push("sub".into());

        let mut listed = Vec::new();
        let mut entries = fs::read_dir(dir.path()).await.unwrap();
        while let Some(entry) = entries.next_entry().await.unwrap() {
            let name = entry.file_name().into_string().unwrap();
            assert_eq!(entry.path(), dir.join(&name));
            let file_type = entry.file_type().await.unwrap();
            assert_eq!(file_type.is_dir(), name == "sub");
            assert_eq!(entry.metadata().await.unwrap().is_dir(), name == "sub");
            {
                use std::os::unix::fs::MetadataExt;
                assert_eq!(entry.ino(), std::fs::metadata(entry.path()).unwrap().ino());
            }
            listed.push(name);
        }
        // The end stays the end.
        assert!(entries.next_entry().await.unwrap().is_none());
        listed.sort();
        assert_eq!(listed, expected);
    });
}

/// tokio's traits, apart from futures-io's extension traits (both have `read`, `seek`, ...).
#[cfg(feature = "tokio-io")]
mod tokio_io {
    use super::{on_each_runtime, File, SeekFrom};
    use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

    #[test]
    fn tokio_io_traits_round_trip() {
        on_each_runtime("tokio-io", |dir| async move {
            let path = dir.join("f");
            let mut file = File::create_new(&path).await.unwrap();
            file.write_all(b"hello world").await.unwrap();
            assert_eq!(file.stream_position().await.unwrap(), 11);
            file.rewind().await.unwrap();
            let mut five = [0; 5];
            file.read_exact(&mut five).await.unwrap();
            assert_eq!(&five, b"hello");
            assert_eq!(file.seek(SeekFrom::Current(1)).await.unwrap(), 6);
            let mut rest = String::new();
            file.read_to_string(&mut rest).await.unwrap();
            assert_eq!(rest, "world");
            file.write_all(b"!").await.unwrap();
            file.shutdown().await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"hello world!");

            // start_seek while an operation is in flight is refused, as tokio's.
            use tokio::io::AsyncSeek;
            file.write_all(b"?").await.unwrap();
            let mut pinned = std::pin::Pin::new(&mut file);
            assert!(pinned.as_mut().start_seek(SeekFrom::Start(0)).is_err());
            file.flush().await.unwrap();
            let mut buf = tokio::io::BufReader::new(file);
            buf.rewind().await.unwrap();
            let mut all = String::new();
            buf.read_to_string(&mut all).await.unwrap();
            assert_eq!(all, "hello world!?");
        });
    }
}

/// The types and futures are `Send` (and the types `Sync` and `Unpin`), as tokio's, so they
/// cross `spawn` and sit in shared state.
#[test]
fn auto_traits_as_tokio() {
    fn send<T: Send>(_: &T) {}
    fn shared<T: Send + Sync + Unpin>() {}
    shared::<File>();
    shared::<OpenOptions>();
    shared::<fs::DirBuilder>();
    shared::<fs::ReadDir>();
    shared::<fs::DirEntry>();
    shared::<fs::FileTimes>();

    let file = File::from_std(std::fs::File::open("/proc/self/stat").unwrap());
    send(&file.sync_all());
    send(&file.set_len(0));
    send(&file.try_clone());
    send(&file.set_times(fs::FileTimes::new()));
    send(&File::open("x"));
    send(&fs::read("x"));
    send(&fs::write("x", b"y"));
    send(&fs::read_dir("x"));
    send(&fs::DirBuilder::new().create("x"));
    send(&file.into_std());
}
