//! [`DirBuilder`]: a directory with options, recursive creation and (on Unix) a mode.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use std::os::unix::fs::PermissionsExt;
//! let top = std::env::temp_dir().join(format!("spinpark-builder-{}", std::process::id()));
//! spinpark::fs::DirBuilder::new().recursive(true).mode(0o700).create(top.join("a/b")).await?;
//! assert_eq!(std::fs::metadata(top.join("a/b"))?.permissions().mode() & 0o777, 0o700);
//! std::fs::remove_dir_all(&top)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: the options are kept here; `create` builds a [`std::fs::DirBuilder`] from them and
//! runs its `create` on the blocking pool.

use std::io;
use std::path::Path;

use super::POOL;

/// Creates directories with options: whether missing parents are made too, and their mode.
/// tokio's `DirBuilder`; see [`std::fs::DirBuilder`].
#[derive(Debug, Default)]
pub struct DirBuilder {
    recursive: bool,
    mode: Option<u32>,
}

impl DirBuilder {
    /// Options for a directory whose parent must exist, with the default mode (0o777 less
    /// the process's umask).
    ///
    /// ```
    /// let builder = spinpark::fs::DirBuilder::new();
    /// # drop(builder);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether missing parents are created too (as [`create_dir_all`](super::create_dir_all)),
    /// and an existing directory is not an error.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// spinpark::fs::DirBuilder::new().recursive(true).create(std::env::temp_dir()).await?;
    /// # std::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub fn recursive(&mut self, recursive: bool) -> &mut Self {
        self.recursive = recursive;
        self
    }

    /// The mode (permission bits) new directories get, less the process's umask.
    ///
    /// ```
    /// let mut builder = spinpark::fs::DirBuilder::new();
    /// builder.mode(0o750);
    /// ```
    #[cfg(unix)]
    pub fn mode(&mut self, mode: u32) -> &mut Self {
        self.mode = Some(mode);
        self
    }

    /// Creates the directory `path` with these options.
    ///
    /// # Errors
    /// Those of [`std::fs::DirBuilder::create`]: `path` exists (when not recursive), a
    /// parent is missing (when not recursive), no permission, ...
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let err = spinpark::fs::DirBuilder::new().create("/").await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    /// # });
    /// ```
    pub async fn create(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref().to_owned();
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(self.recursive);
        #[cfg(unix)]
        if let Some(mode) = self.mode {
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, mode);
        }
        POOL.asyncify(move || builder.create(path)).await
    }
}
