//! Behaviour of the simulators against scripted misbehaving servers: the
//! nextCursor-null loop (R4), the schema checks (R6), the server-cancel
//! quirk, and the CLI's report.

use crate::common;

use common::{client, copilot_opening, harness_sim, init_result, script, script_command};
use harness_sim::client::{CallOutcome, EventKind, ListFailure};
use harness_sim::{AnswerPolicy, Profile};
use serde_json::{Value, json};
use tokio::time::Duration;

fn tools_page(id: i64, tools: Value, next: Option<Value>) -> Value {
    let mut result = json!({"tools": tools});
    if let Some(next) = next {
        result["nextCursor"] = next;
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn add_tool() -> Value {
    json!({"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}})
}

#[tokio::test]
async fn local_detects_the_next_cursor_null_loop() {
    let bound = 4;
    let mut entries = vec![
        ("c2s", json!({})),
        ("s2c", init_result(1, json!({"tools": {}}))),
        ("c2s", json!({})),
    ];
    for id in 2..2 + bound {
        entries.push(("c2s", json!({})));
        entries.push((
            "s2c",
            tools_page(id, json!([add_tool()]), Some(Value::Null)),
        ));
    }
    let (_dir, path) = script(&entries);
    let mut client = client(
        Profile::Local141,
        &script_command(&[path]),
        AnswerPolicy::new(),
    );
    client.options_mut().cursor_loop_bound = bound as usize;
    client.start().await.unwrap();
    match client.last_tools_listing() {
        Some(Err(ListFailure::CursorLoop {
            cursor, repeats, ..
        })) => {
            assert_eq!(cursor, "null");
            assert_eq!(*repeats, bound as usize);
        }
        other => panic!("no loop detected: {other:?}"),
    }
    let sent = client.peer().sent_frames();
    assert_eq!(sent[2]["params"], json!({}));
    for page in &sent[3..] {
        assert_eq!(page["method"], json!("tools/list"));
        assert_eq!(
            page["params"],
            json!({"cursor": null}),
            "VS Code sends cursor null"
        );
    }
    assert_eq!(sent.len(), 2 + bound as usize);
    assert!(client.events().iter().any(|e| matches!(&e.kind, EventKind::ListFailed { message, .. } if message.contains("never ends"))));
    client.stop().await;
}

#[tokio::test]
async fn copilot_ends_the_list_at_a_null_next_cursor() {
    let mut entries = copilot_opening(json!({"tools": {}}));
    entries.extend([
        ("c2s", json!({})),
        ("s2c", tools_page(2, json!([add_tool()]), Some(Value::Null))),
    ]);
    let (_dir, path) = script(&entries);
    let mut client = client(
        Profile::Copilot092,
        &script_command(&[path]),
        AnswerPolicy::new(),
    );
    client.start().await.unwrap();
    assert_eq!(client.tool_names(), vec!["add"]);
    assert_eq!(client.peer().sent_frames().len(), 4);
    client.stop().await;
}

#[tokio::test]
async fn local_omits_invalid_schemas_and_an_array_without_items_stops_all_tools() {
    let bad = json!({"name": "bad", "description": "x", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}}});
    let bare = json!({"name": "bare_array", "description": "x", "inputSchema": {"type": "object", "properties": {"values": {"type": "array"}}}});
    let (_dir, path) = script(&[
        ("c2s", json!({})),
        ("s2c", init_result(1, json!({"tools": {}}))),
        ("c2s", json!({})),
        ("c2s", json!({})),
        ("s2c", tools_page(2, json!([add_tool(), bad, bare]), None)),
    ]);
    let mut client = client(
        Profile::Local141,
        &script_command(&[path]),
        AnswerPolicy::new(),
    );
    client.start().await.unwrap();
    assert_eq!(client.tool_names(), vec!["add", "bare_array"]);
    assert!(client.events().iter().any(|e| e.kind
        == EventKind::SchemasOmitted {
            tools: vec!["bad".into()],
            log_line: "1 tools have invalid JSON schemas and will be omitted".into(),
        }));
    let outcome = client.call_tool("add", json!({"a": 1})).await.unwrap();
    match outcome {
        CallOutcome::Blocked { message } => {
            assert!(
                message.contains("bare_array") && message.contains("/properties/values"),
                "{message}"
            )
        }
        other => panic!("not blocked: {other:?}"),
    }
    // Nothing was sent for the blocked call.
    assert_eq!(client.peer().sent_frames().len(), 3);
    client.stop().await;
}

#[tokio::test]
async fn local_drops_its_own_request_on_a_server_cancel_with_the_same_id() {
    let (_dir, path) = script(&[
        ("c2s", json!({})),
        ("s2c", init_result(1, json!({"tools": {}}))),
        ("c2s", json!({})),
        ("c2s", json!({})),
        ("s2c", tools_page(2, json!([add_tool()]), None)),
        ("c2s", json!({})),
        // A server request, then a cancel of it (ignored by VS Code) and a
        // cancel that names VS Code's own pending call id 3 (the quirk).
        ("s2c", json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "b-9"}}),
        ),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
        ),
    ]);
    let mut client = client(
        Profile::Local141,
        &script_command(&[path]),
        AnswerPolicy::new(),
    );
    client.start().await.unwrap();
    let outcome = client.call_tool("add", json!({"a": 1})).await.unwrap();
    assert_eq!(outcome, CallOutcome::Dropped);
    let sent = client.peer().sent_frames();
    assert_eq!(
        sent[4],
        json!({"jsonrpc": "2.0", "id": 3, "result": {}}),
        "the ping is answered with its id"
    );
    assert!(client.events().iter().any(|e| e.kind
        == EventKind::CancelIgnored {
            request_id: json!("b-9")
        }));
    assert!(
        client
            .events()
            .iter()
            .any(|e| e.kind == EventKind::OwnRequestDropped { id: 3 })
    );
    client.stop().await;
}

#[tokio::test]
async fn the_cli_prints_a_report_and_records_the_session() {
    let files = [
        common::frame_file("local-1.141-start.jsonl"),
        common::frame_file("local-tools-call.jsonl"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("session.jsonl");
    let mut command = tokio::process::Command::new(harness_sim());
    command
        .args([
            "local-1.141",
            "--call",
            "add",
            r#"{"a":2,"b":3}"#,
            "--record",
        ])
        .arg(&record)
        .arg("--")
        .args(script_command(&files));
    let output = command.output().await.unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("tools (3): add, ask_form, echo"), "{text}");
    assert!(text.contains("add {\"a\":2,\"b\":3} -> 5"), "{text}");
    assert!(
        text.contains("stop: the server exited after the end of stdin"),
        "{text}"
    );
    assert_eq!(output.status.code(), Some(0), "{text}");
    let transcript = harness_sim::record::Transcript::read(&record).unwrap();
    let header = transcript.header.clone().unwrap();
    assert_eq!(header.source, "harness-sim local-1.141");
    assert_eq!(header.transcript, 1);
    assert!(header.recorded.ends_with('Z'));
    assert_eq!(transcript.frames(harness_sim::record::Dir::C2s).len(), 7);

    let json_out = tokio::process::Command::new(harness_sim())
        .args(["copilot-1.0.92", "--json", "--"])
        .args(script_command(&[common::frame_file(
            "copilot-1.0.92-start.jsonl",
        )]))
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    assert_eq!(report["tools"], json!(["add", "echo"]));
    assert_eq!(report["negotiated"]["discover"], json!("error -32601"));
    assert_eq!(report["stop"]["sequence"], json!("copilot"));

    let bad = tokio::process::Command::new(harness_sim())
        .args(["local-9", "--", "true"])
        .output()
        .await
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown profile"));
}

#[tokio::test]
async fn answers_echo_string_and_integer_ids() {
    let (_dir, path) = script(&[
        ("c2s", json!({})),
        ("s2c", init_result(1, json!({}))),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": "b-1", "method": "elicitation/create", "params": {"mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}),
        ),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 42, "method": "roots/list"}),
        ),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": "b-3", "method": "tasks/list"}),
        ),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": "b-4", "method": "resources/list"}),
        ),
        ("c2s", json!({})),
    ]);
    let policy = AnswerPolicy::new()
        .accept_form(json!({"name": "Ada"}))
        .root("ws", "file:///ws");
    let mut client = client(Profile::Local142, &script_command(&[path]), policy);
    client.start().await.unwrap();
    client
        .settle(Duration::from_millis(200), Duration::from_secs(3))
        .await
        .unwrap();
    let sent = client.peer().sent_frames();
    assert_eq!(
        sent[2],
        json!({"jsonrpc": "2.0", "id": "b-1", "result": {"action": "accept", "content": {"name": "Ada"}}})
    );
    assert_eq!(
        sent[3],
        json!({"jsonrpc": "2.0", "id": 42, "result": {"roots": [{"name": "ws", "uri": "file:///ws"}]}})
    );
    // tasks/* go to VS Code's task manager, which runs no task yet.
    assert_eq!(
        sent[4],
        json!({"jsonrpc": "2.0", "id": "b-3", "result": {"tasks": []}})
    );
    assert_eq!(
        sent[5],
        json!({"jsonrpc": "2.0", "id": "b-4", "error": {"code": -32601, "message": "Method not found: resources/list"}})
    );
    client.stop().await;
}
