//! [`ToSocketAddrs`]: the addresses `connect`, `bind` and `send_to` accept, resolved without
//! blocking a worker.
//!
//! ```
//! # let rt = spinpark_executor::Runtime::new().unwrap();
//! # rt.block_on(async {
//! let addrs: Vec<_> = spinpark_net::lookup_host("localhost:80").await.unwrap().collect();
//! assert!(addrs.iter().all(|a| a.port() == 80 && a.ip().is_loopback()));
//! # });
//! ```
//!
//! How it works: an IP address (a `SocketAddr`, an `(IpAddr, u16)`, or a string that parses
//! as one) is used as it is; anything else is a host name, looked up with the system resolver
//! (`getaddrinfo`, which may block on DNS) on the runtime's blocking pool, so the workers keep
//! running meanwhile. The trait is sealed: its implementations are the ones tokio has.

use std::io;

use crate::sys;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Something that resolves to socket addresses: a `SocketAddr`, `(IpAddr, u16)`,
/// `"host:port"`, `("host", port)`, or a slice of `SocketAddr`s. Host names are looked up
/// on the blocking pool.
///
/// ```
/// # let rt = spinpark_executor::Runtime::new().unwrap();
/// # rt.block_on(async {
/// use spinpark_net::TcpListener;
/// let by_name = TcpListener::bind("localhost:0").await.unwrap();
/// let by_ip = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await.unwrap();
/// assert!(by_name.local_addr().unwrap().ip().is_loopback());
/// assert!(by_ip.local_addr().unwrap().ip().is_loopback());
/// # });
/// ```
pub trait ToSocketAddrs: sealed::ToSocketAddrsPriv {}

pub(crate) mod sealed {
    use super::*;

    /// What an address argument is before resolution.
    #[allow(unreachable_pub)] // reachable only as the sealed supertrait's return type
    #[derive(Debug)]
    pub enum Resolve {
        /// IP addresses, nothing to look up.
        Ready(Vec<SocketAddr>),
        /// A `host:port` to look up.
        Lookup(String),
    }

    /// The sealed half of [`super::ToSocketAddrs`].
    #[allow(unreachable_pub)] // sealed: nameable by nobody outside this crate
    pub trait ToSocketAddrsPriv {
        /// Splits literal IP addresses from names that need a lookup.
        fn to_resolve(&self) -> Resolve;
    }
}

use sealed::{Resolve, ToSocketAddrsPriv};

/// Resolves `addr`, looking host names up on the current runtime's blocking pool.
pub(crate) async fn resolve(addr: impl ToSocketAddrs) -> io::Result<Vec<SocketAddr>> {
    match addr.to_resolve() {
        Resolve::Ready(v) => Ok(v),
        Resolve::Lookup(name) => {
            let handle = spinpark_executor::Handle::try_current().map_err(|_| {
                io::Error::other(format!(
                    "resolving {name}: host-name lookup needs a spinpark runtime"
                ))
            })?;
            let r = handle
                .spawn_blocking(move || {
                    std::net::ToSocketAddrs::to_socket_addrs(name.as_str())
                        .map(|a| a.collect::<Vec<_>>())
                        .map_err(|e| sys::with_context(e, || format!("resolving {name}")))
                })
                .await;
            r.map_err(io::Error::from)?
        }
    }
}

/// Looks up `host` (a `"host:port"`, `("host", port)` or IP address) on the blocking pool,
/// like `tokio::net::lookup_host`.
///
/// # Errors
/// The resolver's error, naming the host (an OS error is returned as it is, so that
/// `raw_os_error()` answers); an error outside a spinpark runtime.
///
/// ```
/// # spinpark::Runtime::new().unwrap().block_on(async {
/// for addr in spinpark::net::lookup_host(("localhost", 8080)).await.unwrap() {
///     assert_eq!(addr.port(), 8080);
/// }
/// # });
/// ```
pub async fn lookup_host(host: impl ToSocketAddrs) -> io::Result<impl Iterator<Item = SocketAddr>> {
    resolve(host).await.map(Vec::into_iter)
}

/// `"host:port"` (or an IP literal) as given.
fn from_str(s: &str) -> Resolve {
    match s.parse::<SocketAddr>() {
        Ok(a) => Resolve::Ready(vec![a]),
        Err(_) => Resolve::Lookup(s.to_string()),
    }
}

/// `(host, port)`: an IP literal, or a name to look up.
fn from_host_port(host: &str, port: u16) -> Resolve {
    match host.parse::<IpAddr>() {
        Ok(ip) => Resolve::Ready(vec![SocketAddr::new(ip, port)]),
        // `[::1]`-style brackets are not needed for names; a bare IPv6 literal parsed above.
        Err(_) => Resolve::Lookup(format!("{host}:{port}")),
    }
}

macro_rules! ready_impl {
    ($($t:ty => |$s:ident| $e:expr;)*) => {$(
        impl ToSocketAddrs for $t {}
        impl ToSocketAddrsPriv for $t {
            fn to_resolve(&self) -> Resolve {
                let $s = self;
                $e
            }
        }
    )*};
}

ready_impl! {
    SocketAddr => |a| Resolve::Ready(vec![*a]);
    SocketAddrV4 => |a| Resolve::Ready(vec![SocketAddr::V4(*a)]);
    SocketAddrV6 => |a| Resolve::Ready(vec![SocketAddr::V6(*a)]);
    (IpAddr, u16) => |a| Resolve::Ready(vec![SocketAddr::new(a.0, a.1)]);
    (Ipv4Addr, u16) => |a| Resolve::Ready(vec![SocketAddr::new(a.0.into(), a.1)]);
    (Ipv6Addr, u16) => |a| Resolve::Ready(vec![SocketAddr::new(a.0.into(), a.1)]);
    [SocketAddr] => |a| Resolve::Ready(a.to_vec());
    str => |s| from_str(s);
    String => |s| from_str(s);
    (&str, u16) => |a| from_host_port(a.0, a.1);
    (String, u16) => |a| from_host_port(&a.0, a.1);
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: ToSocketAddrs + ?Sized> ToSocketAddrsPriv for &T {
    fn to_resolve(&self) -> Resolve {
        (**self).to_resolve()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(r: Resolve) -> Vec<SocketAddr> {
        match r {
            Resolve::Ready(v) => v,
            Resolve::Lookup(s) => panic!("{s} should not need a lookup"),
        }
    }

    #[test]
    fn literals_need_no_lookup_and_names_do() {
        let a: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert_eq!(ready("127.0.0.1:80".to_resolve()), vec![a]);
        assert_eq!(ready(("127.0.0.1", 80).to_resolve()), vec![a]);
        assert_eq!(ready(("::1", 80).to_resolve()).len(), 1);
        assert_eq!(
            ready(<&SocketAddr as ToSocketAddrsPriv>::to_resolve(&&a)),
            vec![a]
        );
        assert_eq!(ready([a, a][..].to_resolve()).len(), 2);
        match ("example.test", 80).to_resolve() {
            Resolve::Lookup(s) => assert_eq!(s, "example.test:80"),
            Resolve::Ready(v) => panic!("a name resolved without lookup: {v:?}"),
        }
        assert!(matches!(
            String::from("host:1").to_resolve(),
            Resolve::Lookup(_)
        ));
    }
}
