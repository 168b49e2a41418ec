//! What a path is and may do: `metadata`, `symlink_metadata`, `try_exists`,
//! `set_permissions`.
//!
//! ```
//! # spinpark::Runtime::new().unwrap().block_on(async {
//! use std::os::unix::fs::PermissionsExt;
//! let path = std::env::temp_dir().join(format!("spinpark-meta-{}", std::process::id()));
//! std::fs::write(&path, "1234")?;
//! assert_eq!(spinpark::fs::metadata(&path).await?.len(), 4);
//! spinpark::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).await?;
//! let mode = spinpark::fs::symlink_metadata(&path).await?.permissions().mode();
//! assert_eq!(mode & 0o777, 0o600);
//! std::fs::remove_file(&path)?;
//! assert!(!spinpark::fs::try_exists(&path).await?);
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```
//!
//! How: one closure on the blocking pool each, calling std's function of the same name
//! (`Path::try_exists` for `try_exists`).

use std::fs::{Metadata, Permissions};
use std::io;
use std::path::Path;

use super::POOL;

/// The metadata of what `path` names, following symbolic links ([`std::fs::metadata`] on
/// the blocking pool).
///
/// # Errors
/// Those of [`std::fs::metadata`] (missing, no permission to search a directory, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert!(spinpark::fs::metadata("/").await?.is_dir());
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::metadata(path)).await
}

/// The metadata of `path` itself: a symbolic link's own, not its target's
/// ([`std::fs::symlink_metadata`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::symlink_metadata`].
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let meta = spinpark::fs::symlink_metadata("/proc/self").await?;
/// assert!(meta.file_type().is_symlink());
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::symlink_metadata(path)).await
}

/// Whether `path` exists (following symbolic links): `Ok(false)` when it does not, an error
/// when that cannot be told ([`Path::try_exists`] on the blocking pool).
///
/// # Errors
/// When the answer is unknown, e.g. a directory on the way may not be searched.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// assert!(spinpark::fs::try_exists("/").await?);
/// assert!(!spinpark::fs::try_exists("/no/such/file").await?);
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || path.try_exists()).await
}

/// Sets the permissions of what `path` names, following symbolic links
/// ([`std::fs::set_permissions`] on the blocking pool).
///
/// # Errors
/// Those of [`std::fs::set_permissions`] (missing, not the owner, ...).
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// use std::os::unix::fs::PermissionsExt;
/// let perm = std::fs::Permissions::from_mode(0o644);
/// assert!(spinpark::fs::set_permissions("/no/such/file", perm).await.is_err());
/// # });
/// ```
pub async fn set_permissions(path: impl AsRef<Path>, perm: Permissions) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    POOL.asyncify(move || std::fs::set_permissions(path, perm))
        .await
}
