//! Streamable HTTP of revision 2026-07-28 (`--https`, `--http`): the same session,
//! dispatch, tools, prompts, resources and profiles as stdio, reached by one POST per
//! JSON-RPC message at `/mcp`.
//!
//! What differs from stdio is only where frames go: the session's outbox is *routed*
//! ([`Outbox::routed`]), so the notifications and the response of a request go to the
//! response of its POST: JSON when the response is the request's only frame, else an
//! SSE stream ([`sse`]). A `subscriptions/listen` request keeps its SSE stream open and
//! receives the list changes and resource updates there. Stateless: no session id; GET
//! and DELETE get 405. As on stdio, request ids must be unique among the requests in
//! flight (of every client): one server state serves all POSTs, so that `toggle` in one
//! POST reaches the listen stream of another.
//!
//! On start, stdout gets the URL (`https://127.0.0.1:PORT/mcp`) as its first line and,
//! with TLS, `ca-file: PATH` as its second: the CA certificate a client must trust;
//! with `--separate-authorization-server`, `authorization-server: URL` (its origin)
//! follows. Stdout carries nothing else but the lines of `--print-exchanges`
//! ([`exchanges`]). The server stops at the end of stdin or on SIGTERM:
//! listen streams get their graceful response, requests in flight get
//! [`END_OF_INPUT_GRACE`](crate::END_OF_INPUT_GRACE), and the process exits with 0.
//!
//! # Layout
//!
//! - [`options`]: the options and faults of the command line;
//! - [`tls`]: the certificates (loaded, or made with tls-fixtures);
//! - [`server`]: the accept loop and the connections;
//! - [`endpoint`]: `/mcp`, its checks and the choice of the response;
//! - [`headers`]: `Origin`, `Accept`, and the request metadata headers (-32020);
//! - [`sse`]: the response streams, keep-alive comments and the stream faults;
//! - [`exchanges`]: the lines of `--print-exchanges`;
//! - [`authorization_origin`]: the authorization server on an origin of its own;
//! - the authorization server of `--auth` is [`crate::auth`]: the endpoint hands it
//!   every path but `/mcp`, and asks it for the check of each POST.

pub mod authorization_origin;
pub mod endpoint;
pub mod exchanges;
pub mod headers;
pub mod leftovers;
pub mod options;
pub mod server;
pub mod sse;
pub mod tls;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::AuthServer;
use crate::auth::options::AuthOptions;
use crate::config::Config;
use crate::outbox::{Outbox, Routes};
use crate::session::{Control, Session};
use crate::state::StateCodec;
use crate::{END_OF_INPUT_GRACE, error, info};
use endpoint::Endpoint;
use options::{HttpOptions, Transport};
use sse::StreamSettings;

/// How long the connections get to write what they hold when the server stops.
pub const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// How long the connections get when a tool ends the process (`crash`, `shutdown`).
pub const EXIT_FLUSH: Duration = Duration::from_millis(100);

/// Runs the HTTP server until the end of stdin or SIGTERM; returns the exit code.
/// It takes the parts of the command line it serves, not the command line's
/// `Options`, so that `https` never imports `cli` (which imports `https::options`).
pub async fn run(
    config: Config,
    transport: Transport,
    http: HttpOptions,
    auth: AuthOptions,
) -> i32 {
    // Watch SIGTERM before the URL is out: a client may signal as soon as it reads it.
    let terminated = match Terminated::watch() {
        Ok(terminated) => terminated,
        Err(e) => {
            error!("http", "SIGTERM cannot be watched: {e}");
            return 1;
        }
    };
    let tls = match transport {
        Transport::Https => {
            let case = http.tls_case;
            let made = match &http.tls_dir {
                Some(dir) => tls::load(dir, case),
                None => tls::generate(case, &certificate_names(&http)),
            };
            match made {
                Ok(tls) => Some(tls),
                Err(e) => {
                    error!("http", "{e}");
                    return 1;
                }
            }
        }
        _ => None,
    };
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, http.port));
    let listener = match TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(e) => {
            error!("http", "cannot listen on {address}: {e}");
            return 1;
        }
    };
    let port = listener.local_addr().map_or(http.port, |a| a.port());
    let host = http.host.as_deref().unwrap_or("127.0.0.1");
    // The authorization server of its own origin listens before the URLs are out.
    let separate = if auth.enabled && auth.separate_origin {
        match TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await {
            Ok(listener) => Some(listener),
            Err(e) => {
                error!("http", "cannot listen for the authorization server: {e}");
                return 1;
            }
        }
    } else {
        None
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let issuer = separate.as_ref().map(|listener| {
        let port = listener.local_addr().map_or(0, |a| a.port());
        format!("{scheme}://{host}:{port}")
    });
    let url = match announce(host, port, tls.as_ref(), issuer.as_deref()) {
        Ok(url) => url,
        Err(e) => {
            error!("http", "stdout failed: the URL could not be announced: {e}");
            return 1;
        }
    };
    let ca_file = tls.as_ref().map(|tls| tls.ca_file.clone());
    let made = endpoint(&config, &http, &auth, &url, ca_file, issuer);
    let (endpoint, mut controls) = match made {
        Ok(made) => made,
        Err(e) => {
            error!("http", "the server cannot start: {e}");
            return 1;
        }
    };
    let stop = CancellationToken::new();
    let tracker = TaskTracker::new();
    let acceptor = tls
        .as_ref()
        .map(|tls| tokio_rustls::TlsAcceptor::from(Arc::clone(&tls.config)));
    let accepting = tokio::spawn(server::accept(
        listener,
        acceptor.clone(),
        Arc::clone(&endpoint),
        stop.clone(),
        tracker.clone(),
    ));
    let authorizing = match (separate, endpoint.auth()) {
        (Some(listener), Some(auth)) => Some(tokio::spawn(server::accept(
            listener,
            acceptor,
            Arc::new(authorization_origin::AuthorizationOrigin {
                auth: Arc::clone(auth),
                print: http.print_exchanges,
            }),
            stop.clone(),
            tracker.clone(),
        ))),
        _ => None,
    };

    let (code, grace) = tokio::select! {
        () = end_of_stdin() => {
            stop_serving(&endpoint, "the end of the input of the server").await;
            (0, CLOSE_GRACE)
        }
        () = terminated.recv() => {
            stop_serving(&endpoint, "SIGTERM").await;
            (0, CLOSE_GRACE)
        }
        // `crash` and `shutdown` end the process as on stdio: what they queued goes
        // out; a connection still waiting (`crash` at once) gets no more than EXIT_FLUSH.
        Some(Control::Exit(code)) = controls.recv() => (code, EXIT_FLUSH),
    };
    stop.cancel();
    tracker.close();
    let _ = tokio::time::timeout(grace, tracker.wait()).await;
    accepting.abort();
    if let Some(authorizing) = authorizing {
        authorizing.abort();
    }
    info!("http", "the process exits with code {code}");
    code
}

/// The names of the certificate made in memory: `--tls-name`s and `--host`.
fn certificate_names(http: &HttpOptions) -> Vec<String> {
    http.tls_names.iter().chain(&http.host).cloned().collect()
}

/// Writes the URL, with TLS the `ca-file:` line, and the `authorization-server:` line
/// of a separate authorization server, to stdout; returns the URL.
fn announce(
    host: &str,
    port: u16,
    tls: Option<&tls::Tls>,
    issuer: Option<&str>,
) -> std::io::Result<String> {
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{host}:{port}/mcp");
    let mut lines = format!("{url}\n");
    if let Some(tls) = tls {
        lines.push_str(&format!("ca-file: {}\n", tls.ca_file.display()));
    }
    if let Some(issuer) = issuer {
        lines.push_str(&format!("authorization-server: {issuer}\n"));
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(lines.as_bytes())?;
    stdout.flush()?;
    Ok(url)
}

/// Why the server over HTTP cannot start.
#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error(transparent)]
    StateKey(#[from] crate::state::StateKeyError),
    #[error("the variable {0} of --bearer-env is not set")]
    NoBearer(String),
    #[error(transparent)]
    Trust(#[from] crate::fetch::TrustError),
}

/// The one session of the server behind the endpoint, with its outbox routed.
fn endpoint(
    config: &Config,
    http: &HttpOptions,
    auth_options: &AuthOptions,
    url: &str,
    ca_file: Option<std::path::PathBuf>,
    issuer: Option<String>,
) -> Result<(Arc<Endpoint>, mpsc::UnboundedReceiver<Control>), StartError> {
    let config = config.clone();
    let states = StateCodec::new()?;
    let catalog = crate::profiles::catalog(&config);
    info!(
        "http",
        "serving MCP 2026-07-28 at {url} with the profile {}: tools {}, prompts {}, resources {}",
        config.profile.name(),
        catalog.tools.len(),
        catalog.prompts.len(),
        catalog.resources.len()
    );
    let routes = Arc::new(Routes::default());
    let (control, controls) = mpsc::unbounded_channel();
    let session = Arc::new(Session::new(
        config,
        catalog,
        Outbox::routed(Arc::clone(&routes)),
        states,
        control,
    ));
    let settings = StreamSettings {
        keep_alive: http.keep_alive,
        faults: http.faults.clone(),
    };
    let bearer = match &http.bearer_env {
        Some(variable) => {
            Some(std::env::var(variable).map_err(|_| StartError::NoBearer(variable.clone()))?)
        }
        None => None,
    };
    let auth = if auth_options.enabled {
        let ca_files: Vec<_> = ca_file
            .into_iter()
            .chain(auth_options.ca_file.clone())
            .collect();
        let mut auth = AuthServer::new(url, auth_options.clone(), &ca_files)?;
        if let Some(issuer) = issuer {
            auth = auth.with_issuer(issuer);
        }
        info!(
            "auth",
            "the authorization server {} protects {url}: metadata at {}",
            auth.issuer,
            auth.prm_url()
        );
        Some(Arc::new(auth))
    } else {
        None
    };
    let endpoint = Endpoint::new(session, routes, settings, http.always_sse)
        .with_bearer(bearer)
        .with_printed_exchanges(http.print_exchanges)
        .with_auth(auth);
    Ok((Arc::new(endpoint), controls))
}

/// Listen streams end gracefully, requests in flight get [`END_OF_INPUT_GRACE`], the
/// rest is cancelled and every stream still open ends.
async fn stop_serving(endpoint: &Endpoint, reason: &str) {
    let session = &endpoint.session;
    let streams = session.end_listens(reason);
    let deadline = tokio::time::Instant::now() + END_OF_INPUT_GRACE;
    while session.in_flight() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let cancelled = session.cancel_all();
    endpoint.routes.close_all();
    info!(
        "http",
        "stopping at {reason}: {streams} listen streams ended, {cancelled} requests cancelled"
    );
}

/// Reads stdin to its end; what it carries is ignored.
async fn end_of_stdin() {
    let mut stdin = tokio::io::stdin();
    let _ = tokio::io::copy(&mut stdin, &mut tokio::io::sink()).await;
}

/// SIGTERM, watched from the start of the server.
struct Terminated {
    #[cfg(unix)]
    signals: tokio::signal::unix::Signal,
}

impl Terminated {
    #[cfg(unix)]
    fn watch() -> std::io::Result<Terminated> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Terminated {
            signals: signal(SignalKind::terminate())?,
        })
    }

    #[cfg(not(unix))]
    fn watch() -> std::io::Result<Terminated> {
        Ok(Terminated {})
    }

    #[cfg(unix)]
    async fn recv(mut self) {
        self.signals.recv().await;
    }

    #[cfg(not(unix))]
    async fn recv(self) {
        std::future::pending::<()>().await;
    }
}
