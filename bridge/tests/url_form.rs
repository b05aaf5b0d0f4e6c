//! The URL form (M4) end to end: the real bridge in front of the real fixture
//! server over HTTPS (rustls on both sides, the fixture's own test CA through
//! `--ca-file`), as VS Code starts it.

use crate::https_fixture;
use crate::pipes;

use https_fixture::{HttpsFixture, bridge};
use pipes::*;
use serde_json::json;
use std::time::Duration;

const TOKEN: &str = "fixture-token-7f3a9c";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_the_url_form_lists_calls_and_asks_for_input_over_https_with_a_static_token() {
    let fixture = HttpsFixture::start(
        &["--bearer-env", "FIXTURE_TOKEN"],
        &[("FIXTURE_TOKEN", TOKEN)],
    )
    .await;
    let auth = format!("Bearer {TOKEN}");
    let mut bridge = bridge(
        &fixture,
        &[
            "--log-level",
            "debug",
            "--header-env",
            "Authorization=API_AUTH",
        ],
        &[("API_AUTH", &auth)],
    );
    let initialized = initialize(&mut bridge).await;
    assert_eq!(initialized["id"], 1);
    assert_eq!(
        initialized["result"]["serverInfo"]["name"],
        "bridge-fixture-server"
    );
    assert_eq!(
        initialized["result"]["capabilities"]["tools"],
        json!({"listChanged":true})
    );
    // The listen stream over HTTP: one list change for each declared list (M3).
    expect_three_list_changes(&mut bridge).await;
    bridge
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}))
        .await
        .unwrap();
    let list = response(&mut bridge).await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 21);
    assert!(list["result"].get("nextCursor").is_none());
    bridge
        .send(&call(3, "echo", json!({"text":"hello"})))
        .await
        .unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello"}],"isError":false}})
    );
    // A round of input: the bridge asks VS Code and sends the answer in a new POST.
    bridge.send(&call(4, "ask_form", json!({}))).await.unwrap();
    let question = response(&mut bridge).await;
    assert_eq!(question["id"], "b-1");
    assert_eq!(question["method"], "elicitation/create");
    bridge
        .send(&json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"cancel"}}))
        .await
        .unwrap();
    let answered = response(&mut bridge).await;
    assert_eq!(answered["id"], 4);
    assert_eq!(text_of(&answered), "form: cancel");
    let (code, _) = stop(&mut bridge, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    // No secret in any line, at the debug level (M4).
    let stderr = bridge.stderr_lines().join("\n");
    assert!(stderr.contains("the upstream server is ready"), "{stderr}");
    assert!(
        !stderr.contains(TOKEN),
        "the token reached stderr:\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_with_a_static_token_that_the_server_refuses_discover_fails_with_the_http_status_and_no_sign_in_starts()
 {
    let fixture = HttpsFixture::start(
        &["--bearer-env", "FIXTURE_TOKEN"],
        &[("FIXTURE_TOKEN", TOKEN)],
    )
    .await;
    let mut bridge = bridge(
        &fixture,
        &["--header-env", "Authorization=API_AUTH"],
        &[("API_AUTH", "Bearer not-the-token")],
    );
    bridge.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut bridge).await;
    assert_eq!(refused["error"]["code"], -32603);
    assert_eq!(
        refused["error"]["data"],
        json!({"cause":"discover_failed","detail":"Unauthorized (HTTP status 401)"})
    );
    assert!(bridge
        .wait_stderr(
            EXCHANGE,
            |line| line == "mcp-bridge-vscode: bridge: warning: server/discover failed: Unauthorized (HTTP status 401)"
        )
        .await
        .is_some());
    bridge
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
        .await
        .unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
    let stderr = bridge.stderr_lines();
    assert!(
        !stderr.iter().any(|line| line.contains("sign in")),
        "{stderr:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_401_of_a_server_without_protected_resource_metadata_fails_initialize_with_the_sign_in_cause()
 {
    let fixture = HttpsFixture::start(
        &["--bearer-env", "FIXTURE_TOKEN"],
        &[("FIXTURE_TOKEN", TOKEN)],
    )
    .await;
    let mut bridge = bridge(&fixture, &[], &[]);
    bridge.send(&initialize_frame()).await.unwrap();
    let refused = response(&mut bridge).await;
    assert_eq!(
        refused["error"],
        json!({"code":-32603,
            "message":"The sign-in at the authorization server of the upstream server failed. See the Output channel of the server.",
            "data":{"cause":"sign_in_failed","detail":"no protected resource metadata: HTTP status 404"}})
    );
    for expected in [
        "mcp-bridge-vscode: bridge: warning: the sign-in failed: no protected resource metadata: HTTP status 404",
        "mcp-bridge-vscode: bridge: warning: server/discover failed: the sign-in failed: no protected resource metadata: HTTP status 404 (HTTP status 401)",
    ] {
        assert!(
            bridge
                .wait_stderr(EXCHANGE, |line| line == expected)
                .await
                .is_some(),
            "{expected}"
        );
    }
    bridge
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
        .await
        .unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_failed_post_fails_its_request_alone_and_the_next_request_works() {
    // POST 1 is server/discover; without notifications/initialized, POST 2 is the first call.
    let fixture = HttpsFixture::start(&["--fail-status", "2:503"], &[]).await;
    let mut bridge = bridge(&fixture, &[], &[]);
    bridge.send(&initialize_frame()).await.unwrap();
    assert!(response(&mut bridge).await.get("result").is_some());
    bridge
        .send(&call(2, "echo", json!({"text":"one"})))
        .await
        .unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,
            "message":"The connection to the upstream server failed. See the Output channel of the server.",
            "data":{"cause":"transport_failed","detail":"Service Unavailable (HTTP status 503)"}}})
    );
    assert!(bridge
        .wait_stderr(
            EXCHANGE,
            |line| line == "mcp-bridge-vscode: bridge: warning: request 2 (tools/call): the upstream request failed: Service Unavailable (HTTP status 503)"
        )
        .await
        .is_some());
    bridge
        .send(&call(3, "echo", json!({"text":"two"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut bridge).await), "two");
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_response_over_max_response_bytes_fails_alone() {
    let fixture = HttpsFixture::start(&[], &[]).await;
    let mut bridge = bridge(&fixture, &["--max-response-bytes", "4096"], &[]);
    bridge.send(&initialize_frame()).await.unwrap();
    assert!(response(&mut bridge).await.get("result").is_some());
    bridge
        .send(&call(2, "echo", json!({"text":"x".repeat(10_000)})))
        .await
        .unwrap();
    let refused = response(&mut bridge).await;
    assert_eq!(refused["error"]["data"]["cause"], "invalid_response");
    assert_eq!(
        refused["error"]["data"]["detail"],
        "the response is longer than --max-response-bytes (4096 bytes)"
    );
    bridge
        .send(&call(3, "echo", json!({"text":"short"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut bridge).await), "short");
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_certificate_of_an_unknown_ca_is_refused_and_the_bridge_serves_on() {
    for case in ["unknown-ca", "expired", "wrong-host"] {
        let fixture = HttpsFixture::start(&["--tls-case", case], &[]).await;
        let mut bridge = bridge(&fixture, &[], &[]);
        bridge.send(&initialize_frame()).await.unwrap();
        let refused = response(&mut bridge).await;
        assert_eq!(
            refused["error"]["data"]["cause"], "discover_failed",
            "{case}"
        );
        let detail = refused["error"]["data"]["detail"].as_str().unwrap();
        assert!(detail.contains("certificate"), "{case}: {detail}");
        bridge
            .send(&json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
            .await
            .unwrap();
        assert_eq!(response(&mut bridge).await["id"], 2);
        assert_eq!(
            stop(&mut bridge, Duration::from_secs(10)).await.0,
            Some(0),
            "{case}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_a_listen_stream_answered_with_503_comes_back_after_a_wait() {
    // POST 1 is server/discover, POST 2 the first listen stream.
    let fixture = HttpsFixture::start(&["--fail-status", "2:503"], &[]).await;
    let mut bridge = bridge(&fixture, &[], &[]);
    assert!(initialize(&mut bridge).await.get("result").is_some());
    assert!(bridge
        .wait_stderr(EXCHANGE, |line| line
            == "mcp-bridge-vscode: bridge: warning: the listen stream ended with the HTTP status 503. A new stream follows in 500 ms.")
        .await
        .is_some());
    // The new stream is acknowledged: one list change for each declared list.
    expect_three_list_changes(&mut bridge).await;
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}
