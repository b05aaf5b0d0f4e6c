//! Every URL of the sign-in under one rule, end to end against servers that name
//! URLs no honest server names: https, or http to a loopback host, and a loopback
//! host (for the authorization server and its endpoints, for every URL of the
//! sign-in) only when the upstream server is itself on a loopback host.
//!
//! A request that would leave the machine is made visible by `HTTPS_PROXY`: a
//! recording proxy on 127.0.0.1 that refuses it ([`RecordingProxy`]). A request
//! onto a local service is made visible by that service, a scripted server that
//! records what it gets ([`ScriptedOAuth`]). A "remote" upstream is the fixture
//! under a name that is not loopback by its spelling (`--host`), reached through
//! the recording proxy, which carries its tunnel to 127.0.0.1.

use crate::https_fixture::{HttpsFixture, bridge_to, free_port, test_ca_file};
use crate::pipes::*;
use crate::recording_proxy::RecordingProxy;
use crate::scripted_oauth::ScriptedOAuth;

use harness_sim::process::StdioPeer;
use serde_json::{Value, json};
use std::time::Duration;

/// The bridge at `url` through `proxy`, at debug level, without a browser, with
/// a short sign-in time limit; its temporary folder (the CA file) goes with it.
fn bridge_through(
    url: &str,
    ca_file: Option<&str>,
    proxy: &RecordingProxy,
) -> (StdioPeer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ca = ca_file.map_or_else(|| test_ca_file(dir.path()), str::to_owned);
    let port = free_port().to_string();
    let args = [
        "--log-level",
        "debug",
        "--redirect-port",
        &port,
        "--token-store",
        "memory",
        "--no-browser",
        "--sign-in-timeout",
        "3",
    ];
    let peer = bridge_to(url, &ca, &args, &[("HTTPS_PROXY", &proxy.url())]);
    (peer, dir)
}

/// The error of initialize, once the bridge stopped.
async fn refused_initialize(peer: &mut StdioPeer) -> Value {
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(peer).await;
    assert_eq!(stop(peer, Duration::from_secs(10)).await.0, Some(0));
    refused
}

fn sign_in_failed(detail: &str) -> Value {
    json!({"code":-32603,
        "message":"The sign-in at the authorization server of the upstream server failed. See the Output channel of the server.",
        "data":{"cause":"sign_in_failed","detail":detail}})
}

fn has_line(peer: &StdioPeer, line: &str) -> bool {
    peer.stderr_lines().iter().any(|l| l == line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_that_names_plain_http_metadata_on_another_host_is_refused_before_any_request()
{
    let upstream = ScriptedOAuth::start().await;
    upstream.challenge(r#"Bearer resource_metadata="http://metadata.mcp-bridge.test/prm""#);
    let proxy = RecordingProxy::refusing().await;
    let (mut peer, _dir) = bridge_through(&upstream.mcp_url(), None, &proxy);
    let refused = refused_initialize(&mut peer).await;
    let detail = "the resource_metadata of the challenge (http://metadata.mcp-bridge.test) does not use https";
    assert_eq!(refused["error"], sign_in_failed(detail), "{refused}");
    assert!(has_line(
        &peer,
        &format!("mcp-bridge-vscode: bridge: warning: the sign-in failed: {detail}")
    ));
    assert_eq!(proxy.requests(), Vec::<String>::new(), "a request left");
    assert_eq!(upstream.seen(), ["POST /mcp"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_endpoint_of_plain_http_on_another_host_gets_no_request() {
    let server = ScriptedOAuth::start().await;
    server.serve_authorization_server(
        json!({"registration_endpoint": "http://register.mcp-bridge.test/register"}),
    );
    let proxy = RecordingProxy::refusing().await;
    let (mut peer, _dir) = bridge_through(&server.mcp_url(), None, &proxy);
    let refused = refused_initialize(&mut peer).await;
    assert_eq!(
        refused["error"],
        sign_in_failed(
            "the registration endpoint (http://register.mcp-bridge.test) does not use https"
        ),
        "{refused}"
    );
    assert_eq!(proxy.requests(), Vec::<String>::new(), "a request left");
    assert!(
        !server.seen().iter().any(|seen| seen.contains("register")),
        "{:?}",
        server.seen()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_endpoint_of_plain_http_on_another_host_is_refused_before_the_user_signs_in() {
    let server = ScriptedOAuth::start().await;
    server.serve_authorization_server(
        json!({"token_endpoint": "http://token.mcp-bridge.test/token"}),
    );
    let proxy = RecordingProxy::refusing().await;
    let (mut peer, _dir) = bridge_through(&server.mcp_url(), None, &proxy);
    let refused = refused_initialize(&mut peer).await;
    let detail = "the token endpoint (http://token.mcp-bridge.test) does not use https";
    assert_eq!(refused["error"], sign_in_failed(detail), "{refused}");
    // Refused before the authorization URL is written, so no one signs in for
    // nothing.
    assert!(
        !peer
            .stderr_lines()
            .iter()
            .any(|line| line.starts_with("mcp-bridge-vscode: sign in at ")),
        "{:?}",
        peer.stderr_lines()
    );
    assert_eq!(proxy.requests(), Vec::<String>::new(), "a request left");
    assert!(
        !server.seen().iter().any(|seen| seen.contains("register")),
        "{:?}",
        server.seen()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_endpoint_that_carries_parameters_of_the_bridge_is_refused() {
    let server = ScriptedOAuth::start().await;
    let endpoint = format!(
        "{}/authorize?client_id=attacker&redirect_uri=http%3A%2F%2Fattacker.mcp-bridge.test%2Fcb&state=attacker",
        server.origin
    );
    server.serve_authorization_server(json!({"authorization_endpoint": endpoint}));
    let proxy = RecordingProxy::refusing().await;
    let (mut peer, _dir) = bridge_through(&server.mcp_url(), None, &proxy);
    let refused = refused_initialize(&mut peer).await;
    let detail = "the authorization endpoint already has the parameter client_id";
    assert_eq!(
        refused["error"],
        json!({"code":-32603,
            "message":"The authorization server sent an authorization URL that is not valid. See the Output channel of the server.",
            "data":{"cause":"invalid_authorization_url","detail":detail}}),
        "{refused}"
    );
    assert!(has_line(
        &peer,
        &format!(
            "mcp-bridge-vscode: bridge: warning: the authorization URL is not valid ({detail}), thus the bridge does not open it"
        )
    ));
    assert!(
        !peer
            .stderr_lines()
            .iter()
            .any(|line| line.starts_with("mcp-bridge-vscode: sign in at ")),
        "the URL was written"
    );
    assert_eq!(proxy.requests(), Vec::<String>::new());
}

/// The fixture as a "remote" upstream (`https://remote.mcp-bridge.test:<port>/mcp`
/// through the tunnel of `proxy`), whose protected resource metadata names
/// `authorization_server`.
async fn remote_fixture(authorization_server: &str) -> (HttpsFixture, RecordingProxy) {
    let fixture = HttpsFixture::start(
        &[
            "--auth",
            "--host",
            "remote.mcp-bridge.test",
            "--prm-authorization-server",
            authorization_server,
        ],
        &[],
    )
    .await;
    assert!(
        fixture.url.starts_with("https://remote.mcp-bridge.test:"),
        "{}",
        fixture.url
    );
    let proxy = RecordingProxy::tunneling_to(&[fixture.port]).await;
    (fixture, proxy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_upstream_that_names_an_authorization_server_on_loopback_sends_no_request_there() {
    let local_service = ScriptedOAuth::start().await;
    local_service.serve_authorization_server(json!({}));
    let (fixture, proxy) = remote_fixture(&local_service.origin).await;
    let (mut peer, _dir) = bridge_through(&fixture.url, Some(&fixture.ca_file), &proxy);
    let refused = refused_initialize(&mut peer).await;
    assert_eq!(
        refused["error"],
        sign_in_failed(&format!(
            "the authorization server ({}) is on a loopback host, but the upstream server is not",
            local_service.origin
        )),
        "{refused}"
    );
    assert_eq!(local_service.seen(), Vec::<String>::new());
    // The metadata of the remote upstream came through the tunnel.
    let tunnel = format!("CONNECT remote.mcp-bridge.test:{} HTTP/1.1", fixture.port);
    let requests = proxy.requests();
    assert!(!requests.is_empty(), "{requests:?}");
    assert!(requests.iter().all(|line| *line == tunnel), "{requests:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_upstream_signs_in_at_its_own_https_authorization_server() {
    // The same remote upstream with its own authorization server: the rule lets it
    // through, and the whole sign-in goes through the tunnel.
    let fixture = HttpsFixture::start(&["--auth", "--host", "remote.mcp-bridge.test"], &[]).await;
    let proxy = RecordingProxy::tunneling_to(&[fixture.port]).await;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port().to_string();
    let mut peer = bridge_to(
        &fixture.url,
        &fixture.ca_file,
        &[
            "--redirect-port",
            &port,
            "--token-store",
            "memory",
            "--no-browser",
        ],
        &[("HTTPS_PROXY", &proxy.url())],
    );
    peer.send(&initialize_frame()).await.unwrap();
    let line = peer
        .wait_stderr(EXCHANGE, |line| {
            line.starts_with("mcp-bridge-vscode: sign in at ")
        })
        .await
        .expect("the sign-in line");
    let url = line.trim_start_matches("mcp-bridge-vscode: sign in at ");
    assert!(
        url.starts_with(&format!(
            "https://remote.mcp-bridge.test:{}/authorize?",
            fixture.port
        )),
        "{url}"
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    drop(dir);
}
