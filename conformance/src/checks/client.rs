//! The wire checks toward VS Code (revision 2025-11-25): stdout, the responses to
//! the client's requests, the notifications and requests of the bridge, the
//! members that never reach VS Code (R4, R6, R8), and the form of the stderr lines.

use super::{CheckOptions, Report, id_key, recovered_id};
use crate::schema::Revision;
use harness_sim::record::{Dir, Entry, Payload};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
pub(super) fn client_side(report: &mut Report<'_>, entries: &[Entry], options: &CheckOptions) {
    // The requests of the client by id, in the order sent. A response is paired
    // with the oldest unanswered request of its id; the pairing does not depend on
    // the order of the two recorded directions, whose times can cross (a fast
    // answer is read before the send of its request is recorded).
    let mut open: HashMap<String, Vec<Option<String>>> = HashMap::new();
    for entry in entries.iter().filter(|e| e.dir == Dir::C2s) {
        match &entry.payload {
            Payload::Frame(frame) => {
                let method = frame.get("method").and_then(Value::as_str);
                match (frame.get("id").filter(|id| !id.is_null()), method) {
                    (Some(id), Some(method)) => {
                        let valid = frame.get("jsonrpc") == Some(&Value::from("2.0"));
                        open.entry(id_key(id))
                            .or_default()
                            .push(valid.then(|| method.to_owned()));
                    }
                    // A line with an id but without a method: an answer of the client,
                    // or a broken request that the bridge may answer.
                    (Some(id), None)
                        if frame.get("result").is_none() && frame.get("error").is_none() =>
                    {
                        open.entry(id_key(id)).or_default().push(None);
                    }
                    _ => {}
                }
            }
            Payload::Line(line) => {
                if let Some(id) = recovered_id(line) {
                    open.entry(id).or_default().push(None);
                }
            }
        }
    }
    let mut bridge_ids: HashSet<String> = HashSet::new();
    for entry in entries {
        match (&entry.dir, &entry.payload) {
            (Dir::C2s, _) => {}
            (Dir::S2c, Payload::Line(line)) => {
                if options.stdout_json {
                    report.fail_text("R7 stdout", "a stdout line that is not JSON", line);
                }
            }
            (Dir::S2c, Payload::Frame(frame)) => {
                if !options.stdout_json {
                    continue;
                }
                client_frame(report, frame, &mut open, &mut bridge_ids);
            }
            (Dir::Stderr, Payload::Line(line))
            | (Dir::Stderr, Payload::Frame(Value::String(line))) => {
                let servers_own = options
                    .server_line_prefix
                    .is_some_and(|prefix| line.starts_with(prefix));
                if options.log_format
                    && !options.injected_stderr.contains(line)
                    && !servers_own
                    && !is_log_line(line)
                {
                    report.fail_text(
                        "R7 log line",
                        "a stderr line without the form mcp-bridge-vscode: <scope>: <level>: <text>",
                        line,
                    );
                }
            }
            (Dir::Stderr, Payload::Frame(frame)) => {
                if options.log_format {
                    report.fail("R7 log line", "a stderr line that is JSON", frame);
                }
            }
        }
    }
}

/// `mcp-bridge-vscode: <scope>: <level>: <text>` or the sign-in line.
pub fn is_log_line(line: &str) -> bool {
    static FORM: OnceLock<Option<Regex>> = OnceLock::new();
    FORM.get_or_init(|| {
        Regex::new(
            r"^mcp-bridge-vscode: (?:(?:bridge|vscode|mcp_client|mcp_stdio|mcp_router): (?:error|warning|info|debug): |sign in at )",
        )
        .ok()
    })
    .as_ref()
    .is_some_and(|form| form.is_match(line))
}

fn client_frame(
    report: &mut Report<'_>,
    frame: &Value,
    open: &mut HashMap<String, Vec<Option<String>>>,
    bridge_ids: &mut HashSet<String>,
) {
    let Some(object) = frame.as_object() else {
        report.fail("R7 stdout", "a frame that is not a JSON object", frame);
        return;
    };
    if object.get("jsonrpc") != Some(&Value::from("2.0")) {
        report.fail("JSON-RPC", "a frame without \"jsonrpc\": \"2.0\"", frame);
    }
    let method = object.get("method").and_then(Value::as_str);
    let id = object.get("id");
    match (method, id) {
        (Some(method), Some(id)) => bridge_request(report, method, id, frame, bridge_ids),
        (Some(method), None) => notification(report, method, object, frame, bridge_ids),
        (None, Some(id)) => response(report, id, object, frame, open),
        (None, None) => report.fail(
            "JSON-RPC",
            "a frame that is neither a request, a response nor a notification",
            frame,
        ),
    }
}

fn response(
    report: &mut Report<'_>,
    id: &Value,
    object: &Map<String, Value>,
    frame: &Value,
    open: &mut HashMap<String, Vec<Option<String>>>,
) {
    let method = match open
        .get_mut(&id_key(id))
        .filter(|methods| !methods.is_empty())
    {
        Some(methods) => Some(methods.remove(pairing(methods, object))),
        None if id.is_null() && object.contains_key("error") => None,
        None => {
            report.fail(
                "JSON-RPC",
                format!("a response with the id {id}, which answers no request of the client (or answers one twice)"),
                frame,
            );
            return;
        }
    };
    if let Some(error) = object.get("error") {
        if object.contains_key("result") {
            report.fail("JSON-RPC", "a response with both result and error", frame);
        }
        let _ = error;
        // JSON-RPC 2.0 answers a line without a usable id with `"id": null`; the
        // MCP schema leaves the id out instead. Both mean the same.
        let mut instance = frame.clone();
        if let Some(object) = instance.as_object_mut()
            && object.get("id").is_some_and(Value::is_null)
        {
            object.shift_remove("id");
        }
        report.validate(Revision::Client, "JSONRPCErrorResponse", &instance, frame);
        return;
    }
    let Some(result) = object.get("result") else {
        report.fail("JSON-RPC", "a response without result or error", frame);
        return;
    };
    report.validate(Revision::Client, "JSONRPCResultResponse", frame, frame);
    let Some(Some(method)) = method else {
        report.fail(
            "JSON-RPC",
            "a result for a line that is not a valid request",
            frame,
        );
        return;
    };
    let Some(result_object) = result.as_object() else {
        return;
    };
    result_names(report, &method, result_object, frame);
    let def = match method.as_str() {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => {
            "EmptyResult"
        }
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        other => {
            report.fail(
                "method",
                format!(
                    "a result for {other}, which a 2025-11-25 server of VS Code does not serve"
                ),
                frame,
            );
            return;
        }
    };
    let mut instance = result.clone();
    // MCP Apps: structuredContent stays as the upstream sent it (O11), also
    // when it is not an object, which the 2025-11-25 schema asks for.
    if def == "CallToolResult"
        && let Some(object) = instance.as_object_mut()
        && object
            .get("structuredContent")
            .is_some_and(|s| !s.is_object())
    {
        object.shift_remove("structuredContent");
    }
    report.validate(Revision::Client, def, &instance, frame);
}

/// Which of the unanswered requests with the id of a response it answers, when
/// the id is shared (a request with the id of one in flight): a ping or a
/// server/discover is answered at once in every state (R2, C1); an "invalid
/// request" error (-32600) answers the newest, the request that came with the
/// id of one in flight (known by its code, which any implementation keeps, not by
/// this bridge's cause `duplicate_id`); anything else the oldest.
fn pairing(methods: &[Option<String>], response: &Map<String, Value>) -> usize {
    const INVALID_REQUEST: i64 = -32600;
    let at_once = methods
        .iter()
        .position(|m| matches!(m.as_deref(), Some("ping" | "server/discover")));
    if let Some(index) = at_once {
        return index;
    }
    let rejected = response
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
        == Some(INVALID_REQUEST);
    if rejected { methods.len() - 1 } else { 0 }
}

/// The members of revision 2026-07-28 that never reach VS Code, and the shapes of
/// R4, R6 and the initialize result.
fn result_names(report: &mut Report<'_>, method: &str, result: &Map<String, Value>, frame: &Value) {
    for name in [
        "resultType",
        "ttlMs",
        "cacheScope",
        "inputRequests",
        "requestState",
    ] {
        if result.contains_key(name) {
            report.fail("R8 modern member", format!("the result has {name}"), frame);
        }
    }
    meta_names(report, result.get("_meta"), frame);
    if let Some(cursor) = result.get("nextCursor")
        && !cursor.is_string()
    {
        report.fail(
            "R4 nextCursor",
            format!("nextCursor is {cursor}, not a string"),
            frame,
        );
    }
    match method {
        "initialize" => {
            let capabilities = result.get("capabilities");
            if capabilities.and_then(|c| c.get("tasks")).is_some() {
                report.fail("initialize", "the result declares tasks", frame);
            }
            if capabilities
                .and_then(|c| c.get("extensions"))
                .and_then(|e| e.get("io.modelcontextprotocol/tasks"))
                .is_some()
            {
                report.fail(
                    "O11 extensions",
                    "the result declares the Tasks extension",
                    frame,
                );
            }
        }
        "tools/list" => {
            for tool in result
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
                if let Some(schema) = tool.get("inputSchema") {
                    for pointer in falsy_array_items(schema, "", 0) {
                        report.fail(
                            "R6 items",
                            format!(
                                "tool '{name}': the array schema at '{pointer}' has no truthy items"
                            ),
                            frame,
                        );
                    }
                }
                if let Some(output) = tool.get("outputSchema")
                    && output.get("type").and_then(Value::as_str) != Some("object")
                {
                    report.fail(
                        "R6 outputSchema",
                        format!("tool '{name}': an outputSchema whose root is not of type object"),
                        frame,
                    );
                }
            }
        }
        _ => {}
    }
}

fn meta_names(report: &mut Report<'_>, meta: Option<&Value>, frame: &Value) {
    for key in [
        "io.modelcontextprotocol/serverInfo",
        "io.modelcontextprotocol/subscriptionId",
    ] {
        if meta.and_then(|meta| meta.get(key)).is_some() {
            report.fail("_meta", format!("_meta has {key}"), frame);
        }
    }
}

/// A value that is false in JavaScript.
fn js_falsy(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// The JSON pointers of the array schemas (`type: "array"`) without truthy
/// `items`, through the keywords that hold subschemas (as the bridge walks them).
pub(super) fn falsy_array_items(schema: &Value, pointer: &str, depth: usize) -> Vec<String> {
    let mut found = Vec::new();
    let Some(object) = schema.as_object() else {
        return found;
    };
    if depth > 64 {
        return found;
    }
    if object.get("type").and_then(Value::as_str) == Some("array")
        && object.get("items").is_none_or(js_falsy)
    {
        found.push(pointer.to_owned());
    }
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    for (key, value) in object {
        let here = format!("{pointer}/{}", escape(key));
        match key.as_str() {
            "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "items"
            | "additionalItems"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "propertyNames" => match value {
                Value::Array(items) => {
                    for (index, item) in items.iter().enumerate() {
                        found.extend(falsy_array_items(
                            item,
                            &format!("{here}/{index}"),
                            depth + 1,
                        ));
                    }
                }
                _ => found.extend(falsy_array_items(value, &here, depth + 1)),
            },
            "properties" | "patternProperties" | "dependencies" | "dependentSchemas" | "$defs"
            | "definitions" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    found.extend(falsy_array_items(
                        sub,
                        &format!("{here}/{}", escape(name)),
                        depth + 1,
                    ));
                }
            }
            "anyOf" | "allOf" | "oneOf" | "prefixItems" => {
                for (index, sub) in value.as_array().into_iter().flatten().enumerate() {
                    found.extend(falsy_array_items(
                        sub,
                        &format!("{here}/{index}"),
                        depth + 1,
                    ));
                }
            }
            _ => {}
        }
    }
    found
}

fn notification(
    report: &mut Report<'_>,
    method: &str,
    object: &Map<String, Value>,
    frame: &Value,
    bridge_ids: &HashSet<String>,
) {
    let def = match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/cancelled" => "CancelledNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/elicitation/complete" => "ElicitationCompleteNotification",
        other => {
            report.fail(
                "method",
                format!("the notification {other} is not one that the bridge may send"),
                frame,
            );
            return;
        }
    };
    report.validate(Revision::Client, def, frame, frame);
    let params = object.get("params");
    meta_names(report, params.and_then(|p| p.get("_meta")), frame);
    if method == "notifications/cancelled" {
        let request = params.and_then(|p| p.get("requestId"));
        if !request.is_some_and(|id| bridge_ids.contains(&id_key(id))) {
            report.fail(
                "Q1 cancelled",
                "a notifications/cancelled that names no request of the bridge (an upstream cancellation must not reach VS Code)",
                frame,
            );
        }
    }
}

fn bridge_request(
    report: &mut Report<'_>,
    method: &str,
    id: &Value,
    frame: &Value,
    bridge_ids: &mut HashSet<String>,
) {
    static B_ID: OnceLock<Option<Regex>> = OnceLock::new();
    let form = B_ID.get_or_init(|| Regex::new("^b-[1-9][0-9]*$").ok());
    let good_id = id
        .as_str()
        .is_some_and(|id| form.as_ref().is_some_and(|form| form.is_match(id)));
    if !good_id {
        report.fail(
            "Q1 ids",
            format!("a request of the bridge with the id {id}, not a string b-N"),
            frame,
        );
    }
    if !bridge_ids.insert(id_key(id)) {
        report.fail(
            "Q1 ids",
            format!("the bridge used the request id {id} again"),
            frame,
        );
    }
    let def = match method {
        "elicitation/create" => "ElicitRequest",
        "sampling/createMessage" => "CreateMessageRequest",
        "roots/list" => "ListRootsRequest",
        other => {
            report.fail(
                "method",
                format!("the bridge sent the request {other} to VS Code"),
                frame,
            );
            return;
        }
    };
    report.validate(Revision::Client, def, frame, frame);
}

#[cfg(test)]
mod tests {
    use super::pairing;
    use serde_json::{Map, Value, json};

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    #[test]
    fn a_request_with_the_id_of_one_in_flight_is_known_by_its_code_not_by_a_cause() {
        let methods = [Some("tools/call".to_owned()), Some("tools/list".to_owned())];
        // The cause as another implementation names it.
        let rejected = object(json!({"id": 7, "error": {"code": -32600, "message": "no",
            "data": {"cause": "di_etacilpud"}}}));
        assert_eq!(pairing(&methods, &rejected), 1);
        let answered = object(json!({"id": 7, "result": {"content": []}}));
        assert_eq!(pairing(&methods, &answered), 0);
    }

    #[test]
    fn ping_and_discover_are_answered_at_once() {
        let methods = [Some("tools/call".to_owned()), Some("ping".to_owned())];
        assert_eq!(
            pairing(&methods, &object(json!({"id": 7, "result": {}}))),
            1
        );
    }
}
