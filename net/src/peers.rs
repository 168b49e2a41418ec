//! Where the clients of a runtime's accepted TCP connections run: on the runtime's own CPUs
//! (a client on the same machine, sharing them) or elsewhere. The spin policy asks, through
//! the driver (`Driver::clients_colocated`), because it cannot time this itself.
//!
//! ```text
//! let tally = peers::tally(&reactor, fd, &peer_addr);  // at accept: counted while it lives
//! reactor.peers.all_colocated()                         // every live one on our CPUs?
//! ```
//!
//! Why the policy needs it: a spinner answers a client on the same CPUs by waking it on the
//! other CPU (on a VM whose idle vCPU halts, a costly wake-up), where a parked server is woken
//! on the client's CPU and answers it there cheaply. The client's round trip can come out
//! shorter when the server parks, while everything the server can time says spinning is
//! faster: on the 2-vCPU AMD guest this was measured on, a parked period lasted 22 µs longer
//! (the server's own wake-up is in it) while the client's round trip was 2 µs shorter, and the
//! spinner took 12x the CPU per request. So the policy needs to be told that the clients
//! share its CPUs (`executor/src/idle/spin.rs`, "Clients on our own CPUs").
//!
//! How: at accept, a peer whose address is a loopback one or the connection's own local
//! address is on this machine; `SO_INCOMING_CPU` then names the CPU that processed its last
//! segment, which over loopback is the CPU the client sent it from. If that CPU is one this
//! process may run on (`sched_getaffinity`, read when the reactor is made), the connection
//! counts as colocated, else as elsewhere. A real remote client is never colocated, whatever
//! CPU its network interrupts land on: its address is not local. A client pinned to other
//! CPUs than the server's (the benchmarks' remote layout) counts as elsewhere. Unix-domain
//! connections are not counted. The count lives as long as the stream (its halves
//! included); one syscall or two per accept (`getsockname`, `getsockopt`), none after.
//!
//! The counts are statistics read `Relaxed`: nothing else is ordered by them, and a stale
//! read costs one idle period's decision.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use crate::reactor::Reactor;
use crate::sys;

/// The live accepted connections of one reactor, by where their clients run.
pub(crate) struct Peers {
    colocated: AtomicUsize,
    elsewhere: AtomicUsize,
    /// The CPUs this process could run on when the reactor was made (empty: unknown).
    cpus: Vec<bool>,
}

impl fmt::Debug for Peers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peers")
            .field("colocated", &self.colocated.load(Relaxed))
            .field("elsewhere", &self.elsewhere.load(Relaxed))
            .finish()
    }
}

impl Peers {
    /// No connections yet; reads this thread's CPU set (which the workers inherit).
    pub(crate) fn new() -> Peers {
        Peers {
            colocated: AtomicUsize::new(0),
            elsewhere: AtomicUsize::new(0),
            cpus: sys::affinity().unwrap_or_default(),
        }
    }

    /// Whether there are live accepted connections and every one of them comes from a client
    /// on this process's CPUs.
    pub(crate) fn all_colocated(&self) -> bool {
        self.colocated.load(Relaxed) > 0 && self.elsewhere.load(Relaxed) == 0
    }

    fn counter(&self, colocated: bool) -> &AtomicUsize {
        if colocated {
            &self.colocated
        } else {
            &self.elsewhere
        }
    }

    /// Whether the client of the accepted connection `fd`, from `peer`, runs on our CPUs.
    fn is_colocated(&self, fd: RawFd, peer: &SocketAddr) -> bool {
        let local = peer.ip().is_loopback()
            || sys::local_addr(fd)
                .is_ok_and(|a| a.to_inet().is_ok_and(|l| same_ip(l.ip(), peer.ip())));
        local && sys::incoming_cpu(fd).is_ok_and(|cpu| self.cpus.get(cpu).copied().unwrap_or(false))
    }
}

/// Whether two addresses are the same host address (an IPv4 address mapped into IPv6 equals
/// its IPv4 form).
fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    let v4 = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    v4(a) == v4(b)
}

/// One accepted connection, counted by where its client runs while this lives.
pub(crate) struct PeerTally {
    reactor: Arc<Reactor>,
    colocated: bool,
}

impl fmt::Debug for PeerTally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerTally")
            .field("colocated", &self.colocated)
            .finish()
    }
}

impl Drop for PeerTally {
    fn drop(&mut self) {
        self.reactor
            .peers
            .counter(self.colocated)
            .fetch_sub(1, Relaxed);
    }
}

/// Counts the connection `fd` that `reactor`'s listener accepted from `peer`.
pub(crate) fn tally(reactor: &Arc<Reactor>, fd: RawFd, peer: &SocketAddr) -> PeerTally {
    let colocated = reactor.peers.is_colocated(fd, peer);
    reactor.peers.counter(colocated).fetch_add(1, Relaxed);
    PeerTally {
        reactor: reactor.clone(),
        colocated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn mapped_ipv4_is_the_same_host() {
        let v4 = IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3));
        let mapped = IpAddr::V6(Ipv4Addr::new(10, 1, 2, 3).to_ipv6_mapped());
        assert!(same_ip(v4, mapped));
        assert!(same_ip(mapped, v4));
        assert!(!same_ip(v4, IpAddr::V4(Ipv4Addr::new(10, 1, 2, 4))));
        assert!(!same_ip(IpAddr::V6(Ipv6Addr::LOCALHOST), v4));
    }

    #[test]
    fn all_colocated_needs_one_and_no_other() {
        let p = Peers::new();
        assert!(!p.all_colocated(), "no connections");
        p.counter(true).fetch_add(1, Relaxed);
        assert!(p.all_colocated());
        p.counter(false).fetch_add(1, Relaxed);
        assert!(!p.all_colocated(), "one client elsewhere");
        p.counter(false).fetch_sub(1, Relaxed);
        assert!(p.all_colocated());
    }
}
