//! The client ID metadata document of the bridge as its default client ID
//! (contract, "Sign-in and accounts": `--client-id`, then the document of the
//! bridge when the authorization server takes documents and the redirect port is
//! the default, then dynamic client registration).
//!
//! The document is the repository's `docs/site/vscode/client.json`, published at
//! [`DOCUMENT_URL`]. No test reaches the network: the fixture reads the committed
//! file for that URL (`--cimd-document`), so the test proves that the committed
//! document is the one an authorization server gets; and the bridge's own GET of
//! its document goes to a recording proxy on 127.0.0.1 that refuses it (a
//! transport failure leaves the document to the authorization server).
//!
//! The tests on the default redirect port 41894 hold [`DEFAULT_PORT`] while their
//! bridge runs (the tests of one executable run side by side, and one port takes
//! one listener), and wait until no other process holds the port.

use crate::https_fixture::{HttpsFixture, bridge, free_port, sign_in_url, test_browser};
use crate::pipes::*;
use crate::recording_proxy::RecordingProxy;

use std::time::Duration;

/// The stable URL of the document of the bridge.
const DOCUMENT_URL: &str = "https://mcp-bridge-rs.github.io/mcp-bridge-rs/vscode/client.json";

/// One test at a time on the default redirect port.
static DEFAULT_PORT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The default redirect port, for this test alone. 41894 lies in the ephemeral
/// range of Linux (32768-60999), where any process that listens on port 0 or
/// connects out can get it for a while: the test waits for it rather than fail
/// with `redirect_port_in_use`.
async fn default_port() -> tokio::sync::MutexGuard<'static, ()> {
    let guard = DEFAULT_PORT.lock().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while let Err(error) = std::net::TcpListener::bind(("127.0.0.1", 41894)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "127.0.0.1:41894 stayed in use for 30 s: {error}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    guard
}

/// The committed document.
fn committed_document() -> String {
    format!(
        "{}/../docs/site/vscode/client.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_default_redirect_port_the_document_of_the_bridge_is_the_client_id() {
    let _port = default_port().await;
    // No registration: only the document can sign the bridge in.
    let mapping = format!("{DOCUMENT_URL}={}", committed_document());
    let fixture = HttpsFixture::start(
        &[
            "--auth",
            "--cimd",
            "--no-registration",
            "--cimd-document",
            &mapping,
        ],
        &[],
    )
    .await;
    let proxy = RecordingProxy::refusing().await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let mut peer = bridge(
        &fixture,
        &["--log-level", "debug", "--token-store", "memory"],
        &[
            ("BROWSER", browser.to_str().unwrap()),
            ("HTTPS_PROXY", &proxy.url()),
        ],
    );
    let result = initialize(&mut peer).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    let url = sign_in_url(&mut peer).await;
    assert!(
        url.contains(&format!("client_id={}&", encoded(DOCUMENT_URL))),
        "{url}"
    );
    assert!(
        url.contains(&format!(
            "redirect_uri={}&",
            encoded("http://127.0.0.1:41894/callback")
        )),
        "{url}"
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    // The bridge's own look at its document: a tunnel to its host, refused.
    assert_eq!(
        proxy.requests(),
        ["CONNECT mcp-bridge-rs.github.io:443 HTTP/1.1"]
    );
    let lines = peer.stderr_lines();
    assert!(
        lines.iter().any(|line| line.starts_with(
            "mcp-bridge-vscode: bridge: info: the bridge cannot read its client ID metadata document ("
        ) && line.ends_with("): the authorization server reads it")),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_default_redirect_port_a_server_without_documents_gets_a_registration() {
    let _port = default_port().await;
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let proxy = RecordingProxy::refusing().await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let mut peer = bridge(
        &fixture,
        &["--token-store", "memory"],
        &[
            ("BROWSER", browser.to_str().unwrap()),
            ("HTTPS_PROXY", &proxy.url()),
        ],
    );
    let result = initialize(&mut peer).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    let url = sign_in_url(&mut peer).await;
    assert!(!url.contains(&encoded(DOCUMENT_URL)), "{url}");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    assert_eq!(proxy.requests(), Vec::<String>::new());
    assert!(
        !peer
            .stderr_lines()
            .iter()
            .any(|line| line.contains("client metadata document")),
        "{:?}",
        peer.stderr_lines()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_another_redirect_port_the_bridge_registers_and_says_why() {
    let fixture = HttpsFixture::start(&["--auth", "--cimd"], &[]).await;
    let proxy = RecordingProxy::refusing().await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &["--redirect-port", &port, "--token-store", "memory"],
        &[
            ("BROWSER", browser.to_str().unwrap()),
            ("HTTPS_PROXY", &proxy.url()),
        ],
    );
    let result = initialize(&mut peer).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    let url = sign_in_url(&mut peer).await;
    assert!(!url.contains(&encoded(DOCUMENT_URL)), "{url}");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    assert_eq!(proxy.requests(), Vec::<String>::new());
    let line = format!(
        "mcp-bridge-vscode: bridge: info: the client metadata document of the bridge has only the redirect port 41894. With --redirect-port {port}, the bridge uses dynamic client registration"
    );
    assert!(
        peer.stderr_lines().contains(&line),
        "{:?}",
        peer.stderr_lines()
    );
}
