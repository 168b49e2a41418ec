//! [`Connector`]: HTTP clients (hyper-util's pooled `Client`, tonic's `Channel`) on
//! spinpark's own sockets (the `hyper-client` feature).
//!
//! ```no_run
//! use http_body_util::{BodyExt, Empty};
//! use hyper::body::Bytes;
//! use spinpark::hyper::{client_builder, Connector};
//!
//! # async fn f() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let client = client_builder().build::<_, Empty<Bytes>>(Connector::new());
//! let response = client.get("http://127.0.0.1:8080/".parse()?).await?;
//! let body = response.into_body().collect().await?.to_bytes();
//! # Ok(()) }
//! ```
//!
//! How: a connection is a [`TcpStream`] from [`TcpStream::connect`] (so on the runtime's
//! reactor, whose spinning workers pick up its events), with `TCP_NODELAY` on and the connect
//! bounded by a [`spinpark::time`](crate::time) timeout, wrapped in [`Io`] for hyper.
//! [`client_builder`] gives hyper-util's builder with spinpark's [`Executor`] (the pool's
//! and HTTP/2's background tasks) and [`Timer`] (HTTP/2 keep-alive, the pool's idle sweep),
//! so no part of the client looks for a tokio runtime. Only `http://` URIs: for TLS, wrap the
//! connector.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};

use super::{Executor, Io, Timer};
use crate::net::TcpStream;

/// How long [`Connector::new`] lets a connect take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects hyper's clients to `http://` URIs over spinpark TCP streams: a
/// `tower_service::Service<Uri>` whose connections are [`Io`]`<`[`TcpStream`]`>`.
///
/// ```
/// use std::time::Duration;
/// let connector = spinpark::hyper::Connector::new().connect_timeout(Duration::from_secs(2));
/// ```
///
/// With tonic: `Endpoint::from_static("http://127.0.0.1:50051")
/// .executor(spinpark::hyper::Executor::new()).connect_with_connector(Connector::new())`.
///
/// Errors are `io::Error`s naming the address: `ConnectionRefused` when nothing listens,
/// `TimedOut` when the connect outlasts the timeout, `InvalidInput` for a URI without a host
/// or with a scheme other than `http`.
#[derive(Debug, Clone)]
pub struct Connector {
    connect_timeout: Option<Duration>,
    nodelay: bool,
}

impl Default for Connector {
    fn default() -> Connector {
        Connector::new()
    }
}

impl Connector {
    /// A connector with `TCP_NODELAY` on and a [`DEFAULT_CONNECT_TIMEOUT`] (10 s) connect
    /// timeout.
    ///
    /// ```
    /// let connector = spinpark::hyper::Connector::new();
    /// ```
    pub fn new() -> Connector {
        Connector {
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            nodelay: true,
        }
    }

    /// Bounds each connect (name lookup included) by `timeout`; `None`: no bound.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = spinpark::hyper::Connector::new().connect_timeout(Duration::from_millis(500));
    /// ```
    pub fn connect_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Connector {
        self.connect_timeout = timeout.into();
        self
    }

    /// Whether connections set `TCP_NODELAY` (on by default: requests are small and
    /// latency-bound, and spinpark already coalesces a poll's writes into one segment).
    ///
    /// ```
    /// let c = spinpark::hyper::Connector::new().nodelay(false);
    /// ```
    pub fn nodelay(mut self, on: bool) -> Connector {
        self.nodelay = on;
        self
    }

    /// Connects to `uri`'s host and port (80 when the URI has none).
    ///
    /// ```no_run
    /// # async fn f() -> std::io::Result<()> {
    /// let io = spinpark::hyper::Connector::new()
    ///     .connect("http://127.0.0.1:8080/".parse().unwrap())
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(&self, uri: Uri) -> io::Result<Io<TcpStream>> {
        let (host, port) = host_port(&uri)?;
        let connect = async {
            let stream = TcpStream::connect((host.as_str(), port))
                .await
                .map_err(|e| io::Error::new(e.kind(), format!("connect to {host}:{port}: {e}")))?;
            if self.nodelay {
                stream.set_nodelay(true)?;
            }
            Ok(Io::new(stream))
        };
        match self.connect_timeout {
            None => connect.await,
            Some(limit) => match crate::time::timeout(limit, connect).await {
                Ok(result) => result,
                Err(_) => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connect to {host}:{port}: no answer within {limit:?}"),
                )),
            },
        }
    }
}

/// The host (IPv6 brackets removed) and port of an `http://` URI.
fn host_port(uri: &Uri) -> io::Result<(String, u16)> {
    let invalid =
        |what: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{uri}: {what}"));
    match uri.scheme_str() {
        Some("http") | None => {}
        Some(other) => {
            return Err(invalid(&format!(
                "scheme {other:?}: this connector speaks plain TCP (http://); wrap it for TLS"
            )))
        }
    }
    let host = uri.host().ok_or_else(|| invalid("no host"))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Ok((host.to_string(), uri.port_u16().unwrap_or(80)))
}

/// The future of a [`Connector`]'s connect.
pub struct Connecting {
    inner: Pin<Box<dyn Future<Output = io::Result<Io<TcpStream>>> + Send>>,
}

impl fmt::Debug for Connecting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connecting").finish_non_exhaustive()
    }
}

impl Future for Connecting {
    type Output = io::Result<Io<TcpStream>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl tower_service::Service<Uri> for Connector {
    type Response = Io<TcpStream>;
    type Error = io::Error;
    type Future = Connecting;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Connecting {
        let this = self.clone();
        Connecting {
            inner: Box::pin(async move { this.connect(uri).await }),
        }
    }
}

impl Connection for Io<TcpStream> {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

/// hyper-util's pooled-client builder with spinpark's [`Executor`], and [`Timer`] as both its
/// HTTP/2 timer and its pool timer: add settings, then `.build(Connector::new())`.
///
/// ```
/// use http_body_util::Full;
/// use hyper::body::Bytes;
/// use spinpark::hyper::{client_builder, Connector};
///
/// let client = client_builder()
///     .pool_max_idle_per_host(32)
///     .build::<_, Full<Bytes>>(Connector::new());
/// ```
///
/// Set no timeout through a tokio timer (hyper-util's `TokioTimer`): bound each request with
/// [`spinpark::time::timeout`](crate::time::timeout) instead.
pub fn client_builder() -> hyper_util::client::legacy::Builder {
    let mut builder = hyper_util::client::legacy::Client::builder(Executor::new());
    builder.timer(Timer::new()).pool_timer(Timer::new());
    builder
}

#[cfg(test)]
mod tests {
    use super::host_port;

    #[test]
    fn host_and_port_of_a_uri() {
        let hp = |s: &str| host_port(&s.parse().unwrap());
        assert_eq!(
            hp("http://127.0.0.1:8080/x").unwrap(),
            ("127.0.0.1".into(), 8080)
        );
        assert_eq!(hp("http://localhost/").unwrap(), ("localhost".into(), 80));
        assert_eq!(hp("http://[::1]:9000/").unwrap(), ("::1".into(), 9000));
        assert_eq!(hp("127.0.0.1:7000").unwrap(), ("127.0.0.1".into(), 7000));
        let e = hp("https://127.0.0.1/").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("https"), "{e}");
        assert!(hp("/only/a/path").is_err());
    }
}
