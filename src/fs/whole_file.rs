//! Whole-file reads and writes in one call: `read`, `read_to_string`, `write`.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! let path = std::env::temp_dir().join(format!("spinpark-whole-{}", std::process::id()));
//! spinpark::fs::write(&path, b"abc").await?;
//! assert_eq!(spinpark::fs::read(&path).await?, b"abc");
//! assert_eq!(spinpark::fs::read_to_string(&path).await?, "abc");
//! spinpark::fs::remove_file(&path).await?;
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: one closure on the blocking pool each, calling std's function of the same name.
//! `write` copies the contents first (the closure must own them).

use std::io;
use std::path::Path;

use super::POOL;

/// Reads the whole file at `path` into a vector ([`std::fs::read`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::read`] (the file does not exist, is a directory, ...), and an error
/// outside a spinpark runtime.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let err = spinpark::fs::read("/no/such/file").await.unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// # });
/// ```
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::read(path)).await
}

/// Reads the whole file at `path` into a string ([`std::fs::read_to_string`] on the
/// blocking pool).
///
/// # Errors
/// Those of [`std::fs::read_to_string`], including `InvalidData` when the file is not UTF-8.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let text = spinpark::fs::read_to_string("/proc/self/comm").await?;
/// assert!(text.ends_with('\n'));
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::read_to_string(path)).await
}

/// Creates or truncates the file at `path` and writes `contents` into it
/// ([`std::fs::write`] on the blocking pool).
///
/// The contents are copied first. Dropping the future after its first poll does not stop
/// the write.
///
/// # Errors
/// Those of [`std::fs::write`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let path = std::env::temp_dir().join(format!("spinpark-write-{}", std::process::id()));
/// spinpark::fs::write(&path, "first").await?;
/// spinpark::fs::write(&path, "2nd").await?; // replaces
/// assert_eq!(std::fs::read(&path)?, b"2nd");
/// std::fs::remove_file(&path)?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    let contents = contents.as_ref().to_owned();
    POOL.asyncify(move || std::fs::write(path, contents)).await
}
