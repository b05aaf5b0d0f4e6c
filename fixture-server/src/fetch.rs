//! A small GET client over HTTP/1.1, with TLS (rustls) for https: the fetch of client ID
//! metadata documents (`--cimd`) and the test browser (`--browse`). One connection per
//! request, no proxy, no cookies; the caller decides which URLs it may fetch.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use url::{Host, Url};

/// What one GET gave.
pub struct Fetched {
    pub status: StatusCode,
    pub location: Option<String>,
    pub content_type: Option<String>,
    pub body: Bytes,
}

/// Why a GET failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("the URL has no host")]
    NoHost,
    #[error("the scheme {0} is neither https nor http")]
    Scheme(String),
    #[error("the connection to {0} failed: {1}")]
    Connect(String, std::io::Error),
    #[error("the TLS handshake with {0} failed: {1}")]
    Tls(String, std::io::Error),
    #[error("the HTTP exchange failed: {0}")]
    Http(#[from] hyper::Error),
    #[error("the body is over {0} bytes or could not be read")]
    Body(usize),
    #[error("no answer within {} s", .0.as_secs())]
    Timeout(Duration),
    #[error("the request could not be built: {0}")]
    Request(String),
}

/// Why the trusted certificates could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the CA file {}: {cause}", path.display())]
pub struct TrustError {
    pub path: PathBuf,
    pub cause: String,
}

/// The TLS client trusting the CA certificates of `ca_files` (PEM), and no others.
pub fn connector(ca_files: &[PathBuf]) -> Result<TlsConnector, TrustError> {
    let mut roots = RootCertStore::empty();
    for path in ca_files {
        for cert in ca_certificates(path)? {
            roots.add(cert).map_err(|e| TrustError {
                path: path.clone(),
                cause: e.to_string(),
            })?;
        }
    }
    connector_with(roots)
}

/// The certificates of one CA file (PEM), at least one.
pub fn ca_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TrustError> {
    let error = |cause: String| TrustError {
        path: path.to_path_buf(),
        cause,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| error(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| error(e.to_string()))?;
    if certs.is_empty() {
        return Err(error("the file holds no certificate".into()));
    }
    Ok(certs)
}

/// The TLS client trusting `roots`, and no others.
pub fn connector_with(roots: RootCertStore) -> Result<TlsConnector, TrustError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TrustError {
            path: PathBuf::new(),
            cause: e.to_string(),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// GETs `url`; the body may have at most `max_body` bytes; the whole exchange has
/// `timeout`.
pub async fn get(
    url: &Url,
    tls: &TlsConnector,
    max_body: usize,
    timeout: Duration,
) -> Result<Fetched, FetchError> {
    get_resolved(url, tls, max_body, timeout, None).await
}

/// [`get`], with the address of one host name given (`--resolve` of the test
/// browser): the connection goes there, TLS still checks the name.
pub async fn get_resolved(
    url: &Url,
    tls: &TlsConnector,
    max_body: usize,
    timeout: Duration,
    resolve: Option<&(String, std::net::IpAddr)>,
) -> Result<Fetched, FetchError> {
    tokio::time::timeout(timeout, get_now(url, tls, max_body, resolve))
        .await
        .map_err(|_| FetchError::Timeout(timeout))?
}

async fn get_now(
    url: &Url,
    tls: &TlsConnector,
    max_body: usize,
    resolve: Option<&(String, std::net::IpAddr)>,
) -> Result<Fetched, FetchError> {
    let host = url.host().ok_or(FetchError::NoHost)?;
    let port = url.port_or_known_default().ok_or(FetchError::NoHost)?;
    let (mut connect_host, name) = match &host {
        Host::Domain(name) => (name.to_string(), name.to_string()),
        Host::Ipv4(ip) => (ip.to_string(), ip.to_string()),
        Host::Ipv6(ip) => (ip.to_string(), ip.to_string()),
    };
    if let Some((resolved, address)) = resolve
        && *resolved == name
    {
        connect_host = address.to_string();
    }
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let request = Request::get(path)
        .header(hyper::header::HOST, authority.as_str())
        .header(hyper::header::USER_AGENT, crate::SERVER_NAME)
        .header(hyper::header::ACCEPT, "*/*")
        .body(Empty::<Bytes>::new())
        .map_err(|e| FetchError::Request(e.to_string()))?;
    let tcp = TcpStream::connect((connect_host.as_str(), port))
        .await
        .map_err(|e| FetchError::Connect(authority.clone(), e))?;
    match url.scheme() {
        "https" => {
            let name =
                ServerName::try_from(name).map_err(|e| FetchError::Request(e.to_string()))?;
            let stream = tls
                .connect(name, tcp)
                .await
                .map_err(|e| FetchError::Tls(authority.clone(), e))?;
            exchange(TokioIo::new(stream), request, max_body).await
        }
        "http" => exchange(TokioIo::new(tcp), request, max_body).await,
        other => Err(FetchError::Scheme(other.to_owned())),
    }
}

async fn exchange<I>(
    io: I,
    request: Request<Empty<Bytes>>,
    max_body: usize,
) -> Result<Fetched, FetchError>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    let connection = tokio::spawn(connection);
    let response = sender.send_request(request).await?;
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|value: &hyper::header::HeaderValue| value.to_str().ok())
            .map(str::to_owned)
    };
    let status = response.status();
    let location = header(hyper::header::LOCATION);
    let content_type = header(hyper::header::CONTENT_TYPE);
    let body = Limited::new(response.into_body(), max_body)
        .collect()
        .await
        .map_err(|_| FetchError::Body(max_body))?
        .to_bytes();
    connection.abort();
    Ok(Fetched {
        status,
        location,
        content_type,
        body,
    })
}
