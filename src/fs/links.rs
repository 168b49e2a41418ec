//! Links and resolved paths: `hard_link`, `symlink`, `read_link`, `canonicalize`.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("spinpark-links-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("target"), "x")?;
//! spinpark::fs::symlink("target", dir.join("soft")).await?;
//! spinpark::fs::hard_link(dir.join("target"), dir.join("hard")).await?;
//! assert_eq!(spinpark::fs::read_link(dir.join("soft")).await?, std::path::Path::new("target"));
//! let real = spinpark::fs::canonicalize(dir.join("soft")).await?;
//! assert_eq!(real, std::fs::canonicalize(dir.join("target"))?);
//! std::fs::remove_dir_all(&dir)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: one closure on the blocking pool each, calling std's function of the same name
//! (`std::os::unix::fs::symlink` for `symlink`).

use std::io;
use std::path::{Path, PathBuf};

use super::POOL;

/// Makes `link` a new name for the file `original` ([`std::fs::hard_link`] on the blocking
/// pool).
///
/// # Errors
/// Those of [`std::fs::hard_link`] (`original` missing, `link` exists, across file systems,
/// ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert!(spinpark::fs::hard_link("/no/such/file", "/tmp/x").await.is_err());
/// # });
/// ```
pub async fn hard_link(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let original = original.as_ref().to_owned();
    let link = link.as_ref().to_owned();
    POOL.asyncify(move || std::fs::hard_link(original, link))
        .await
}

/// Makes `link` a symbolic link to `original`, which need not exist; a relative `original`
/// is resolved from `link`'s directory when the link is followed
/// ([`std::os::unix::fs::symlink`] on the blocking pool).
///
/// # Errors
/// Those of [`std::os::unix::fs::symlink`] (`link` exists, its directory is missing, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let err = spinpark::fs::symlink("anything", "/").await.unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
/// # });
/// ```
#[cfg(unix)]
pub async fn symlink(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let original = original.as_ref().to_owned();
    let link = link.as_ref().to_owned();
    POOL.asyncify(move || std::os::unix::fs::symlink(original, link))
        .await
}

/// What the symbolic link `path` points to, as stored in it ([`std::fs::read_link`] on the
/// blocking pool).
///
/// # Errors
/// Those of [`std::fs::read_link`] (missing, not a symbolic link, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert!(spinpark::fs::read_link("/no/such/link").await.is_err());
/// # });
/// ```
pub async fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::read_link(path)).await
}

/// The absolute form of `path`, with every symbolic link, `.` and `..` resolved
/// ([`std::fs::canonicalize`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::canonicalize`] (a component is missing, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert_eq!(spinpark::fs::canonicalize("/tmp/..").await?, std::path::Path::new("/"));
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::canonicalize(path)).await
}
