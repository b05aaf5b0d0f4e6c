//! The upstream of a transcript of the URL form (M4): a real
//! `bridge-fixture-server --https` with the transcript's arguments, which the
//! bridge reaches at its URL with `--ca-file`. The runner sees the VS Code side,
//! the lines of both processes, and each POST of the bridge: the fixture runs with
//! `--print-exchanges` and writes every POST it reads (headers, JSON-RPC message)
//! to its stdout, which `upstream_expect` and `upstream_expect_http` match.
//!
//! The transcript's arguments and environment may name, for the sign-in:
//! - `$FIXTURE_BROWSER`: a browser that runs the fixture's test browser
//!   (`--browse`) on the URL the bridge opens, only when that URL is a one-time
//!   start URL (`http://127.0.0.1:<port>/start/<43 characters>`, M6): a bridge
//!   that opened anything else never signs in;
//! - `$FIXTURE_BROWSER_TWICE`: a browser that requests the start URL twice
//!   without following it (a second request stops the sign-in);
//! - `$FIXTURE_BROWSER_WRONG_TOKEN`: a browser that first requests the start URL
//!   with a wrong token (which must get 404), then follows the right one;
//! - `$FIXTURE_BROWSER_AGAIN`: a browser that signs in through the start URL,
//!   then requests the start URL once more (after the redirect, which must get
//!   404 and the warning that suggests logout);
//! - `$FREE_PORT`: a port that nothing listens on; `$BUSY_PORT`: a port that the
//!   runner listens on for the whole run (another program's redirect port);
//! - `$PROXY`: the URL, with its user and password, of the runner's CONNECT proxy
//!   ([`crate::proxy`]), started only for a transcript that names it (Q10);
//! - `$RUN_DIR`: a folder of this run only (for a file token store, as
//!   `XDG_STATE_HOME`), removed after the run; `$URL`: the URL the bridge gets;
//!   `$CA_FILE`: the fixture's CA certificate.
//!
//! With the header's `url_host`, the bridge gets the fixture's URL with that host
//! in place of 127.0.0.1, and the fixture a certificate that names it
//! (`--tls-name`): a name that is not loopback by its spelling, which only the
//! runner's proxy (or /etc/hosts) resolves to this machine.

use harness_sim::url_fixture;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::time::Duration;

/// The start URL that the browsers accept: anything else is a wrong bridge.
const START_URL: &str = "^http://127\\.0\\.0\\.1:[0-9]+/start/[A-Za-z0-9_-]{43}$";

/// Why the fixture over HTTPS, or what goes with it, did not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpsUpstreamError {
    #[error("the fixture over HTTPS: {0}")]
    Fixture(harness_sim::url_fixture::AnnounceError),
    #[error("the fixture over HTTPS names no CA file")]
    NoCaFile,
    #[error("cannot make a folder: {0}")]
    Folder(std::io::Error),
    #[error("cannot make the run's folder: {0}")]
    RunFolder(std::io::Error),
    #[error("cannot listen on a port: {0}")]
    Listen(std::io::Error),
    #[error("cannot start the proxy: {0}")]
    Proxy(std::io::Error),
    #[error("cannot write the browser script: {0}")]
    WriteBrowser(std::io::Error),
    #[error("cannot make the browser script executable: {0}")]
    BrowserMode(std::io::Error),
}

/// Why the test browser did not sign in.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error("cannot start the test browser: {0}")]
    Start(std::io::Error),
    #[error("the test browser did not complete the sign-in: {0}")]
    NoSignIn(String),
}

/// A running fixture over HTTPS.
pub struct HttpsUpstream {
    pub url: String,
    pub ca_file: String,
    /// The folder of the browser scripts, which lives as long as the fixture.
    scripts: PathBuf,
    fixture: PathBuf,
    free_port: u16,
    busy: std::net::TcpListener,
    proxy: Option<crate::proxy::Proxy>,
    stderr: Arc<Mutex<Vec<String>>>,
    /// The POSTs of the bridge, in the order the fixture read them.
    exchanges: mpsc::UnboundedReceiver<Value>,
    _dir: tempfile::TempDir,
    _child: Child,
}

impl HttpsUpstream {
    /// Starts the fixture with `args` and `env` (the transcript's environment,
    /// which a fixture option such as `--bearer-env` reads too).
    pub async fn start(
        fixture: &std::path::Path,
        args: &[String],
        env: &[(String, String)],
        url_host: Option<&str>,
    ) -> Result<Self, HttpsUpstreamError> {
        let names = url_host.map(|host| ["--tls-name", host]);
        let mut command = Command::new(fixture);
        command
            .arg("--https")
            .arg("--print-exchanges")
            .args(names.iter().flatten())
            .args(args)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stderr(Stdio::piped());
        let announced = url_fixture::start(command, Duration::from_secs(20))
            .await
            .map_err(HttpsUpstreamError::Fixture)?;
        let (mut child, mut lines) = (announced.child, announced.stdout);
        let mut url = announced.url;
        if let Some(host) = url_host {
            url = url.replacen("127.0.0.1", host, 1);
        }
        let ca_file = announced.ca_file.ok_or(HttpsUpstreamError::NoCaFile)?;
        let (exchange, exchanges) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let record = line
                    .strip_prefix("exchange: ")
                    .and_then(|json| serde_json::from_str::<Value>(json).ok());
                if let Some(record) = record {
                    let _ = exchange.send(record);
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(pipe) = child.stderr.take() {
            let lines = stderr.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    if let Ok(mut lines) = lines.lock() {
                        lines.push(line);
                    }
                }
            });
        }
        let dir = tempfile::tempdir().map_err(HttpsUpstreamError::Folder)?;
        write_browsers(dir.path(), fixture, &ca_file)?;
        std::fs::create_dir(dir.path().join("run")).map_err(HttpsUpstreamError::RunFolder)?;
        let busy =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(HttpsUpstreamError::Listen)?;
        let free_port = harness_sim::ports::free_port();
        let proxy = if env.iter().any(|(_, value)| value.contains("$PROXY")) {
            let proxy = crate::proxy::Proxy::start()
                .await
                .map_err(HttpsUpstreamError::Proxy)?;
            Some(proxy)
        } else {
            None
        };
        Ok(Self {
            url,
            ca_file,
            scripts: dir.path().to_owned(),
            fixture: fixture.to_owned(),
            free_port,
            busy,
            proxy,
            stderr,
            exchanges,
            _dir: dir,
            _child: child,
        })
    }

    /// The arguments after the transcript's `bridge_args`.
    pub fn bridge_args(&self) -> [String; 3] {
        ["--ca-file".into(), self.ca_file.clone(), self.url.clone()]
    }

    /// An argument or a value of the environment of the transcript, with its
    /// placeholders (the module documentation) in place.
    pub fn resolve(&self, value: &str) -> String {
        let script = |name: &str| self.scripts.join(name).to_string_lossy().into_owned();
        let busy = self.busy.local_addr().map(|a| a.port()).unwrap_or_default();
        value
            .replace("$FIXTURE_BROWSER_TWICE", &script("browser-twice"))
            .replace(
                "$FIXTURE_BROWSER_WRONG_TOKEN",
                &script("browser-wrong-token"),
            )
            .replace("$FIXTURE_BROWSER_AGAIN", &script("browser-again"))
            .replace("$FIXTURE_BROWSER", &script("browser"))
            .replace("$RUN_DIR", &self.scripts.join("run").to_string_lossy())
            .replace("$URL", &self.url)
            .replace("$CA_FILE", &self.ca_file)
            .replace("$FREE_PORT", &self.free_port.to_string())
            .replace("$BUSY_PORT", &busy.to_string())
            .replace(
                "$PROXY",
                &self
                    .proxy
                    .as_ref()
                    .map(|proxy| proxy.url())
                    .unwrap_or_default(),
            )
    }

    /// The lines of the proxy's log (`None`: the transcript started no proxy).
    pub fn proxy_log(&self) -> Option<Vec<String>> {
        self.proxy.as_ref().map(crate::proxy::Proxy::log)
    }

    /// Opens `url` in the fixture's test browser, as a user who accepts a URL
    /// elicitation does; `Err` when the browser did not reach a page that says
    /// the sign-in worked.
    pub async fn open(&self, url: &str) -> Result<(), BrowserError> {
        let output = Command::new(&self.fixture)
            .args(["--browse", url, "--ca-file", &self.ca_file])
            .output()
            .await
            .map_err(BrowserError::Start)?;
        if output.status.success() {
            Ok(())
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            Err(BrowserError::NoSignIn(stderr))
        }
    }

    /// The next POST of the bridge (`{"post":N,"headers":{...},"body":...}`), or
    /// `None` when none comes before `deadline`.
    pub async fn next_exchange(&mut self, deadline: tokio::time::Instant) -> Option<Value> {
        tokio::time::timeout_at(deadline, self.exchanges.recv())
            .await
            .ok()
            .flatten()
    }

    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

fn write_browsers(
    dir: &std::path::Path,
    fixture: &std::path::Path,
    ca_file: &str,
) -> Result<(), HttpsUpstreamError> {
    let browse = format!(
        "'{}' --browse \"$1\" --ca-file '{ca_file}' >/dev/null 2>&1",
        fixture.display()
    );
    let guard = format!("printf '%s' \"$1\" | grep -Eq '{START_URL}' || exit 1");
    // One GET, no redirect followed (the fixture's test browser writes `<status>
    // <body>`): a second one of the start URL stops the sign-in.
    let get = format!("'{}' --no-follow --browse", fixture.display());
    let is_404 = |url: &str| {
        format!("case \"$({get} \"{url}\" 2>/dev/null)\" in \"404 \"*) ;; *) exit 1 ;; esac")
    };
    let scripts = [
        ("browser", format!("{guard}\nexec {browse}")),
        (
            "browser-twice",
            format!("{guard}\n{get} \"$1\" >/dev/null 2>&1\n{get} \"$1\" >/dev/null 2>&1"),
        ),
        (
            "browser-again",
            format!("{guard}\n{browse} || exit 1\n{}", is_404("$1")),
        ),
        (
            "browser-wrong-token",
            format!(
                "{guard}\ncase \"$1\" in *x) wrong=\"${{1%?}}y\" ;; *) wrong=\"${{1%?}}x\" ;; esac\n{}\nexec {browse}",
                is_404("$wrong")
            ),
        ),
    ];
    for (name, body) in scripts {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n"))
            .map_err(HttpsUpstreamError::WriteBrowser)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(HttpsUpstreamError::BrowserMode)?;
        }
    }
    Ok(())
}
