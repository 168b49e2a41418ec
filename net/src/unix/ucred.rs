//! [`UCred`]: the credentials of a Unix stream's peer (`SO_PEERCRED`).

use std::io;

/// The process credentials of the peer of a [`UnixStream`](super::UnixStream), as the kernel
/// recorded them when the connection (or pair) was made.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let (a, _b) = spinpark::net::UnixStream::pair().unwrap();
/// let cred = a.peer_cred().unwrap();
/// // SAFETY: geteuid has no preconditions.
/// assert_eq!(cred.uid(), unsafe { libc::geteuid() });
/// assert_eq!(cred.pid(), Some(std::process::id() as i32));
/// # });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UCred {
    pid: Option<libc::pid_t>,
    uid: libc::uid_t,
    gid: libc::gid_t,
}

impl UCred {
    /// The peer's effective user id.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixStream::pair().unwrap();
    /// let _uid: u32 = a.peer_cred().unwrap().uid();
    /// # });
    /// ```
    pub fn uid(&self) -> libc::uid_t {
        self.uid
    }

    /// The peer's effective group id.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixStream::pair().unwrap();
    /// let _gid: u32 = a.peer_cred().unwrap().gid();
    /// # });
    /// ```
    pub fn gid(&self) -> libc::gid_t {
        self.gid
    }

    /// The peer's process id (always known on Linux).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// let (a, _b) = spinpark::net::UnixStream::pair().unwrap();
    /// assert!(a.peer_cred().unwrap().pid().is_some());
    /// # });
    /// ```
    pub fn pid(&self) -> Option<libc::pid_t> {
        self.pid
    }
}

/// Reads `SO_PEERCRED` of the connected Unix socket `fd`.
pub(crate) fn peer_cred(fd: std::os::fd::RawFd) -> io::Result<UCred> {
    let c = crate::sys::peer_cred(fd)?;
    Ok(UCred {
        pid: Some(c.pid),
        uid: c.uid,
        gid: c.gid,
    })
}
