//! tools/call (and other requests) with each client's `_meta`, the Local
//! cancellation, the -32042 retry of the Local harness, and the MRTR rounds of
//! copilot-cli on the modern path. Tool calls run as tasks: `tool_tasks`.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::answering::{self, Answer};
use super::listing::{ListKind, error_display};
use super::{EventKind, Pending, SimClient, SimError, frames};
use crate::profile::Harness;

/// How a tool call ended for the client.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CallOutcome {
    /// A result.
    Result {
        /// The result object.
        result: Value,
        /// The text blocks joined by newlines.
        text: String,
        /// `isError`.
        is_error: bool,
    },
    /// An error response.
    Error {
        /// The code.
        code: i64,
        /// The message.
        message: String,
        /// As VS Code shows it: `MPC <code>: <message>`.
        display: String,
        /// The data, if any.
        data: Option<Value>,
    },
    /// The client did not send the call: the tool was omitted (R6 a) or every
    /// tool is stopped (R6 b).
    Blocked {
        /// Why.
        message: String,
    },
    /// The call could not complete for this client (no MRTR, no answer, rounds).
    Failed {
        /// Why.
        message: String,
    },
    /// The Local harness dropped the call after a server cancel with its id.
    Dropped,
}

impl CallOutcome {
    /// The text of a result.
    pub fn text(&self) -> Option<&str> {
        match self {
            CallOutcome::Result { text, .. } => Some(text),
            _ => None,
        }
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        match self {
            CallOutcome::Result { text, is_error, .. } => {
                if *is_error {
                    format!("error result: {text}")
                } else {
                    text.clone()
                }
            }
            CallOutcome::Error { display, .. } => display.clone(),
            CallOutcome::Blocked { message } | CallOutcome::Failed { message } => message.clone(),
            CallOutcome::Dropped => {
                "dropped (the server cancelled a request with the same id)".into()
            }
        }
    }
}

/// The text blocks of a tools/call result, joined by newlines.
pub(crate) fn result_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

impl SimClient {
    /// Calls a tool as the profile does and answers the server's questions
    /// meanwhile. Local: the R6 checks can stop the call; a -32042 error opens
    /// its URLs and retries once; a list change before the result is applied
    /// before this returns. Copilot: relists after a list change; on the
    /// modern path does the MRTR rounds (from 1.0.92).
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Result<CallOutcome, SimError> {
        if self.negotiated.is_none() {
            return Err(SimError::NotStarted);
        }
        if self.is_modern() {
            let outcome = self.call_modern(name, arguments).await?;
            self.relist_if_stale().await?;
            return Ok(outcome);
        }
        match self.profile.harness() {
            Harness::Local => self.call_local(name, arguments).await,
            Harness::Copilot => {
                let id = self.send_call(name, arguments).await?;
                let outcome = self.wait_call(id).await?;
                self.relist_if_stale().await?;
                Ok(outcome)
            }
        }
    }

    async fn call_local(&mut self, name: &str, arguments: Value) -> Result<CallOutcome, SimError> {
        if let Some(blocked) = self.schema_block(name) {
            self.log(EventKind::CallFailed {
                tool: name.into(),
                message: blocked.clone(),
            });
            return Ok(CallOutcome::Blocked { message: blocked });
        }
        let id = self.send_call(name, arguments.clone()).await?;
        let mut outcome = self.wait_call(id).await?;
        if let CallOutcome::Error {
            code: -32042,
            data: Some(data),
            ..
        } = &outcome
        {
            // VS Code opens each URL of data.elicitations and retries once.
            let elicitations = data
                .get("elicitations")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for elicitation in elicitations {
                let key = elicitation
                    .get("elicitationId")
                    .cloned()
                    .unwrap_or(Value::Null);
                self.answer_input(key, "elicitation/create", &elicitation);
            }
            let retry = self.send_call(name, arguments).await?;
            outcome = self.wait_call(retry).await?;
        }
        // awaitToolRefresh: a list change that came before the result is applied now.
        self.await_refresh(ListKind::Tools).await?;
        Ok(outcome)
    }

    fn schema_block(&self, name: &str) -> Option<String> {
        if !self.options.enforce_schema_checks {
            return None;
        }
        let Some(Ok(listing)) = self.lists.tools.last.as_ref() else {
            return None;
        };
        if let Some(blocked) = &listing.blocked {
            return Some(blocked.message());
        }
        listing.omitted.iter().any(|n| n == name).then(|| {
            format!("tool '{name}' was omitted because its input schema is not valid JSON Schema draft-07 (R6 a)")
        })
    }

    async fn relist_if_stale(&mut self) -> Result<(), SimError> {
        if self.tools_stale {
            match self.list_sequential(ListKind::Tools).await {
                Ok(_) | Err(SimError::List(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// Sends a tools/call without waiting (legacy path); returns its id for
    /// [`SimClient::wait_call`] and [`SimClient::cancel`].
    pub async fn send_call(&mut self, name: &str, arguments: Value) -> Result<i64, SimError> {
        self.send_call_with(name, arguments, None).await
    }

    async fn send_call_with(
        &mut self,
        name: &str,
        arguments: Value,
        round: Option<(Map<String, Value>, Option<String>)>,
    ) -> Result<i64, SimError> {
        let id = self.take_id();
        let params = match self.profile.harness() {
            Harness::Local => {
                let as_task = self.tool_runs_as_task(name);
                self.local_meta
                    .call_params(name, arguments.clone(), as_task)
            }
            Harness::Copilot => {
                let token = self.take_progress();
                let meta = if self.is_modern() {
                    frames::with_progress_token(&self.modern_meta, token)
                } else {
                    json!({"progressToken": token})
                };
                let mut params = json!({"_meta": meta, "arguments": arguments, "name": name});
                if let Some((responses, state)) = round {
                    params["inputResponses"] = Value::Object(responses);
                    if let Some(state) = state {
                        params["requestState"] = json!(state);
                    }
                }
                frames::sorted(params)
            }
        };
        self.calls.insert(id, name.to_owned());
        self.log(EventKind::Called {
            id,
            tool: name.into(),
            arguments,
        });
        self.send_awaited(id, "tools/call", params).await?;
        Ok(id)
    }

    /// Waits for the result of a call sent with [`SimClient::send_call`]. On
    /// the Local harness a CreateTaskResult is followed to the task's result.
    pub async fn wait_call(&mut self, id: i64) -> Result<CallOutcome, SimError> {
        let tool = self.calls.get(&id).cloned().unwrap_or_default();
        let response = match self.wait_response(id, self.options.request_timeout).await {
            Ok(response) => response,
            Err(SimError::DroppedByServer { .. }) => return Ok(self.call_dropped(&tool)),
            Err(other) => return Err(other),
        };
        if self.profile.is_local()
            && let Some(task) = response.pointer("/result/task").filter(|t| t.is_object())
        {
            // isTaskResult: the server runs the call as a task.
            return self.follow_tool_task(&tool, id, task.clone()).await;
        }
        Ok(self.outcome_of(&tool, id, &response))
    }

    pub(crate) fn call_dropped(&mut self, tool: &str) -> CallOutcome {
        self.log(EventKind::CallFailed {
            tool: tool.into(),
            message: "dropped: the server sent notifications/cancelled with the id of this request"
                .into(),
        });
        CallOutcome::Dropped
    }

    pub(crate) fn outcome_of(&mut self, tool: &str, id: i64, response: &Value) -> CallOutcome {
        if let Some(error) = response.get("error") {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let display = error_display(error);
            self.log(EventKind::CallError {
                id,
                tool: tool.into(),
                display: display.clone(),
            });
            return CallOutcome::Error {
                code,
                message,
                display,
                data: error.get("data").cloned(),
            };
        }
        let result = response.get("result").cloned().unwrap_or_default();
        let text = result_text(&result);
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.log(EventKind::CallResult {
            id,
            tool: tool.into(),
            text: text.clone(),
            is_error,
        });
        CallOutcome::Result {
            result,
            text,
            is_error,
        }
    }

    /// Cancels a request of the client: `notifications/cancelled {requestId}`;
    /// a later response is ignored.
    pub async fn cancel(&mut self, id: i64) -> Result<(), SimError> {
        let frame = frames::notification(
            self.profile.harness(),
            "notifications/cancelled",
            Some(json!({"requestId": id})),
        );
        self.peer.send(&frame).await?;
        if self.pending.contains_key(&id) {
            self.pending.insert(id, Pending::Cancelled);
        }
        self.log(EventKind::Cancelled { id });
        Ok(())
    }

    /// Sends any request with the profile's `_meta` and returns the response
    /// frame (for prompts/get, resources/read, completion/complete, ...).
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, SimError> {
        let id = self.take_id();
        let params = match self.profile.harness() {
            Harness::Local => params,
            Harness::Copilot => {
                let token = self.take_progress();
                let meta = if self.is_modern() {
                    frames::with_progress_token(&self.modern_meta, token)
                } else {
                    json!({"progressToken": token})
                };
                let mut params = if params.is_object() {
                    params
                } else {
                    json!({})
                };
                params["_meta"] = meta;
                frames::sorted(params)
            }
        };
        self.send_awaited(id, method, params).await?;
        self.wait_response(id, self.options.request_timeout).await
    }

    /// The modern path: resend the call with `inputResponses` and
    /// `requestState` until a complete result (copilot-cli 1.0.92 and later).
    async fn call_modern(&mut self, name: &str, arguments: Value) -> Result<CallOutcome, SimError> {
        let mut round_input = None;
        let mut round = 0;
        loop {
            let id = self
                .send_call_with(name, arguments.clone(), round_input.take())
                .await?;
            let response = match self.wait_response(id, self.options.request_timeout).await {
                Ok(response) => response,
                Err(SimError::DroppedByServer { .. }) => return Ok(CallOutcome::Dropped),
                Err(other) => return Err(other),
            };
            let result = response.get("result");
            let input_required = result
                .and_then(|r| r.get("resultType"))
                .and_then(Value::as_str)
                == Some("input_required");
            if !input_required {
                return Ok(self.outcome_of(name, id, &response));
            }
            let result = result.cloned().unwrap_or_default();
            round += 1;
            if !self.profile.has_mrtr() {
                return Ok(self.call_failed(
                    name,
                    format!(
                        "the server asked for input (input_required), and copilot-cli {} has no multi round-trip requests, so the tool cannot complete",
                        self.profile.client_version()
                    ),
                ));
            }
            if round > self.options.max_input_rounds {
                return Ok(self.call_failed(
                    name,
                    format!("the server asked for input in {} rounds", round - 1),
                ));
            }
            let requests = result
                .get("inputRequests")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            self.log(EventKind::InputRound {
                tool: name.into(),
                round,
                keys: requests.keys().cloned().collect(),
            });
            let mut responses = Map::new();
            for (key, request) in &requests {
                let method = request
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
                match self.answer_input(json!(key), method, &params) {
                    Some(answer) => {
                        responses.insert(key.clone(), answer);
                    }
                    None => {
                        return Ok(self.call_failed(
                            name,
                            format!("input request '{key}' ({method}) got no answer"),
                        ));
                    }
                }
            }
            let state = result
                .get("requestState")
                .and_then(Value::as_str)
                .map(str::to_owned);
            round_input = Some((responses, state));
        }
    }

    pub(crate) fn call_failed(&mut self, tool: &str, message: String) -> CallOutcome {
        self.log(EventKind::CallFailed {
            tool: tool.into(),
            message: message.clone(),
        });
        CallOutcome::Failed { message }
    }

    /// Answers one input request (MRTR round or -32042 entry) by the policy;
    /// `None` when the client gives no usable answer.
    fn answer_input(&mut self, key: Value, method: &str, params: &Value) -> Option<Value> {
        self.log(EventKind::Asked {
            id: key.clone(),
            method: method.into(),
            summary: answering::summary(method, params),
        });
        let answer = self.answer_by_policy(method, params);
        match answer {
            Answer::Result(result) => {
                self.log(EventKind::Answered {
                    id: key,
                    method: method.into(),
                    answer: result.clone(),
                });
                Some(result)
            }
            Answer::Error { code, message } => {
                self.log(EventKind::NotAnswered {
                    id: key,
                    method: method.into(),
                    why: frames::mpc_error(code, &message),
                });
                None
            }
            Answer::None(why) => {
                self.log(EventKind::NotAnswered {
                    id: key,
                    method: method.into(),
                    why,
                });
                None
            }
        }
    }
}
