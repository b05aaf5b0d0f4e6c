//! Lines of VS Code that are not requests the bridge accepts: each gets the error of
//! the contract, and the bridge keeps serving.

use crate::common;

use common::*;
use mcp_bridge_vscode::config::Limits;
use serde_json::json;

fn with_line_limit(bytes: usize) -> Bridge {
    let mut config = config(Limits::default());
    config.max_line_bytes = bytes;
    Bridge::start_with(config)
}

async fn still_serves(bridge: &mut Bridge) {
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":"next","method":"ping"}))
            .await["id"],
        "next"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_line_that_is_not_json_gets_parse_error_with_a_null_id() {
    let mut bridge = Bridge::start();
    for line in ["{\"jsonrpc\":", "hello", "{\"a\":\"\u{1}\"}"] {
        bridge.send_line(line).await;
        let response = bridge.recv().await;
        assert_eq!(
            response,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"The request is not valid JSON.","data":{"cause":"parse_error"}}})
        );
    }
    still_serves(&mut bridge).await;
}

#[tokio::test(flavor = "current_thread")]
async fn invalid_utf8_is_a_parse_error() {
    let mut bridge = Bridge::start();
    bridge
        .send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}")
        .await;
    let response = bridge.recv().await;
    assert_eq!(response["id"], json!(null));
    assert_eq!(response["error"]["code"], -32700);
    still_serves(&mut bridge).await;
}

#[tokio::test(flavor = "current_thread")]
async fn frames_that_are_not_json_rpc_requests_get_invalid_request() {
    let mut bridge = Bridge::start();
    for (line, id) in [
        ("[1,2]", json!(null)),
        ("7", json!(null)),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            json!(null),
        ),
        (r#"{"jsonrpc":"2.0","id":4,"method":7}"#, json!(4)),
        (r#"{"id":5,"method":"ping"}"#, json!(5)),
    ] {
        bridge.send_line(line).await;
        let response = bridge.recv().await;
        assert_eq!(response["id"], id, "{line}");
        assert_eq!(response["error"]["code"], -32600, "{line}");
        assert_eq!(
            response["error"]["data"]["cause"], "invalid_request_shape",
            "{line}"
        );
    }
    bridge
        .send_line(r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":[1]}"#)
        .await;
    assert_eq!(
        bridge.recv().await["error"]["data"]["cause"],
        "invalid_params"
    );
    still_serves(&mut bridge).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_line_over_the_limit_gets_line_too_long_with_its_id_at_either_end() {
    let mut bridge = with_line_limit(100);
    let padding = "x".repeat(200);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"t":"{padding}"}}}}"#
    );
    bridge.send_line(&line).await;
    let response = bridge.recv().await;
    assert_eq!(response["id"], 41);
    assert_eq!(
        response["error"],
        json!({"code":-32600,"message":"The request is longer than the line limit of the bridge.",
            "data":{"cause":"line_too_long","detail":format!("the line has {} bytes, and the limit is 100", line.len())}})
    );
    bridge
        .send_line(&format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"t":"{padding}"}},"id":"last"}}"#
        ))
        .await;
    assert_eq!(bridge.recv().await["id"], "last");
    still_serves(&mut bridge).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_frame_nested_too_deep_gets_too_deep() {
    let mut bridge = Bridge::start();
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{{"a":{}1{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    bridge.send_line(&deep).await;
    let response = bridge.recv().await;
    assert_eq!(response["id"], 3);
    assert_eq!(response["error"]["data"]["cause"], "too_deep");
    still_serves(&mut bridge).await;
}

#[tokio::test(flavor = "current_thread")]
async fn responses_and_notifications_nobody_asked_for_are_dropped() {
    let mut bridge = Bridge::start();
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-1","result":{}}))
        .await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"x"}}))
        .await;
    bridge
        .send(json!({"jsonrpc":"2.0","method":"notifications/unknown"}))
        .await;
    for id in 0..100 {
        bridge.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}})).await;
    }
    still_serves(&mut bridge).await;
}
