//! The wire checks that run on every transcript, whatever its steps say (the
//! list of the reference's `Transcript.verify()`, study section 2.2):
//!
//! Toward VS Code (revision 2025-11-25):
//! - every stdout line is a JSON-RPC 2.0 object (R7);
//! - every response answers one request of the client, and its result validates
//!   against the `$defs` entry of the request's method (errors against `Error`);
//! - notifications are of the methods a 2025-11-25 server may send, and validate;
//! - requests of the bridge have string ids `b-N`, never reused, of the methods
//!   elicitation/create, sampling/createMessage or roots/list, and validate; a
//!   `notifications/cancelled` names a request of the bridge (Q1);
//! - no `resultType`, `ttlMs`, `cacheScope`, `inputRequests` or `requestState`
//!   (R8), no serverInfo or subscriptionId in `_meta`, `nextCursor` only as a
//!   string (R4), no tasks in the initialize result, truthy `items` in every
//!   array schema of a tool and only object output schemas (R6);
//! - every stderr line of the bridge has the form of the contract (R7, LOG).
//!
//! Toward the upstream (revision 2026-07-28):
//! - every request validates against the `$defs` entry of its method, has an id
//!   that the connection never used before, no `task`, only the `_meta` keys of
//!   the revision and the pass-through keys of R3, and client capabilities
//!   without tasks, `roots.listChanged`, `sampling.tools` or `sampling.context`;
//! - the only notification is `notifications/cancelled` of a request sent before;
//! - the bridge sends no responses upstream (a 2026-07-28 server sends no requests).

use crate::schema::{Revision, Schemas};
use crate::upstream::{UpDir, UpRecord};
use harness_sim::record::{Dir, Entry, Payload};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// One broken rule, with the frame that broke it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireFailure {
    /// The rule, e.g. `R4 nextCursor` or `schema 2025-11-25`.
    pub rule: String,
    pub message: String,
    /// The frame or line, compact.
    pub frame: String,
}

/// What the checks need to know about a run.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Stdout is JSON-RPC (off for `--help` and `--version`).
    pub stdout_json: bool,
    /// Stderr lines have the form of the contract.
    pub log_format: bool,
    /// Stderr lines that the scripted upstream wrote (not the bridge's).
    pub injected_stderr: Vec<String>,
}

struct Report<'a> {
    failures: Vec<WireFailure>,
    schemas: &'a Schemas,
}

impl Report<'_> {
    fn fail(&mut self, rule: &str, message: impl Into<String>, frame: &Value) {
        self.fail_text(rule, message, &frame.to_string());
    }

    fn fail_text(&mut self, rule: &str, message: impl Into<String>, frame: &str) {
        let mut frame = frame.to_owned();
        if frame.len() > 2000 {
            let mut end = 2000;
            while !frame.is_char_boundary(end) {
                end -= 1;
            }
            frame.truncate(end);
            frame.push_str(" ...");
        }
        self.failures.push(WireFailure {
            rule: rule.into(),
            message: message.into(),
            frame,
        });
    }

    fn validate(&mut self, revision: Revision, def: &str, instance: &Value, frame: &Value) {
        if let Err(error) = self.schemas.validate(revision, def, instance) {
            self.fail(&format!("schema {}", revision.name()), error, frame);
        }
    }
}

/// Runs every check on one run's traffic. `entries` is the bridge's side as
/// recorded (c2s, s2c and stderr, in time order); `upstream` the relay's.
pub fn check(
    schemas: &Schemas,
    entries: &[Entry],
    upstream: &[UpRecord],
    options: &CheckOptions,
) -> Vec<WireFailure> {
    let mut report = Report {
        failures: Vec::new(),
        schemas,
    };
    client_side(&mut report, entries, options);
    upstream_side(&mut report, upstream);
    report.failures
}

/// The key of an id for maps: its JSON text.
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// An id that a line that is not a valid request may still carry (the bridge
/// answers with it when it can find it).
fn recovered_id(line: &str) -> Option<String> {
    static ID: OnceLock<Option<Regex>> = OnceLock::new();
    let regex = ID
        .get_or_init(|| Regex::new(r#""id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)"#).ok())
        .as_ref()?;
    let found = regex.captures(line)?.get(1)?.as_str();
    serde_json::from_str::<Value>(found)
        .ok()
        .map(|id| id_key(&id))
}

fn client_side(report: &mut Report<'_>, entries: &[Entry], options: &CheckOptions) {
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
                if options.log_format
                    && !options.injected_stderr.contains(line)
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
/// server/discover is answered at once in every state (R2, C1); a duplicate_id
/// error answers the newest; anything else the oldest.
fn pairing(methods: &[Option<String>], response: &Map<String, Value>) -> usize {
    let at_once = methods
        .iter()
        .position(|m| matches!(m.as_deref(), Some("ping" | "server/discover")));
    if let Some(index) = at_once {
        return index;
    }
    let duplicate = response
        .get("error")
        .and_then(|e| e.get("data"))
        .and_then(|d| d.get("cause"))
        .and_then(Value::as_str)
        == Some("duplicate_id");
    if duplicate { methods.len() - 1 } else { 0 }
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
fn falsy_array_items(schema: &Value, pointer: &str, depth: usize) -> Vec<String> {
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

fn upstream_side(report: &mut Report<'_>, records: &[UpRecord]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::time::Instant;

    fn schemas() -> Schemas {
        Schemas::load(&crate::paths::transcripts_dir().join("schema")).unwrap()
    }

    fn entry(dir: Dir, frame: Value) -> Entry {
        Entry {
            t_ms: 0.0,
            dir,
            payload: Payload::Frame(frame),
        }
    }

    fn options() -> CheckOptions {
        CheckOptions {
            stdout_json: true,
            log_format: true,
            injected_stderr: Vec::new(),
        }
    }

    fn rules(entries: &[Entry], upstream: &[UpRecord]) -> Vec<String> {
        check(&schemas(), entries, upstream, &options())
            .into_iter()
            .map(|f| format!("{}: {}", f.rule, f.message))
            .collect()
    }

    #[test]
    fn a_null_cursor_breaks_r4() {
        let entries = [
            entry(
                Dir::C2s,
                json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":4,"result":{"tools":[],"nextCursor":null}}),
            ),
        ];
        let found = rules(&entries, &[]);
        assert!(
            found.iter().any(|r| r.starts_with("R4 nextCursor")),
            "{found:?}"
        );
    }

    #[test]
    fn a_good_session_passes() {
        let entries = [
            entry(
                Dir::C2s,
                json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":{}}}}}]}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":"b-1","method":"roots/list"}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1"}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}),
            ),
            Entry {
                t_ms: 0.0,
                dir: Dir::Stderr,
                payload: Payload::Line("mcp-bridge-vscode: bridge: info: x".into()),
            },
        ];
        let upstream = [UpRecord {
            conn: 0,
            dir: UpDir::ToUpstream,
            payload: Payload::Frame(
                json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
                "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},
                "vscode.requestId":"r"}}}),
            ),
            at: Instant::now(),
        }];
        assert_eq!(rules(&entries, &upstream), Vec::<String>::new());
    }

    #[test]
    fn the_rules_of_the_reference_are_checked() {
        let entries = [
            entry(
                Dir::C2s,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":false}}},"outputSchema":{"type":"array"}}],"ttlMs":0}}),
            ),
            entry(Dir::S2c, json!({"jsonrpc":"2.0","id":1,"result":{}})),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":2,"method":"roots/list"}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}),
            ),
            Entry {
                t_ms: 0.0,
                dir: Dir::S2c,
                payload: Payload::Line("hello".into()),
            },
            Entry {
                t_ms: 0.0,
                dir: Dir::Stderr,
                payload: Payload::Line("loose text".into()),
            },
        ];
        let upstream = [UpRecord {
            conn: 0,
            dir: UpDir::ToUpstream,
            payload: Payload::Frame(
                json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":1}}}),
            ),
            at: Instant::now(),
        }];
        let found = rules(&entries, &upstream).join("\n");
        for rule in [
            "R8 modern member",
            "R6 items",
            "R6 outputSchema",
            "answers no request",
            "Q1 ids",
            "Q1 cancelled",
            "R7 stdout",
            "R7 log line",
            "does not exist in revision 2026-07-28",
        ] {
            assert!(found.contains(rule), "{rule} missing in\n{found}");
        }
    }

    #[test]
    fn falsy_items_are_found_through_subschemas() {
        let schema = json!({"type":"object","properties":{"a":{"type":"array"},"b":{"anyOf":[{"type":"array","items":0}]},
            "c":{"type":"array","items":{"type":"array","items":null}},"d":{"type":"array","items":{}}}});
        assert_eq!(
            falsy_array_items(&schema, "", 0),
            [
                "/properties/a",
                "/properties/b/anyOf/0",
                "/properties/c/items"
            ]
        );
    }
}
