//! Connections: the accept loop on 127.0.0.1, TLS when asked, HTTP/1.1 on each
//! connection, and their end when the server stops.

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::http_body::ResponseBody;
use hyper::body::Incoming;
use hyper::{Request, Response};

/// What answers the requests of a listener: the endpoint of `/mcp`, or the
/// authorization server on its own origin.
pub trait Handler: Send + Sync + 'static {
    fn handle(
        &self,
        request: Request<Incoming>,
    ) -> impl Future<Output = Response<ResponseBody>> + Send;
}

impl Handler for super::endpoint::Endpoint {
    fn handle(
        &self,
        request: Request<Incoming>,
    ) -> impl Future<Output = Response<ResponseBody>> + Send {
        super::endpoint::Endpoint::handle(self, request)
    }
}

/// A client has this long for its TLS handshake: a stuck one must not hold a task.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until `stop` is cancelled; each connection runs on a task of
/// `tracker`, and ends gracefully (the response in progress first) when `stop` fires.
pub async fn accept<H: Handler>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    endpoint: Arc<H>,
    stop: CancellationToken,
    tracker: TaskTracker,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.cancelled() => return,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors, say: wait a little instead of spinning.
                crate::warning!("http", "accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let endpoint = Arc::clone(&endpoint);
        let stop = stop.clone();
        let tls = tls.clone();
        tracker.spawn(async move {
            match tls {
                None => serve(tcp, endpoint, stop).await,
                Some(acceptor) => {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(stream)) => serve(stream, endpoint, stop).await,
                        Ok(Err(e)) => {
                            crate::warning!("http", "the TLS handshake with {peer} failed: {e}");
                        }
                        Err(_) => {
                            crate::warning!("http", "the TLS handshake with {peer} timed out");
                        }
                    }
                }
            }
        });
    }
}

async fn serve<S, H: Handler>(stream: S, endpoint: Arc<H>, stop: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| {
        let endpoint = Arc::clone(&endpoint);
        async move { Ok::<_, std::convert::Infallible>(endpoint.handle(request).await) }
    });
    // The timer arms hyper's 30 s limit on reading a request head: a client that
    // trickles bytes must not hold a connection forever.
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        _ = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = result
        && !e.is_incomplete_message()
    {
        crate::info!("http", "a connection ended: {e}");
    }
}
