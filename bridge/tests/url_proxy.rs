//! Q10 against a real proxy: the bridge in its URL form, a tinyproxy process (Debian's
//! `tinyproxy`, installed by .ci/run) with BasicAuth on a free loopback port, and the
//! fixture over HTTPS, all started by the test.
//!
//! A loopback host never uses a proxy, so the proxied requests need a name that is not
//! loopback by its spelling yet reaches only this machine: [`PROXIED_HOST`]. The
//! machine's /etc/hosts is never edited: tinyproxy (and the bridge of the NO_PROXY
//! test, which resolves the name itself) run in a mount namespace of their own
//! (`unshare`, [`OwnHosts`]) in which /etc/hosts is a file of the test that maps the
//! name to 127.0.0.1 only, so no request ever leaves loopback. The fixture presents a
//! certificate for that name too, made with tls-fixtures in a temporary folder
//! (`--tls-dir`). The proxy's own log shows which requests went through it.

use crate::https_fixture;
use crate::pipes;

use https_fixture::{HttpsFixture, bridge_argv, bridge_to, spawn_bridge};
use pipes::*;
use serde_json::json;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// A name that is not loopback by its spelling; the hosts file of [`OwnHosts`] maps it
/// to 127.0.0.1 (`.test` is reserved: no DNS ever answers for it).
const PROXIED_HOST: &str = "fixture.mcp-bridge.test";
const PROXY_USER: &str = "bridge";
const PROXY_PASSWORD: &str = "proxy-secret-5d1e";

/// A hosts file that maps [`PROXIED_HOST`] to 127.0.0.1, and the command line that
/// runs a program with it as /etc/hosts: `unshare` makes a mount namespace for the
/// program alone (as root; else in a user namespace of its own, where the kernel
/// allows one) and binds the file over /etc/hosts there.
struct OwnHosts {
    file: PathBuf,
    _dir: tempfile::TempDir,
}

impl OwnHosts {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts");
        std::fs::write(
            &file,
            format!("127.0.0.1 localhost\n::1 localhost\n127.0.0.1 {PROXIED_HOST}\n"),
        )
        .unwrap();
        Self { file, _dir: dir }
    }

    /// The argv that runs `program` with `args` under this hosts file.
    fn command(&self, program: &str, args: &[String]) -> Vec<String> {
        let mut argv = vec!["unshare".to_owned()];
        if !running_as_root() {
            argv.push("--map-root-user".into());
        }
        argv.extend([
            "--mount".into(),
            "sh".into(),
            "-c".into(),
            r#"mount --bind "$0" /etc/hosts && exec "$@""#.into(),
            self.file.display().to_string(),
            program.into(),
        ]);
        argv.extend(args.iter().cloned());
        argv
    }
}

/// Whether this process runs as root (the `Uid:` line of /proc/self/status).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        == Some("0")
}

/// A tinyproxy process with BasicAuth, logging every request to a file, that resolves
/// [`PROXIED_HOST`] through [`OwnHosts`].
struct Tinyproxy {
    port: u16,
    log: PathBuf,
    _hosts: OwnHosts,
    _dir: tempfile::TempDir,
    _child: Child,
}

impl Tinyproxy {
    async fn start() -> Self {
        let hosts = OwnHosts::new();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("tinyproxy.log");
        let config = dir.path().join("tinyproxy.conf");
        // A free port outside the ephemeral range, which tinyproxy binds next.
        let port = https_fixture::free_port();
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 60\nMaxClients 200\n\
                 Allow 127.0.0.1\nBasicAuth {PROXY_USER} {PROXY_PASSWORD}\n\
                 LogFile \"{}\"\nLogLevel Info\nDisableViaHeader Yes\n",
                log.display()
            ),
        )
        .unwrap();
        let argv = hosts.command(
            "tinyproxy",
            &["-d".into(), "-c".into(), config.display().to_string()],
        );
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("unshare starts tinyproxy (script/test installs tinyproxy)");
        let ready = tokio::time::timeout(EXCHANGE, async {
            while tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_err()
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        ready.await.expect(
            "tinyproxy listens (in a mount namespace of its own: unshare --mount needs root, \
             or user namespaces)",
        );
        Self {
            port,
            log,
            _hosts: hosts,
            _dir: dir,
            _child: child,
        }
    }

    /// The proxy URL with a user and password.
    fn url(&self, password: &str) -> String {
        format!("http://{PROXY_USER}:{password}@127.0.0.1:{}", self.port)
    }

    /// How many CONNECT requests for `authority` the proxy logged.
    fn connects_to(&self, authority: &str) -> usize {
        let needle = format!(": CONNECT {authority} HTTP/1.1");
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains(&needle))
            .count()
    }

    /// Every CONNECT request of the proxy's log (`Request (file descriptor N): CONNECT
    /// host:port HTTP/1.1`); the connections of the readiness probe are no requests.
    fn connect_lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains("): CONNECT "))
            .map(str::to_owned)
            .collect()
    }
}

/// The fixture with a certificate that also names [`PROXIED_HOST`].
struct NamedFixture {
    fixture: HttpsFixture,
    _tls: tempfile::TempDir,
}

impl NamedFixture {
    async fn start() -> Self {
        let tls = tempfile::tempdir().unwrap();
        let fixtures = tls_fixtures::generate_for(&[PROXIED_HOST]).unwrap();
        tls_fixtures::files::write_to(tls.path(), &fixtures).unwrap();
        let dir = tls.path().display().to_string();
        let fixture = HttpsFixture::start(&["--tls-dir", &dir], &[]).await;
        Self { fixture, _tls: tls }
    }

    /// The fixture's URL by [`PROXIED_HOST`].
    fn named_url(&self) -> String {
        format!("https://{PROXIED_HOST}:{}/mcp", self.fixture.port)
    }

    /// What a CONNECT to the fixture by [`PROXIED_HOST`] asks for.
    fn named_authority(&self) -> String {
        format!("{PROXIED_HOST}:{}", self.fixture.port)
    }

    fn bridge(&self, url: &str, env: &[(&str, &str)]) -> harness_sim::process::StdioPeer {
        bridge_to(url, &self.fixture.ca_file, &["--log-level", "debug"], env)
    }

    /// The bridge at `url` that resolves [`PROXIED_HOST`] itself, through `hosts`.
    fn bridge_with_hosts(
        &self,
        hosts: &OwnHosts,
        url: &str,
        env: &[(&str, &str)],
    ) -> harness_sim::process::StdioPeer {
        let argv = bridge_argv(url, &self.fixture.ca_file, &["--log-level", "debug"]);
        spawn_bridge(&hosts.command(&argv[0], &argv[1..]), env)
    }
}

/// Initialize, then one echo call: both answered through whatever route the bridge takes.
async fn initialize_and_echo(bridge: &mut harness_sim::process::StdioPeer, text: &str) {
    let initialized = initialize(bridge).await;
    assert_eq!(
        initialized["result"]["serverInfo"]["name"], "bridge-fixture-server",
        "{initialized}"
    );
    bridge
        .send(&call(2, "echo", json!({"text": text})))
        .await
        .unwrap();
    assert_eq!(
        response(bridge).await,
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":text}],"isError":false}})
    );
}

/// Stops the bridge (exit 0) and checks that the proxy password reached no line.
async fn stop_without_leaking(bridge: &mut harness_sim::process::StdioPeer) {
    assert_eq!(stop(bridge, Duration::from_secs(10)).await.0, Some(0));
    let stderr = bridge.stderr_lines().join("\n");
    assert!(
        !stderr.contains(PROXY_PASSWORD),
        "the proxy password reached stderr:\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q10_https_proxy_carries_every_request_to_a_named_host_with_its_credentials() {
    let proxy = Tinyproxy::start().await;
    let fixture = NamedFixture::start().await;
    let proxy_url = proxy.url(PROXY_PASSWORD);
    let mut bridge = fixture.bridge(&fixture.named_url(), &[("HTTPS_PROXY", &proxy_url)]);
    initialize_and_echo(&mut bridge, "through the proxy").await;
    stop_without_leaking(&mut bridge).await;
    // discover, initialized, the listen stream, the call: at least one tunnel, and no
    // request to anything but the fixture.
    let lines = proxy.connect_lines();
    assert!(
        proxy.connects_to(&fixture.named_authority()) >= 1,
        "{lines:?}"
    );
    assert_eq!(
        proxy.connects_to(&fixture.named_authority()),
        lines.len(),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q10_all_proxy_serves_when_https_proxy_is_unset() {
    let proxy = Tinyproxy::start().await;
    let fixture = NamedFixture::start().await;
    let proxy_url = proxy.url(PROXY_PASSWORD);
    let mut bridge = fixture.bridge(&fixture.named_url(), &[("ALL_PROXY", &proxy_url)]);
    initialize_and_echo(&mut bridge, "through ALL_PROXY").await;
    stop_without_leaking(&mut bridge).await;
    assert!(
        proxy.connects_to(&fixture.named_authority()) >= 1,
        "{:?}",
        proxy.connect_lines()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q10_no_proxy_lets_a_named_host_bypass_the_proxy() {
    let proxy = Tinyproxy::start().await;
    let fixture = NamedFixture::start().await;
    let proxy_url = proxy.url(PROXY_PASSWORD);
    let hosts = OwnHosts::new();
    let mut bridge = fixture.bridge_with_hosts(
        &hosts,
        &fixture.named_url(),
        &[
            ("HTTPS_PROXY", &proxy_url),
            ("NO_PROXY", &format!("other.example,{PROXIED_HOST}")),
        ],
    );
    initialize_and_echo(&mut bridge, "around the proxy").await;
    stop_without_leaking(&mut bridge).await;
    assert_eq!(proxy.connect_lines(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q10_a_loopback_host_never_uses_the_proxy_whatever_no_proxy_says() {
    let proxy = Tinyproxy::start().await;
    let fixture = NamedFixture::start().await;
    let proxy_url = proxy.url(PROXY_PASSWORD);
    let port = fixture.fixture.port;
    for host in ["127.0.0.1", "localhost", "[::1]"] {
        if host == "[::1]" && std::net::TcpListener::bind("[::1]:0").is_err() {
            continue; // no IPv6 loopback on this machine
        }
        let url = format!("https://{host}:{port}/mcp");
        let env = [
            ("HTTPS_PROXY", proxy_url.as_str()),
            ("ALL_PROXY", proxy_url.as_str()),
            ("NO_PROXY", "other.example"),
        ];
        let mut bridge = fixture.bridge(&url, &env);
        if host == "[::1]" {
            // The fixture listens on 127.0.0.1 only: [::1] is refused, but directly.
            bridge.send(&initialize_frame()).await.unwrap();
            let refused = response(&mut bridge).await;
            assert_eq!(
                refused["error"]["data"]["cause"], "discover_failed",
                "{refused}"
            );
            stop_without_leaking(&mut bridge).await;
        } else {
            initialize_and_echo(&mut bridge, host).await;
            stop_without_leaking(&mut bridge).await;
        }
    }
    assert_eq!(proxy.connect_lines(), Vec::<String>::new());
}

/// The proxy at `proxy_url` refuses the tunnel: initialize fails with `detail`, in the
/// Output channel too, and the bridge answers the next request.
async fn refused_by_the_proxy(proxy_url: &str, detail: &str) {
    let proxy = Tinyproxy::start().await;
    let fixture = NamedFixture::start().await;
    let proxy_url = proxy_url.replace("PORT", &proxy.port.to_string());
    let mut bridge = fixture.bridge(&fixture.named_url(), &[("HTTPS_PROXY", &proxy_url)]);
    bridge.send(&initialize_frame()).await.unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
            "message":"The upstream server did not answer server/discover. It is not an MCP server of revision 2026-07-28, or it does not respond. See the Output channel of the server.",
            "data":{"cause":"discover_failed","detail":detail}}})
    );
    let line = format!("mcp-bridge-vscode: bridge: warning: server/discover failed: {detail}");
    assert!(
        bridge.wait_stderr(EXCHANGE, |l| l == line).await.is_some(),
        "{:?}",
        bridge.stderr_lines()
    );
    bridge
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
        .await
        .unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    stop_without_leaking(&mut bridge).await;
    let stderr = bridge.stderr_lines().join("\n");
    assert!(!stderr.contains("not-the-password"), "{stderr}");
    assert_eq!(
        proxy.connects_to(&fixture.named_authority()),
        1,
        "{:?}",
        proxy.connect_lines()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q10_wrong_proxy_credentials_fail_the_request_and_the_bridge_serves_on() {
    // tinyproxy answers wrong credentials with 401, which the HTTP client reports as an
    // unsuccessful tunnel without the status.
    refused_by_the_proxy(
        &format!("http://{PROXY_USER}:not-the-password@127.0.0.1:PORT"),
        "error sending request: client error (Connect): tunnel error: unsuccessful (the proxy refused the connection to the upstream server: examine the user and the password in HTTPS_PROXY or ALL_PROXY)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q10_missing_proxy_credentials_fail_the_request_as_proxy_authorization_required() {
    // Without credentials tinyproxy answers 407.
    refused_by_the_proxy(
        "http://127.0.0.1:PORT",
        "error sending request: client error (Connect): tunnel error: proxy authorization required (the proxy refused the connection to the upstream server: examine the user and the password in HTTPS_PROXY or ALL_PROXY)",
    )
    .await;
}

/// The fixture with a certificate that also names `names`: names under `localhost`
/// that no hosts file lists.
async fn fixture_named(names: &[&str]) -> (HttpsFixture, tempfile::TempDir) {
    let tls = tempfile::tempdir().unwrap();
    let fixtures = tls_fixtures::generate_for(names).unwrap();
    tls_fixtures::files::write_to(tls.path(), &fixtures).unwrap();
    let dir = tls.path().display().to_string();
    (HttpsFixture::start(&["--tls-dir", &dir], &[]).await, tls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q10_every_spelling_of_a_loopback_name_goes_around_the_proxy() {
    // A trailing dot, upper case, a name under localhost: each is loopback by the
    // URL rule, so each must be by the proxy's exceptions too.
    let proxy = Tinyproxy::start().await;
    let (fixture, _tls) = fixture_named(&["mcp.localhost"]).await;
    let proxy_url = proxy.url(PROXY_PASSWORD);
    for host in ["localhost.", "LOCALHOST", "mcp.localhost", "MCP.localhost."] {
        let url = format!("https://{host}:{}/mcp", fixture.port);
        let env = [
            ("HTTPS_PROXY", proxy_url.as_str()),
            ("ALL_PROXY", proxy_url.as_str()),
        ];
        let mut bridge = bridge_to(&url, &fixture.ca_file, &["--log-level", "debug"], &env);
        initialize_and_echo(&mut bridge, host).await;
        stop_without_leaking(&mut bridge).await;
    }
    assert_eq!(proxy.connect_lines(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_under_localhost_reaches_this_machine_without_the_system_resolver() {
    // No hosts file lists this name, and no DNS server may answer for it: the bridge
    // answers it itself with a loopback address (RFC 6761 §6.3).
    let name = format!("mcp-bridge-{}.localhost", std::process::id());
    let (fixture, _tls) = fixture_named(&[&name]).await;
    let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    assert!(!hosts.contains(&name), "{hosts}");
    for host in [name.clone(), format!("{name}.")] {
        let url = format!("https://{host}:{}/mcp", fixture.port);
        let mut bridge = bridge_to(&url, &fixture.ca_file, &["--log-level", "debug"], &[]);
        initialize_and_echo(&mut bridge, &host).await;
        stop_without_leaking(&mut bridge).await;
    }
}
