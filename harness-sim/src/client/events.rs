//! The log of a simulated session: what was listed, called, asked, answered.
//!
//! The report prints it; tests assert on it; `--json` writes it for machines.

use serde::Serialize;
use serde_json::Value;

/// One event with its time since the start of the session.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    /// Milliseconds since the server started.
    pub t_ms: f64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// The answer to `server/discover` (Copilot): `result`, `error <code>`,
    /// `unusable result`, or `no answer in <time>`.
    Discover {
        /// The outcome.
        outcome: String,
    },
    /// The opening sequence ended.
    Negotiated {
        /// `legacy` (initialize, 2025-11-25) or `modern` (2026-07-28).
        path: String,
        /// The protocolVersion of the initialize result, or 2026-07-28.
        protocol_version: Option<String>,
        /// The server's serverInfo.
        server_info: Value,
    },
    /// A list completed.
    Listed {
        /// `tools` or `prompts`.
        list: String,
        /// The names the client shows.
        names: Vec<String>,
        /// The number of pages.
        pages: usize,
    },
    /// A list failed (error response or a cursor loop).
    ListFailed {
        /// `tools` or `prompts`.
        list: String,
        /// What the client would show.
        message: String,
    },
    /// R6 (a): tools left out because their input schema is not valid draft-07.
    SchemasOmitted {
        /// The names of the omitted tools.
        tools: Vec<String>,
        /// VS Code's log line.
        log_line: String,
    },
    /// Local: VS Code's Output channel line while the initialize answer is
    /// outstanding, written every 5 s (mcpServerRequestHandler.ts `create`).
    WaitingForInitialize {
        /// VS Code's log line.
        log_line: String,
    },
    /// R6 (b): an array schema without items stops every tool.
    ToolsBlocked {
        /// The tool.
        tool: String,
        /// RFC 6901 pointer of the array schema in the input schema.
        pointer: String,
        /// The failure as reported.
        message: String,
    },
    /// A tools/call was sent.
    Called {
        /// The request id.
        id: i64,
        /// The tool.
        tool: String,
        /// The arguments.
        arguments: Value,
    },
    /// A tools/call got a result.
    CallResult {
        /// The request id.
        id: i64,
        /// The tool.
        tool: String,
        /// The text blocks, joined by newlines.
        text: String,
        /// `isError` of the result.
        is_error: bool,
    },
    /// A tools/call got an error response.
    CallError {
        /// The request id.
        id: i64,
        /// The tool.
        tool: String,
        /// As VS Code shows it: `MPC <code>: <message>`.
        display: String,
    },
    /// A tools/call could not complete for the client.
    CallFailed {
        /// The tool.
        tool: String,
        /// Why.
        message: String,
    },
    /// A round of an InputRequiredResult (modern path).
    InputRound {
        /// The tool.
        tool: String,
        /// 1 for the first input_required result.
        round: usize,
        /// The keys of the input requests.
        keys: Vec<String>,
    },
    /// The server asked the client something (a request, or an input request of a round).
    Asked {
        /// The server's id (or the input key on the modern path).
        id: Value,
        /// The method.
        method: String,
        /// A short description (message, URL).
        summary: String,
    },
    /// The client answered.
    Answered {
        /// The server's id (or the input key).
        id: Value,
        /// The method.
        method: String,
        /// The result, or `{"error": ..}`.
        answer: Value,
    },
    /// The client gave no answer (sampling waiting for an approval).
    NotAnswered {
        /// The server's id.
        id: Value,
        /// The method.
        method: String,
        /// Why.
        why: String,
    },
    /// A task changed state (Local): a tool call that the server runs as a
    /// task, or a request of the server that the client runs as a task.
    TaskStatus {
        /// The taskId.
        task_id: String,
        /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
        status: String,
        /// Its statusMessage.
        status_message: Option<String>,
        /// What brought the state: `tools/call result`, `tasks/get`,
        /// `notifications/tasks/status`, `ttl`, or `sent` (the client's own
        /// notifications/tasks/status).
        source: String,
    },
    /// A list change notification arrived.
    ListChanged {
        /// `tools`, `prompts` or `resources`.
        list: String,
    },
    /// Another notification (progress, message, elicitation/complete, ...).
    Notification {
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
    /// The client cancelled one of its requests.
    Cancelled {
        /// The request id.
        id: i64,
    },
    /// A response to a request that the client no longer waits for.
    LateResponse {
        /// The id.
        id: Value,
        /// Why it is ignored.
        why: String,
    },
    /// The Local harness dropped its own pending request because the server sent
    /// `notifications/cancelled` with that id (the integer id quirk).
    OwnRequestDropped {
        /// The id.
        id: i64,
    },
    /// A `notifications/cancelled` that the client ignores.
    CancelIgnored {
        /// Its requestId.
        request_id: Value,
    },
    /// The client sent `notifications/roots/list_changed`.
    RootsChanged,
    /// A stdout line that is not JSON.
    NotJson {
        /// The line.
        line: String,
    },
    /// A frame the client cannot place.
    Unexpected {
        /// The frame.
        frame: Value,
    },
    /// The stop sequence ended.
    Stopped {
        /// How.
        report: crate::client::stop::StopReport,
    },
}
