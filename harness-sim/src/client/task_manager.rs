//! The requests of the server that the Local harness runs as tasks
//! (mcpTaskManager.ts and `handleServerRequest` of mcpServerRequestHandler.ts @ c5308376).
//!
//! A `sampling/createMessage` or `elicitation/create` whose `params.task` is set
//! is answered at once with a CreateTaskResult: `{task: {taskId, status:
//! "working", createdAt, ttl, pollInterval: 1000}, _meta:
//! {"io.modelcontextprotocol/related-task": {taskId}}}`, `ttl` being the
//! server's `task.ttl` or null. The user's answer then ends the task
//! (`completed` with the result, or `failed` with the error) and VS Code sends
//! `notifications/tasks/status` with the new state; a request that gets no
//! answer (sampling waiting for an approval) stays `working`.
//! `tasks/get` gives the state, `tasks/result` the result or the error (and
//! waits while the task works), `tasks/cancel` cancels a task that has not
//! ended, `tasks/list` lists them. An unknown task is -32602 `Task not found: <id>`.
//! A task is deleted after its `ttl`, or 60 s after it ended when it has none.
//! The Copilot harness declares no tasks and answers these methods as before.

use serde_json::{Map, Value, json};
use tokio::time::{Duration, Instant};

use super::answering::Answer;
use super::schema_check::js_falsy;
use super::{EventKind, SimClient, SimError, frames};

/// mcpTaskManager.ts: the poll interval suggested to the server.
const POLL_INTERVAL_MS: u64 = 1000;
/// mcpTaskManager.ts: how long an ended task without ttl stays.
const KEPT_AFTER_END: Duration = Duration::from_secs(60);
/// MCP.INVALID_PARAMS.
const INVALID_PARAMS: i64 = -32602;
/// MCP.INTERNAL_ERROR.
const INTERNAL_ERROR: i64 = -32603;

/// The tasks the Local harness runs for the server.
#[derive(Debug, Default)]
pub(crate) struct TaskManager {
    tasks: Vec<ServerTask>,
}

#[derive(Debug)]
struct ServerTask {
    /// The task as the wire shows it, keys in VS Code's order.
    task: Map<String, Value>,
    /// The user's answer once the task ended.
    outcome: Option<Answer>,
    delete_at: Option<Instant>,
}

impl ServerTask {
    fn id(&self) -> &str {
        self.task
            .get("taskId")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn status(&self) -> &str {
        self.task
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn has_ended(&self) -> bool {
        matches!(self.status(), "completed" | "failed" | "cancelled")
    }
}

/// A task id as JavaScript writes it in a template string.
fn js_text(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

fn not_found(task_id: &str) -> Answer {
    Answer::Error {
        code: INVALID_PARAMS,
        message: format!("Task not found: {task_id}"),
    }
}

impl TaskManager {
    /// `createTask`: a task whose user answer is `answer`. Returns the
    /// CreateTaskResult and, when the answer ended the task, its new state for
    /// `notifications/tasks/status`.
    fn create(&mut self, ttl: Value, answer: Answer) -> (Value, Option<Value>) {
        let now = Instant::now();
        let task_id = uuid::Uuid::new_v4().to_string();
        let mut task = Map::new();
        task.insert("taskId".into(), json!(task_id));
        task.insert("status".into(), json!("working"));
        task.insert("createdAt".into(), json!(crate::record::rfc3339_utc_now()));
        let ttl_ms = ttl.as_f64().filter(|ms| ms.is_finite() && *ms > 0.0);
        task.insert("ttl".into(), ttl);
        task.insert("pollInterval".into(), json!(POLL_INTERVAL_MS));
        let created = json!({
            "task": Value::Object(task.clone()),
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        });
        let mut entry = ServerTask {
            task,
            outcome: None,
            delete_at: ttl_ms.map(|ms| now + Duration::from_secs_f64(ms / 1000.0)),
        };
        let update = match answer {
            Answer::None(_) => None,
            Answer::Result(_) => Some("completed"),
            Answer::Error { .. } => Some("failed"),
        }
        .map(|status| {
            entry.task.insert("status".into(), json!(status));
            if let Answer::Error { message, .. } = &answer {
                entry.task.insert("statusMessage".into(), json!(message));
            }
            entry.outcome = Some(answer);
            if entry.delete_at.is_none() {
                entry.delete_at = Some(now + KEPT_AFTER_END);
            }
            Value::Object(entry.task.clone())
        });
        self.tasks.push(entry);
        (created, update)
    }

    /// The answer to `tasks/get`, `tasks/result`, `tasks/cancel` or
    /// `tasks/list`; `None` for any other method.
    fn answer(&mut self, method: &str, params: &Value) -> Option<Answer> {
        let now = Instant::now();
        self.tasks.retain(|t| t.delete_at.is_none_or(|at| now < at));
        if method == "tasks/list" {
            let tasks: Vec<Value> = self
                .tasks
                .iter()
                .map(|t| Value::Object(t.task.clone()))
                .collect();
            return Some(Answer::Result(json!({"tasks": tasks})));
        }
        let task_id = js_text(params.get("taskId"));
        let task = self.tasks.iter_mut().find(|t| t.id() == task_id);
        Some(match (method, task) {
            ("tasks/get" | "tasks/result" | "tasks/cancel", None) => not_found(&task_id),
            ("tasks/get", Some(task)) => Answer::Result(Value::Object(task.task.clone())),
            ("tasks/result", Some(task)) => match &task.outcome {
                Some(answer) => answer.clone(),
                None if task.has_ended() => Answer::Error {
                    code: INTERNAL_ERROR,
                    message: "Task completed but no result available".into(),
                },
                None => Answer::None(format!(
                    "tasks/result waits for the task {task_id}, which never ends"
                )),
            },
            ("tasks/cancel", Some(task)) if task.has_ended() => Answer::Error {
                code: INVALID_PARAMS,
                message: format!("Cannot cancel task in {} status", task.status()),
            },
            ("tasks/cancel", Some(task)) => {
                task.task.insert("status".into(), json!("cancelled"));
                task.task.insert(
                    "statusMessage".into(),
                    json!("Task was cancelled by the client"),
                );
                Answer::Result(Value::Object(task.task.clone()))
            }
            _ => return None,
        })
    }
}

impl SimClient {
    /// Local: the task manager's answer to a server request, with the state to
    /// announce after the answer; `None` when the request is not the task
    /// manager's (or on the Copilot harness).
    pub(crate) fn answer_by_task_manager(
        &mut self,
        method: &str,
        params: &Value,
    ) -> Option<(Answer, Option<Value>)> {
        if !self.profile.is_local() {
            return None;
        }
        let task = params.get("task");
        let runs_as_task =
            matches!(method, "sampling/createMessage" | "elicitation/create") && !js_falsy(task);
        if !runs_as_task {
            return self.task_manager.answer(method, params).map(|a| (a, None));
        }
        // `request.params.task.ttl ?? null`
        let ttl = task
            .and_then(|t| t.get("ttl"))
            .cloned()
            .unwrap_or(Value::Null);
        let answer = self.answer_by_policy(method, params);
        let (created, update) = self.task_manager.create(ttl, answer);
        if let Some(task) = created.get("task") {
            self.log_server_task(task, &format!("created for {method}"));
        }
        Some((Answer::Result(created), update))
    }

    /// Sends `notifications/tasks/status` with the new state of a server task.
    pub(crate) async fn announce_task(&mut self, task: Value) -> Result<(), SimError> {
        self.log_server_task(&task, "sent");
        self.peer
            .send(&frames::task_status_notification(task))
            .await?;
        Ok(())
    }

    fn log_server_task(&mut self, task: &Value, source: &str) {
        let text = |key: &str| task.get(key).and_then(Value::as_str).map(str::to_owned);
        self.log(EventKind::TaskStatus {
            task_id: text("taskId").unwrap_or_default(),
            status: text("status").unwrap_or_default(),
            status_message: text("statusMessage"),
            source: source.to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(answer: &Answer) -> Option<i64> {
        match answer {
            Answer::Error { code, .. } => Some(*code),
            _ => None,
        }
    }

    #[test]
    fn a_task_reports_its_state_result_and_cancel() {
        let mut manager = TaskManager::default();
        let sample =
            json!({"model": "m", "content": {"type": "text", "text": "hi"}, "role": "assistant"});
        let (created, update) = manager.create(json!(null), Answer::Result(sample.clone()));
        let task_id = created["task"]["taskId"].as_str().unwrap().to_owned();
        let keys: Vec<&String> = created["task"].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["taskId", "status", "createdAt", "ttl", "pollInterval"]
        );
        assert_eq!(created["task"]["status"], json!("working"));
        assert_eq!(
            created["_meta"]["io.modelcontextprotocol/related-task"],
            json!({"taskId": task_id})
        );
        assert_eq!(update.unwrap()["status"], json!("completed"));
        let id = json!({"taskId": task_id});
        let Some(Answer::Result(state)) = manager.answer("tasks/get", &id) else {
            panic!("no state")
        };
        assert_eq!(state["status"], json!("completed"));
        assert_eq!(
            manager.answer("tasks/result", &id),
            Some(Answer::Result(sample))
        );
        let cancel = manager.answer("tasks/cancel", &id).unwrap();
        assert_eq!(
            cancel,
            Answer::Error {
                code: -32602,
                message: "Cannot cancel task in completed status".into()
            }
        );
        let unknown = manager.answer("tasks/get", &json!({"taskId": "nope"}));
        assert_eq!(
            unknown,
            Some(Answer::Error {
                code: -32602,
                message: "Task not found: nope".into()
            })
        );
        assert_eq!(manager.answer("ping", &json!({})), None);
    }

    #[test]
    fn a_refused_request_fails_its_task_and_an_unanswered_one_can_be_cancelled() {
        let mut manager = TaskManager::default();
        let refusal = Answer::Error {
            code: -32000,
            message: "Sampling not allowed".into(),
        };
        let (failed, update) = manager.create(json!(60000), refusal.clone());
        let update = update.unwrap();
        assert_eq!(update["status"], json!("failed"));
        assert_eq!(update["statusMessage"], json!("Sampling not allowed"));
        assert_eq!(update["ttl"], json!(60000));
        let failed_id = json!({"taskId": failed["task"]["taskId"]});
        assert_eq!(manager.answer("tasks/result", &failed_id), Some(refusal));

        let (waiting, update) = manager.create(json!(null), Answer::None("no approval".into()));
        assert!(update.is_none());
        let waiting_id = json!({"taskId": waiting["task"]["taskId"]});
        assert!(matches!(
            manager.answer("tasks/result", &waiting_id),
            Some(Answer::None(_))
        ));
        let Some(Answer::Result(cancelled)) = manager.answer("tasks/cancel", &waiting_id) else {
            panic!("not cancelled")
        };
        assert_eq!(cancelled["status"], json!("cancelled"));
        assert_eq!(
            code_of(&manager.answer("tasks/result", &waiting_id).unwrap()),
            Some(-32603)
        );
        let Some(Answer::Result(list)) = manager.answer("tasks/list", &json!({})) else {
            panic!("no list")
        };
        assert_eq!(list["tasks"].as_array().unwrap().len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_is_deleted_after_its_ttl_or_a_minute_after_it_ended() {
        let mut manager = TaskManager::default();
        let (short, _) = manager.create(json!(5000), Answer::Result(json!({})));
        let (plain, _) = manager.create(json!(null), Answer::Result(json!({})));
        let get = |created: &Value| json!({"taskId": created["task"]["taskId"]});
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(
            code_of(&manager.answer("tasks/get", &get(&short)).unwrap()),
            Some(-32602)
        );
        assert_eq!(
            code_of(&manager.answer("tasks/get", &get(&plain)).unwrap()),
            None
        );
        tokio::time::advance(Duration::from_secs(55)).await;
        assert_eq!(
            code_of(&manager.answer("tasks/get", &get(&plain)).unwrap()),
            Some(-32602)
        );
    }
}
