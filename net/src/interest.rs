//! [`Interest`] (what a task waits for) and [`Ready`] (what the reactor saw), as tokio's
//! `io::Interest` and `io::Ready`.
//!
//! Both are thin views of the readiness word of `readiness.rs`: a `Ready` holds the word's
//! bits as they are, and an `Interest` says which of them let a waiting task go on.

use std::fmt;
use std::ops;

use crate::readiness::{ERROR, PRIORITY, READABLE, READ_CLOSED, SHUTDOWN, WRITABLE, WRITE_CLOSED};

/// The readiness events a task waits for: readable, writable, priority (out-of-band data) or
/// error. Combine them with `|`.
///
/// ```
/// use spinpark::io::Interest;
/// let both = Interest::READABLE | Interest::WRITABLE;
/// assert!(both.is_readable() && both.is_writable());
/// assert_eq!(both.remove(Interest::WRITABLE), Some(Interest::READABLE));
/// assert!(!Interest::ERROR.is_readable());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interest(u8);

const I_READABLE: u8 = 1;
const I_WRITABLE: u8 = 1 << 1;
const I_PRIORITY: u8 = 1 << 2;
const I_ERROR: u8 = 1 << 3;

impl Interest {
    /// Readable: data (or end of stream) to read.
    pub const READABLE: Interest = Interest(I_READABLE);
    /// Writable: room to write (or the write side closed).
    pub const WRITABLE: Interest = Interest(I_WRITABLE);
    /// Priority: out-of-band data (`EPOLLPRI`).
    pub const PRIORITY: Interest = Interest(I_PRIORITY);
    /// Error: something on the socket's error queue (`EPOLLERR`).
    pub const ERROR: Interest = Interest(I_ERROR);

    /// Whether this includes [`Interest::READABLE`].
    ///
    /// ```
    /// assert!(spinpark::io::Interest::READABLE.is_readable());
    /// ```
    pub const fn is_readable(self) -> bool {
        self.0 & I_READABLE != 0
    }

    /// Whether this includes [`Interest::WRITABLE`].
    ///
    /// ```
    /// assert!(spinpark::io::Interest::WRITABLE.is_writable());
    /// ```
    pub const fn is_writable(self) -> bool {
        self.0 & I_WRITABLE != 0
    }

    /// Whether this includes [`Interest::PRIORITY`].
    ///
    /// ```
    /// assert!(spinpark::io::Interest::PRIORITY.is_priority());
    /// ```
    pub const fn is_priority(self) -> bool {
        self.0 & I_PRIORITY != 0
    }

    /// Whether this includes [`Interest::ERROR`].
    ///
    /// ```
    /// assert!(spinpark::io::Interest::ERROR.is_error());
    /// ```
    pub const fn is_error(self) -> bool {
        self.0 & I_ERROR != 0
    }

    /// Both interests (as `|`, usable in a `const`).
    ///
    /// ```
    /// use spinpark::io::Interest;
    /// const BOTH: Interest = Interest::READABLE.add(Interest::WRITABLE);
    /// assert!(BOTH.is_writable());
    /// ```
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// This interest without `other`; `None` if nothing is left.
    ///
    /// ```
    /// use spinpark::io::Interest;
    /// assert_eq!(Interest::READABLE.remove(Interest::READABLE), None);
    /// ```
    pub fn remove(self, other: Interest) -> Option<Interest> {
        let left = self.0 & !other.0;
        (left != 0).then_some(Interest(left))
    }

    /// The readiness bits that let a task waiting with this interest go on (to succeed, or to
    /// meet the error or the runtime's end).
    pub(crate) fn mask(self) -> usize {
        self.directions() | ERROR | SHUTDOWN
    }

    /// The readiness bits of this interest's directions (read, write, priority), each with
    /// the closed bit that ends a wait in that direction.
    fn directions(self) -> usize {
        let mut m = 0;
        if self.is_readable() {
            m |= READABLE | READ_CLOSED;
        }
        if self.is_writable() {
            m |= WRITABLE | WRITE_CLOSED;
        }
        if self.is_priority() {
            m |= PRIORITY | READ_CLOSED;
        }
        m
    }

    /// The bits a guard reports for this interest (tokio's `Ready::from_interest`).
    pub(crate) fn reported(self) -> usize {
        let error = if self.is_error() { ERROR } else { 0 };
        self.directions() | error
    }

    /// The epoll events to register for this interest (edge-triggered; errors always come).
    pub(crate) fn epoll_events(self) -> u32 {
        let mut ev = libc::EPOLLET;
        if self.is_readable() {
            ev |= libc::EPOLLIN | libc::EPOLLRDHUP;
        }
        if self.is_writable() {
            ev |= libc::EPOLLOUT;
        }
        if self.is_priority() {
            ev |= libc::EPOLLPRI | libc::EPOLLRDHUP;
        }
        ev as u32
    }
}

impl ops::BitOr for Interest {
    type Output = Interest;

    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl ops::BitOrAssign for Interest {
    fn bitor_assign(&mut self, other: Interest) {
        *self = self.add(other);
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (I_READABLE, "READABLE"),
            (I_WRITABLE, "WRITABLE"),
            (I_PRIORITY, "PRIORITY"),
            (I_ERROR, "ERROR"),
        ];
        let mut sep = "";
        for (bit, name) in names {
            if self.0 & bit != 0 {
                write!(f, "{sep}{name}")?;
                sep = " | ";
            }
        }
        Ok(())
    }
}

/// The readiness the reactor saw on an fd: returned by `ready(Interest)` and by a guard's
/// `ready()`.
///
/// ```
/// use spinpark::io::Ready;
/// let r = Ready::READABLE | Ready::WRITABLE;
/// assert!(r.is_readable() && r.is_writable());
/// assert_eq!(r - Ready::READABLE, Ready::WRITABLE);
/// assert!(Ready::EMPTY.is_empty());
/// assert!(Ready::READ_CLOSED.is_readable()); // end of stream is readable
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ready(usize);

impl Ready {
    /// Nothing.
    pub const EMPTY: Ready = Ready(0);
    /// Readable.
    pub const READABLE: Ready = Ready(READABLE);
    /// Writable.
    pub const WRITABLE: Ready = Ready(WRITABLE);
    /// The peer closed its write side (end of stream).
    pub const READ_CLOSED: Ready = Ready(READ_CLOSED);
    /// The write side is closed.
    pub const WRITE_CLOSED: Ready = Ready(WRITE_CLOSED);
    /// Out-of-band data.
    pub const PRIORITY: Ready = Ready(PRIORITY);
    /// An error is pending.
    pub const ERROR: Ready = Ready(ERROR);
    /// Every kind of readiness.
    pub const ALL: Ready =
        Ready(READABLE | WRITABLE | READ_CLOSED | WRITE_CLOSED | PRIORITY | ERROR);

    /// The public bits of a readiness word.
    pub(crate) fn from_word(word: usize) -> Ready {
        Ready(word & Ready::ALL.0)
    }

    pub(crate) fn bits(self) -> usize {
        self.0
    }

    /// Whether nothing is ready.
    ///
    /// ```
    /// assert!(spinpark::io::Ready::EMPTY.is_empty());
    /// ```
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Readable or read-closed.
    ///
    /// ```
    /// assert!(spinpark::io::Ready::READABLE.is_readable());
    /// ```
    pub fn is_readable(self) -> bool {
        self.0 & (READABLE | READ_CLOSED) != 0
    }

    /// Writable or write-closed.
    ///
    /// ```
    /// assert!(spinpark::io::Ready::WRITE_CLOSED.is_writable());
    /// ```
    pub fn is_writable(self) -> bool {
        self.0 & (WRITABLE | WRITE_CLOSED) != 0
    }

    /// Read-closed.
    ///
    /// ```
    /// assert!(!spinpark::io::Ready::READABLE.is_read_closed());
    /// ```
    pub fn is_read_closed(self) -> bool {
        self.0 & READ_CLOSED != 0
    }

    /// Write-closed.
    ///
    /// ```
    /// assert!(spinpark::io::Ready::WRITE_CLOSED.is_write_closed());
    /// ```
    pub fn is_write_closed(self) -> bool {
        self.0 & WRITE_CLOSED != 0
    }

    /// Out-of-band data.
    ///
    /// ```
    /// assert!(spinpark::io::Ready::PRIORITY.is_priority());
    /// ```
    pub fn is_priority(self) -> bool {
        self.0 & PRIORITY != 0
    }

    /// An error is pending.
    ///
    /// ```
    /// assert!(spinpark::io::Ready::ERROR.is_error());
    /// ```
    pub fn is_error(self) -> bool {
        self.0 & ERROR != 0
    }
}

impl ops::BitOr for Ready {
    type Output = Ready;

    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

impl ops::BitOrAssign for Ready {
    fn bitor_assign(&mut self, other: Ready) {
        self.0 |= other.0;
    }
}

impl ops::BitAnd for Ready {
    type Output = Ready;

    fn bitand(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }
}

impl ops::Sub for Ready {
    type Output = Ready;

    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ready")
            .field("is_readable", &self.is_readable())
            .field("is_writable", &self.is_writable())
            .field("is_read_closed", &self.is_read_closed())
            .field("is_write_closed", &self.is_write_closed())
            .field("is_priority", &self.is_priority())
            .field("is_error", &self.is_error())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interest_lets_its_own_readiness_through_and_not_the_others() {
        assert_eq!(Interest::READABLE.mask() & WRITABLE, 0);
        assert_ne!(Interest::READABLE.mask() & READ_CLOSED, 0);
        assert_eq!(Interest::ERROR.mask() & (READABLE | WRITABLE), 0);
        assert_eq!(Interest::ERROR.reported(), ERROR);
        assert_eq!(
            Ready::from_word(Interest::WRITABLE.reported() | SHUTDOWN),
            Ready::WRITABLE | Ready::WRITE_CLOSED
        );
    }

    #[test]
    fn epoll_events_follow_the_interest() {
        let ev = Interest::PRIORITY.epoll_events() as libc::c_int;
        assert_ne!(ev & libc::EPOLLPRI, 0);
        assert_eq!(ev & (libc::EPOLLIN | libc::EPOLLOUT), 0);
    }
}
