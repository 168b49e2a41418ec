//! Unix signals on the runtime's own reactor: [`ctrl_c`] and a [`Signal`] stream per signal.
//!
//! ```no_run
//! # async fn f() -> std::io::Result<()> {
//! use spinpark_net::signal::{signal, SignalKind};
//! let mut term = signal(SignalKind::terminate())?;
//! spinpark_executor::spawn(async move {
//!     while term.recv().await.is_some() {
//!         println!("got SIGTERM");
//!     }
//! });
//! spinpark_net::signal::ctrl_c().await?;
//! println!("got Ctrl-C, shutting down");
//! # Ok(()) }
//! ```
//!
//! Once a signal has a listener, its handler stays installed for the rest of the process (as
//! in tokio): the signal no longer has its default effect (SIGINT no longer ends the
//! process), even after every [`Signal`] for it is dropped.
//!
//! A handler that was in place before (the program's own `sigaction` handler or
//! `SA_SIGINFO` action, or a library's, installed before the runtime or after) is kept and
//! still called on every delivery, after the runtime's own handler, with the delivery's
//! `siginfo_t`, as tokio's signal-hook-registry does. A `SIG_DFL` or `SIG_IGN` it replaced is
//! not called: for `SIGCHLD`, a `SIG_IGN` (which also has the kernel reap children itself)
//! ends there, as under tokio.
//!
//! # Which listener sees which delivery
//!
//! * Every listener that exists when a signal is delivered reports it, once. Deliveries
//!   between two [`Signal::recv`] calls may be merged into one, as the kernel merges pending
//!   signals.
//! * A delivery that no listener has reported yet is kept for the next listener of its
//!   signal, which reports it at once (several such deliveries, as one). So a signal that
//!   arrives while no listener exists (between two turns of a `select!` loop that makes a
//!   [`ctrl_c()`] in each turn, say) is not lost, as in tokio.
//! * A delivery that some listener has reported is not reported to a listener made after
//!   that.
//! * Before the first listener of a signal, its handler is not installed: the signal still
//!   has its default effect, and no delivery is counted.
//!
//! A listener that exists at a delivery but has not reported it yet does not stop a new
//! listener from reporting it too: both do. tokio decides the same case by whether its
//! driver has processed the signal before the new listener subscribes.
//!
//! ```no_run
//! # async fn f(listener: spinpark_net::TcpListener) -> std::io::Result<()> {
//! loop {
//!     tokio::select! {
//!         accepted = listener.accept() => {
//!             let (stream, _) = accepted?;
//!             // spawn a task for `stream` ...
//! #           drop(stream);
//!         }
//!         // A fresh listener each turn: a SIGINT between two turns waits for the next one.
//!         _ = spinpark_net::signal::ctrl_c() => break,
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! # How it works, and why not signalfd
//!
//! A `sigaction` handler counts the delivery and writes that signal's eventfd (the self-pipe
//! pattern, with an eventfd as the pipe, one per signal; `signal/registry.rs`). Each runtime
//! registers a signal's eventfd once in its epoll set, so spinning workers see signals like
//! any socket event. The listeners of that signal, in every runtime, keep their wakers in one
//! list per signal, which that registration wakes; a delivery of another signal wakes none of
//! them. So listeners cost no descriptor each: a signal has one eventfd however many listen,
//! and once it has one, registering another listener opens nothing and cannot fail for want
//! of descriptors. Beside the delivery count, each signal keeps the highest count a listener
//! has reported; a new listener starts from that mark, which is how a delivery no listener
//! has reported is kept for the next one.
//!
//! Listeners never read the eventfd: a listener that drained it could make the event another
//! runtime's epoll has yet to collect read as "not readable" (epoll reports the state at
//! collection time), and that runtime would miss its wake-up. The counter stays above zero,
//! and each write is a new edge for every registration; a listener compares the delivery
//! count with the last one it reported.
//!
//! `signalfd` would need the signal blocked in *every* thread of the process: a thread that
//! has it unblocked takes the signal with its default action (SIGINT kills the process)
//! before the signalfd sees it. The runtime can block it in its own threads, but not in the
//! main thread before the runtime started, nor in threads the user or a library creates (test
//! harnesses, thread pools). A handler works whichever thread the kernel picks, which is why
//! tokio (and this module) use it.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::reactor::Reactor;
use crate::readiness::{Direction, Readiness};

mod registry;

/// [`signal`], [`Signal`] and [`SignalKind`] under tokio's path, `signal::unix`, so that
/// `use tokio::signal::unix::{signal, SignalKind}` ports by its crate name only.
///
/// ```
/// use spinpark::signal::unix::{signal, Signal, SignalKind};
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// let hup: Signal = signal(SignalKind::hangup()).unwrap();
/// # drop(hup);
/// # });
/// ```
pub mod unix {
    pub use super::{signal, Signal, SignalKind};
}

/// A signal number, with constructors for the usual ones (the names follow tokio's).
///
/// ```
/// use spinpark_net::signal::SignalKind;
/// assert_eq!(SignalKind::terminate().as_raw_value(), libc::SIGTERM);
/// assert_eq!(SignalKind::from_raw(libc::SIGUSR1), SignalKind::user_defined1());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalKind(libc::c_int);

impl SignalKind {
    /// Any signal number; [`signal`] rejects the ones that cannot be handled.
    ///
    /// ```
    /// use spinpark::signal::SignalKind;
    /// assert_eq!(SignalKind::from_raw(libc::SIGHUP), SignalKind::hangup());
    /// ```
    pub const fn from_raw(signum: libc::c_int) -> Self {
        SignalKind(signum)
    }
    /// The signal number.
    ///
    /// ```
    /// use spinpark::signal::SignalKind;
    /// assert_eq!(SignalKind::interrupt().as_raw_value(), libc::SIGINT);
    /// ```
    pub const fn as_raw_value(&self) -> libc::c_int {
        self.0
    }
    /// SIGALRM.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::alarm());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn alarm() -> Self {
        SignalKind(libc::SIGALRM)
    }
    /// SIGCHLD.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::child());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn child() -> Self {
        SignalKind(libc::SIGCHLD)
    }
    /// SIGHUP.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::hangup());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn hangup() -> Self {
        SignalKind(libc::SIGHUP)
    }
    /// SIGINT (Ctrl-C in a terminal).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::interrupt());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn interrupt() -> Self {
        SignalKind(libc::SIGINT)
    }
    /// SIGIO.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::io());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn io() -> Self {
        SignalKind(libc::SIGIO)
    }
    /// SIGPIPE.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::pipe());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn pipe() -> Self {
        SignalKind(libc::SIGPIPE)
    }
    /// SIGQUIT.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::quit());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn quit() -> Self {
        SignalKind(libc::SIGQUIT)
    }
    /// SIGTERM (what `kill` and service managers send to stop a process).
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::terminate());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn terminate() -> Self {
        SignalKind(libc::SIGTERM)
    }
    /// SIGUSR1.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::user_defined1());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn user_defined1() -> Self {
        SignalKind(libc::SIGUSR1)
    }
    /// SIGUSR2.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::user_defined2());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn user_defined2() -> Self {
        SignalKind(libc::SIGUSR2)
    }
    /// SIGWINCH.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let stream = signal(SignalKind::window_change());
    /// # drop(stream);
    /// # });
    /// ```
    pub const fn window_change() -> Self {
        SignalKind(libc::SIGWINCH)
    }
}

impl From<libc::c_int> for SignalKind {
    fn from(signum: libc::c_int) -> Self {
        SignalKind(signum)
    }
}

/// A stream of deliveries of one signal; see [`signal`].
///
/// ```no_run
/// # async fn f() -> std::io::Result<()> {
/// use spinpark_net::signal::{signal, SignalKind};
/// let mut hup = signal(SignalKind::hangup())?;
/// while hup.recv().await.is_some() {
///     println!("reloading the configuration");
/// }
/// # Ok(()) }
/// ```
pub struct Signal {
    kind: SignalKind,
    /// The delivery count this listener has reported up to.
    seen: u64,
    /// This runtime's registration of the signal's eventfd, shared by its listeners.
    readiness: Arc<Readiness>,
    /// The tasks waiting for this signal, and this listener's slot among them.
    waiters: Arc<registry::Waiters>,
    slot: usize,
}

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signal")
            .field("kind", &self.kind)
            .field("seen", &self.seen)
            .finish()
    }
}

/// Listens for `kind` on the current runtime's reactor: the deliveries from now on, and at
/// once any earlier delivery no listener has reported yet (see the module docs).
///
/// The first call for a signal installs its handler for the rest of the process (see the
/// module docs).
///
/// # Errors
/// `InvalidInput` for a number that is not a signal, or for SIGKILL, SIGSTOP, SIGILL, SIGFPE
/// and SIGSEGV (which cannot, or must not, be handled); an error outside a spinpark runtime;
/// for the first listener of a signal, the error of creating its eventfd (later listeners
/// open no descriptor).
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// use spinpark_net::signal::{signal, SignalKind};
/// assert!(signal(SignalKind::from_raw(libc::SIGKILL)).is_err());
/// let _usr1 = signal(SignalKind::user_defined1()).unwrap();
/// # });
/// ```
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    let signum = kind.0;
    if !(1..=registry::MAX_SIGNAL).contains(&signum) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{signum} is not a signal number (1 to {})",
                registry::MAX_SIGNAL
            ),
        ));
    }
    if [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGSEGV,
    ]
    .contains(&signum)
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("signal {signum} cannot be handled (SIGKILL, SIGSTOP, SIGILL, SIGFPE and SIGSEGV are refused)"),
        ));
    }
    // Outside a runtime, fail before installing a handler nobody would listen to.
    spinpark_executor::Handle::try_current().map_err(|_| {
        io::Error::other(
            "spinpark::signal::signal needs a spinpark runtime (call it from a task or block_on)",
        )
    })?;
    let reactor = Reactor::current()?;
    let fd = registry::kind_fd(signum)?;
    let readiness = reactor.shared_source(fd)?;
    // Start from the last delivery a listener reported: the ones since (while no listener
    // existed, or before any listener reported them) are this listener's to report.
    let seen = registry::reported(signum);
    let waiters = registry::waiters(signum);
    let slot = waiters.add();
    Ok(Signal {
        kind,
        seen,
        readiness,
        waiters,
        slot,
    })
}

/// Waits for the next Ctrl-C (SIGINT). The future listens from its first poll, which
/// installs the handler if no SIGINT listener has before; from then on a SIGINT that no
/// listener has reported yet is kept for the next one, so a `ctrl_c()` made afresh in each
/// turn of a `select!` loop sees a SIGINT that arrived between two turns (see the module
/// docs).
///
/// ```no_run
/// # async fn f(listener: spinpark_net::TcpListener) -> std::io::Result<()> {
/// loop {
///     tokio::select! {
///         accepted = listener.accept() => { let (_stream, _) = accepted?; }
///         _ = spinpark_net::signal::ctrl_c() => break,
///     }
/// }
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`signal`]; also an error if the runtime shuts down first.
///
/// ```no_run
/// let rt = spinpark_executor::Runtime::new()?;
/// rt.block_on(spinpark_net::signal::ctrl_c())?;
/// println!("bye");
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn ctrl_c() -> io::Result<()> {
    let mut s = signal(SignalKind::interrupt())?;
    match s.recv().await {
        Some(()) => Ok(()),
        None => Err(spinpark_executor::rt_shutdown_err(
            "waiting for Ctrl-C: the spinpark runtime shut down",
        )),
    }
}

impl Signal {
    /// Waits for the next delivery. `None` means no more will be reported (the runtime shut
    /// down). Several deliveries since the last call may be reported as one.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let mut usr1 = signal(SignalKind::user_defined1()).unwrap();
    /// unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
    /// assert_eq!(usr1.recv().await, Some(()));
    /// # });
    /// ```
    pub async fn recv(&mut self) -> Option<()> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next delivery; see [`Signal::recv`].
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let mut usr2 = signal(SignalKind::user_defined2()).unwrap();
    /// unsafe { libc::kill(libc::getpid(), libc::SIGUSR2) };
    /// std::future::poll_fn(|cx| usr2.poll_recv(cx)).await.unwrap();
    /// # });
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        self.waiters.set(self.slot, cx.waker());
        // The signal's waiters, as one waker, wait on this runtime's registration: an event
        // there wakes every listener of the signal, and no other.
        let waiters = Waker::from(self.waiters.clone());
        let mut relay = Context::from_waker(&waiters);
        loop {
            if self.take_delivery() {
                return Poll::Ready(Some(()));
            }
            // Wait for the next write to the eventfd. Nobody ever reads it: its counter stays
            // above zero, so every event epoll reports for it says "readable" (see the module
            // docs). Each handler write is a fresh edge.
            match self.readiness.poll_ready(Direction::Read, &mut relay) {
                Poll::Ready(seen) if seen.is_shutdown() => return Poll::Ready(None),
                Poll::Ready(seen) => {
                    // Consume this edge (unless a newer one arrived) and look at the count.
                    self.readiness.clear(seen);
                    continue;
                }
                Poll::Pending => {
                    // The count may have moved between our check and storing the waker: the
                    // handler counts before it writes, so a write we missed shows here.
                    return if self.take_delivery() {
                        Poll::Ready(Some(()))
                    } else {
                        Poll::Pending
                    };
                }
            }
        }
    }

    /// The signal this stream listens for.
    ///
    /// ```
    /// # spinpark::Runtime::new().unwrap().block_on(async {
    /// use spinpark::signal::{signal, SignalKind};
    /// let s = signal(SignalKind::hangup()).unwrap();
    /// assert_eq!(s.kind(), SignalKind::hangup());
    /// # });
    /// ```
    pub fn kind(&self) -> SignalKind {
        self.kind
    }

    fn take_delivery(&mut self) -> bool {
        let now = registry::delivered(self.kind.0);
        if now != self.seen {
            self.seen = now;
            registry::mark_reported(self.kind.0, now);
            true
        } else {
            false
        }
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        self.waiters.remove(self.slot);
    }
}

impl futures_core::Stream for Signal {
    type Item = ();

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<()>> {
        self.poll_recv(cx)
    }
}
