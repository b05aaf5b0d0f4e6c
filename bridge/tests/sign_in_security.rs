//! The sign-in against a hostile authorization server, end to end: the real bridge at `--log-level debug`, the fixture with
//! `--hostile-authorization-endpoint` and `--hostile-redirect`, and a `$BROWSER`.
//!
//! Each refusal is checked by its cause and its line of the Output channel, and
//! by what did not happen: no browser ran for a URL that was refused, no file of
//! a shell payload exists, no code of a refused redirect was redeemed. The
//! fixture gives every secret it saw or issued (`GET /fixture/secrets`), and none
//! may be in any stderr line of the bridge.
//!
//! Also here: a stored sign-in is loaded at connect, so server/discover waits for
//! `--discover-timeout` alone when the store has a token valid for more than a
//! minute (contract, "Options of the bridge").

use crate::https_fixture;
use crate::pipes;

use harness_sim::process::StdioPeer;
use https_fixture::{
    HOSTILE_AUTHORIZATION_ENDPOINTS, HttpsFixture, bridge, bridge_to, fixture_client,
    fixture_endpoint, fixture_switch, free_port, test_browser,
};
use mcp_bridge_vscode::internals::auth::store::{
    ClientOption, EntryKey, FileStore, StoredSignIn, TokenKey, TokenStore,
};
use pipes::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const SIGN_IN_LINE: &str = "mcp-bridge-vscode: sign in at ";

/// The bridge at debug level with a memory store, the test browser and a free
/// redirect port (returned).
fn debug_bridge(fixture: &HttpsFixture, dir: &Path, args: &[&str]) -> (StdioPeer, u16) {
    let browser = test_browser(dir, fixture);
    let port = free_port();
    let port_text = port.to_string();
    let mut all = vec![
        "--log-level",
        "debug",
        "--redirect-port",
        &port_text,
        "--token-store",
        "memory",
    ];
    all.extend_from_slice(args);
    let peer = bridge(fixture, &all, &[("BROWSER", browser.to_str().unwrap())]);
    (peer, port)
}

/// `GET /fixture/secrets` of the fixture.
async fn fixture_secrets(fixture: &HttpsFixture) -> Value {
    let response = fixture_client(fixture)
        .get(fixture_endpoint(fixture, "/fixture/secrets"))
        .send()
        .await
        .expect("GET /fixture/secrets");
    assert!(response.status().is_success(), "GET /fixture/secrets");
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

fn strings(secrets: &Value, list: &str) -> Vec<String> {
    secrets[list]
        .as_array()
        .unwrap_or_else(|| panic!("{list} in {secrets}"))
        .iter()
        .map(|value| value.as_str().unwrap().to_owned())
        .collect()
}

/// No secret that the fixture saw or issued is in a stderr line of the bridge.
/// The state is in the authorization URL, which the sign-in line carries by
/// the contract ("sign in at <url>"); it must be in no other line.
fn assert_no_secret_in(lines: &[String], secrets: &Value) {
    for list in [
        "codes",
        "code_verifiers",
        "access_tokens",
        "refresh_tokens",
        "client_secrets",
    ] {
        for secret in strings(secrets, list) {
            for line in lines {
                assert!(!line.contains(&secret), "a value of {list} in: {line}");
            }
        }
    }
    for state in strings(secrets, "states") {
        for line in lines.iter().filter(|line| !line.starts_with(SIGN_IN_LINE)) {
            assert!(!line.contains(&state), "a state in: {line}");
        }
    }
    for line in lines {
        assert!(!line.contains("Bearer "), "{line}");
    }
}

async fn has_line(peer: &mut StdioPeer, expected: &str) -> bool {
    peer.wait_stderr(EXCHANGE, |line| line == expected)
        .await
        .is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_authorization_endpoints_are_refused_before_any_line_or_browser_and_nothing_runs() {
    for (kind, detail) in HOSTILE_AUTHORIZATION_ENDPOINTS {
        let fixture =
            HttpsFixture::start(&["--auth", "--hostile-authorization-endpoint", kind], &[]).await;
        let marker = fixture.payload_marker();
        let _ = std::fs::remove_file(&marker);
        let dir = tempfile::tempdir().unwrap();
        let (mut peer, _) = debug_bridge(&fixture, dir.path(), &[]);
        peer.send(&initialize_frame()).await.unwrap();
        let refused = response(&mut peer).await;
        assert_eq!(
            refused,
            json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
                "message":"The authorization server sent an authorization URL that is not valid. See the Output channel of the server.",
                "data":{"cause":"invalid_authorization_url","detail":detail}}}),
            "{kind}"
        );
        let line = format!(
            "mcp-bridge-vscode: bridge: warning: the authorization URL is not valid ({detail}), thus the bridge does not open it"
        );
        assert!(has_line(&mut peer, &line).await, "{kind}");
        assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
        let lines = peer.stderr_lines();
        assert!(
            !lines.iter().any(|l| l.starts_with(SIGN_IN_LINE)),
            "{kind}: a refused URL was written: {lines:?}"
        );
        assert!(
            !lines.iter().any(|l| l.contains("javascript:")
                || l.contains("file:///")
                || l.contains("touch")),
            "{kind}: the endpoint reached a line: {lines:?}"
        );
        assert!(
            !dir.path().join("browser.log.urls").exists(),
            "{kind}: $BROWSER ran"
        );
        assert!(!marker.exists(), "{kind}: the shell payload ran");
        let secrets = fixture_secrets(&fixture).await;
        assert_eq!(secrets["code_exchanges"], 0, "{kind}");
        assert_no_secret_in(&lines, &secrets);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_with_the_iss_of_another_issuer_is_refused_and_its_code_never_redeemed() {
    let fixture = HttpsFixture::start(&["--auth", "--hostile-redirect", "wrong-iss"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = debug_bridge(&fixture, dir.path(), &[]);
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"],
        json!({"code":-32603,
            "message":"The authorization server sent an error for the sign-in. See the Output channel of the server.",
            "data":{"cause":"authorization_error",
                "detail":"the iss of the redirect is not the issuer of the authorization server"}})
    );
    assert!(
        has_line(
            &mut peer,
            "mcp-bridge-vscode: bridge: warning: the authorization server sent an error for the sign-in: the iss of the redirect is not the issuer of the authorization server"
        )
        .await
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    let secrets = fixture_secrets(&fixture).await;
    assert_eq!(strings(&secrets, "codes").len(), 1, "{secrets}");
    assert_eq!(secrets["code_exchanges"], 0, "the code went to /token");
    assert!(strings(&secrets, "access_tokens").is_empty());
    assert_no_secret_in(&peer.stderr_lines(), &secrets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_with_another_state_gets_400_and_the_sign_in_ends_at_its_time_limit() {
    let fixture = HttpsFixture::start(&["--auth", "--hostile-redirect", "wrong-state"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, port) = debug_bridge(&fixture, dir.path(), &["--sign-in-timeout", "3"]);
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"sign_in_timeout","detail":"no sign-in in 3 s"}),
        "{refused}"
    );
    assert!(
        has_line(
            &mut peer,
            "mcp-bridge-vscode: bridge: warning: The sign-in did not complete in 3 s."
        )
        .await
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    let browsed = std::fs::read_to_string(dir.path().join("browser.log")).unwrap();
    assert!(
        browsed.contains(&format!(
            "bridge-fixture-server: info(browse): 400 http://127.0.0.1:{port}/callback\n"
        )),
        "{browsed}"
    );
    let secrets = fixture_secrets(&fixture).await;
    assert_eq!(strings(&secrets, "states").len(), 2, "{secrets}");
    assert_eq!(secrets["code_exchanges"], 0, "the code went to /token");
    assert_no_secret_in(&peer.stderr_lines(), &secrets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_that_was_already_redeemed_fails_the_sign_in_once_without_a_retry() {
    let fixture =
        HttpsFixture::start(&["--auth", "--hostile-redirect", "replayed-code"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = debug_bridge(&fixture, dir.path(), &[]);
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"authorization_error",
            "detail":"the token endpoint answered the code with the error invalid_grant"}),
        "{refused}"
    );
    assert!(
        has_line(
            &mut peer,
            "mcp-bridge-vscode: bridge: warning: the authorization server sent an error for the sign-in: the token endpoint answered the code with the error invalid_grant"
        )
        .await
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    let secrets = fixture_secrets(&fixture).await;
    assert_eq!(secrets["code_exchanges"], 1, "one exchange, no retry");
    assert!(strings(&secrets, "access_tokens").is_empty());
    assert_eq!(strings(&secrets, "code_verifiers").len(), 1);
    assert_no_secret_in(&peer.stderr_lines(), &secrets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_of_a_sign_in_a_refresh_and_a_step_up_reaches_stderr_at_debug_level() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = debug_bridge(&fixture, dir.path(), &[]);
    let result = initialize(&mut peer).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    // A refresh: every access token expires now.
    fixture_switch(&fixture, "/fixture/expire-tokens").await;
    peer.send(&call(2, "echo", json!({"text":"refreshed"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut peer).await), "refreshed");
    // A step-up through a URL elicitation.
    peer.send(&call(3, "guarded", json!({}))).await.unwrap();
    let question = response(&mut peer).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let url = question["params"]["url"].as_str().unwrap().to_owned();
    let browsed = tokio::process::Command::new(fixture_exe())
        .args(["--browse", &url, "--ca-file", &fixture.ca_file])
        .output()
        .await
        .unwrap();
    assert!(browsed.status.success());
    peer.send(&json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept"}}))
        .await
        .unwrap();
    let result = loop {
        let frame = response(&mut peer).await;
        if frame["id"] == 3 {
            break frame;
        }
    };
    assert_eq!(text_of(&result), "guarded: allowed");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    let secrets = fixture_secrets(&fixture).await;
    // Two sign-ins and one refresh: what the check below looks for.
    assert_eq!(strings(&secrets, "codes").len(), 2, "{secrets}");
    assert_eq!(strings(&secrets, "code_verifiers").len(), 2);
    assert_eq!(strings(&secrets, "access_tokens").len(), 3);
    assert_eq!(strings(&secrets, "refresh_tokens").len(), 3);
    let lines = peer.stderr_lines();
    assert!(
        lines.iter().any(|l| l.contains(": debug: ")),
        "debug lines: {lines:?}"
    );
    assert_no_secret_in(&lines, &secrets);
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The discover wait of a bridge whose file store holds, for the URL, a token
/// that expires at `expires_at`, against a server that never answers.
async fn discover_detail_with_stored_token(expires_at: u64) -> Value {
    let (url, held) = crate::tiny_http::silent_server().await;
    let dir = tempfile::tempdir().unwrap();
    let key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    let state = dir.path().join("state");
    let port = free_port();
    let store = FileStore::open(
        &state.join("mcp-bridge-rs/vscode/tokens"),
        TokenKey::from_hex(key).unwrap(),
    )
    .unwrap();
    let entry = EntryKey::new(
        &url,
        "default",
        &format!("http://127.0.0.1:{port}/callback"),
        ClientOption::Default,
    );
    store
        .save(
            &entry,
            &StoredSignIn {
                issuer: "http://127.0.0.1:1".into(),
                resource: url.clone(),
                client_id: "stored-client".into(),
                client_secret: None,
                access_token: "stored-access-token".into(),
                refresh_token: None,
                expires_at: Some(expires_at),
                scope: Some("mcp:read".into()),
            },
        )
        .unwrap();
    let port = port.to_string();
    let args = [
        "--discover-timeout",
        "1",
        "--sign-in-timeout",
        "2",
        "--redirect-port",
        &port,
        "--token-store",
        "file",
        "--no-browser",
    ];
    let ca = https_fixture::test_ca_file(dir.path());
    let env = [
        ("XDG_STATE_HOME", state.to_str().unwrap()),
        ("MCP_BRIDGE_TOKEN_KEY", key),
    ];
    let mut peer = bridge_to(&url, &ca, &args, &env);
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    held.abort();
    assert_eq!(
        refused["error"]["data"]["cause"], "discover_failed",
        "{refused}"
    );
    refused["error"]["data"]["detail"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_token_valid_for_more_than_a_minute_lets_discover_wait_only_its_own_time_limit() {
    // Loaded at connect: no sign-in can start, so no --sign-in-timeout in the wait.
    assert_eq!(
        discover_detail_with_stored_token(now_unix() + 3600).await,
        "no response in 1 s"
    );
    // A token that expires within the minute counts as none: a sign-in can start.
    assert_eq!(
        discover_detail_with_stored_token(now_unix() + 30).await,
        "no response in 3 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_redirect_with_the_iss_of_another_issuer_is_refused_as_such() {
    // RFC 9207 §2.4: the iss of an error response is checked too, before its error
    // is believed.
    let fixture = HttpsFixture::start(
        &["--auth", "--deny", "--hostile-redirect", "wrong-iss"],
        &[],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = debug_bridge(&fixture, dir.path(), &[]);
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"authorization_error",
            "detail":"the iss of the redirect is not the issuer of the authorization server"}),
        "{refused}"
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    assert!(
        !peer
            .stderr_lines()
            .iter()
            .any(|line| line.contains("refused the access")),
        "the error of a redirect of another issuer was believed"
    );
}

/// A bridge with `--client-id bridge-fixture-public` and a file store in `state`,
/// with `args` and `env` more.
fn public_client_bridge(
    fixture: &HttpsFixture,
    state: &Path,
    port: u16,
    args: &[&str],
    env: &[(&str, &str)],
) -> StdioPeer {
    let port = port.to_string();
    let mut all = vec![
        "--log-level",
        "debug",
        "--redirect-port",
        &port,
        "--token-store",
        "file",
        "--client-id",
        "bridge-fixture-public",
    ];
    all.extend_from_slice(args);
    let mut all_env = vec![
        ("XDG_STATE_HOME", state.to_str().unwrap()),
        (
            "MCP_BRIDGE_TOKEN_KEY",
            "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
        ),
    ];
    all_env.extend_from_slice(env);
    bridge(fixture, &all, &all_env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_secret_of_client_issuer_never_goes_to_the_issuer_of_a_stored_sign_in() {
    // A first start signs in with a public --client-id (no issuer) at the fixture;
    // a second start adds --client-issuer of another server and that server's
    // secret. A refresh of the stored sign-in would carry the secret to the
    // fixture: the bridge signs in anew instead, and that sign-in is refused.
    let fixture = HttpsFixture::start(&["--auth", "--no-registration"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port();
    let mut first = public_client_bridge(
        &fixture,
        &state,
        port,
        &[],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    let result = initialize(&mut first).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    assert_eq!(stop(&mut first, Duration::from_secs(10)).await.0, Some(0));

    let secret_of_b = "secret-of-the-other-issuer-4f1c";
    let mut second = public_client_bridge(
        &fixture,
        &state,
        port,
        &[
            "--client-issuer",
            "https://other-issuer.mcp-bridge.test",
            "--no-browser",
        ],
        &[("MCP_BRIDGE_CLIENT_SECRET", secret_of_b)],
    );
    let result = initialize(&mut second).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    fixture_switch(&fixture, "/fixture/expire-tokens").await;
    second
        .send(&call(2, "echo", json!({"text":"x"})))
        .await
        .unwrap();
    let refused = response(&mut second).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"client_id_not_for_issuer"}),
        "{refused}"
    );
    assert_eq!(stop(&mut second, Duration::from_secs(10)).await.0, Some(0));
    let secrets = fixture_secrets(&fixture).await;
    assert!(
        !strings(&secrets, "client_secrets").contains(&secret_of_b.to_owned()),
        "the secret of --client-issuer went to another issuer: {secrets}"
    );
    assert_no_secret_in(&second.stderr_lines(), &secrets);
}
