//! Tasks on the Local harness: the `task` of tools/call (only when the server
//! declares `tasks.requests.tools.call` and the tool's taskSupport allows it),
//! the following of a task to its result, and the requests of the server that
//! the client runs as tasks. copilot-cli never sends `task`.

use crate::common;

use common::{client, copilot_opening, init_result, script, script_command};
use harness_sim::client::{CallOutcome, EventKind};
use harness_sim::{AnswerPolicy, Profile, SimClient};
use serde_json::{Value, json};

const TASK_CAPABILITIES: &str = r#"{"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}"#;

fn tool(name: &str, task_support: Option<&str>) -> Value {
    let mut tool = json!({"name": name, "description": name,
        "inputSchema": {"type": "object", "properties": {}}});
    if let Some(support) = task_support {
        tool["execution"] = json!({"taskSupport": support});
    }
    tool
}

/// The opening of a Local session (initialize, initialized, tools/list id 2)
/// with `capabilities` and `tools`.
fn local_opening(capabilities: Value, tools: Value) -> Vec<(&'static str, Value)> {
    vec![
        ("c2s", json!({})),
        ("s2c", init_result(1, capabilities)),
        ("c2s", json!({})),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}),
        ),
    ]
}

fn result(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
}

fn task(status: &str, extra: Value) -> Value {
    let mut task = json!({"taskId": "t1", "status": status,
        "createdAt": "2026-11-29T10:00:00.000Z", "ttl": null, "pollInterval": 50});
    for (key, value) in extra.as_object().unwrap() {
        task[key] = value.clone();
    }
    task
}

fn task_created(id: i64, extra: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"task": task("working", extra)}})
}

fn session(profile: Profile, entries: &[(&str, Value)]) -> (tempfile::TempDir, SimClient) {
    let (dir, path) = script(entries);
    let client = client(profile, &script_command(&[path]), AnswerPolicy::new());
    (dir, client)
}

/// The compact JSON text of the frames the client sent from `from` on.
fn sent_texts(client: &SimClient, from: usize) -> Vec<String> {
    client.peer().sent_frames()[from..]
        .iter()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect()
}

fn tools_call(client: &SimClient, id: i64) -> Value {
    client
        .peer()
        .sent_frames()
        .into_iter()
        .find(|f| f["id"] == json!(id) && f["method"] == json!("tools/call"))
        .unwrap_or_else(|| panic!("no tools/call {id}"))
}

fn text(outcome: &CallOutcome) -> &str {
    outcome
        .text()
        .unwrap_or_else(|| panic!("not a result: {outcome:?}"))
}

fn task_events(client: &SimClient) -> Vec<(String, String)> {
    client
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskStatus { status, source, .. } => Some((status.clone(), source.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn local_calls_a_tool_as_a_task_and_follows_it_to_its_result() {
    let capabilities: Value = serde_json::from_str(TASK_CAPABILITIES).unwrap();
    let tools = json!([
        tool("optional", Some("optional")),
        tool("forbidden", Some("forbidden")),
        tool("plain", None),
        tool("required", Some("required"))
    ]);
    let mut entries = local_opening(capabilities, tools);
    entries.extend([
        // tools/call optional (3) runs as a task; the poll (4) finds it working,
        // then a status notification says it completed: tasks/result (5).
        ("c2s", json!({})),
        ("s2c", task_created(3, json!({}))),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 4, "result": task("working", json!({}))}),
        ),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task("completed", json!({}))}),
        ),
        ("c2s", json!({})),
        ("s2c", result(5, "done")),
        ("c2s", json!({})),
        ("s2c", result(6, "forbidden")),
        ("c2s", json!({})),
        ("s2c", result(7, "plain")),
        // A server may answer a task-augmented call at once.
        ("c2s", json!({})),
        ("s2c", result(8, "required")),
    ]);
    let (_dir, mut client) = session(Profile::Local141, &entries);
    client.start().await.unwrap();
    let outcome = client.call_tool("optional", json!({})).await.unwrap();
    assert_eq!(text(&outcome), "done");
    for name in ["forbidden", "plain", "required"] {
        let outcome = client.call_tool(name, json!({})).await.unwrap();
        assert_eq!(text(&outcome), name);
    }

    let keys = |id: i64| -> Vec<String> {
        tools_call(&client, id)["params"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(keys(3), ["name", "arguments", "task", "_meta"]);
    assert_eq!(tools_call(&client, 3)["params"]["task"], json!({}));
    assert_eq!(keys(6), ["name", "arguments", "_meta"]);
    assert_eq!(keys(7), ["name", "arguments", "_meta"]);
    assert_eq!(keys(8), ["name", "arguments", "task", "_meta"]);
    assert_eq!(
        sent_texts(&client, 4)[..2],
        [
            r#"{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"t1"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"t1"}}"#,
        ]
    );
    // The poll waits for pollInterval (50 ms) after the CreateTaskResult.
    let entries = client.peer().entries();
    let at = |id: i64| {
        entries
            .iter()
            .find(|e| e.payload.frame().is_some_and(|f| f["id"] == json!(id)))
            .map(|e| e.t_ms)
            .unwrap()
    };
    let created_at = entries
        .iter()
        .find(|e| {
            e.payload
                .frame()
                .is_some_and(|f| f["id"] == json!(3) && f.get("result").is_some())
        })
        .unwrap()
        .t_ms;
    assert!(at(4) - created_at >= 50.0, "{} ms", at(4) - created_at);
    assert_eq!(
        task_events(&client),
        [
            ("working".to_owned(), "tools/call result".to_owned()),
            ("working".to_owned(), "tasks/get".to_owned()),
            (
                "completed".to_owned(),
                "notifications/tasks/status".to_owned()
            ),
        ]
    );
    client.stop().await;
}

#[tokio::test]
async fn no_task_without_the_server_capability_and_never_from_copilot() {
    let tools = json!([tool("required", Some("required"))]);
    let mut without = local_opening(json!({"tools": {}}), tools.clone());
    without.extend([("c2s", json!({})), ("s2c", result(3, "ok"))]);
    let (_dir, mut client) = session(Profile::Local142, &without);
    client.start().await.unwrap();
    assert_eq!(
        text(&client.call_tool("required", json!({})).await.unwrap()),
        "ok"
    );
    assert!(tools_call(&client, 3)["params"].get("task").is_none());
    client.stop().await;

    let capabilities: Value = serde_json::from_str(TASK_CAPABILITIES).unwrap();
    let mut copilot = copilot_opening(capabilities);
    copilot.extend([
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}),
        ),
        ("c2s", json!({})),
        ("s2c", result(3, "ok")),
    ]);
    let (_dir, mut client) = session(Profile::Copilot095, &copilot);
    client.options_mut().tools_list_delay = tokio::time::Duration::ZERO;
    client.start().await.unwrap();
    assert_eq!(
        text(&client.call_tool("required", json!({})).await.unwrap()),
        "ok"
    );
    assert!(tools_call(&client, 3)["params"].get("task").is_none());
    client.stop().await;
}

#[tokio::test]
async fn a_status_that_comes_during_a_poll_cancels_the_poll() {
    let capabilities: Value = serde_json::from_str(TASK_CAPABILITIES).unwrap();
    let mut entries = local_opening(capabilities, json!([tool("job", Some("required"))]));
    entries.extend([
        ("c2s", json!({})),
        ("s2c", task_created(3, json!({}))),
        // The poll 4 is not answered; a status comes instead.
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task("working", json!({"statusMessage": "half-way"}))}),
        ),
        // notifications/cancelled of 4, then a new poll 5 after pollInterval.
        ("c2s", json!({})),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 5, "result": task("completed", json!({}))}),
        ),
        ("c2s", json!({})),
        ("s2c", result(6, "finished")),
    ]);
    let (_dir, mut client) = session(Profile::Local141, &entries);
    client.start().await.unwrap();
    let outcome = client.call_tool("job", json!({})).await.unwrap();
    assert_eq!(text(&outcome), "finished");
    assert_eq!(
        sent_texts(&client, 4),
        [
            r#"{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"t1"}}"#,
            r#"{"method":"notifications/cancelled","params":{"requestId":4},"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"t1"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":"t1"}}"#,
        ]
    );
    client.stop().await;
}

#[tokio::test]
async fn a_failed_task_and_a_task_past_its_ttl_end_the_call() {
    let capabilities: Value = serde_json::from_str(TASK_CAPABILITIES).unwrap();
    let mut entries = local_opening(capabilities, json!([tool("job", Some("optional"))]));
    entries.extend([
        ("c2s", json!({})),
        ("s2c", task_created(3, json!({}))),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 4, "result": task("failed", json!({"statusMessage": "boom"}))}),
        ),
        // A ttl of 100 ms with a poll only after 10 s: it times out unpolled.
        ("c2s", json!({})),
        (
            "s2c",
            task_created(5, json!({"ttl": 100, "pollInterval": 10000})),
        ),
    ]);
    let (_dir, mut client) = session(Profile::Local141, &entries);
    client.start().await.unwrap();
    let failed = client.call_tool("job", json!({})).await.unwrap();
    assert_eq!(
        failed,
        CallOutcome::Failed {
            message: "Task t1 failed: boom".into()
        }
    );
    let timed_out = client.call_tool("job", json!({})).await.unwrap();
    assert_eq!(
        timed_out,
        CallOutcome::Failed {
            message: "Task t1 was cancelled: Task timed out.".into()
        }
    );
    let methods: Vec<Value> = client
        .peer()
        .sent_frames()
        .iter()
        .map(|f| f["method"].clone())
        .collect();
    assert_eq!(
        methods[3..],
        [json!("tools/call"), json!("tasks/get"), json!("tools/call")]
    );
    assert_eq!(
        task_events(&client).last().unwrap(),
        &("cancelled".to_owned(), "ttl".to_owned())
    );
    client.stop().await;
}

#[tokio::test]
async fn local_runs_a_sampling_request_with_a_task_as_a_task() {
    let mut entries = local_opening(json!({"tools": {}}), json!([tool("sample", None)]));
    entries.extend([
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
                "maxTokens": 10, "task": {"ttl": 60000}}}),
        ),
        // The CreateTaskResult, then notifications/tasks/status (completed).
        ("c2s", json!({})),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": "l-1", "method": "tasks/list"}),
        ),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": "g-1", "method": "tasks/get", "params": {"taskId": "nope"}}),
        ),
        ("c2s", json!({})),
        ("s2c", result(3, "sampled")),
    ]);
    let (dir, path) = script(&entries);
    let policy = AnswerPolicy::new().sampling_text("Hello!");
    let mut client = client(Profile::Local141, &script_command(&[path]), policy);
    client.start().await.unwrap();
    assert_eq!(
        text(&client.call_tool("sample", json!({})).await.unwrap()),
        "sampled"
    );
    let sent = client.peer().sent_frames();
    let (created, status, list, get) = (&sent[4], &sent[5], &sent[6], &sent[7]);
    assert_eq!(created["id"], json!("s-1"));
    let task = &created["result"]["task"];
    let task_id = task["taskId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(task_id).is_ok(), "{task_id}");
    assert_eq!(task["status"], json!("working"));
    assert_eq!(task["ttl"], json!(60000));
    assert_eq!(task["pollInterval"], json!(1000));
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        created["result"]["_meta"],
        json!({"io.modelcontextprotocol/related-task": {"taskId": task_id}})
    );
    let keys: Vec<&String> = status.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["jsonrpc", "method", "params"]);
    assert_eq!(status["method"], json!("notifications/tasks/status"));
    assert_eq!(status["params"]["taskId"], json!(task_id));
    assert_eq!(status["params"]["status"], json!("completed"));
    assert_eq!(list["id"], json!("l-1"));
    assert_eq!(list["result"]["tasks"], json!([status["params"]]));
    assert_eq!(
        get,
        &json!({"jsonrpc": "2.0", "id": "g-1", "error": {"code": -32602, "message": "Task not found: nope"}})
    );
    client.stop().await;
    drop(dir);
}
