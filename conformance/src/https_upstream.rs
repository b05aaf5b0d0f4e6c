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
//!   without following it (a second request stops the sign-in), and must get a
//!   page that tells to start the sign-in again the second time;
//! - `$FIXTURE_BROWSER_WRONG_TOKEN`: a browser that first requests the start URL
//!   with a wrong token (which must get 404), then follows the right one;
//! - `$FIXTURE_BROWSER_FORGED_REDIRECT`: a browser that signs in through the start
//!   URL, and before the authorization server's redirect reaches the bridge sends
//!   it forged ones (another state, no state, an empty code), which must get 400
//!   and leave the sign-in waiting;
//! - `$FIXTURE_BROWSER_AGAIN`: a browser that signs in through the start URL,
//!   then requests the start URL once more (after the redirect, which must get
//!   404 and the warning that suggests logout);
//! - `$FREE_PORT`: a port that nothing listens on; `$BUSY_PORT`: a port that the
//!   runner listens on for the whole run (another program's redirect port);
//! - `$PROXY`: the URL, with its user and password, of the runner's CONNECT proxy
//!   ([`crate::proxy`]), started only for a transcript that names it (Q10);
//! - `$RUN_DIR`: a folder of this run only (for a file token store, as
//!   `XDG_STATE_HOME`), removed after the run; `$URL`: the URL the bridge gets;
//!   `$ORIGIN`: its origin (the URL without `/mcp`, where the authorization server
//!   of `--auth` serves too); with the fixture's `--resource-query QUERY`, `$URL`
//!   ends with `?QUERY`, as the resource of its metadata does, unless the
//!   header's `url_query` gives another;
//!   `$PORT`: the port of that URL (for a URL of the fixture by its address,
//!   with `url_host`); `$CA_FILE`: the fixture's CA certificate; `$AUTH_PORT`: the port of the
//!   authorization server of `--separate-authorization-server`;
//!   `$PRIVATE_KEY_FILE`: a key file of the file store (64 hexadecimal digits and a
//!   line break, mode 0600 on POSIX) outside `$RUN_DIR`, for `--token-key-file`;
//!   `$TOKEN_DIR`: the token directory of the bridge under `XDG_STATE_HOME`, and
//!   `$KEYCHAIN_SERVICE`: the service of its keychain items (the run's
//!   `--token-dir` and `--keychain-service`, [`crate::product_paths`]).
//!
//! Each browser script writes what it got and its verdict to a log that the runner
//! reads ([`BrowserRun`]): a script that refuses its URL (anything but a start URL)
//! or fails its sign-in fails the transcript, whatever its steps say.
//!
//! The fixture prints every request it gets, of either origin (`http:` lines), and
//! every POST it serves (`exchange:` lines); the runner keeps both ([`Traffic`]),
//! each with the bridge process that sent it, for the wire checks of HTTP.
//!
//! With the header's `url_host`, the bridge gets the fixture's URL with that host
//! in place of 127.0.0.1, and the fixture a certificate that names it
//! (`--tls-name`): a name that is not loopback by its spelling, which only the
//! runner's proxy (or /etc/hosts) resolves to this machine.

use harness_sim::url_fixture;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    #[error("cannot write the run's private key file: {0}")]
    KeyFile(std::io::Error),
    #[error("cannot listen on a port: {0}")]
    Listen(std::io::Error),
    #[error("cannot start the proxy: {0}")]
    Proxy(std::io::Error),
    #[error("cannot write the browser script: {0}")]
    WriteBrowser(std::io::Error),
    #[error("cannot make the browser script executable: {0}")]
    BrowserMode(std::io::Error),
    #[error("the fixture did not announce its authorization server: {0}")]
    NoAuthorizationServer(String),
}

/// The HTTP traffic of the bridge processes of a run, as the fixture printed it.
#[derive(Debug, Clone, Default)]
pub struct Traffic {
    /// Every POST that the fixture served (`{"post","headers","body"}`), with the
    /// bridge process that sent it (0, then 1 after `restart_bridge`, ...).
    pub exchanges: Vec<(usize, Value)>,
    /// Every HTTP request of either origin
    /// (`{"origin","method","path","headers","status"}`), with its bridge process.
    pub requests: Vec<(usize, Value)>,
}

/// One run of a browser script: the URL the bridge opened, and what came of it
/// (`None` while the script runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserRun {
    pub script: String,
    pub url: String,
    pub verdict: Option<String>,
}

/// The verdict of a browser script that did what it was written for.
pub const BROWSER_OK: &str = "ok";

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
    /// The names of the implementation's own paths (`$TOKEN_DIR`, `$KEYCHAIN_SERVICE`).
    product_paths: crate::product_paths::ProductPaths,
    /// The folder of the browser scripts, which lives as long as the fixture.
    scripts: PathBuf,
    fixture: PathBuf,
    free_port: u16,
    busy: std::net::TcpListener,
    proxy: Option<crate::proxy::Proxy>,
    stderr: Arc<Mutex<Vec<String>>>,
    /// The POSTs of the bridge, in the order the fixture read them.
    exchanges: mpsc::UnboundedReceiver<Value>,
    traffic: Arc<Mutex<Traffic>>,
    /// The bridge process whose traffic comes now.
    generation: Arc<AtomicUsize>,
    /// The origin of `--separate-authorization-server`.
    authorization_server: Option<String>,
    url_host: Option<String>,
    _dir: tempfile::TempDir,
    /// The fixture runs with `--auth`.
    auth: bool,
    _child: Child,
}

impl HttpsUpstream {
    /// Starts the fixture with `args` and `env` (the transcript's environment,
    /// which a fixture option such as `--bearer-env` reads too); the bridge's URL
    /// has the host `url_host` and the query `url_query` when they are given.
    pub async fn start(
        fixture: &std::path::Path,
        args: &[String],
        env: &[(String, String)],
        url_host: Option<&str>,
        url_query: Option<&str>,
        product_paths: crate::product_paths::ProductPaths,
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
        // A fixture whose resource has a query serves the URL with that query.
        let resource_query = args
            .iter()
            .position(|arg| arg == "--resource-query")
            .and_then(|at| args.get(at + 1))
            .map(String::as_str);
        if let Some(query) = url_query.or(resource_query) {
            url = format!("{url}?{query}");
        }
        let ca_file = announced.ca_file.ok_or(HttpsUpstreamError::NoCaFile)?;
        let authorization_server = if args.iter().any(|a| a == "--separate-authorization-server") {
            let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .unwrap_or_default();
            match line.strip_prefix("authorization-server: ") {
                Some(origin) => Some(origin.to_owned()),
                None => return Err(HttpsUpstreamError::NoAuthorizationServer(line)),
            }
        } else {
            None
        };
        let (exchange, exchanges) = mpsc::unbounded_channel();
        let traffic = Arc::new(Mutex::new(Traffic::default()));
        let generation = Arc::new(AtomicUsize::new(0));
        let (log, current) = (traffic.clone(), generation.clone());
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let process = current.load(Ordering::SeqCst);
                if let Some(record) = record_of(&line, "exchange: ") {
                    if let Ok(mut log) = log.lock() {
                        log.exchanges.push((process, record.clone()));
                    }
                    let _ = exchange.send(record);
                } else if let Some(record) = record_of(&line, "http: ")
                    && let Ok(mut log) = log.lock()
                {
                    log.requests.push((process, record));
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
        write_browsers(dir.path(), fixture, &ca_file, url_host)?;
        std::fs::create_dir(dir.path().join("run")).map_err(HttpsUpstreamError::RunFolder)?;
        write_private_key(&dir.path().join(PRIVATE_KEY_FILE))
            .map_err(HttpsUpstreamError::KeyFile)?;
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
            product_paths,
            scripts: dir.path().to_owned(),
            fixture: fixture.to_owned(),
            free_port,
            busy,
            proxy,
            stderr,
            exchanges,
            traffic,
            generation,
            authorization_server,
            url_host: url_host.map(str::to_owned),
            _dir: dir,
            auth: args.iter().any(|arg| arg == "--auth" || arg == "--oauth"),
            _child: child,
        })
    }

    /// The arguments after the transcript's `bridge_args`.
    pub fn bridge_args(&self) -> [String; 3] {
        ["--ca-file".into(), self.ca_file.clone(), self.url.clone()]
    }

    /// An argument or a value of the environment of the transcript, with its
    /// placeholders (the module documentation) in place.
    /// The origin of the URL: without `/mcp` and its query.
    fn origin(&self) -> &str {
        let without_query = self.url.split_once('?').map_or(&*self.url, |(url, _)| url);
        without_query.strip_suffix("/mcp").unwrap_or(without_query)
    }

    /// The port of the fixture's URL (`$PORT`), whatever its host.
    fn port(&self) -> String {
        let authority = self
            .origin()
            .split_once("://")
            .map_or("", |(_, authority)| authority);
        authority
            .rsplit_once(':')
            .map_or("443", |(_, port)| port)
            .to_owned()
    }

    pub fn resolve(&self, value: &str) -> String {
        let script = |name: &str| self.scripts.join(name).to_string_lossy().into_owned();
        let busy = self.busy.local_addr().map(|a| a.port()).unwrap_or_default();
        let auth_port = self
            .authorization_server
            .as_deref()
            .and_then(|origin| origin.rsplit_once(':'))
            .map(|(_, port)| port.to_owned())
            .unwrap_or_default();
        self.product_paths
            .resolve(value)
            .replace("$AUTH_PORT", &auth_port)
            .replace("$FIXTURE_BROWSER_TWICE", &script("browser-twice"))
            .replace(
                "$FIXTURE_BROWSER_WRONG_TOKEN",
                &script("browser-wrong-token"),
            )
            .replace("$FIXTURE_BROWSER_AGAIN", &script("browser-again"))
            .replace(
                "$FIXTURE_BROWSER_FORGED_REDIRECT",
                &script("browser-forged-redirect"),
            )
            .replace("$FIXTURE_BROWSER", &script("browser"))
            .replace("$RUN_DIR", &self.scripts.join("run").to_string_lossy())
            .replace("$PRIVATE_KEY_FILE", &script(PRIVATE_KEY_FILE))
            .replace("$ORIGIN", self.origin())
            .replace("$PORT", &self.port())
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

    /// The port that nothing listened on when the fixture started (`$FREE_PORT`).
    pub fn free_port(&self) -> u16 {
        self.free_port
    }

    /// The lines of the proxy's log (`None`: the transcript started no proxy).
    pub fn proxy_log(&self) -> Option<Vec<String>> {
        self.proxy.as_ref().map(crate::proxy::Proxy::log)
    }

    /// The traffic printed so far.
    pub fn traffic(&self) -> Traffic {
        self.traffic.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The traffic that comes from now on is that of the next bridge process.
    pub fn next_bridge(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The runs of the browser scripts so far, in the order they started.
    pub fn browser_runs(&self) -> Vec<BrowserRun> {
        let log = std::fs::read_to_string(browser_log(&self.scripts)).unwrap_or_default();
        browser_runs_of(&log)
    }

    /// Opens `url` in the fixture's test browser, as a user who accepts a URL
    /// elicitation does; `Err` when the browser did not reach a page that says
    /// the sign-in worked.
    pub async fn open(&self, url: &str) -> Result<(), BrowserError> {
        let mut command = Command::new(&self.fixture);
        command.args(["--browse", url, "--ca-file", &self.ca_file]);
        if let Some(host) = &self.url_host {
            command.args(["--resolve", &format!("{host}:127.0.0.1")]);
        }
        let output = command.output().await.map_err(BrowserError::Start)?;
        if output.status.success() {
            Ok(())
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            Err(BrowserError::NoSignIn(stderr))
        }
    }

    /// Whether the fixture runs an authorization server (`--auth`).
    fn has_authorization_server(&self) -> bool {
        self.auth
    }

    /// Every secret that the fixture's authorization server saw or issued
    /// (`GET /fixture/secrets`, read with the fixture's test browser), for
    /// [`crate::secrets_of_run`]; `Err` with the browser's stderr.
    pub async fn issued_secrets(&self) -> Result<Value, String> {
        let origin = self
            .authorization_server
            .as_deref()
            .unwrap_or_else(|| self.origin());
        let url = format!("{origin}/fixture/secrets");
        let mut command = Command::new(&self.fixture);
        // One GET (`--no-follow`): stdout is `<status> <body>`.
        command.args(["--no-follow", "--browse", &url, "--ca-file", &self.ca_file]);
        if let Some(host) = &self.url_host {
            command.args(["--resolve", &format!("{host}:127.0.0.1")]);
        }
        let output = command.output().await.map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if stdout.starts_with("404 ") && !self.has_authorization_server() {
            // A fixture without `--auth` issues no secret.
            return Ok(Value::Object(serde_json::Map::new()));
        }
        match stdout.strip_prefix("200 ") {
            Some(body) => serde_json::from_str(body).map_err(|e| format!("{url}: {e}")),
            None => Err(format!(
                "{url}: {} {}",
                stdout.trim(),
                String::from_utf8_lossy(&output.stderr).trim()
            )),
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

/// A record line of the fixture's stdout, without its prefix.
fn record_of(line: &str, prefix: &str) -> Option<Value> {
    line.strip_prefix(prefix)
        .and_then(|json| serde_json::from_str::<Value>(json).ok())
}

fn browser_log(scripts: &Path) -> PathBuf {
    scripts.join("browser.log")
}

/// The runs of the log of the browser scripts: a line `<script>\t<url>\tstarted`
/// when one starts, `<script>\t<url>\t<verdict>` when it ends.
fn browser_runs_of(log: &str) -> Vec<BrowserRun> {
    let mut runs: Vec<BrowserRun> = Vec::new();
    for line in log.lines() {
        let mut parts = line.splitn(3, '\t');
        let (Some(script), Some(url), Some(what)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if what == "started" {
            runs.push(BrowserRun {
                script: script.to_owned(),
                url: url.to_owned(),
                verdict: None,
            });
        } else if let Some(run) = runs
            .iter_mut()
            .find(|run| run.script == script && run.url == url && run.verdict.is_none())
        {
            run.verdict = Some(what.to_owned());
        }
    }
    runs
}

fn write_browsers(
    dir: &Path,
    fixture: &Path,
    ca_file: &str,
    url_host: Option<&str>,
) -> Result<(), HttpsUpstreamError> {
    // A browser resolves the host of the URL form's name (`url_host`) as the
    // runner's proxy does: to this machine.
    let resolve = url_host
        .map(|host| format!(" --resolve '{host}:127.0.0.1'"))
        .unwrap_or_default();
    // The fixture's test browser on the opened URL, with these options of its own.
    let browse_with = |options: &str| {
        format!(
            "'{}'{options} --browse \"$1\" --ca-file '{ca_file}'{resolve} >/dev/null 2>&1",
            fixture.display()
        )
    };
    let browse = browse_with("");
    let log = browser_log(dir);
    // Each script says what it got and how it ended, tab-separated, in the log that
    // the runner reads; an URL holds no tab (the guard checks its form first).
    let verdict = format!(
        "verdict() {{ printf '%s\\t%s\\t%s\\n' \"$script\" \"$1\" \"$2\" >> '{}'; }}",
        log.display()
    );
    let guard = format!(
        "verdict \"$1\" started\nprintf '%s' \"$1\" | grep -Eq '{START_URL}' || {{ verdict \"$1\" 'refused: the opener got a URL that is not a one-time start URL'; exit 1; }}"
    );
    // One GET, no redirect followed (the fixture's test browser writes `<status>
    // <body>`): a second one of the start URL stops the sign-in.
    let get = format!("'{}' --no-follow --browse", fixture.display());
    let is_404 = |url: &str, what: &str| {
        format!(
            "case \"$({get} \"{url}\" 2>/dev/null)\" in \"404 \"*) ;; *) verdict \"$1\" '{what} did not get 404'; exit 1 ;; esac"
        )
    };
    let signed_in_with = |browse: &str, then: &str| {
        format!(
            "if {browse}; then {then}; else verdict \"$1\" 'the sign-in through the start URL did not complete'; exit 1; fi"
        )
    };
    let signed_in = |then: &str| signed_in_with(&browse, then);
    let scripts = [
        (
            "browser",
            format!("{guard}\n{}", signed_in("verdict \"$1\" ok")),
        ),
        (
            "browser-twice",
            // The contract: the second request "gets a page that tells you to start
            // the sign-in again".
            format!(
                "{guard}\n{get} \"$1\" >/dev/null 2>&1\n{get} \"$1\" 2>/dev/null | grep -qi 'start the sign-in again' || {{ verdict \"$1\" 'the second request did not get a page that tells to start the sign-in again'; exit 1; }}\nverdict \"$1\" ok"
            ),
        ),
        (
            "browser-forged-redirect",
            format!(
                "{guard}\n{}",
                signed_in_with(&browse_with(" --forged-redirects"), "verdict \"$1\" ok")
            ),
        ),
        (
            "browser-again",
            format!(
                "{guard}\n{}\n{}\nverdict \"$1\" ok",
                signed_in(":"),
                is_404("$1", "the start URL after the redirect")
            ),
        ),
        (
            "browser-wrong-token",
            format!(
                "{guard}\ncase \"$1\" in *x) wrong=\"${{1%?}}y\" ;; *) wrong=\"${{1%?}}x\" ;; esac\n{}\n{}",
                is_404("$wrong", "a start URL with another token"),
                signed_in("verdict \"$1\" ok")
            ),
        ),
    ];
    for (name, body) in scripts {
        let path = dir.join(name);
        let script = format!("#!/bin/sh\nscript='{name}'\n{verdict}\n{body}\n");
        std::fs::write(&path, script).map_err(HttpsUpstreamError::WriteBrowser)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(HttpsUpstreamError::BrowserMode)?;
        }
    }
    Ok(())
}

/// The name of `$PRIVATE_KEY_FILE` in the run's folder of scripts.
const PRIVATE_KEY_FILE: &str = "private-key";

/// The key file of `$PRIVATE_KEY_FILE`: private to the account from its creation.
fn write_private_key(path: &Path) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(b"3c5a0f1e9d8b7c6a5f4e3d2c1b0a99887766554433221100ffeeddccbbaa0918\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_run_is_its_start_and_its_verdict() {
        let log = "browser\thttp://a/start/x\tstarted\nbrowser-twice\thttp://a/start/y\tstarted\nbrowser\thttp://a/start/x\tok\n";
        assert_eq!(
            browser_runs_of(log),
            [
                BrowserRun {
                    script: "browser".into(),
                    url: "http://a/start/x".into(),
                    verdict: Some("ok".into()),
                },
                BrowserRun {
                    script: "browser-twice".into(),
                    url: "http://a/start/y".into(),
                    verdict: None,
                },
            ]
        );
    }
}
