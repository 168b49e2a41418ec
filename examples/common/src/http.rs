//! The HTTP service of `examples/http_server.rs`, shared with the tests and the http bench:
//! a hello-world route and an echo-body route, written once as a hyper service and once as an
//! axum router, served on spinpark (through `spinpark::hyper`) or on tokio (through
//! hyper-util's tokio adapters, for comparison).
//!
//! Routes: `GET /` answers `Hello, world!`; `POST /echo` streams the request body back as it
//! arrives (nothing is buffered whole, so a large body costs no memory); anything else is 404.
//! Request bodies have the deadline of [`Timeouts::with_body_deadline`]: a body that turns
//! up too slowly fails, and with it the echo response.

use std::convert::Infallible;
use std::error::Error;
use std::time::Instant;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::server::conn::auto;

use crate::conn_timeouts::Timeouts;

/// Errors of a connection, and of a body.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// The response body of [`handle`].
pub type Body = http_body_util::combinators::BoxBody<Bytes, BoxError>;

/// The greeting of `GET /`.
pub const HELLO: &str = "Hello, world!";

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).map_err(|e| match e {}).boxed()
}

/// The service, as a hyper handler, for any request body (hyper's `Incoming`, or one
/// wrapped in a body deadline).
pub async fn handle<B>(req: Request<B>) -> Result<Response<Body>, Infallible>
where
    B: hyper::body::Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    let resp = match (req.method(), req.uri().path()) {
        (&Method::GET, "/") => Response::new(full(HELLO)),
        (&Method::POST, "/echo") => Response::new(req.into_body().map_err(Into::into).boxed()),
        _ => {
            let mut r = Response::new(full("not found\n"));
            *r.status_mut() = StatusCode::NOT_FOUND;
            r
        }
    };
    Ok(resp)
}

/// The same service as an axum router.
pub fn axum_router() -> axum::Router {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/", get(|| async { HELLO }))
        .route("/echo", post(|body: axum::body::Body| async { body }))
}

/// Serves HTTP/1.1 and HTTP/2 (chosen by what the client sends first) on one spinpark
/// connection, with the hyper handler or the axum router, bounded by `t` (see
/// [`conn_timeouts`](crate::conn_timeouts)). `accepted` is when the connection was accepted:
/// the handshake deadline runs from then (a TLS handshake done before this call counts).
pub async fn serve_spinpark<S>(
    stream: S,
    use_axum: bool,
    t: Timeouts,
    accepted: Instant,
) -> Result<(), BoxError>
where
    S: spinpark::hyper::Stream + Send + 'static,
{
    use spinpark::hyper::{Executor, Io, Timer};
    let mut builder = auto::Builder::new(Executor::new());
    t.configure(&mut builder, Timer::new());
    let io = t.timed(Io::new(stream), Timer::new(), accepted);
    if use_axum {
        let svc = hyper_util::service::TowerToHyperService::new(axum_router());
        let svc = t.with_body_deadline(svc, Timer::new());
        builder.serve_connection(io, svc).await
    } else {
        let svc = t.with_body_deadline(hyper::service::service_fn(handle), Timer::new());
        builder.serve_connection(io, svc).await
    }
}

/// The same on tokio, with hyper-util's tokio adapters (and the same timeouts).
pub async fn serve_tokio(
    stream: tokio::net::TcpStream,
    use_axum: bool,
    t: Timeouts,
    accepted: Instant,
) -> Result<(), BoxError> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    let mut builder = auto::Builder::new(TokioExecutor::new());
    t.configure(&mut builder, TokioTimer::new());
    let io = t.timed(TokioIo::new(stream), TokioTimer::new(), accepted);
    if use_axum {
        let svc = hyper_util::service::TowerToHyperService::new(axum_router());
        let svc = t.with_body_deadline(svc, TokioTimer::new());
        builder.serve_connection(io, svc).await
    } else {
        let svc = t.with_body_deadline(hyper::service::service_fn(handle), TokioTimer::new());
        builder.serve_connection(io, svc).await
    }
}
