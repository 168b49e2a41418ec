//! Listing a directory: [`read_dir`], the [`ReadDir`] it returns, and its [`DirEntry`]s.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("spinpark-read-dir-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("one"), "")?;
//! let mut names = Vec::new();
//! let mut entries = spinpark::fs::read_dir(&dir).await?;
//! while let Some(entry) = entries.next_entry().await? {
//!     assert!(entry.file_type().await?.is_file());
//!     names.push(entry.file_name());
//! }
//! assert_eq!(names, ["one"]);
//! std::fs::remove_dir_all(&dir)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: entries are read [`CHUNK`] at a time by one closure on the blocking pool, which
//! also notes each entry's file type (on Linux the directory listing has it, so no extra
//! system call); `next_entry` hands out the chunk's entries and starts the next chunk when
//! they run out. An entry that failed ends its chunk, as tokio's does.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{FileType, Metadata};
use std::future::{poll_fn, Future};
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use spinpark_executor::JoinHandle;

use super::POOL;

/// Entries read by one closure on the blocking pool.
const CHUNK: usize = 32;

/// Opens the directory `path` for listing ([`std::fs::read_dir`] on the blocking pool,
/// which also reads the first entries).
///
/// The listing does not include `.` and `..`; its order is the file system's.
///
/// # Errors
/// Those of [`std::fs::read_dir`] (missing, not a directory, no permission, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let err = spinpark::fs::read_dir("/no/such/dir").await.unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// # });
/// ```
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || {
        let std = std::fs::read_dir(path)?;
        Ok(ReadDir(State::Idle(Chunk::read(VecDeque::new(), std))))
    })
    .await
}

/// A directory's entries, from [`read_dir`]. tokio's `ReadDir`: call
/// [`next_entry`](ReadDir::next_entry) until it returns `None`.
#[derive(Debug)]
#[must_use = "a ReadDir lists nothing until next_entry is called"]
pub struct ReadDir(State);

#[derive(Debug)]
enum State {
    /// Entries at hand.
    Idle(Chunk),
    /// A closure on the blocking pool reads the next chunk.
    Pending(JoinHandle<Chunk>),
}

/// Some entries, and the listing to read more from (`None` once it ended).
#[derive(Debug)]
struct Chunk {
    entries: VecDeque<io::Result<DirEntry>>,
    rest: Option<std::fs::ReadDir>,
}

impl Chunk {
    /// Reads up to [`CHUNK`] entries of `std` into `entries` (empty, its capacity reused).
    fn read(mut entries: VecDeque<io::Result<DirEntry>>, mut std: std::fs::ReadDir) -> Chunk {
        for _ in 0..CHUNK {
            match std.next() {
                None => {
                    return Chunk {
                        entries,
                        rest: None,
                    }
                }
                Some(Ok(entry)) => entries.push_back(Ok(DirEntry {
                    file_type: entry.file_type().ok(),
                    std: Arc::new(entry),
                })),
                Some(Err(e)) => {
                    entries.push_back(Err(e));
                    break;
                }
            }
        }
        Chunk {
            entries,
            rest: Some(std),
        }
    }

    /// Nothing more to list.
    fn ended() -> Chunk {
        Chunk {
            entries: VecDeque::new(),
            rest: None,
        }
    }
}

impl ReadDir {
    /// The next entry, or `None` once all have been listed.
    ///
    /// Cancel safe: dropping the future loses no entry.
    ///
    /// # Errors
    /// An entry that could not be read (the listing goes on after it); an error if the
    /// runtime shut down while the pool read the next entries (the listing then ends).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut entries = spinpark::fs::read_dir("/").await?;
    /// let mut count = 0;
    /// while let Some(_entry) = entries.next_entry().await? {
    ///     count += 1;
    /// }
    /// assert!(count > 0);
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// [`next_entry`](ReadDir::next_entry) as a poll function: `Ready(Ok(None))` at the
    /// end; when `Pending`, the waker of the latest call is woken.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut entries = spinpark::fs::read_dir("/").await?;
    /// let first = std::future::poll_fn(|cx| entries.poll_next_entry(cx)).await?;
    /// assert!(first.is_some());
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        loop {
            match &mut self.0 {
                State::Idle(chunk) => {
                    if let Some(entry) = chunk.entries.pop_front() {
                        return Poll::Ready(entry.map(Some));
                    }
                    let Some(std) = chunk.rest.take() else {
                        return Poll::Ready(Ok(None));
                    };
                    let entries = std::mem::take(&mut chunk.entries);
                    self.0 = State::Pending(POOL.spawn(move || Chunk::read(entries, std))?);
                }
                State::Pending(handle) => match ready!(Pin::new(handle).poll(cx)) {
                    Ok(chunk) => self.0 = State::Idle(chunk),
                    Err(e) => {
                        self.0 = State::Idle(Chunk::ended());
                        return Poll::Ready(Err(e.into()));
                    }
                },
            }
        }
    }
}

/// One entry of a [`ReadDir`]. tokio's `DirEntry`; see [`std::fs::DirEntry`].
#[derive(Debug)]
pub struct DirEntry {
    /// Read with the entry, where the listing had it.
    file_type: Option<FileType>,
    std: Arc<std::fs::DirEntry>,
}

impl DirEntry {
    /// The entry's full path: the path given to [`read_dir`] joined with its name.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let entry = spinpark::fs::read_dir("/").await?.next_entry().await?.unwrap();
    /// assert_eq!(entry.path().parent(), Some(std::path::Path::new("/")));
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub fn path(&self) -> PathBuf {
        self.std.path()
    }

    /// The entry's name within its directory.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let entry = spinpark::fs::read_dir("/").await?.next_entry().await?.unwrap();
    /// assert_eq!(entry.path().file_name(), Some(&*entry.file_name()));
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub fn file_name(&self) -> OsString {
        self.std.file_name()
    }

    /// The entry's metadata, not following a symbolic link ([`std::fs::DirEntry::metadata`]
    /// on the blocking pool).
    ///
    /// # Errors
    /// Those of [`std::fs::DirEntry::metadata`] (the entry was removed meanwhile, ...).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut entries = spinpark::fs::read_dir("/proc/self").await?;
    /// while let Some(entry) = entries.next_entry().await? {
    ///     if entry.file_name() == "exe" {
    ///         assert!(entry.metadata().await?.file_type().is_symlink());
    ///     }
    /// }
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let std = self.std.clone();
        POOL.asyncify(move || std.metadata()).await
    }

    /// The entry's file type, not following a symbolic link: at once when the listing had
    /// it, else from the blocking pool ([`std::fs::DirEntry::file_type`]).
    ///
    /// # Errors
    /// Those of [`std::fs::DirEntry::file_type`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut entries = spinpark::fs::read_dir("/proc/self").await?;
    /// while let Some(entry) = entries.next_entry().await? {
    ///     if entry.file_name() == "fd" {
    ///         assert!(entry.file_type().await?.is_dir());
    ///     }
    /// }
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn file_type(&self) -> io::Result<FileType> {
        if let Some(file_type) = self.file_type {
            return Ok(file_type);
        }
        let std = self.std.clone();
        POOL.asyncify(move || std.file_type()).await
    }

    /// The entry's inode number, as the listing gave it.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use std::os::unix::fs::MetadataExt;
    /// let dir = std::env::temp_dir().join(format!("spinpark-ino-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// std::fs::write(dir.join("f"), "")?;
    /// let entry = spinpark::fs::read_dir(&dir).await?.next_entry().await?.unwrap();
    /// assert_eq!(entry.ino(), std::fs::metadata(dir.join("f"))?.ino());
    /// std::fs::remove_dir_all(&dir)?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    #[cfg(unix)]
    pub fn ino(&self) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(&*self.std)
    }
}
