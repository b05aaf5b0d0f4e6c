//! Builders of the frames the two clients send, in their key order.
//!
//! Local (VS Code TypeScript): requests `{jsonrpc, id, method, params}` and
//! notifications `{method, params?, jsonrpc}` (built as `{...n, jsonrpc}`).
//! Copilot (rmcp in copilot-cli): `{jsonrpc, id, method, params}` and
//! `{jsonrpc, method, params?}`; its request params go through a sorted map,
//! so their keys are alphabetical (observed: `_meta`, `arguments`, `name`).

use serde_json::{Map, Value, json};

use crate::profile::{Harness, MODERN_VERSION, Profile};

/// A request `{jsonrpc, id, method, params}`.
pub(crate) fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification in the key order of `harness`.
pub fn notification(harness: Harness, method: &str, params: Option<Value>) -> Value {
    let mut frame = Map::new();
    match harness {
        Harness::Local => {
            frame.insert("method".into(), json!(method));
            if let Some(params) = params {
                frame.insert("params".into(), params);
            }
            frame.insert("jsonrpc".into(), json!("2.0"));
        }
        Harness::Copilot => {
            frame.insert("jsonrpc".into(), json!("2.0"));
            frame.insert("method".into(), json!(method));
            if let Some(params) = params {
                frame.insert("params".into(), params);
            }
        }
    }
    Value::Object(frame)
}

/// A result response `{jsonrpc, id, result}` echoing the server's id unchanged.
pub(crate) fn result_response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response `{jsonrpc, id, error: {code, message}}`.
pub(crate) fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// `value` with the keys of every object in alphabetical order, as rmcp's
/// sorted maps write them.
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The `_meta` of revision 2026-07-28 on a request of copilot-cli's modern path
/// (inferred: the discover keys plus the progress token counter, sorted as
/// rmcp's maps sort them), without the progress token: built once per session.
pub fn modern_meta_base(profile: Profile) -> Value {
    sorted(json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": profile.client_info(),
        "io.modelcontextprotocol/clientCapabilities": profile.capabilities()
    }))
}

/// `base` (from [`modern_meta_base`]) with the progress token, which sorts last.
pub(crate) fn with_progress_token(base: &Value, progress_token: i64) -> Value {
    let mut meta = base.clone();
    if let Some(map) = meta.as_object_mut() {
        map.insert("progressToken".into(), json!(progress_token));
    }
    meta
}

/// `notifications/tasks/status` of the Local harness. VS Code sends it with
/// `send({jsonrpc, method, params})`, not as its other notifications
/// (`{...n, jsonrpc}`), so `jsonrpc` comes first.
pub(crate) fn task_status_notification(task: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task})
}

/// How VS Code shows an error response: `MPC <code>: <message>` (the typo is
/// VS Code's, in `MpcResponseError`).
pub fn mpc_error(code: i64, message: &str) -> String {
    format!("MPC {code}: {message}")
}

/// The identifiers the Local harness puts in the `_meta` of tools/call: one
/// chat session and one chat request per simulated session.
#[derive(Clone, Debug)]
pub(crate) struct LocalMeta {
    pub(crate) conversation_id: String,
    pub(crate) request_id: String,
    pub(crate) traceparent: String,
    pub(crate) tracestate: String,
}

impl LocalMeta {
    pub(crate) fn new() -> Self {
        let trace = uuid::Uuid::new_v4().simple().to_string();
        let span = uuid::Uuid::new_v4().simple().to_string();
        Self {
            conversation_id: uuid::Uuid::new_v4().to_string(),
            request_id: format!("request_{}", uuid::Uuid::new_v4()),
            traceparent: format!("00-{trace}-{}-01", &span[..16]),
            tracestate: "vscode=1".into(),
        }
    }

    /// `params` of tools/call: `{name, arguments, task, _meta}` with a fresh
    /// UUID progress token (chat invocations pass a progress sink). `task: {}`
    /// only when `as_task` (`shouldUseTask ? {} : undefined`).
    pub(crate) fn call_params(&self, name: &str, arguments: Value, as_task: bool) -> Value {
        let mut params = json!({"name": name, "arguments": arguments});
        if as_task {
            params["task"] = json!({});
        }
        params["_meta"] = json!({
            "progressToken": uuid::Uuid::new_v4().to_string(),
            "vscode.conversationId": self.conversation_id,
            "vscode.requestId": self.request_id,
            "traceparent": self.traceparent,
            "tracestate": self.tracestate
        });
        params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_orders() {
        let local = notification(Harness::Local, "notifications/initialized", None);
        assert_eq!(
            serde_json::to_string(&local).unwrap(),
            r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#
        );
        let copilot = notification(Harness::Copilot, "notifications/initialized", None);
        assert_eq!(
            serde_json::to_string(&copilot).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        let params = sorted(
            json!({"name": "add", "arguments": {"b": 3, "a": 2}, "_meta": {"progressToken": 1}}),
        );
        assert_eq!(
            serde_json::to_string(&params).unwrap(),
            r#"{"_meta":{"progressToken":1},"arguments":{"a":2,"b":3},"name":"add"}"#
        );
        let meta = LocalMeta::new();
        let keys = |params: &Value| -> Vec<String> {
            params.as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(
            keys(&meta.call_params("add", json!({}), true)),
            ["name", "arguments", "task", "_meta"]
        );
        assert_eq!(
            keys(&meta.call_params("add", json!({}), false)),
            ["name", "arguments", "_meta"]
        );
        assert_eq!(
            serde_json::to_string(&task_status_notification(json!({"taskId": "t"}))).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t"}}"#
        );
        assert_eq!(
            mpc_error(-32601, "Method not found"),
            "MPC -32601: Method not found"
        );
    }
}
