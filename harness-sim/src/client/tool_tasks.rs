//! Tool calls that the server runs as tasks (Local harness).
//!
//! `McpTool._callWithProgress` (mcpServer.js (build)) adds `task: {}` to
//! tools/call only when the server declares `tasks.requests.tools.call` and the
//! tool's `execution.taskSupport` is `required` or `optional`; copilot-cli never
//! sends it. A result with a `task` (a CreateTaskResult, `isTaskResult`) is
//! followed as `McpTask` does (mcpServerRequestHandler.ts @ c5308376):
//! - `working`: `tasks/get` after `pollInterval` (2 s when the server gives none);
//!   any new state (a `notifications/tasks/status`, a poll answer) restarts the
//!   wait, and a state that comes while a poll is in flight cancels that poll
//!   (`notifications/cancelled`; its cancellation token is disposed);
//! - `input_required`: `tasks/get` at once, cancelled when the status changes;
//! - `completed`: `tasks/result`, whose answer is the call's;
//! - `failed`: the call fails with `Task <id> failed: <statusMessage>`;
//! - `cancelled`, or the task's `ttl` passed (`Task timed out.`): the call is cancelled.
//!
//! An error answer to `tasks/get` is an `MpcResponseError`, not the `McpError`
//! the source tests for, so a poll error keeps the state (and polls again) and
//! an `input_required` lookup error goes back to `working`. VS Code waits for a
//! task without end; the simulator gives up after [`super::SimOptions::task_timeout`].

use serde_json::{Value, json};
use tokio::time::{Duration, Instant};

use super::schema_check::{js_falsy, tool_name};
use super::{CallOutcome, EventKind, SimClient, SimError};

/// `McpTask`: the poll interval when the task has none.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(2000);
/// `McpTask`: the statusMessage of a task whose ttl passed.
const TIMED_OUT: &str = "Task timed out.";

/// The newest state of a task that a tool call waits for.
#[derive(Debug)]
pub(crate) struct WatchedTask {
    state: Value,
    /// Goes up with each new state: VS Code's observable fires on every set.
    version: u64,
}

/// One tool call that runs as a task.
struct ToolTask {
    tool: String,
    call_id: i64,
    task_id: String,
    poll_every: Duration,
    expires_at: Option<Instant>,
    give_up_at: Instant,
}

/// When a state that comes during a `tasks/get` makes VS Code cancel it.
#[derive(Clone, Copy)]
enum CancelPollOn {
    /// Any new state (the poll of a working task).
    AnyState,
    /// A new status (the lookup of an input_required task).
    StatusChange,
}

/// How a `tasks/get` ended.
enum Polled {
    /// The response frame (a result or an error).
    Answered(Value),
    /// Cancelled by the client because a new state came first.
    Cancelled,
}

fn status_of(state: &Value) -> &str {
    state
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn millis(value: Option<&Value>) -> Option<Duration> {
    value
        .and_then(Value::as_f64)
        .filter(|ms| ms.is_finite() && *ms > 0.0)
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
}

impl SimClient {
    /// Whether the Local harness sends tools/call of `tool` with `task: {}`.
    pub(crate) fn tool_runs_as_task(&self, tool: &str) -> bool {
        let declared = self
            .negotiated
            .as_ref()
            .is_some_and(|n| !js_falsy(n.capabilities.pointer("/tasks/requests/tools/call")));
        declared
            && self
                .lists
                .tools
                .shown
                .iter()
                .find(|t| tool_name(t) == tool)
                .and_then(|t| t.pointer("/execution/taskSupport"))
                .and_then(Value::as_str)
                .is_some_and(|support| support == "required" || support == "optional")
    }

    /// Follows the task of a tool call from its CreateTaskResult `task` to the
    /// call's outcome.
    pub(crate) async fn follow_tool_task(
        &mut self,
        tool: &str,
        call_id: i64,
        created: Value,
    ) -> Result<CallOutcome, SimError> {
        let now = Instant::now();
        let task = ToolTask {
            tool: tool.to_owned(),
            call_id,
            task_id: created
                .get("taskId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            poll_every: millis(created.get("pollInterval")).unwrap_or(DEFAULT_POLL_INTERVAL),
            expires_at: millis(created.get("ttl")).map(|ttl| now + ttl),
            give_up_at: now + self.options.task_timeout,
        };
        // adoptClientTask: its notifications/tasks/status now reach the call.
        self.watched_tasks.insert(
            task.task_id.clone(),
            WatchedTask {
                state: Value::Null,
                version: 0,
            },
        );
        self.set_task_state(&task.task_id, created, "tools/call result");
        let outcome = self.drive_tool_task(&task).await;
        self.watched_tasks.remove(&task.task_id);
        outcome
    }

    async fn drive_tool_task(&mut self, task: &ToolTask) -> Result<CallOutcome, SimError> {
        loop {
            let (state, version) = self.watched(&task.task_id);
            let message = state.get("statusMessage").and_then(Value::as_str);
            match status_of(&state) {
                "completed" => return self.task_result(task).await,
                "failed" => {
                    let why = message.unwrap_or("unknown error");
                    let failure = format!("Task {} failed: {why}", task.task_id);
                    return Ok(self.call_failed(&task.tool, failure));
                }
                "cancelled" => {
                    let why = message.map(|m| format!(": {m}")).unwrap_or_default();
                    let failure = format!("Task {} was cancelled{why}", task.task_id);
                    return Ok(self.call_failed(&task.tool, failure));
                }
                _ => {}
            }
            let now = Instant::now();
            if task.expires_at.is_some_and(|at| now >= at) {
                let mut timed_out = state.clone();
                timed_out["status"] = json!("cancelled");
                timed_out["statusMessage"] = json!(TIMED_OUT);
                self.set_task_state(&task.task_id, timed_out, "ttl");
                continue;
            }
            if now >= task.give_up_at {
                return Err(SimError::Timeout {
                    method: format!("the task {} of tools/call", task.task_id),
                    id: task.call_id,
                    after: self.options.task_timeout,
                });
            }
            if status_of(&state) == "input_required" {
                if let Polled::Answered(response) =
                    self.poll_task(task, CancelPollOn::StatusChange).await?
                {
                    let next = match response.get("result") {
                        Some(result) if result.is_object() => result.clone(),
                        _ => {
                            let mut working = self.watched(&task.task_id).0;
                            working["status"] = json!("working");
                            working
                        }
                    };
                    self.set_task_state(&task.task_id, next, "tasks/get");
                }
                continue;
            }
            // working, or a status VS Code does not know: it keeps polling.
            let poll_at = now + task.poll_every;
            let wake_at = [Some(poll_at), task.expires_at, Some(task.give_up_at)]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(poll_at);
            if self
                .wait_task_state(&task.task_id, version, wake_at)
                .await?
                || Instant::now() < poll_at
            {
                continue;
            }
            if let Polled::Answered(response) = self.poll_task(task, CancelPollOn::AnyState).await?
                && let Some(result) = response.get("result").filter(|r| r.is_object())
            {
                self.set_task_state(&task.task_id, result.clone(), "tasks/get");
            }
        }
    }

    /// `tasks/result` of a completed task: its answer is the call's.
    async fn task_result(&mut self, task: &ToolTask) -> Result<CallOutcome, SimError> {
        let id = self.take_id();
        self.send_awaited(id, "tasks/result", json!({"taskId": task.task_id}))
            .await?;
        match self.wait_response(id, self.options.request_timeout).await {
            Ok(response) => Ok(self.outcome_of(&task.tool, task.call_id, &response)),
            Err(SimError::DroppedByServer { .. }) => Ok(self.call_dropped(&task.tool)),
            Err(other) => Err(other),
        }
    }

    /// Sends `tasks/get` and waits for its answer; cancels it when a new state
    /// comes first as `cancel_on` says.
    async fn poll_task(
        &mut self,
        task: &ToolTask,
        cancel_on: CancelPollOn,
    ) -> Result<Polled, SimError> {
        let (before, version) = self.watched(&task.task_id);
        let id = self.take_id();
        self.send_awaited(id, "tasks/get", json!({"taskId": task.task_id}))
            .await?;
        let deadline = Instant::now() + self.options.request_timeout;
        loop {
            if let Some(response) = self.done.remove(&id) {
                return Ok(Polled::Answered(response));
            }
            if self.dropped.remove(&id) {
                // A cancelled promise, not an McpError: handled as an error answer.
                return Ok(Polled::Answered(json!({"error": {}})));
            }
            let (now, now_version) = self.watched(&task.task_id);
            let superseded = match cancel_on {
                CancelPollOn::AnyState => now_version != version,
                CancelPollOn::StatusChange => status_of(&now) != status_of(&before),
            };
            if superseded {
                self.cancel(id).await?;
                return Ok(Polled::Cancelled);
            }
            if Instant::now() >= deadline {
                return Err(SimError::Timeout {
                    method: "tasks/get".into(),
                    id,
                    after: self.options.request_timeout,
                });
            }
            self.pump_once(deadline).await?;
        }
    }

    /// Handles frames until the task has a state newer than `version` (true)
    /// or `deadline` passed (false).
    async fn wait_task_state(
        &mut self,
        task_id: &str,
        version: u64,
        deadline: Instant,
    ) -> Result<bool, SimError> {
        loop {
            if self.watched(task_id).1 != version {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            self.pump_once(deadline).await?;
        }
    }

    /// Local: a `notifications/tasks/status` of a task that a call waits for
    /// becomes its state; any other is only logged.
    pub(crate) fn on_task_status(&mut self, params: Value) {
        let watched = params
            .get("taskId")
            .and_then(Value::as_str)
            .filter(|id| self.profile.is_local() && self.watched_tasks.contains_key(*id))
            .map(str::to_owned);
        match watched {
            Some(task_id) => self.set_task_state(&task_id, params, "notifications/tasks/status"),
            None => self.log(EventKind::Notification {
                method: "notifications/tasks/status".into(),
                params,
            }),
        }
    }

    fn watched(&self, task_id: &str) -> (Value, u64) {
        self.watched_tasks
            .get(task_id)
            .map(|w| (w.state.clone(), w.version))
            .unwrap_or((Value::Null, 0))
    }

    fn set_task_state(&mut self, task_id: &str, state: Value, source: &str) {
        self.log(EventKind::TaskStatus {
            task_id: task_id.to_owned(),
            status: status_of(&state).to_owned(),
            status_message: state
                .get("statusMessage")
                .and_then(Value::as_str)
                .map(str::to_owned),
            source: source.to_owned(),
        });
        if let Some(watched) = self.watched_tasks.get_mut(task_id) {
            watched.state = state;
            watched.version += 1;
        }
    }
}
