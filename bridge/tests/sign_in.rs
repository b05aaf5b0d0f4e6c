//! The OAuth sign-in of the URL form (M4, M6) end to end: the real bridge, the
//! fixture over HTTPS with its own authorization server (`--auth`), and a browser
//! that follows the one-time start URL, the consent page and the redirect (the
//! fixture's `--browse`, or headless Chromium).

use crate::https_fixture;
use crate::pipes;

use https_fixture::{
    HttpsFixture, bridge, fixture_switch, free_port, script, sign_in_url, test_browser,
};
use pipes::*;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// The fixture's test browser, run by the test as a user would.
async fn browse(url: &str, fixture: &HttpsFixture) -> std::process::Output {
    tokio::process::Command::new(fixture_exe())
        .args(["--browse", url, "--ca-file", &fixture.ca_file])
        .output()
        .await
        .unwrap()
}

fn stderr_of(peer: &harness_sim::process::StdioPeer) -> String {
    peer.stderr_lines().join("\n")
}

/// Secrets of the OAuth flow never reach a line, at any level.
fn assert_no_secret_in(stderr: &str) {
    for secret in [
        "Bearer ",
        "access_token",
        "refresh_token",
        "code_verifier",
        "code=",
        "client_secret",
        "bridge-fixture-secret",
    ] {
        assert!(!stderr.contains(secret), "{secret} in:\n{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_m6_the_first_sign_in_opens_the_start_url_and_initialize_gets_its_result() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &[
            "--log-level",
            "debug",
            "--redirect-port",
            &port,
            "--token-store",
            "memory",
        ],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    let result = initialize(&mut peer).await;
    assert_eq!(
        result["result"]["serverInfo"]["name"], "bridge-fixture-server",
        "{result}"
    );
    let url = sign_in_url(&mut peer).await;
    let origin = fixture.url.trim_end_matches("/mcp");
    assert!(
        url.starts_with(&format!("{origin}/authorize?response_type=code&client_id=")),
        "{url}"
    );
    for part in [
        format!("redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback"),
        "code_challenge_method=S256".to_owned(),
        "&state=".to_owned(),
        "&code_challenge=".to_owned(),
        format!(
            "resource={}",
            url::form_urlencoded::byte_serialize(fixture.url.as_bytes()).collect::<String>()
        ),
        "scope=mcp%3Aread".to_owned(),
    ] {
        assert!(url.contains(&part), "{part} in {url}");
    }
    // The opener got the one-time start URL, never the authorization URL.
    let opened = std::fs::read_to_string(dir.path().join("browser.log.urls")).unwrap();
    let opened: Vec<&str> = opened.lines().collect();
    assert_eq!(opened.len(), 1, "{opened:?}");
    let start = format!("http://127.0.0.1:{port}/start/");
    assert!(
        opened[0].starts_with(&start) && opened[0].len() == start.len() + 43,
        "{opened:?}"
    );
    peer.send(&call(2, "echo", json!({"text":"signed in"})))
        .await
        .unwrap();
    let echoed = response(&mut peer).await;
    assert_eq!(text_of(&echoed), "signed in", "{echoed}");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    assert_no_secret_in(&stderr_of(&peer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_step_up_after_initialized_is_a_url_elicitation_and_completes_with_the_new_scope() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &[
            "--log-level",
            "debug",
            "--redirect-port",
            &port,
            "--token-store",
            "memory",
        ],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    initialize(&mut peer).await;
    let first = sign_in_url(&mut peer).await;
    peer.send(&call(2, "guarded", json!({}))).await.unwrap();
    let question = response(&mut peer).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(question["id"], "b-1");
    let params = &question["params"];
    assert_eq!(params["mode"], "url");
    assert_eq!(
        params["message"],
        "The upstream server needs a new sign-in. Open the URL and sign in at the authorization server."
    );
    let url = params["url"].as_str().unwrap().to_owned();
    assert!(url.contains("scope=mcp%3Aread+mcp%3Awrite"), "{url}");
    assert_eq!(sign_in_url_after(&mut peer, &first).await, url);
    // VS Code opens the URL itself; the bridge opens no browser after initialized.
    let browsed = browse(&url, &fixture).await;
    assert!(
        browsed.status.success(),
        "{}",
        String::from_utf8_lossy(&browsed.stderr)
    );
    peer.send(&json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept"}}))
        .await
        .unwrap();
    let mut complete = None;
    let result = loop {
        let frame = recv(&mut peer).await;
        if frame["method"] == "notifications/elicitation/complete" {
            complete = Some(frame);
        } else if frame["id"] == 2 {
            break frame;
        }
    };
    assert_eq!(
        complete.expect("elicitation/complete before the result")["params"]["elicitationId"],
        params["elicitationId"]
    );
    assert_eq!(text_of(&result), "guarded: allowed", "{result}");
    let opened = std::fs::read_to_string(dir.path().join("browser.log.urls")).unwrap_or_default();
    assert_eq!(
        opened.lines().count(),
        1,
        "only the first sign-in opened the browser"
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    assert_no_secret_in(&stderr_of(&peer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_declined_sign_in_fails_its_request_and_no_question_comes_for_a_minute() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &["--redirect-port", &port, "--token-store", "memory"],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    initialize(&mut peer).await;
    peer.send(&call(2, "guarded", json!({}))).await.unwrap();
    let question = response(&mut peer).await;
    assert_eq!(question["method"], "elicitation/create");
    peer.send(&json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"decline"}}))
        .await
        .unwrap();
    let declined = response(&mut peer).await;
    assert_eq!(declined["id"], 2);
    assert_eq!(declined["error"]["code"], -32603);
    assert_eq!(declined["error"]["data"]["cause"], "sign_in_declined");
    assert!(
        peer.wait_stderr(EXCHANGE, |l| l
            == "mcp-bridge-vscode: bridge: info: The user declined the sign-in.")
            .await
            .is_some()
    );
    peer.send(&call(3, "guarded", json!({}))).await.unwrap();
    let again = response(&mut peer).await;
    assert_eq!(again["id"], 3, "no new question: {again}");
    assert_eq!(again["error"]["data"]["cause"], "sign_in_declined");
    // Other requests go on with the token of the first sign-in.
    peer.send(&call(4, "echo", json!({"text":"x"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut peer).await), "x");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m6_a_second_request_of_the_start_url_stops_the_sign_in_with_sign_in_start_reused() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages");
    // Two plain GETs of the start URL, without following the redirect: the
    // fixture's test browser writes `<status> <body>` of each.
    let browser = script(
        dir.path(),
        "browser",
        &format!(
            "for _ in 1 2; do '{}' --browse \"$1\" --no-follow >> '{}' 2>&1; done",
            fixture_exe(),
            pages.display()
        ),
    );
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &["--redirect-port", &port, "--token-store", "memory"],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"],
        json!({"code":-32603,
            "message":"The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. Restart the server to sign in again.",
            "data":{"cause":"sign_in_start_reused"}})
    );
    assert!(peer
        .wait_stderr(EXCHANGE, |l| l.starts_with("mcp-bridge-vscode: bridge: warning: The start URL of the sign-in received a second request, thus the bridge stopped the sign-in."))
        .await
        .is_some());
    // The browser writes the second page after the bridge answered.
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&pages).unwrap_or_default();
        if text.contains("410 ") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pages = text;
    let mut statuses = pages
        .lines()
        .filter_map(|l| l.split(' ').next())
        .filter(|s| s.len() == 3);
    assert_eq!(
        (statuses.next(), statuses.next()),
        (Some("303"), Some("410")),
        "{pages}"
    );
    assert!(pages.contains("Start the sign-in again"), "{pages}");
    // The bridge serves on.
    peer.send(&json!({"jsonrpc":"2.0","id":5,"method":"ping"}))
        .await
        .unwrap();
    assert_eq!(
        response(&mut peer).await,
        json!({"jsonrpc":"2.0","id":5,"result":{}})
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_no_browser_writes_only_the_sign_in_line_and_a_sign_in_that_never_completes_times_out() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &[
            "--no-browser",
            "--sign-in-timeout",
            "2",
            "--redirect-port",
            &port,
            "--token-store",
            "memory",
        ],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    peer.send(&initialize_frame()).await.unwrap();
    let url = sign_in_url(&mut peer).await;
    assert!(url.contains("/authorize?"));
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"]["data"]["cause"], "sign_in_timeout",
        "{refused}"
    );
    assert!(
        peer.wait_stderr(EXCHANGE, |l| l
            == "mcp-bridge-vscode: bridge: warning: The sign-in did not complete in 2 s.")
            .await
            .is_some()
    );
    assert!(
        !dir.path().join("browser.log.urls").exists(),
        "--no-browser opened a browser"
    );
    // The next initialize signs in again: this time the user opens the URL.
    peer.send(&initialize_frame()).await.unwrap();
    let url = sign_in_url_after(&mut peer, &url).await;
    let browsed = browse(&url, &fixture).await;
    assert!(
        browsed.status.success(),
        "{}",
        String::from_utf8_lossy(&browsed.stderr)
    );
    let result = response(&mut peer).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

/// The next sign-in line, other than `before`.
async fn sign_in_url_after(peer: &mut harness_sim::process::StdioPeer, before: &str) -> String {
    let before = format!("mcp-bridge-vscode: sign in at {before}");
    let line = peer
        .wait_stderr(EXCHANGE, |line| {
            line.starts_with("mcp-bridge-vscode: sign in at ") && line != before
        })
        .await
        .expect("a second sign-in line");
    line.trim_start_matches("mcp-bridge-vscode: sign in at ")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_in_the_sandbox_of_vs_code_initialize_fails_at_once_with_the_sandbox_line() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let mut peer = bridge(
        &fixture,
        &["--token-store", "memory"],
        &[("SANDBOX_RUNTIME", "1")],
    );
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"]["data"]["cause"], "sign_in_sandbox",
        "{refused}"
    );
    assert_eq!(
        refused["error"]["message"],
        "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. Disable the sandbox for this server."
    );
    assert!(peer
        .wait_stderr(EXCHANGE, |l| l.starts_with("mcp-bridge-vscode: bridge: warning: The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code."))
        .await
        .is_some());
    assert!(!stderr_of(&peer).contains("sign in at"));
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_redirect_port_that_another_program_uses_fails_the_sign_in_with_its_line() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let mut peer = bridge(
        &fixture,
        &[
            "--redirect-port",
            &port.to_string(),
            "--no-browser",
            "--token-store",
            "memory",
        ],
        &[],
    );
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"redirect_port_in_use","detail":format!("port {port}")})
    );
    let line = format!(
        "mcp-bridge-vscode: bridge: warning: Another program uses the redirect port {port}."
    );
    assert!(
        peer.wait_stderr(EXCHANGE, |l| l.starts_with(&line))
            .await
            .is_some()
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_sign_in_in_headless_chromium_completes_through_the_start_url_and_the_consent_page() {
    let Some(chromium) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|path| Path::new(path).exists())
    else {
        panic!("headless Chromium is needed (.ci/run installs Debian's chromium)");
    };
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile");
    // The fixture's CA is not in Chromium's store; the bridge itself checks it
    // through --ca-file.
    let browser = script(
        dir.path(),
        "chromium",
        &format!(
            "exec '{chromium}' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
             --disable-background-networking --disable-component-update --disable-sync \
             --ignore-certificate-errors --user-data-dir='{}' --virtual-time-budget=15000 \
             --dump-dom \"$1\" > '{}' 2>/dev/null",
            profile.display(),
            dir.path().join("dom.html").display()
        ),
    );
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &["--redirect-port", &port, "--token-store", "memory"],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    let result = initialize(&mut peer).await;
    assert!(
        result["result"]["capabilities"]["tools"].is_object(),
        "{result}"
    );
    peer.send(&call(2, "echo", json!({"text":"from chromium"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut peer).await), "from chromium");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

/// A bridge with the test browser, signed in before notifications/initialized.
async fn signed_in(
    fixture: &HttpsFixture,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> harness_sim::process::StdioPeer {
    let browser = test_browser(dir, fixture);
    let port = free_port().to_string();
    let mut all_args = vec!["--redirect-port", &port, "--token-store", "memory"];
    all_args.extend_from_slice(args);
    let mut all_env = vec![("BROWSER", browser.to_str().unwrap())];
    all_env.extend_from_slice(env);
    let mut peer = bridge(fixture, &all_args, &all_env);
    let result = initialize(&mut peer).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    peer
}

fn opened_urls(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("browser.log.urls"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_an_expired_token_is_refreshed_without_a_new_sign_in() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut peer = signed_in(&fixture, dir.path(), &["--log-level", "debug"], &[]).await;
    fixture_switch(&fixture, "/fixture/expire-tokens").await;
    peer.send(&call(2, "echo", json!({"text":"after the refresh"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut peer).await), "after the refresh");
    assert_eq!(opened_urls(dir.path()), 1, "no second browser");
    assert_eq!(
        peer.stderr_lines()
            .iter()
            .filter(|l| l.starts_with("mcp-bridge-vscode: sign in at"))
            .count(),
        1
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    assert_no_secret_in(&stderr_of(&peer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_refresh_token_that_the_server_refuses_starts_a_new_sign_in_through_vs_code() {
    let fixture = HttpsFixture::start(&["--auth", "--invalid-grant"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut peer = signed_in(&fixture, dir.path(), &[], &[]).await;
    fixture_switch(&fixture, "/fixture/expire-tokens").await;
    peer.send(&call(2, "echo", json!({"text":"x"})))
        .await
        .unwrap();
    let question = response(&mut peer).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert!(peer
        .wait_stderr(EXCHANGE, |l| l == "mcp-bridge-vscode: bridge: info: the authorization server refused the refresh token: the bridge signs in again")
        .await
        .is_some());
    let url = question["params"]["url"].as_str().unwrap();
    assert!(browse(url, &fixture).await.status.success());
    peer.send(&json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept"}}))
        .await
        .unwrap();
    let result = loop {
        let frame = response(&mut peer).await;
        if frame["id"] == 2 {
            break frame;
        }
    };
    assert_eq!(text_of(&result), "x");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_pre_registered_client_with_a_secret_signs_in_at_its_issuer_only() {
    let fixture = HttpsFixture::start(&["--auth", "--no-registration"], &[]).await;
    let origin = fixture.url.trim_end_matches("/mcp").to_owned();
    let dir = tempfile::tempdir().unwrap();
    let secret = [(
        "MCP_BRIDGE_CLIENT_SECRET",
        "bridge-fixture-secret-0123456789",
    )];
    let mut peer = signed_in(
        &fixture,
        dir.path(),
        &[
            "--log-level",
            "debug",
            "--client-id",
            "bridge-fixture-confidential",
            "--client-issuer",
            &origin,
        ],
        &secret,
    )
    .await;
    let url = sign_in_url(&mut peer).await;
    assert!(
        url.contains("client_id=bridge-fixture-confidential&"),
        "{url}"
    );
    peer.send(&call(2, "echo", json!({"text":"confidential"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut peer).await), "confidential");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
    assert_no_secret_in(&stderr_of(&peer));

    // With another issuer, the secret goes nowhere and the sign-in fails.
    let port = free_port().to_string();
    let mut other = bridge(
        &fixture,
        &[
            "--redirect-port",
            &port,
            "--token-store",
            "memory",
            "--client-id",
            "bridge-fixture-confidential",
            "--client-issuer",
            "https://other.example.com",
        ],
        &secret,
    );
    other.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut other).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"client_id_not_for_issuer"}),
        "{refused}"
    );
    assert_eq!(stop(&mut other, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_client_id_metadata_document_is_the_client_id_where_the_server_takes_it() {
    let fixture = HttpsFixture::start(&["--auth", "--cimd", "--no-registration"], &[]).await;
    let origin = fixture.url.trim_end_matches("/mcp").to_owned();
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port();
    let document = format!("{origin}/fixture/client.json?port={port}");
    let port = port.to_string();
    let mut peer = bridge(
        &fixture,
        &[
            "--redirect-port",
            &port,
            "--token-store",
            "memory",
            "--client-metadata-url",
            &document,
        ],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    let result = initialize(&mut peer).await;
    assert!(result["result"]["capabilities"].is_object(), "{result}");
    let url = sign_in_url(&mut peer).await;
    let client_id: String = url::form_urlencoded::byte_serialize(document.as_bytes()).collect();
    assert!(url.contains(&format!("client_id={client_id}&")), "{url}");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));

    // A document that does not list the redirect URI of the bridge is refused.
    let other_port = free_port().to_string();
    let mut refused_peer = bridge(
        &fixture,
        &[
            "--redirect-port",
            &other_port,
            "--no-browser",
            "--token-store",
            "memory",
            "--client-metadata-url",
            &document,
        ],
        &[],
    );
    refused_peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut refused_peer).await;
    assert_eq!(
        refused["error"]["data"]["cause"], "invalid_client_metadata_url",
        "{refused}"
    );
    assert_eq!(
        refused["error"]["data"]["detail"],
        format!(
            "the document does not list the redirect URI http://127.0.0.1:{other_port}/callback"
        )
    );
    assert_eq!(
        stop(&mut refused_peer, Duration::from_secs(10)).await.0,
        Some(0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_an_authorization_server_that_denies_the_access_fails_initialize_with_sign_in_denied() {
    let fixture = HttpsFixture::start(&["--auth", "--deny"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let browser = test_browser(dir.path(), &fixture);
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &["--redirect-port", &port, "--token-store", "memory"],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    peer.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut peer).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"sign_in_denied"}),
        "{refused}"
    );
    assert!(
        peer.wait_stderr(EXCHANGE, |l| l
            == "mcp-bridge-vscode: bridge: warning: the authorization server refused the access")
            .await
            .is_some()
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_server_that_forgot_its_client_shows_an_error_page_and_the_sign_in_ends_at_its_time_limit()
 {
    let fixture = HttpsFixture::start(&["--auth", "--forget-clients"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut peer = signed_in(&fixture, dir.path(), &["--sign-in-timeout", "3"], &[]).await;
    fixture_switch(&fixture, "/fixture/expire-tokens").await;
    peer.send(&call(2, "echo", json!({"text":"x"})))
        .await
        .unwrap();
    let question = response(&mut peer).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let url = question["params"]["url"].as_str().unwrap();
    let browsed = browse(url, &fixture).await;
    assert!(!browsed.status.success(), "the error page ends the browser");
    peer.send(&json!({"jsonrpc":"2.0","id":question["id"],"result":{"action":"accept"}}))
        .await
        .unwrap();
    // The listen stream, refused with the expired token too, may have asked the
    // question first: the call's own sign-in then asks once more after it, and
    // nobody answers that one in the browser either.
    let mut failed = response(&mut peer).await;
    if failed["method"] == "elicitation/create" {
        peer.send(&json!({"jsonrpc":"2.0","id":failed["id"],"result":{"action":"accept"}}))
            .await
            .unwrap();
        failed = response(&mut peer).await;
    }
    assert_eq!(failed["id"], 2, "{failed}");
    assert_eq!(
        failed["error"]["data"]["cause"], "sign_in_timeout",
        "{failed}"
    );
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("run mcp-bridge-vscode logout")
    );
    assert!(
        peer.wait_stderr(EXCHANGE, |l| l
            == "mcp-bridge-vscode: bridge: warning: The sign-in did not complete in 3 s.")
            .await
            .is_some()
    );
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_server_that_does_not_announce_iss_signs_in_without_it() {
    let fixture = HttpsFixture::start(&["--auth", "--no-iss"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut peer = signed_in(&fixture, dir.path(), &[], &[]).await;
    peer.send(&call(2, "echo", json!({"text":"no iss"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut peer).await), "no iss");
    assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_the_end_of_stdin_cancels_a_sign_in_that_waits_for_the_browser() {
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let port = free_port().to_string();
    let mut peer = bridge(
        &fixture,
        &[
            "--no-browser",
            "--redirect-port",
            &port,
            "--token-store",
            "memory",
        ],
        &[],
    );
    peer.send(&initialize_frame()).await.unwrap();
    sign_in_url(&mut peer).await;
    let (code, after) = stop(&mut peer, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    assert!(after < Duration::from_secs(3), "stopped after {after:?}");
    // The receiver is gone with the bridge.
    assert!(std::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>().unwrap())).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_stored_sign_in_serves_the_next_start_and_after_logout_the_next_start_signs_in_again()
{
    let fixture = HttpsFixture::start(&["--auth"], &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    let key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    let port = free_port().to_string();
    let browser = test_browser(dir.path(), &fixture);
    let env = [
        ("BROWSER", browser.to_str().unwrap()),
        ("XDG_STATE_HOME", state),
        ("MCP_BRIDGE_TOKEN_KEY", key),
    ];
    let args = ["--redirect-port", port.as_str(), "--token-store", "file"];
    let start = async |expect_sign_in: bool| {
        let mut peer = bridge(&fixture, &args, &env);
        let result = initialize(&mut peer).await;
        assert!(result["result"]["capabilities"].is_object(), "{result}");
        peer.send(&call(2, "echo", json!({"text":"x"})))
            .await
            .unwrap();
        assert_eq!(text_of(&response(&mut peer).await), "x");
        assert_eq!(stop(&mut peer, Duration::from_secs(10)).await.0, Some(0));
        let lines = peer.stderr_lines();
        let expected = format!(
            "mcp-bridge-vscode: bridge: info: the tokens are in encrypted files in {state}/mcp-bridge-rs/vscode/tokens"
        );
        assert!(lines.contains(&expected), "{lines:?}");
        assert_eq!(
            lines
                .iter()
                .any(|l| l.starts_with("mcp-bridge-vscode: sign in at ")),
            expect_sign_in,
            "{lines:?}"
        );
    };
    start(true).await;
    start(false).await;
    assert_eq!(opened_urls(dir.path()), 1);
    let logout = tokio::process::Command::new(bridge_exe())
        .args([
            "logout",
            "--redirect-port",
            &port,
            "--token-store",
            "file",
            "--ca-file",
            &fixture.ca_file,
            &fixture.url,
        ])
        .envs(env)
        .output()
        .await
        .unwrap();
    assert_eq!(logout.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&logout.stderr),
        "mcp-bridge-vscode: vscode: info: logout deleted the stored sign-in of the account \"default\". Restart the server in VS Code to sign in again.\n"
    );
    start(true).await;
    assert_eq!(opened_urls(dir.path()), 2);
}
