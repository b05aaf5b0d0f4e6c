//! The URL form's measurements: the fixture over HTTPS (`bridge-fixture-server
//! --https`) and a direct client of revision 2026-07-28 over HTTP, the same stack as
//! the bridge's URL form (reqwest, rustls with ring, HTTP/1.1 keep-alive), trusting
//! only the fixture's test CA.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use harness_sim::url_fixture;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use tokio::process::{Child, Command};
use tokio::time::{Duration, Instant};

use super::BenchError;

/// How long the fixture may take to print its URL.
const START_LIMIT: Duration = Duration::from_secs(30);

/// `bridge-fixture-server --https`: its URL and the CA file a client must trust. It
/// stops at the end of its stdin, when this is dropped.
pub struct HttpsFixture {
    pub url: String,
    pub ca_file: String,
    child: Child,
}

impl HttpsFixture {
    pub async fn start(fixture: &Path) -> Result<Self, BenchError> {
        let mut command = Command::new(fixture);
        command.arg("--https").stderr(Stdio::null());
        let announced = url_fixture::start(command, START_LIMIT)
            .await
            .map_err(|error| BenchError::Setup(format!("the HTTPS fixture: {error}")))?;
        let ca_file = announced
            .ca_file
            .ok_or_else(|| BenchError::Setup("the HTTPS fixture names no CA file".into()))?;
        Ok(Self {
            url: announced.url,
            ca_file,
            child: announced.child,
        })
    }

    /// The bridge in its URL form in front of this fixture.
    pub fn bridge_argv(&self, bridge: &Path) -> Vec<OsString> {
        vec![
            bridge.as_os_str().to_owned(),
            "--ca-file".into(),
            self.ca_file.clone().into(),
            self.url.clone().into(),
        ]
    }

    /// The process id of the fixture (its memory is in /proc/<pid>/status).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// A client of revision 2026-07-28 that POSTs `tools/call` of one tool to the fixture.
#[derive(Clone)]
pub struct DirectClient {
    client: reqwest::Client,
    url: String,
}

impl DirectClient {
    pub fn new(fixture: &HttpsFixture) -> Result<Self, BenchError> {
        Self::with_ca_file(&fixture.url, &fixture.ca_file)
    }

    /// A client of the server at `url` that trusts only the CA of `ca_file`.
    pub fn with_ca_file(url: &str, ca_file: &str) -> Result<Self, BenchError> {
        let setup = |what: &str, error: &dyn std::fmt::Display| {
            BenchError::Setup(format!("the direct HTTPS client, {what}: {error}"))
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in
            CertificateDer::pem_file_iter(ca_file).map_err(|error| setup("the CA file", &error))?
        {
            let cert = cert.map_err(|error| setup("the CA file", &error))?;
            roots
                .add(cert)
                .map_err(|error| setup("the CA certificate", &error))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| setup("TLS", &error))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .no_proxy()
            .build()
            .map_err(|error| setup("reqwest", &error))?;
        Ok(Self {
            client,
            url: url.to_owned(),
        })
    }

    /// One `tools/call` of `tool` with the body `frame` (a 2026-07-28 request with its
    /// `_meta`): the time from the send to the whole body, and the body.
    pub async fn call(
        &self,
        tool: &str,
        frame: Vec<u8>,
    ) -> Result<(Duration, Vec<u8>), BenchError> {
        self.post("tools/call", Some(tool), frame).await
    }

    /// One request of `method` (with `Mcp-Name: name` when given) and the body
    /// `frame`: the time from the send to the whole body, and the body.
    pub async fn post(
        &self,
        method: &str,
        name: Option<&str>,
        frame: Vec<u8>,
    ) -> Result<(Duration, Vec<u8>), BenchError> {
        let sent = Instant::now();
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let response = request
            .body(frame)
            .send()
            .await
            .map_err(|error| BenchError::Io(format!("POST: {error}")))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|error| BenchError::Io(format!("the body: {error}")))?;
        if !status.is_success() {
            return Err(BenchError::Server(format!(
                "HTTP status {status}: {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            )));
        }
        Ok((sent.elapsed(), body.to_vec()))
    }
}
