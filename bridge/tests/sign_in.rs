//! The OAuth sign-in of the URL form (M4, M6) end to end: the real bridge, the
//! fixture over HTTPS with its own authorization server (`--auth`), and a browser
//! that follows the one-time start URL, the consent page and the redirect (the
//! fixture's `--browse`, or headless Chromium).

mod https_fixture;
mod pipes;

use https_fixture::{HttpsFixture, bridge};
use pipes::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A port that nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An executable script at `dir/name` (a `$BROWSER`).
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `$BROWSER` as the fixture's test browser, which writes what it saw to `log`.
fn test_browser(dir: &Path, fixture: &HttpsFixture) -> PathBuf {
    let log = dir.join("browser.log");
    script(
        dir,
        "browser",
        &format!(
            "printf '%s\\n' \"$1\" >> '{log}.urls'\nexec '{exe}' --browse \"$1\" --ca-file '{ca}' >> '{log}' 2>&1",
            log = log.display(),
            exe = fixture_exe(),
            ca = fixture.ca_file,
        ),
    )
}

/// The URL of the sign-in line, once the bridge wrote it.
async fn sign_in_url(peer: &mut harness_sim::process::StdioPeer) -> String {
    let line = peer
        .wait_stderr(EXCHANGE, |line| {
            line.starts_with("mcp-bridge-vscode: sign in at ")
        })
        .await
        .expect("the sign-in line");
    line.trim_start_matches("mcp-bridge-vscode: sign in at ")
        .to_owned()
}

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
    // Two plain GETs of the start URL, without following the redirect.
    let browser = script(
        dir.path(),
        "browser",
        &format!(
            "python3 - \"$1\" >> '{}' 2>&1 <<'PY'\nimport sys, urllib.request, urllib.error\nclass NoRedirect(urllib.request.HTTPRedirectHandler):\n    def redirect_request(self, *a, **k): return None\nopener = urllib.request.build_opener(NoRedirect)\nfor _ in range(2):\n    try:\n        r = opener.open(sys.argv[1]); print(r.status, r.read().decode())\n    except urllib.error.HTTPError as e:\n        print(e.code, e.read().decode())\nPY",
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
