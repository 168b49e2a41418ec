//! Whole files moved about by path: `copy`, `rename`, `remove_file`.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("spinpark-paths-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! spinpark::fs::write(dir.join("a"), "data").await?;
//! assert_eq!(spinpark::fs::copy(dir.join("a"), dir.join("b")).await?, 4);
//! spinpark::fs::rename(dir.join("b"), dir.join("c")).await?;
//! spinpark::fs::remove_file(dir.join("a")).await?;
//! assert_eq!(std::fs::read(dir.join("c"))?, b"data");
//! std::fs::remove_dir_all(&dir)?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: one closure on the blocking pool each, calling std's function of the same name.

use std::io;
use std::path::Path;

use super::POOL;

/// Copies the contents and permissions of the file `from` to `to`, replacing `to`, and
/// returns the number of bytes copied ([`std::fs::copy`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::copy`] (`from` is missing or not a file, `to`'s directory is
/// missing, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let err = spinpark::fs::copy("/no/such/file", "/tmp/x").await.unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// # });
/// ```
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<u64, io::Error> {
    let from = from.as_ref().to_owned();
    let to = to.as_ref().to_owned();
    POOL.asyncify(move || std::fs::copy(from, to)).await
}

/// Renames `from` to `to`, replacing `to` if it is a file ([`std::fs::rename`] on the
/// blocking pool).
///
/// # Errors
/// Those of [`std::fs::rename`] (`from` is missing, the two are on different file systems,
/// ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert!(spinpark::fs::rename("/no/such/file", "/tmp/x").await.is_err());
/// # });
/// ```
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    let from = from.as_ref().to_owned();
    let to = to.as_ref().to_owned();
    POOL.asyncify(move || std::fs::rename(from, to)).await
}

/// Removes the file (or symbolic link) at `path` ([`std::fs::remove_file`] on the blocking
/// pool). Open handles to it keep working.
///
/// # Errors
/// Those of [`std::fs::remove_file`] (missing, a directory, no permission, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let err = spinpark::fs::remove_file("/no/such/file").await.unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// # });
/// ```
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::remove_file(path)).await
}
