//! A running `bridge-fixture-server --https` (or `--http`) and a small client for it:
//! one connection per POST, as a stateless client of 2026-07-28 may do.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use harness_sim::url_fixture;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, Command};
use tokio_rustls::TlsConnector;

/// How long a test waits for one answer, one event or the exit.
pub const WAIT: Duration = Duration::from_secs(10);
pub const VERSION: &str = "2026-07-28";

/// The `_meta` of a request with these client capabilities.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "https-tests", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// A request frame with `_meta` merged into `params`.
pub fn request(id: Value, method: &str, mut params: Value, extra_meta: Value) -> Value {
    let mut meta =
        meta(json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}));
    if let (Some(meta), Some(extra)) = (meta.as_object_mut(), extra_meta.as_object()) {
        meta.extend(extra.clone());
    }
    params["_meta"] = meta;
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The metadata headers a conforming client sends for `frame`.
pub fn mcp_headers(frame: &Value) -> Vec<(String, String)> {
    let mut headers = vec![
        (
            "accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("content-type".into(), "application/json".into()),
        ("mcp-protocol-version".into(), VERSION.into()),
    ];
    if let Some(method) = frame["method"].as_str() {
        if frame.get("id").is_some() {
            headers.push(("mcp-method".into(), method.into()));
        }
        let name = match method {
            "tools/call" | "prompts/get" => frame["params"]["name"].as_str(),
            "resources/read" => frame["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            headers.push(("mcp-name".into(), name.into()));
        }
    }
    headers
}

/// The executable under test: Cargo's, or `$FIXTURE_SERVER_EXE` when set. Worktrees
/// that share one target folder share its `debug/bridge-fixture-server` too, and a
/// build of another branch replaces it; the variable pins a copy of this branch's.
fn executable() -> PathBuf {
    std::env::var_os("FIXTURE_SERVER_EXE").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_bridge-fixture-server")),
        PathBuf::from,
    )
}

pub struct Server {
    pub child: Child,
    stdin: Option<ChildStdin>,
    pub url: String,
    pub port: u16,
    /// The `ca-file:` line; `None` for `--http`.
    pub ca_file: Option<PathBuf>,
    tls: Option<TlsConnector>,
}

impl Server {
    /// Starts the executable with `args` and reads its announcement lines.
    pub async fn start(args: &[&str]) -> Server {
        let mut command = Command::new(executable());
        command.args(args).stderr(Stdio::inherit());
        let announced = url_fixture::start(command, WAIT)
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        let (mut child, url) = (announced.child, announced.url);
        let stdin = child.stdin.take();
        let ca_file = announced.ca_file.map(PathBuf::from);
        let port = url
            .trim_end_matches("/mcp")
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let tls = ca_file
            .as_ref()
            .map(|ca| connector(&std::fs::read(ca).unwrap()));
        Server {
            child,
            stdin,
            url,
            port,
            ca_file,
            tls,
        }
    }

    /// Replaces the trusted CA of the client (for the tests of refusal).
    pub fn trust(&mut self, ca_pem: &[u8]) {
        self.tls = Some(connector(ca_pem));
    }

    /// Sends one HTTP request to `/mcp` on a new connection; the response body streams.
    pub async fn send(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
    ) -> Result<Response<Incoming>, String> {
        self.send_to("/mcp", method, headers, body).await
    }

    /// POSTs `frame` with `headers` and one more header of raw bytes; returns the status
    /// and the JSON body.
    pub async fn send_raw_header(
        &self,
        frame: &Value,
        headers: &[(String, String)],
        name: &'static str,
        value: &[u8],
    ) -> (StatusCode, Value) {
        let raw = hyper::header::HeaderValue::from_bytes(value).unwrap();
        let mut request = self.request("/mcp", "POST", headers, frame.to_string().into_bytes());
        request.headers_mut().insert(name, raw);
        let response = self.exchange(request).await.unwrap();
        (response.status(), body_json(response).await)
    }

    fn request(
        &self,
        path: &str,
        method: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
    ) -> Request<Full<Bytes>> {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header("host", format!("127.0.0.1:{}", self.port));
        for (name, value) in headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder.body(Full::new(Bytes::from(body))).unwrap()
    }

    /// Sends one HTTP request to `path` on a new connection.
    pub async fn send_to(
        &self,
        path: &str,
        method: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
    ) -> Result<Response<Incoming>, String> {
        let request = self.request(path, method, headers, body);
        self.exchange(request).await
    }

    async fn exchange(&self, request: Request<Full<Bytes>>) -> Result<Response<Incoming>, String> {
        let tcp = TcpStream::connect(("127.0.0.1", self.port))
            .await
            .map_err(|e| e.to_string())?;
        match &self.tls {
            Some(tls) => {
                let name = ServerName::try_from("127.0.0.1").unwrap();
                let stream = tls.connect(name, tcp).await.map_err(|e| e.to_string())?;
                exchange(TokioIo::new(stream), request).await
            }
            None => exchange(TokioIo::new(tcp), request).await,
        }
    }

    /// POSTs `frame` with the headers of a conforming client.
    pub async fn post(&self, frame: &Value) -> Response<Incoming> {
        self.post_with(frame, &mcp_headers(frame)).await
    }

    /// POSTs `frame` with exactly `headers`.
    pub async fn post_with(
        &self,
        frame: &Value,
        headers: &[(String, String)],
    ) -> Response<Incoming> {
        tokio::time::timeout(
            WAIT,
            self.send("POST", headers, frame.to_string().into_bytes()),
        )
        .await
        .expect("an answer in time")
        .expect("the exchange works")
    }

    /// POSTs a request and returns its JSON-RPC response, from JSON or from the end of
    /// an SSE stream.
    pub async fn call(&self, frame: &Value) -> Value {
        let response = self.post(frame).await;
        assert_eq!(response.status(), StatusCode::OK);
        if header(&response, "content-type") == Some("application/json") {
            return body_json(response).await;
        }
        let mut events = Events::of(response);
        loop {
            match events.next().await {
                Some(Event::Data(frame)) if frame.get("id").is_some() => return frame,
                Some(_) => {}
                None => panic!("the stream ended without a response"),
            }
        }
    }

    /// Closes the server's stdin: the server must stop.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// The server's stdin, to close it later while a request is in flight.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Waits for the exit; returns the exit code.
    pub async fn exit_code(&mut self) -> Option<i32> {
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("the server exits in time")
            .unwrap()
            .code()
    }
}

async fn exchange<I>(io: I, request: Request<Full<Bytes>>) -> Result<Response<Incoming>, String>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())
}

fn connector(ca_pem: &[u8]) -> TlsConnector {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

/// The whole body as text.
pub async fn body_text(response: Response<Incoming>) -> String {
    let bytes = tokio::time::timeout(WAIT, response.into_body().collect())
        .await
        .expect("the body in time")
        .unwrap()
        .to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The whole body as JSON.
pub async fn body_json(response: Response<Incoming>) -> Value {
    serde_json::from_str(&body_text(response).await).unwrap()
}

pub fn header<'a>(response: &'a Response<Incoming>, name: &str) -> Option<&'a str> {
    response.headers().get(name).map(|v| v.to_str().unwrap())
}

/// One block of an SSE stream.
#[derive(Debug, PartialEq)]
pub enum Event {
    /// A `data:` line, parsed.
    Data(Value),
    /// A comment line (`: keep-alive`).
    Comment(String),
}

/// Reads an SSE body block by block.
pub struct Events {
    body: Incoming,
    buffer: String,
    /// The raw text of every block read so far, with its blank line.
    pub raw: String,
}

impl Events {
    pub fn of(response: Response<Incoming>) -> Events {
        assert_eq!(header(&response, "content-type"), Some("text/event-stream"));
        Events {
            body: response.into_body(),
            buffer: String::new(),
            raw: String::new(),
        }
    }

    /// The next block; `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                self.raw.push_str(&block);
                let line = block.trim_end_matches('\n');
                assert!(!line.contains('\n'), "one line per block: {line:?}");
                if let Some(data) = line.strip_prefix("data: ") {
                    return Some(Event::Data(serde_json::from_str(data).unwrap()));
                }
                let comment = line.strip_prefix(':').expect("data or a comment");
                return Some(Event::Comment(comment.trim().to_owned()));
            }
            let frame = tokio::time::timeout(WAIT, self.body.frame())
                .await
                .expect("an event in time")?;
            let frame = frame.ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    /// The next `data:` event, skipping comments.
    pub async fn next_data(&mut self) -> Option<Value> {
        loop {
            match self.next().await? {
                Event::Data(frame) => return Some(frame),
                Event::Comment(_) => {}
            }
        }
    }
}
