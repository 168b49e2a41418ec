//! Making and removing directories by path: `create_dir`, `create_dir_all`, `remove_dir`,
//! `remove_dir_all` ([`DirBuilder`](super::DirBuilder) sets a mode too).
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let top = std::env::temp_dir().join(format!("spinpark-dirs-{}", std::process::id()));
//! spinpark::fs::create_dir_all(top.join("a/b")).await?;
//! spinpark::fs::create_dir(top.join("c")).await?;
//! spinpark::fs::remove_dir(top.join("c")).await?;
//! spinpark::fs::remove_dir_all(&top).await?;
//! assert!(!top.exists());
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: one closure on the blocking pool each, calling std's function of the same name.

use std::io;
use std::path::Path;

use super::POOL;

/// Creates the directory `path`, whose parent must exist ([`std::fs::create_dir`] on the
/// blocking pool).
///
/// # Errors
/// Those of [`std::fs::create_dir`]: `AlreadyExists` if `path` exists, `NotFound` if its
/// parent does not, ...
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let err = spinpark::fs::create_dir("/").await.unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
/// # });
/// ```
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::create_dir(path)).await
}

/// Creates the directory `path` and whichever of its parents are missing; a `path` that is
/// already a directory is fine ([`std::fs::create_dir_all`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::create_dir_all`] (a component is a file, no permission, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// spinpark::fs::create_dir_all(std::env::temp_dir()).await?; // exists: no error
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::create_dir_all(path)).await
}

/// Removes the empty directory `path` ([`std::fs::remove_dir`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::remove_dir`] (missing, not empty, not a directory, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert!(spinpark::fs::remove_dir("/no/such/dir").await.is_err());
/// # });
/// ```
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::remove_dir(path)).await
}

/// Removes the directory `path` with everything in it; symbolic links inside are removed,
/// not followed ([`std::fs::remove_dir_all`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::remove_dir_all`] (missing, not a directory, no permission, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert!(spinpark::fs::remove_dir_all("/no/such/dir").await.is_err());
/// # });
/// ```
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::remove_dir_all(path)).await
}
