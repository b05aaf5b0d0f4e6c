//! The wire checks toward the upstream (revision 2026-07-28): each request of the
//! bridge, its ids, its `_meta` and capabilities, and the only notification it may
//! send.

use super::{Report, id_key};
use crate::schema::Revision;
use crate::upstream::{UpDir, UpRecord};
use harness_sim::record::Payload;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
/// The `_meta` keys that an upstream request may carry (R3).
fn allowed_upstream_meta(key: &str) -> bool {
    matches!(
        key,
        "io.modelcontextprotocol/protocolVersion"
            | "io.modelcontextprotocol/clientInfo"
            | "io.modelcontextprotocol/clientCapabilities"
            | "io.modelcontextprotocol/logLevel"
            | "progressToken"
            | "traceparent"
            | "tracestate"
    ) || key.starts_with("vscode.")
}

pub(super) fn upstream_side(report: &mut Report<'_>, records: &[UpRecord]) {
    let mut sent: HashMap<usize, HashSet<String>> = HashMap::new();
    for record in records.iter().filter(|r| r.dir == UpDir::ToUpstream) {
        let frame = match &record.payload {
            Payload::Frame(frame) => frame,
            Payload::Line(line) => {
                report.fail_text("upstream", "a line to the upstream that is not JSON", line);
                continue;
            }
        };
        let Some(object) = frame.as_object() else {
            report.fail(
                "upstream",
                "a frame to the upstream that is not a JSON object",
                frame,
            );
            continue;
        };
        let method = object.get("method").and_then(Value::as_str);
        match (method, object.get("id")) {
            (Some(method), Some(id)) => {
                if !sent.entry(record.conn).or_default().insert(id_key(id)) {
                    report.fail(
                        "upstream ids",
                        format!("the bridge used the upstream request id {id} again"),
                        frame,
                    );
                }
                upstream_request(report, method, object, frame);
            }
            (Some("notifications/cancelled"), None) => {
                report.validate(Revision::Upstream, "CancelledNotification", frame, frame);
                let request = object.get("params").and_then(|p| p.get("requestId"));
                let known = request.is_some_and(|id| {
                    sent.get(&record.conn)
                        .is_some_and(|ids| ids.contains(&id_key(id)))
                });
                if !known {
                    report.fail(
                        "upstream cancelled",
                        "a cancellation of no request sent upstream",
                        frame,
                    );
                }
            }
            (Some(other), None) => report.fail(
                "upstream",
                format!(
                    "the notification {other} does not exist in revision 2026-07-28 from a client"
                ),
                frame,
            ),
            (None, _) => report.fail(
                "upstream",
                "a response to the upstream: a server of revision 2026-07-28 sends no requests",
                frame,
            ),
        }
    }
}

fn upstream_request(
    report: &mut Report<'_>,
    method: &str,
    object: &Map<String, Value>,
    frame: &Value,
) {
    let def = match method {
        "server/discover" => "DiscoverRequest",
        "tools/list" => "ListToolsRequest",
        "tools/call" => "CallToolRequest",
        "prompts/list" => "ListPromptsRequest",
        "prompts/get" => "GetPromptRequest",
        "resources/list" => "ListResourcesRequest",
        "resources/templates/list" => "ListResourceTemplatesRequest",
        "resources/read" => "ReadResourceRequest",
        "completion/complete" => "CompleteRequest",
        "subscriptions/listen" => "SubscriptionsListenRequest",
        other => {
            report.fail(
                "upstream",
                format!("the request {other} does not exist in revision 2026-07-28"),
                frame,
            );
            return;
        }
    };
    report.validate(Revision::Upstream, def, frame, frame);
    let params = object.get("params").and_then(Value::as_object);
    if params.is_some_and(|p| p.contains_key("task")) {
        report.fail("upstream task", "an upstream request with a task", frame);
    }
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    for key in meta.into_iter().flat_map(|m| m.keys()) {
        if !allowed_upstream_meta(key) {
            report.fail(
                "R3 _meta",
                format!("an upstream request with the stray _meta key {key:?}"),
                frame,
            );
        }
    }
    if let Some(capabilities) = meta
        .and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities"))
        .and_then(Value::as_object)
    {
        let checks: [(&str, bool); 5] = [
            ("tasks", capabilities.contains_key("tasks")),
            (
                "the Tasks extension",
                capabilities
                    .get("extensions")
                    .and_then(|e| e.get("io.modelcontextprotocol/tasks"))
                    .is_some(),
            ),
            (
                "roots.listChanged",
                capabilities
                    .get("roots")
                    .and_then(|r| r.get("listChanged"))
                    .is_some(),
            ),
            (
                "sampling.tools",
                capabilities
                    .get("sampling")
                    .and_then(|s| s.get("tools"))
                    .is_some(),
            ),
            (
                "sampling.context",
                capabilities
                    .get("sampling")
                    .and_then(|s| s.get("context"))
                    .is_some(),
            ),
        ];
        for (what, present) in checks {
            if present {
                report.fail(
                    "C2 capabilities",
                    format!("the upstream client capabilities declare {what}"),
                    frame,
                );
            }
        }
    }
}
