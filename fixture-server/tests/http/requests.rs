//! Requests over HTTPS: the same answers as on stdio, as JSON or as an SSE stream.

use hyper::StatusCode;
use serde_json::{Value, json};

use super::client::{Event, Events, Server, body_json, header, request};

fn server_info() -> Value {
    json!({"name": "bridge-fixture-server", "version": env!("CARGO_PKG_VERSION")})
}

#[tokio::test]
async fn server_discover_answers_json_with_the_server_info() {
    let server = Server::start(&["--https"]).await;
    assert!(server.url.starts_with("https://127.0.0.1:"));
    assert!(server.url.ends_with("/mcp"));
    let response = server
        .post(&request(json!(1), "server/discover", json!({}), json!({})))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "content-type"), Some("application/json"));
    assert_eq!(header(&response, "mcp-session-id"), None);
    let frame = body_json(response).await;
    assert_eq!(frame["jsonrpc"], "2.0");
    assert_eq!(frame["id"], 1);
    let result = &frame["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info()
    );
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
}

#[tokio::test]
async fn tools_list_and_tools_call_answer_as_on_stdio() {
    let server = Server::start(&["--https"]).await;
    let frame = server
        .call(&request(json!("a"), "tools/list", json!({}), json!({})))
        .await;
    let names: Vec<&str> = frame["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 21);
    assert_eq!(names[..4], ["echo", "add", "slow", "progress"]);
    let frame = server
        .call(&request(
            json!(2),
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
            json!({}),
        ))
        .await;
    assert_eq!(
        frame,
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "42"}],
            "isError": false,
            "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
        }})
    );
}

#[tokio::test]
async fn a_tool_that_needs_input_answers_input_required_then_the_retry_completes() {
    let server = Server::start(&["--https"]).await;
    let first = server
        .call(&request(
            json!(1),
            "tools/call",
            json!({"name": "ask_form", "arguments": {}}),
            json!({}),
        ))
        .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["profile"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().unwrap();
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let retry = server
        .call(&request(
            json!(2),
            "tools/call",
            json!({"name": "ask_form", "arguments": {}, "inputResponses": {"profile": answer}, "requestState": state}),
            json!({}),
        ))
        .await;
    assert_eq!(
        retry["result"]["content"],
        json!([{"type": "text", "text": r#"form: accept {"name":"Ada"}"#}])
    );
}

#[tokio::test]
async fn progress_notifications_come_on_the_request_stream_before_the_response() {
    let server = Server::start(&["--https"]).await;
    let frame = request(
        json!(7),
        "tools/call",
        json!({"name": "progress", "arguments": {"count": 2, "ms": 1}}),
        json!({"progressToken": "p"}),
    );
    let response = server.post(&frame).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "x-accel-buffering"), Some("no"));
    let mut events = Events::of(response);
    for step in 1..=2 {
        assert_eq!(
            events.next_data().await.unwrap(),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": "p", "progress": step, "total": 2,
                "message": format!("Step {step} of 2"),
            }})
        );
    }
    let response = events.next_data().await.unwrap();
    assert_eq!(response["id"], 7);
    assert_eq!(
        response["result"]["content"][0]["text"],
        "sent 2 progress notifications"
    );
    assert_eq!(events.next().await, None, "the response ends the stream");
}

#[tokio::test]
async fn log_messages_come_on_the_request_stream_at_the_asked_level() {
    let server = Server::start(&["--https"]).await;
    let frame = request(
        json!(1),
        "tools/call",
        json!({"name": "log", "arguments": {}}),
        json!({"io.modelcontextprotocol/logLevel": "warning"}),
    );
    let mut events = Events::of(server.post(&frame).await);
    let mut levels = Vec::new();
    while let Some(event) = events.next().await {
        let Event::Data(frame) = event else { continue };
        match frame["method"].as_str() {
            Some("notifications/message") => {
                levels.push(frame["params"]["level"].as_str().unwrap().to_owned())
            }
            _ => assert_eq!(frame["id"], 1),
        }
    }
    assert_eq!(levels, ["warning", "error"]);
}

#[tokio::test]
async fn plain_http_serves_the_same_endpoint_without_tls() {
    let server = Server::start(&["--http", "--profile", "conformance"]).await;
    assert!(server.url.starts_with("http://127.0.0.1:"));
    assert_eq!(server.ca_file, None);
    let frame = server
        .call(&request(json!(1), "tools/list", json!({}), json!({})))
        .await;
    let tools = frame["result"]["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|tool| tool["name"] == "test_simple_text"),
        "the conformance profile: {tools:?}"
    );
}
