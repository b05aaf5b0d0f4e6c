use std::time::Duration;

use serde_json::json;

use crate::common::{Fixture, all_caps, meta};

#[tokio::test]
async fn bad_lines_get_parse_and_invalid_request_errors_without_id_and_the_server_goes_on() {
    let mut fixture = Fixture::start(&[]).await;
    for (line, code) in [
        ("{not json", -32700),
        ("[1,2]", -32600),
        ("42", -32600),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
            -32600,
        ),
    ] {
        fixture.send_line(line).await;
        let frame = fixture.next().await;
        assert_eq!(frame["error"]["code"], code, "{line}");
        assert!(frame.get("id").is_none(), "{line}: {frame}");
    }
    // Blank lines are skipped; a CRLF line end is accepted.
    fixture.send_line("").await;
    let frame = json!({"jsonrpc": "2.0", "id": "crlf", "method": "server/discover", "params": {"_meta": meta(&all_caps())}});
    fixture
        .send_raw_request(
            json!("crlf"),
            "server/discover",
            Some(frame["params"].clone()),
        )
        .await;
    let (_, response) = fixture.until_response(&json!("crlf")).await;
    assert_eq!(response["result"]["resultType"], "complete");
    fixture
        .send_line(&format!(
            "{}\r",
            json!({"jsonrpc": "2.0", "id": "cr", "method": "nope"})
        ))
        .await;
    let frame = fixture.next().await;
    assert_eq!(
        (frame["id"].clone(), frame["error"]["code"].clone()),
        (json!("cr"), json!(-32601))
    );
}

#[tokio::test]
async fn a_message_without_jsonrpc_2_0_or_with_bad_params_is_an_invalid_request_with_its_id() {
    let mut fixture = Fixture::start(&[]).await;
    fixture
        .send_line(r#"{"id":7,"method":"tools/list","params":{}}"#)
        .await;
    let frame = fixture.next().await;
    assert_eq!(
        (frame["id"].clone(), frame["error"]["code"].clone()),
        (json!(7), json!(-32600))
    );
    fixture
        .send_line(r#"{"jsonrpc":"2.0","id":"p","method":"tools/list","params":[1]}"#)
        .await;
    let frame = fixture.next().await;
    assert_eq!(
        (frame["id"].clone(), frame["error"]["code"].clone()),
        (json!("p"), json!(-32600))
    );
}

#[tokio::test]
async fn legacy_methods_are_unknown_and_initialize_names_the_supported_versions() {
    let mut fixture = Fixture::start(&[]).await;
    let id = fixture.new_id();
    fixture
        .send_raw_request(
            id.clone(),
            "initialize",
            Some(json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}})),
        )
        .await;
    let (_, response) = fixture.until_response(&id).await;
    assert_eq!(response["error"]["code"], -32601);
    assert_eq!(
        response["error"]["data"],
        json!({"supported": ["2026-07-28"]})
    );
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2026-07-28"),
        "{response}"
    );
    for method in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "tasks/get",
        "nope",
    ] {
        let error = fixture.error(method, json!({})).await;
        assert_eq!(error["code"], -32601, "{method}");
        assert_eq!(
            error["message"],
            format!("The server does not have the method {method}.")
        );
    }
}

#[tokio::test]
async fn a_duplicate_id_in_flight_is_refused_and_responses_of_the_client_are_ignored() {
    let mut fixture = Fixture::start(&[]).await;
    let slow = fixture
        .send_request(
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 300}}),
        )
        .await;
    fixture
        .send_raw_request(
            slow.clone(),
            "tools/call",
            Some(json!({"_meta": meta(&all_caps()), "name": "echo", "arguments": {"text": "x"}})),
        )
        .await;
    let refused = fixture.next().await;
    assert_eq!(refused["id"], slow);
    assert_eq!(refused["error"]["code"], -32600);
    // A response from the client gets no answer.
    fixture
        .send_line(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#)
        .await;
    let (before, response) = fixture.until_response(&slow).await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(response["result"]["content"][0]["text"], "slept 300 ms");
    fixture.assert_quiet(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn notifications_other_than_cancelled_are_ignored_with_a_warning() {
    let mut fixture = Fixture::start(&[]).await;
    fixture
        .send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    fixture
        .send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"unknown"}}"#)
        .await;
    // Malformed notifications get no error either: a notification never gets a response.
    fixture
        .send_line(r#"{"method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    fixture
        .send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#)
        .await;
    assert_eq!(
        fixture
            .call_text("echo", json!({"text": "still here"}))
            .await,
        "still here"
    );
    fixture.assert_quiet(Duration::from_millis(50)).await;
    fixture.close_stdin().await;
    assert_eq!(fixture.exit_code().await, 0);
    let stderr = fixture.stderr().await;
    assert!(
        stderr.contains("bridge-fixture-server: warning(stdio): ignored the notification notifications/initialized"),
        "{stderr}"
    );
}
