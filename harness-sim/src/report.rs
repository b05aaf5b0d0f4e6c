//! The report of one session: readable text for a person, JSON for machines.

use serde::Serialize;
use serde_json::Value;

use crate::client::{CallOutcome, Event, EventKind, Negotiated, SimClient, StopReport};

/// One `--call` and how it ended.
#[derive(Clone, Debug, Serialize)]
pub struct CallRecord {
    /// The tool.
    pub tool: String,
    /// The arguments.
    pub arguments: Value,
    /// The outcome.
    pub outcome: CallOutcome,
}

/// Everything a person needs to see of a session.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The profile name.
    pub profile: String,
    /// The server command.
    pub command: Vec<String>,
    /// What the opening negotiated.
    pub negotiated: Option<Negotiated>,
    /// The tools the client shows.
    pub tools: Vec<String>,
    /// The prompts the client shows.
    pub prompts: Vec<String>,
    /// The calls.
    pub calls: Vec<CallRecord>,
    /// The event log.
    pub events: Vec<Event>,
    /// The stop.
    pub stop: Option<StopReport>,
    /// The server's stderr lines.
    pub stderr: Vec<String>,
    /// A failure that ended the session early.
    pub error: Option<String>,
}

impl Report {
    /// The report of `client` after its calls.
    pub fn of(client: &SimClient, calls: Vec<CallRecord>, error: Option<String>) -> Self {
        Self {
            profile: client.profile().name().into(),
            command: client.peer().command().to_vec(),
            negotiated: client.negotiated().cloned(),
            tools: client.tool_names(),
            prompts: client
                .prompts()
                .iter()
                .map(crate::client::schema_check::tool_name)
                .collect(),
            calls,
            events: client.events().to_vec(),
            stop: client.stop_report().cloned(),
            stderr: client.peer().stderr_lines(),
            error,
        }
    }

    /// Whether the session shows a failure: the opening failed, a list failed,
    /// the tools are stopped, or a call did not give a result.
    pub fn failed(&self) -> bool {
        self.error.is_some()
            || self.events.iter().any(|e| {
                matches!(
                    e.kind,
                    EventKind::ListFailed { .. } | EventKind::ToolsBlocked { .. }
                )
            })
            || self.calls.iter().any(|c| {
                !matches!(
                    c.outcome,
                    CallOutcome::Result {
                        is_error: false,
                        ..
                    }
                )
            })
    }

    /// The JSON form (`--json`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The readable form.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        line(format!(
            "harness-sim {} -- {}",
            self.profile,
            self.command.join(" ")
        ));
        if let Some(n) = &self.negotiated {
            let name = n
                .server_info
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let version = n
                .server_info
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let path = match n.path {
                crate::client::WirePath::Legacy => "legacy path (initialize)",
                crate::client::WirePath::Modern => "modern path (2026-07-28)",
            };
            line(format!(
                "opening: {path}, protocolVersion {}, server {name} {version}",
                n.protocol_version.as_deref().unwrap_or("-")
            ));
            if let Some(discover) = &n.discover {
                line(format!("  server/discover: {discover}"));
            }
            if let Some(instructions) = &n.instructions {
                line(format!("  instructions: {instructions}"));
            }
            line(format!("  capabilities: {}", n.capabilities));
        }
        line(format!(
            "tools ({}): {}",
            self.tools.len(),
            self.tools.join(", ")
        ));
        line(format!(
            "prompts ({}): {}",
            self.prompts.len(),
            self.prompts.join(", ")
        ));
        line("events:".into());
        for event in &self.events {
            line(format!(
                "  {:>9.1} ms  {}",
                event.t_ms,
                describe(&event.kind)
            ));
        }
        if !self.calls.is_empty() {
            line("calls:".into());
            for call in &self.calls {
                line(format!(
                    "  {} {} -> {}",
                    call.tool,
                    call.arguments,
                    call.outcome.describe()
                ));
            }
        }
        if let Some(stop) = &self.stop {
            line(format!("stop: {}", stop.describe()));
        }
        if let Some(error) = &self.error {
            line(format!("FAILED: {error}"));
        }
        if !self.stderr.is_empty() {
            line(format!(
                "stderr of the server ({} lines):",
                self.stderr.len()
            ));
            for l in &self.stderr {
                line(format!("  {l}"));
            }
        }
        out
    }
}

/// One event as a line of the report.
pub fn describe(kind: &EventKind) -> String {
    match kind {
        EventKind::Discover { outcome } => format!("server/discover: {outcome}"),
        EventKind::Negotiated {
            path,
            protocol_version,
            server_info,
        } => format!(
            "negotiated the {path} path ({}), serverInfo {server_info}",
            protocol_version.as_deref().unwrap_or("-")
        ),
        EventKind::Listed { list, names, pages } => {
            format!(
                "listed {} {list} in {pages} page(s): {}",
                names.len(),
                names.join(", ")
            )
        }
        EventKind::ListFailed { list, message } => format!("LIST FAILED ({list}): {message}"),
        EventKind::SchemasOmitted { tools, log_line } => {
            format!("{log_line} ({})", tools.join(", "))
        }
        EventKind::WaitingForInitialize { log_line } => log_line.clone(),
        EventKind::ToolsBlocked { message, .. } => format!("ALL TOOLS STOPPED: {message}"),
        EventKind::Called {
            id,
            tool,
            arguments,
        } => format!("called {tool} {arguments} (id {id})"),
        EventKind::CallResult {
            tool,
            text,
            is_error,
            ..
        } => {
            let kind = if *is_error { "error result" } else { "result" };
            format!("{kind} of {tool}: {text:?}")
        }
        EventKind::CallError { tool, display, .. } => format!("error of {tool}: {display}"),
        EventKind::CallFailed { tool, message } => format!("call of {tool} failed: {message}"),
        EventKind::InputRound { tool, round, keys } => {
            format!("{tool}: input_required round {round}: {}", keys.join(", "))
        }
        EventKind::Asked {
            id,
            method,
            summary,
        } => format!("asked {id} {method} {summary}"),
        EventKind::Answered { id, answer, .. } => format!("answered {id}: {answer}"),
        EventKind::NotAnswered { id, method, why } => format!("no answer to {id} {method}: {why}"),
        EventKind::TaskStatus {
            task_id,
            status,
            status_message,
            source,
        } => {
            let message = status_message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            format!("task {task_id} {status}{message} ({source})")
        }
        EventKind::ListChanged { list } => format!("{list} list changed"),
        EventKind::Notification { method, params } => format!("{method} {params}"),
        EventKind::Cancelled { id } => format!("cancelled request {id}"),
        EventKind::LateResponse { id, why } => format!("ignored a response to {id}: {why}"),
        EventKind::OwnRequestDropped { id } => {
            format!(
                "dropped its own request {id}: the server sent notifications/cancelled with that id"
            )
        }
        EventKind::CancelIgnored { request_id } => {
            format!("ignored notifications/cancelled for {request_id}")
        }
        EventKind::RootsChanged => "sent notifications/roots/list_changed".into(),
        EventKind::NotJson { line } => format!("stdout line that is not JSON: {line:?}"),
        EventKind::Unexpected { frame } => format!("unexpected frame: {frame}"),
        EventKind::Stopped { report } => format!("stopped: {}", report.describe()),
    }
}
