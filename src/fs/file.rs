//! [`File`]: an open file whose reads and writes run on the blocking pool, through a buffer.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use futures_util::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
//! use std::io::SeekFrom;
//! let path = std::env::temp_dir().join(format!("spinpark-file-{}", std::process::id()));
//! let mut file = spinpark::fs::File::create_new(&path).await?; // read and write
//! file.write_all(b"hello world").await?;
//! file.seek(SeekFrom::Start(6)).await?; // waits for the write
//! let mut word = String::new();
//! file.read_to_string(&mut word).await?;
//! assert_eq!(word, "world");
//! file.set_len(5).await?;
//! assert_eq!(file.metadata().await?.len(), 5);
//! std::fs::remove_file(&path)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: the std file is shared (`Arc`) with the closures on the blocking pool, and the state
//! machine of `file_state.rs` sits behind an async lock. The I/O traits take `&mut File`,
//! so they reach the state without locking (`get_mut`); the methods here take `&File`, as
//! tokio's do, and lock it, so that two of them on one file wait for each other and for
//! the operation in flight.

use std::fmt;
use std::fs::{Metadata, Permissions};
use std::future::poll_fn;
use std::io::{self, Seek};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use futures_util::lock::Mutex;

use super::file_state::{Inner, Operation};
use super::POOL;
use super::{FileTimes, OpenOptions};
use crate::blocking::DEFAULT_MAX_BUF_SIZE;

/// An open file for async code. tokio's `tokio::fs::File`: reads and writes run on the
/// blocking pool, through a buffer of at most [`max_buf_size`](File::max_buf_size) bytes.
///
/// It implements futures-io's `AsyncRead`, `AsyncWrite` and `AsyncSeek` (so the
/// `futures` crate's `AsyncReadExt` and friends work on it), and with the `tokio-io`
/// feature tokio's.
///
/// # Writes return before the bytes reach the file
///
/// A write copies its bytes into the buffer, starts writing them on the blocking pool and
/// returns; the next write, a read, a seek, `flush`
/// or [`sync_all`](File::sync_all) waits for it first. So:
///
/// * flush before handing the file's contents to anyone else: after `flush` returns `Ok`,
///   every byte written has been passed to the operating system (`write(2)`); a failed
///   write's error comes back from the next write or flush. Flushing does not make the
///   bytes durable: [`sync_all`](File::sync_all) does.
/// * a file dropped while a write is in flight still gets the bytes (the closure runs to
///   its end), but nobody hears of a failure: flush first where that matters.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use futures_util::AsyncWriteExt;
/// let path = std::env::temp_dir().join(format!("spinpark-file-doc-{}", std::process::id()));
/// let mut file = spinpark::fs::File::create(&path).await?;
/// file.write_all(b"data").await?;
/// file.flush().await?;
/// assert_eq!(std::fs::read(&path)?, b"data");
/// std::fs::remove_file(&path)?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct File {
    pub(super) std: Arc<std::fs::File>,
    pub(super) inner: Mutex<Inner>,
    pub(super) max_buf_size: usize,
}

impl File {
    /// Opens the file at `path` for reading.
    ///
    /// # Errors
    /// Those of [`std::fs::File::open`] (missing, no permission, ...).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let err = spinpark::fs::File::open("/no/such/file").await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    /// # });
    /// ```
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        Self::options().read(true).open(path).await
    }

    /// Opens the file at `path` for writing, creating it or truncating it.
    ///
    /// # Errors
    /// Those of [`std::fs::File::create`] (the directory is missing, no permission, ...).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// assert!(spinpark::fs::File::create("/no/such/dir/file").await.is_err());
    /// # });
    /// ```
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        Self::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .await
    }

    /// Creates a new file at `path`, open for reading and writing; `AlreadyExists` if
    /// something is there.
    ///
    /// # Errors
    /// Those of [`std::fs::File::create_new`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let err = spinpark::fs::File::create_new("/").await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    /// # });
    /// ```
    pub async fn create_new<P: AsRef<Path>>(path: P) -> io::Result<File> {
        Self::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .await
    }

    /// [`OpenOptions::new`], all options off.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let file = spinpark::fs::File::options().read(true).open("/proc/self/stat").await?;
    /// # drop(file);
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Wraps an open std file; reads and writes start at its current position.
    ///
    /// ```
    /// let std = std::fs::File::open("/proc/self/stat").unwrap();
    /// let file = spinpark::fs::File::from_std(std); // needs no runtime until used
    /// assert_eq!(file.max_buf_size(), 2 * 1024 * 1024);
    /// ```
    pub fn from_std(std: std::fs::File) -> File {
        File {
            std: Arc::new(std),
            inner: Mutex::new(Inner::new()),
            max_buf_size: DEFAULT_MAX_BUF_SIZE,
        }
    }

    /// Waits for the operation in flight (keeping a write's error for the next write or
    /// flush), then makes the file's data and metadata durable ([`std::fs::File::sync_all`],
    /// `fsync(2)`, on the blocking pool).
    ///
    /// # Errors
    /// Those of `fsync(2)`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use futures_util::AsyncWriteExt;
    /// let path = std::env::temp_dir().join(format!("spinpark-sync-{}", std::process::id()));
    /// let mut file = spinpark::fs::File::create(&path).await?;
    /// file.write_all(b"kept").await?;
    /// file.sync_all().await?; // written and on disk
    /// assert_eq!(std::fs::read(&path)?, b"kept");
    /// std::fs::remove_file(&path)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn sync_all(&self) -> io::Result<()> {
        let mut inner = self.inner.lock().await;
        poll_fn(|cx| inner.poll_complete_inflight(cx)).await;
        let std = self.std.clone();
        POOL.asyncify(move || std.sync_all()).await
    }

    /// As [`sync_all`](File::sync_all), without the metadata a read does not need
    /// (`fdatasync(2)`).
    ///
    /// # Errors
    /// Those of `fdatasync(2)`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-sync-data-{}", std::process::id()));
    /// let file = spinpark::fs::File::create(&path).await?;
    /// file.sync_data().await?;
    /// std::fs::remove_file(&path)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn sync_data(&self) -> io::Result<()> {
        let mut inner = self.inner.lock().await;
        poll_fn(|cx| inner.poll_complete_inflight(cx)).await;
        let std = self.std.clone();
        POOL.asyncify(move || std.sync_data()).await
    }

    /// Truncates or extends (with zeros) the file to `size` bytes, after the operation in
    /// flight. The position does not move, even past the new end.
    ///
    /// # Errors
    /// Those of [`std::fs::File::set_len`] (the file is not open for writing, ...).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-set-len-{}", std::process::id()));
    /// let file = spinpark::fs::File::create(&path).await?;
    /// file.set_len(10).await?;
    /// assert_eq!(std::fs::read(&path)?, [0; 10]);
    /// std::fs::remove_file(&path)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        let mut inner = self.inner.lock().await;
        poll_fn(|cx| inner.poll_complete_inflight(cx)).await;
        let (buf, back) = inner.take_for_op();
        let std = self.std.clone();
        // In flight as any other operation: should this future be dropped, the next one
        // waits for it.
        inner.start(POOL.spawn(move || {
            let res = match back {
                Some(back) => (&*std).seek(back).and_then(|_| std.set_len(size)),
                None => std.set_len(size),
            };
            (Operation::SetLen(res), buf)
        })?);
        match poll_fn(|cx| inner.poll_inflight(cx)).await? {
            Some(Operation::SetLen(res)) => res,
            // Only the operation just started can be in flight here.
            _ => Ok(()),
        }
    }

    /// The file's metadata ([`std::fs::File::metadata`], `fstat(2)`, on the blocking pool).
    /// It does not wait for the operation in flight, so the size may not count a write
    /// that has not been flushed.
    ///
    /// # Errors
    /// Those of `fstat(2)`.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let file = spinpark::fs::File::open("/proc/self/stat").await?;
    /// assert!(file.metadata().await?.is_file());
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let std = self.std.clone();
        POOL.asyncify(move || std.metadata()).await
    }

    /// A second `File` for the same open file (`dup(2)`, after the operation in flight):
    /// the two share the position, not their buffers. It keeps this one's
    /// [`max_buf_size`](File::max_buf_size).
    ///
    /// # Errors
    /// Those of `dup(2)` (too many open files, ...).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let file = spinpark::fs::File::open("/proc/self/stat").await?;
    /// let other = file.try_clone().await?;
    /// assert_ne!(std::os::fd::AsRawFd::as_raw_fd(&file), std::os::fd::AsRawFd::as_raw_fd(&other));
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn try_clone(&self) -> io::Result<File> {
        let mut inner = self.inner.lock().await;
        poll_fn(|cx| inner.poll_complete_inflight(cx)).await;
        let std = self.std.clone();
        let clone = POOL.asyncify(move || std.try_clone()).await?;
        let mut file = File::from_std(clone);
        file.max_buf_size = self.max_buf_size;
        Ok(file)
    }

    /// The std file, once the operation in flight has finished; bytes read ahead and not
    /// yet consumed are given back (the std file's position is moved back over them), so
    /// the std file goes on where this one was.
    ///
    /// An error of the write in flight is lost: flush first to hear of it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use futures_util::AsyncWriteExt;
    /// let path = std::env::temp_dir().join(format!("spinpark-into-std-{}", std::process::id()));
    /// let mut file = spinpark::fs::File::create(&path).await?;
    /// file.write_all(b"abc").await?; // in flight
    /// let std = file.into_std().await; // waits for it
    /// assert_eq!(std.metadata()?.len(), 3);
    /// std::fs::remove_file(&path)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn into_std(mut self) -> std::fs::File {
        let inner = self.inner.get_mut();
        poll_fn(|cx| inner.poll_complete_inflight(cx)).await;
        let (_, back) = inner.take_for_op();
        if let Some(back) = back {
            // A seek relative to the current position: no I/O, it does not block. Should it
            // fail (an unseekable file), the read-ahead bytes are lost, as they would be
            // with tokio.
            let _ = (&*self.std).seek(back);
        }
        let mut std = self.std;
        loop {
            match Arc::try_unwrap(std) {
                Ok(file) => return file,
                // A closure of an operation whose future was dropped (`metadata`, `sync_all`,
                // ...) still holds the file; it ends soon.
                Err(shared) => {
                    std = shared;
                    spinpark_executor::yield_now().await;
                }
            }
        }
    }

    /// The std file at once, or this `File` back (`Err`) while a closure on the blocking
    /// pool still holds it (an operation in flight). As with tokio, bytes read ahead are
    /// lost and an error of a finished write unreported: prefer
    /// [`into_std`](File::into_std).
    ///
    /// ```
    /// let file = spinpark::fs::File::from_std(std::fs::File::open("/proc/self/stat").unwrap());
    /// assert!(file.try_into_std().is_ok()); // nothing was in flight
    /// ```
    #[allow(clippy::result_large_err)]
    pub fn try_into_std(mut self) -> Result<std::fs::File, Self> {
        match Arc::try_unwrap(self.std) {
            Ok(file) => Ok(file),
            Err(shared) => {
                self.std = shared;
                Err(self)
            }
        }
    }

    /// Sets the file's permissions ([`std::fs::File::set_permissions`], `fchmod(2)`, on the
    /// blocking pool).
    ///
    /// # Errors
    /// Those of `fchmod(2)` (not the owner, ...).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-perm-{}", std::process::id()));
    /// let file = spinpark::fs::File::create(&path).await?;
    /// let mut perm = file.metadata().await?.permissions();
    /// perm.set_readonly(true);
    /// file.set_permissions(perm).await?;
    /// assert!(std::fs::metadata(&path)?.permissions().readonly());
    /// std::fs::remove_file(&path)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn set_permissions(&self, perm: Permissions) -> io::Result<()> {
        let std = self.std.clone();
        POOL.asyncify(move || std.set_permissions(perm)).await
    }

    /// Sets the file's access and modification times, those `times` has, after the
    /// operation in flight (which could otherwise change them after this)
    /// ([`std::fs::File::set_times`] on the blocking pool).
    ///
    /// # Errors
    /// Those of `futimens(2)` (not the owner, ...).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::time::{Duration, SystemTime};
    /// let path = std::env::temp_dir().join(format!("spinpark-times-{}", std::process::id()));
    /// let file = spinpark::fs::File::create(&path).await?;
    /// let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_500_000_000);
    /// file.set_times(spinpark::fs::FileTimes::new().set_modified(when)).await?;
    /// assert_eq!(file.metadata().await?.modified()?, when);
    /// std::fs::remove_file(&path)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn set_times(&self, times: FileTimes) -> io::Result<()> {
        let mut inner = self.inner.lock().await;
        poll_fn(|cx| inner.poll_complete_inflight(cx)).await;
        let std = self.std.clone();
        let times = times.into_std();
        POOL.asyncify(move || std.set_times(times)).await
    }

    /// Sets the file's modification time: [`set_times`](File::set_times) with that alone.
    ///
    /// # Errors
    /// As [`set_times`](File::set_times).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("spinpark-mtime-{}", std::process::id()));
    /// let file = spinpark::fs::File::create(&path).await?;
    /// file.set_modified(std::time::SystemTime::UNIX_EPOCH).await?;
    /// assert_eq!(file.metadata().await?.modified()?, std::time::SystemTime::UNIX_EPOCH);
    /// std::fs::remove_file(&path)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn set_modified(&self, time: SystemTime) -> io::Result<()> {
        self.set_times(FileTimes::new().set_modified(time)).await
    }

    /// Sets how many bytes one read or write moves at most, which is also the most the
    /// buffer holds (default 2 MiB). A larger write is taken in parts (the write returns
    /// the part's length, as a short write); a larger read returns at most this many.
    ///
    /// # Panics
    /// If `max_buf_size` is 0, as tokio's does: no read or write could make progress.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use futures_util::AsyncReadExt;
    /// let mut file = spinpark::fs::File::open("/proc/self/stat").await?;
    /// file.set_max_buf_size(4);
    /// let mut buf = [0; 100];
    /// assert_eq!(file.read(&mut buf).await?, 4);
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    #[track_caller]
    pub fn set_max_buf_size(&mut self, max_buf_size: usize) {
        assert!(max_buf_size > 0, "`max_buf_size` must be greater than 0");
        self.max_buf_size = max_buf_size;
    }

    /// How many bytes one read or write moves at most; see
    /// [`set_max_buf_size`](File::set_max_buf_size).
    ///
    /// ```
    /// let file = spinpark::fs::File::from_std(std::fs::File::open("/proc/self/stat").unwrap());
    /// assert_eq!(file.max_buf_size(), 2 * 1024 * 1024);
    /// ```
    pub fn max_buf_size(&self) -> usize {
        self.max_buf_size
    }
}

impl From<std::fs::File> for File {
    fn from(std: std::fs::File) -> Self {
        Self::from_std(std)
    }
}

impl From<OwnedFd> for File {
    fn from(fd: OwnedFd) -> Self {
        Self::from_std(std::fs::File::from(fd))
    }
}

impl AsRawFd for File {
    fn as_raw_fd(&self) -> RawFd {
        self.std.as_raw_fd()
    }
}

impl AsFd for File {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.std.as_fd()
    }
}

impl FromRawFd for File {
    /// # Safety
    /// As [`std::fs::File::from_raw_fd`]: `fd` is open and owned by nobody else.
    unsafe fn from_raw_fd(fd: RawFd) -> Self {
        // SAFETY: the caller gives this function the contract of std's `from_raw_fd`, which
        // is all that call needs.
        Self::from_std(unsafe { std::fs::File::from_raw_fd(fd) })
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("spinpark::fs::File")
            .field("std", &self.std)
            .finish()
    }
}
