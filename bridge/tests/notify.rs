//! Logging, the listen stream, list changes and subscriptions (R2, O5-O7, M3
//! quirks), with a scripted upstream.

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::time::Duration;

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn all_lists() -> Value {
    json!({"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"logging":{}})
}

fn ack(stream: &Value, notifications: Value) -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
        "params":{"notifications":notifications,"_meta":{SUBSCRIPTION_ID:stream["id"]}}})
}

fn tagged(method: &str, stream: &Value, extra: Value) -> Value {
    let mut params = extra;
    params["_meta"] = json!({SUBSCRIPTION_ID: stream["id"]});
    json!({"jsonrpc":"2.0","method":method,"params":params})
}

/// A bridge whose first listen stream is open and acknowledged.
async fn listening() -> (Bridge, Upstream, Value) {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge.initialize(all_lists()).await;
    let stream = upstream.recv().await;
    upstream
        .send(ack(&stream, stream["params"]["notifications"].clone()))
        .await;
    for _ in 0..3 {
        bridge.recv().await;
    }
    (bridge, upstream, stream)
}

#[tokio::test(flavor = "current_thread")]
async fn r2_o6_initialized_opens_one_stream_and_its_ack_gives_one_change_per_list() {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge.initialize(all_lists()).await;
    let stream = upstream.recv().await;
    assert_eq!(stream["method"], "subscriptions/listen");
    assert_eq!(
        stream["params"]["notifications"],
        json!({"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true})
    );
    assert_eq!(
        stream["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    bridge.expect_silence(Duration::from_millis(20)).await;
    upstream
        .send(ack(&stream, stream["params"]["notifications"].clone()))
        .await;
    for method in [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ] {
        assert_eq!(
            bridge.recv().await,
            json!({"jsonrpc":"2.0","method":method})
        );
    }
    upstream
        .send(tagged(
            "notifications/tools/list_changed",
            &stream,
            json!({}),
        ))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
    );
    // Other notifications of the stream are dropped.
    upstream
        .send(tagged(
            "notifications/tasks/status",
            &stream,
            json!({"taskId":"t"}),
        ))
        .await;
    bridge.expect_silence(Duration::from_millis(20)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn r2_without_declared_lists_no_stream_opens_and_subscribe_is_unknown() {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge.initialize(json!({"tools":{},"resources":{}})).await;
    assert_eq!(upstream.try_recv(Duration::from_millis(20)).await, None);
    let response = bridge.call(json!({"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"file:///x"}})).await;
    assert_eq!(response["error"]["code"], -32601);
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_a_list_change_before_a_result_reaches_vscode_before_it() {
    let (mut bridge, mut upstream, stream) = listening().await;
    bridge.send(json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"toggle","arguments":{"enabled":false}}})).await;
    let call = upstream.recv().await;
    upstream
        .send(tagged(
            "notifications/tools/list_changed",
            &stream,
            json!({}),
        ))
        .await;
    upstream
        .respond(
            &call,
            json!({"content":[{"type":"text","text":"tool toggled: disabled"}]}),
        )
        .await;
    assert_eq!(
        bridge.recv().await["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(bridge.recv().await["id"], 9);
}

#[tokio::test(flavor = "current_thread")]
async fn o7_subscribe_answers_before_the_first_update_and_then_cancels_the_old_stream() {
    let (mut bridge, mut upstream, old) = listening().await;
    bridge.send(json!({"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"file:///fixture/notes.txt"}})).await;
    let new = upstream.recv().await;
    assert_eq!(new["method"], "subscriptions/listen");
    assert_eq!(
        new["params"]["notifications"]["resourceSubscriptions"],
        json!(["file:///fixture/notes.txt"])
    );
    bridge.expect_silence(Duration::from_millis(20)).await;
    upstream
        .send(ack(&new, new["params"]["notifications"].clone()))
        .await;
    upstream
        .send(tagged(
            "notifications/resources/updated",
            &new,
            json!({"uri":"file:///fixture/notes.txt"}),
        ))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":7,"result":{}})
    );
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///fixture/notes.txt"}})
    );
    let cancel = upstream.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], old["id"]);
    // Subscribed already: {} at once. Unsubscribe opens a stream without the URI.
    assert_eq!(bridge.call(json!({"jsonrpc":"2.0","id":8,"method":"resources/subscribe","params":{"uri":"file:///fixture/notes.txt"}})).await["result"], json!({}));
    bridge.send(json!({"jsonrpc":"2.0","id":10,"method":"resources/unsubscribe","params":{"uri":"file:///fixture/notes.txt"}})).await;
    let third = upstream.recv().await;
    assert!(
        third["params"]["notifications"]
            .get("resourceSubscriptions")
            .is_none()
    );
    upstream
        .send(ack(&third, third["params"]["notifications"].clone()))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":10,"result":{}})
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn o7_a_change_without_an_ack_in_120_s_fails_with_timeout_and_keeps_the_old_stream() {
    let (mut bridge, mut upstream, old) = listening().await;
    bridge.send(json!({"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"file:///n"}})).await;
    let new = upstream.recv().await;
    assert_eq!(new["method"], "subscriptions/listen");
    let started = tokio::time::Instant::now();
    let error = bridge.recv_within(Duration::from_secs(121)).await;
    assert_eq!(started.elapsed(), Duration::from_secs(120));
    assert_eq!(error["id"], 7);
    assert_eq!(
        error["error"]["data"],
        json!({"cause":"timeout","detail":"subscriptions/listen: no acknowledgment in 120 s"})
    );
    let cancel = upstream.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], new["id"]);
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: the listen stream for a change of the subscriptions failed: no acknowledgment in 120 s"));
    upstream
        .send(tagged("notifications/tools/list_changed", &old, json!({})))
        .await;
    assert_eq!(
        bridge.recv().await["method"],
        "notifications/tools/list_changed"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o7_a_failed_stream_for_a_change_gives_the_upstream_error_and_keeps_the_old_one() {
    let (mut bridge, mut upstream, old) = listening().await;
    bridge.send(json!({"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"file:///nope"}})).await;
    let new = upstream.recv().await;
    let error = json!({"code":-32602,"message":"Resource not found","data":{"uri":"file:///nope"}});
    upstream.respond_error(&new, error.clone()).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":7,"error":error})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: the listen stream for a change of the subscriptions failed: the error -32602: Resource not found"));
    upstream
        .send(tagged(
            "notifications/prompts/list_changed",
            &old,
            json!({}),
        ))
        .await;
    assert_eq!(
        bridge.recv().await["method"],
        "notifications/prompts/list_changed"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_stream_that_ends_comes_back_after_the_wait_with_one_change_per_list_and_one_update_per_uri()
 {
    let (mut bridge, mut upstream, _) = listening().await;
    bridge.send(json!({"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"file:///n"}})).await;
    let stream = upstream.recv().await;
    upstream.send(ack(&stream, json!({}))).await;
    bridge.recv().await;
    upstream.recv().await; // the cancel of the first stream
    upstream
        .respond(
            &stream,
            json!({"resultType":"complete","_meta":{SUBSCRIPTION_ID:stream["id"]}}),
        )
        .await;
    let started = tokio::time::Instant::now();
    let again = upstream.recv().await;
    assert_eq!(again["method"], "subscriptions/listen");
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(
        again["params"]["notifications"]["resourceSubscriptions"],
        json!(["file:///n"])
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: info: the upstream server ended the listen stream. A new stream follows in 500 ms."));
    upstream.send(ack(&again, json!({}))).await;
    let mut methods = Vec::new();
    for _ in 0..4 {
        methods.push(bridge.recv().await["method"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        methods,
        [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/updated"
        ]
    );
    // A cancellation of the stream by the upstream is an end too.
    upstream.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":again["id"]}})).await;
    assert_eq!(upstream.recv().await["method"], "subscriptions/listen");
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: info: the upstream server ended the listen stream. A new stream follows in 1 s."));
}

#[tokio::test(flavor = "current_thread")]
async fn a_first_stream_that_cannot_start_stops_the_list_changes() {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge.initialize(all_lists()).await;
    let stream = upstream.recv().await;
    upstream
        .respond_error(&stream, json!({"code":-32601,"message":"Method not found"}))
        .await;
    assert_eq!(upstream.try_recv(Duration::from_millis(100)).await, None);
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: cannot start the listen stream: the error -32601: Method not found. The client gets no list changes."));
}

#[tokio::test(flavor = "current_thread")]
async fn o5_log_messages_reach_vscode_at_its_level_or_above_without_meta() {
    let (mut bridge, mut upstream, _) = listening().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log"}}))
        .await;
    let call = upstream.recv().await;
    let message = |level: &str| json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":level,"logger":"fixture","data":format!("a message at the level {level}"),"_meta":{"x/y":1}}});
    // No level set: nothing reaches VS Code.
    upstream.send(message("error")).await;
    upstream.respond(&call, json!({"content":[]})).await;
    assert_eq!(bridge.recv().await["id"], 3);
    bridge.call(json!({"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"warning"}})).await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"log"}}))
        .await;
    let call = upstream.recv().await;
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/logLevel"],
        "warning"
    );
    for level in ["debug", "info", "warning", "error"] {
        upstream.send(message(level)).await;
    }
    upstream.respond(&call, json!({"content":[]})).await;
    for level in ["warning", "error"] {
        assert_eq!(
            bridge.recv().await,
            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":level,"logger":"fixture","data":format!("a message at the level {level}")}})
        );
    }
    assert_eq!(bridge.recv().await["id"], 5);
}

#[tokio::test(flavor = "current_thread")]
async fn the_end_of_stdin_cancels_the_listen_stream() {
    let (mut bridge, mut upstream, stream) = listening().await;
    bridge.close_stdin();
    let cancel = upstream.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], stream["id"]);
    assert_eq!(upstream.try_recv(WAIT).await, Some(None));
}
