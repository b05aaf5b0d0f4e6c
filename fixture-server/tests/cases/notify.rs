//! Listen streams: acknowledgment, tagging, list changes and resource updates before the
//! result that caused them.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, text_of};

const SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// Opens a listen stream and checks its acknowledgment; returns the stream id.
async fn listen(fixture: &mut Fixture, filter: Value, acknowledged: Value) -> Value {
    let id = fixture
        .send_request("subscriptions/listen", json!({"notifications": filter}))
        .await;
    let ack = fixture.next().await;
    assert_eq!(
        ack,
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUBSCRIPTION: id}, "notifications": acknowledged},
        })
    );
    id
}

fn list_changed(kind: &str, id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "method": format!("notifications/{kind}/list_changed"), "params": {"_meta": {SUBSCRIPTION: id}}})
}

#[tokio::test]
async fn toggle_1000_times_writes_each_list_change_before_its_result() {
    let mut fixture = Fixture::start(&[]).await;
    let stream = listen(
        &mut fixture,
        json!({"toolsListChanged": true}),
        json!({"toolsListChanged": true}),
    )
    .await;
    for round in 0..1000 {
        let enabled = round % 2 == 1;
        let id = fixture
            .send_request(
                "tools/call",
                json!({"name": "toggle", "arguments": {"enabled": enabled}}),
            )
            .await;
        let (before, response) = fixture.until_response(&id).await;
        assert_eq!(before, [list_changed("tools", &stream)], "round {round}");
        let state = if enabled { "enabled" } else { "disabled" };
        assert_eq!(
            response["result"]["content"][0]["text"],
            format!("tool toggled: {state}")
        );
    }
    // The last toggle enabled the tool again; a toggle without change writes nothing.
    let (before, response) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "toggle", "arguments": {"enabled": true}}),
            json!({}),
        )
        .await;
    assert!(before.is_empty());
    assert_eq!(
        response["result"]["content"][0]["text"],
        "tool toggled: enabled (no change)"
    );
}

#[tokio::test]
async fn a_disabled_tool_or_prompt_leaves_its_list_and_cannot_be_used() {
    let mut fixture = Fixture::start(&[]).await;
    assert_eq!(
        fixture.call_text("toggle", json!({"enabled": false})).await,
        "tool toggled: disabled"
    );
    let tools = fixture.result("tools/list", json!({})).await;
    assert_eq!(tools["tools"].as_array().unwrap().len(), 20);
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["name"] != "toggled")
    );
    assert_eq!(
        fixture
            .error("tools/call", json!({"name": "toggled"}))
            .await["code"],
        -32602
    );
    let text = fixture
        .call_text("toggle", json!({"enabled": false, "target": "prompt"}))
        .await;
    assert_eq!(text, "prompt toggled: disabled");
    let prompts = fixture.result("prompts/list", json!({})).await;
    assert_eq!(prompts["prompts"].as_array().unwrap().len(), 2);
    assert_eq!(
        fixture
            .error("prompts/get", json!({"name": "toggled"}))
            .await["code"],
        -32602
    );
    fixture.call_text("toggle", json!({"enabled": true})).await;
    assert_eq!(fixture.call_text("toggled", json!({})).await, "toggled");
}

#[tokio::test]
async fn each_stream_gets_only_the_kinds_it_asked_for_tagged_with_its_own_id() {
    let mut fixture = Fixture::start(&[]).await;
    let tools = listen(
        &mut fixture,
        json!({"toolsListChanged": true, "promptsListChanged": false}),
        json!({"toolsListChanged": true}),
    )
    .await;
    let prompts = listen(
        &mut fixture,
        json!({"promptsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": []}),
        json!({"promptsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": []}),
    )
    .await;
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "toggle", "arguments": {"enabled": false, "target": "prompt"}}),
            json!({}),
        )
        .await;
    assert_eq!(before, [list_changed("prompts", &prompts)]);
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "toggle", "arguments": {"enabled": false}}),
            json!({}),
        )
        .await;
    assert_eq!(before, [list_changed("tools", &tools)]);
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "touch", "arguments": {"uri": "file:///fixture/notes.txt"}}),
            json!({}),
        )
        .await;
    assert!(before.is_empty(), "{before:?}");
    fixture.assert_quiet(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn touch_writes_resources_updated_before_its_result_to_subscribed_streams_only() {
    let mut fixture = Fixture::start(&[]).await;
    let notes = "file:///fixture/notes.txt";
    let watcher = listen(
        &mut fixture,
        json!({"resourceSubscriptions": [notes, "file:///dir"]}),
        json!({"resourceSubscriptions": [notes, "file:///dir"]}),
    )
    .await;
    let _other = listen(
        &mut fixture,
        json!({"toolsListChanged": true}),
        json!({"toolsListChanged": true}),
    )
    .await;
    for uri in [notes, "file:///dir/inner.txt"] {
        let id = fixture
            .send_request(
                "tools/call",
                json!({"name": "touch", "arguments": {"uri": uri}}),
            )
            .await;
        let (before, response) = fixture.until_response(&id).await;
        assert_eq!(
            before,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"_meta": {SUBSCRIPTION: watcher}, "uri": uri}})
            ]
        );
        assert_eq!(
            text_of(&crate::common::result_of(response)),
            format!("touched {uri}")
        );
    }
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "touch", "arguments": {"uri": "file:///directory"}}),
            json!({}),
        )
        .await;
    assert!(before.is_empty(), "{before:?}");
}

#[tokio::test]
async fn a_cancelled_listen_stream_ends_silently() {
    let mut fixture = Fixture::start(&[]).await;
    let stream = listen(
        &mut fixture,
        json!({"toolsListChanged": true}),
        json!({"toolsListChanged": true}),
    )
    .await;
    fixture.cancel(&stream).await;
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "toggle", "arguments": {"enabled": false}}),
            json!({}),
        )
        .await;
    assert!(before.is_empty(), "{before:?}");
    fixture.assert_quiet(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn a_listen_request_needs_its_filter_and_a_unique_id() {
    let mut fixture = Fixture::start(&[]).await;
    for params in [
        json!({}),
        json!({"notifications": true}),
        json!({"notifications": {"toolsListChanged": 1}}),
        json!({"notifications": {"resourceSubscriptions": [1]}}),
    ] {
        let error = fixture.error("subscriptions/listen", params.clone()).await;
        assert_eq!(error["code"], -32602, "{params}");
    }
    let stream = listen(&mut fixture, json!({}), json!({})).await;
    fixture
        .send_raw_request(
            stream.clone(),
            "subscriptions/listen",
            Some(json!({"_meta": crate::common::meta(&json!({})), "notifications": {}})),
        )
        .await;
    let refused = fixture.next().await;
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (stream, json!(-32600))
    );
}

#[tokio::test]
async fn list_change_in_response_puts_the_change_and_the_update_before_the_result_only() {
    let mut fixture = Fixture::start(&["--list-change-in-response"]).await;
    listen(
        &mut fixture,
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["file:///fixture/a.txt"]}),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["file:///fixture/a.txt"]}),
    )
    .await;
    let untagged = |method: &str| json!({"jsonrpc": "2.0", "method": method});
    for (target, method) in [
        ("tool", "notifications/tools/list_changed"),
        ("prompt", "notifications/prompts/list_changed"),
    ] {
        let (before, response) = fixture
            .exchange_with(
                "tools/call",
                json!({"name": "toggle", "arguments": {"enabled": false, "target": target}}),
                json!({}),
            )
            .await;
        assert_eq!(before, [untagged(method)], "{target}");
        assert_eq!(response["result"]["isError"], false);
    }
    for uri in ["file:///fixture/a.txt", "file:///elsewhere"] {
        let (before, _) = fixture
            .exchange_with(
                "tools/call",
                json!({"name": "touch", "arguments": {"uri": uri}}),
                json!({}),
            )
            .await;
        assert_eq!(
            before,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
            ]
        );
    }
    // The listen stream got none of them.
    fixture.close_stdin().await;
    let rest = fixture.rest().await;
    assert!(
        rest.iter().all(|frame| frame
            .get("method")
            .is_none_or(|m| m == "notifications/cancelled")),
        "{rest:?}"
    );
}
