//! The gRPC service of `examples/grpc_server.rs`, shared with its test: a tonic `Greeter`
//! (a unary call and a server stream, from `greeter.proto`) served on spinpark through
//! `spinpark::hyper`, without tonic's tokio-bound transport.
//!
//! How: tonic's `Routes` is a tower service; hyper-util's `TowerToHyperService` makes it a
//! hyper service, and hyper-util's connection builder serves it over `spinpark::hyper::Io`
//! (HTTP/2 with prior knowledge, which is what gRPC clients speak without TLS).

/// The generated protobuf messages and tonic client and server (see the file's header).
#[allow(unreachable_pub, missing_docs, missing_debug_implementations)]
pub mod pb;

use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::Stream;
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use pb::greeter_server::{Greeter, GreeterServer};
use pb::{Count, CountRequest, HelloReply, HelloRequest};
use tonic::{Request, Response, Status};

use crate::conn_timeouts::Timeouts;
use crate::log_limit::LogLimit;

/// The most numbers `CountTo` streams; more is refused with `InvalidArgument`.
pub const MAX_COUNT: u32 = 10_000;

/// The service.
#[derive(Debug, Default)]
pub struct MyGreeter;

#[tonic::async_trait]
impl Greeter for MyGreeter {
    async fn say_hello(
        &self,
        request: Request<HelloRequest>,
    ) -> Result<Response<HelloReply>, Status> {
        let name = request.into_inner().name;
        Ok(Response::new(HelloReply {
            message: format!("hello, {name}"),
        }))
    }

    type CountToStream = Pin<Box<dyn Stream<Item = Result<Count, Status>> + Send>>;

    async fn count_to(
        &self,
        request: Request<CountRequest>,
    ) -> Result<Response<Self::CountToStream>, Status> {
        let up_to = request.into_inner().up_to;
        if up_to > MAX_COUNT {
            return Err(Status::invalid_argument(format!(
                "up_to {up_to} exceeds the limit of {MAX_COUNT}"
            )));
        }
        // A stream that waits on spinpark's timers between items, as a real feed would wait
        // on something: tonic drives it on the connection's spinpark task.
        let stream = futures_util::stream::unfold(1, move |n| async move {
            if n > up_to {
                return None;
            }
            if n % 100 == 0 {
                spinpark::time::sleep(Duration::from_micros(100)).await;
            }
            Some((Ok(Count { n }), n + 1))
        });
        Ok(Response::new(Box::pin(stream)))
    }
}

/// tonic's router holding the service, ready to serve connections.
pub fn routes() -> tonic::service::Routes {
    tonic::service::Routes::new(GreeterServer::new(MyGreeter))
}

/// Serves gRPC on one spinpark connection until the client goes away, bounded by `t` (see
/// [`conn_timeouts`](crate::conn_timeouts)); `accepted` starts the handshake deadline.
/// HTTP/1 is served too (and answered by tonic), with the same header timeout, so that a
/// client trickling HTTP/1 headers is cut like any other.
pub async fn serve_connection(
    stream: spinpark::net::TcpStream,
    routes: tonic::service::Routes,
    t: Timeouts,
    accepted: Instant,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    use spinpark::hyper::{Executor, Io, Timer};
    let mut builder = auto::Builder::new(Executor::new());
    t.configure(&mut builder, Timer::new());
    let io = t.timed(Io::new(stream), Timer::new(), accepted);
    let svc = t.with_body_deadline(TowerToHyperService::new(routes), Timer::new());
    builder.serve_connection(io, svc).await
}

/// [`serve_with`] with the default [`Timeouts`].
pub async fn serve(listener: spinpark::net::TcpListener) -> std::io::Result<()> {
    serve_with(listener, Timeouts::DEFAULT).await
}

/// Accepts connections on `listener` and serves each on its own task, with `t`. Connection
/// errors (timeouts among them) print at most 10 lines a second.
pub async fn serve_with(listener: spinpark::net::TcpListener, t: Timeouts) -> std::io::Result<()> {
    static CONN_ERRORS: LogLimit = LogLimit::new(10);
    let routes = routes();
    loop {
        let (stream, peer) = listener.accept().await?;
        let accepted = Instant::now();
        stream.set_nodelay(true)?;
        let routes = routes.clone();
        spinpark::spawn(async move {
            if let Err(e) = serve_connection(stream, routes, t, accepted).await {
                CONN_ERRORS.log(format_args!("gRPC connection from {peer}: {e}"));
            }
        });
    }
}
