//! [`OpenOptions`]: how a [`File`] is opened (read, write, append, truncate, create,
//! create_new, and on Unix the mode and extra `open(2)` flags).
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use futures_util::AsyncWriteExt;
//! let path = std::env::temp_dir().join(format!("spinpark-options-{}", std::process::id()));
//! std::fs::write(&path, "a")?;
//! let mut file = spinpark::fs::OpenOptions::new().append(true).open(&path).await?;
//! file.write_all(b"b").await?;
//! file.flush().await?;
//! assert_eq!(std::fs::read(&path)?, b"ab");
//! std::fs::remove_file(&path)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: a [`std::fs::OpenOptions`] inside, which the builder methods set; `open` runs its
//! `open` on the blocking pool and wraps the result in a [`File`]. Its `Debug` is std's, so
//! it shows every option.

use std::io;
use std::path::Path;

use super::File;
use super::POOL;

/// Options for opening a file. tokio's `OpenOptions`; see [`std::fs::OpenOptions`] for
/// what each option means and which combinations `open` refuses.
#[derive(Clone, Debug)]
pub struct OpenOptions(std::fs::OpenOptions);

impl OpenOptions {
    /// All options off: set at least `read`, `write` or `append` before opening.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let err = spinpark::fs::OpenOptions::new().open("/").await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput); // no access mode given
    /// # });
    /// ```
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new())
    }

    /// Open for reading.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let file = spinpark::fs::OpenOptions::new().read(true).open("/proc/self/stat").await?;
    /// # drop(file);
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        self
    }

    /// Open for writing (at the start unless `append`; without `truncate` the old bytes
    /// past what is written stay).
    ///
    /// ```
    /// let options = spinpark::fs::OpenOptions::new().write(true).clone();
    /// assert!(format!("{options:?}").contains("write: true"));
    /// ```
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        self
    }

    /// Open for appending: every write goes to the file's end, whatever the position. Implies
    /// writing.
    ///
    /// ```
    /// let options = spinpark::fs::OpenOptions::new().append(true).clone();
    /// assert!(format!("{options:?}").contains("append: true"));
    /// ```
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        self
    }

    /// Truncate an existing file to length 0 when opening it (needs `write`).
    ///
    /// ```
    /// let options = spinpark::fs::OpenOptions::new().truncate(true).clone();
    /// assert!(format!("{options:?}").contains("truncate: true"));
    /// ```
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        self
    }

    /// Create the file if it does not exist (needs `write` or `append`).
    ///
    /// ```
    /// let options = spinpark::fs::OpenOptions::new().create(true).clone();
    /// assert!(format!("{options:?}").contains("create: true"));
    /// ```
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        self
    }

    /// Create the file, failing with `AlreadyExists` if something is at the path (in one
    /// step, so no other process can slip a file in between); `create` and `truncate` are
    /// then ignored.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let mut options = spinpark::fs::OpenOptions::new();
    /// options.write(true).create_new(true);
    /// let err = options.open("/proc/self/stat").await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    /// # });
    /// ```
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        self
    }

    /// The mode (permission bits) a file created by `open` gets, less the process's umask
    /// (default 0o666).
    ///
    /// ```
    /// let mode = format!("{:?}", spinpark::fs::OpenOptions::new().mode(0o644));
    /// assert!(mode.contains("mode: 0o000644") || mode.contains("mode: 420"), "{mode}");
    /// ```
    #[cfg(unix)]
    pub fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::mode(&mut self.0, mode);
        self
    }

    /// Extra flags for `open(2)` (`libc::O_NOFOLLOW`, `libc::O_DIRECT`, ...), or-ed with
    /// those the other options imply; the access mode bits are ignored.
    ///
    /// ```
    /// let options = format!("{:?}", spinpark::fs::OpenOptions::new().custom_flags(libc::O_TRUNC));
    /// assert!(options.contains("custom_flags: 512"));
    /// ```
    #[cfg(unix)]
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut self.0, flags);
        self
    }

    /// Opens the file at `path` with these options (std's `open` on the blocking pool).
    ///
    /// # Errors
    /// Those of [`std::fs::OpenOptions::open`]: no access mode or a contradictory set
    /// (`InvalidInput`), `NotFound`, `AlreadyExists` with `create_new`, no permission, ...
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let err = spinpark::fs::OpenOptions::new().read(true).open("/no/such").await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    /// # });
    /// ```
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_owned();
        let options = self.0.clone();
        let std = POOL.asyncify(move || options.open(path)).await?;
        Ok(File::from_std(std))
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions(options)
    }
}
