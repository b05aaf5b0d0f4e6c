//! Forwarded requests and what the upstream sends back (R3-R6, O4, O8-O11, C3).

use super::Session;
use super::requests::{InFlight, Pending};
use crate::catalogue::{
    BridgeDebug, InputWarning, RequestInfo, RequestWarning, RouterDebug, RouterWarning,
};
use crate::catalogue::{BridgeError, Cause};
use crate::log::emit;
use crate::notify::listen::End;
use crate::rules::errors;
use crate::rules::meta::PROGRESS_TOKEN_KEY;
use crate::rules::progress::client_progress;
use crate::rules::results::{ResultKind, check_result_shape, result_kind, shape_result};
use crate::upstream::RequestFailure;
use crate::wire::frame::{self, Message, Notification, Outcome, Response};
use crate::wire::id::IdKey;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// The debug line of one answered upstream round.
pub(super) fn log_round(key: &IdKey, upstream_id: u64, request: &InFlight, outcome: &str) {
    emit!(BridgeDebug::UpstreamRound {
        upstream_id,
        method: request.method(),
        round: request.round(),
        id: key,
        outcome,
        elapsed: request.waiting_since().elapsed().as_millis(),
    });
}

/// The methods whose result can ask for input (R8, O9).
pub(super) fn may_ask_for_input(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

impl Session {
    pub(super) async fn on_upstream_message(&mut self, message: Message) {
        match message {
            Message::Response(response) => self.on_upstream_response(response).await,
            Message::Notification(notification) => {
                self.on_upstream_notification(notification).await
            }
            Message::Request(request) => {
                emit!(RouterWarning::DroppedRequest {
                    method: &request.method
                });
            }
        }
    }

    async fn on_upstream_response(&mut self, response: Response) {
        let Response { id, outcome } = response;
        let pending = id
            .as_u64()
            .and_then(|id| self.requests.take_pending(id).map(|p| (id, p)));
        match pending {
            Some((_, Pending::Discover)) => self.on_discover(outcome).await,
            Some((upstream_id, Pending::Request(key))) => {
                self.on_round_done(key, upstream_id, outcome).await
            }
            Some((listen_id, Pending::Listen)) => {
                let error = match outcome {
                    Outcome::Error(error) => Some(error),
                    Outcome::Result(_) => None,
                };
                self.listen_answered(listen_id, error).await
            }
            None if id.as_u64().is_some_and(|id| self.requests.issued(id)) => {
                emit!(RouterDebug::LateResponse { upstream_id: &id });
            }
            None => emit!(RouterWarning::DroppedResponse { id: &id }),
        }
    }

    /// The upstream answered one round of a request of VS Code.
    async fn on_round_done(&mut self, key: IdKey, upstream_id: u64, outcome: Outcome) {
        let Some(request) = self.requests.get(&key) else {
            return;
        };
        let method = request.method().to_owned();
        let exchange = |outcome: &str| log_round(&key, upstream_id, request, outcome);
        let reply = match outcome {
            Outcome::Error(error) => {
                let code = error.get("code").and_then(Value::as_i64);
                exchange(&format!(
                    "error {}",
                    code.map_or_else(|| "?".to_owned(), |c| c.to_string())
                ));
                if code == Some(-32602) && request.state_sent() {
                    return self.state_refused(key, error).await;
                }
                match errors::client_error(error) {
                    Some(error) => Outcome::Error(error),
                    None => {
                        Outcome::Error(invalid_response("the error object is not valid JSON-RPC"))
                    }
                }
            }
            Outcome::Result(Value::Object(mut result)) => match result_kind(&result) {
                ResultKind::Complete => {
                    exchange("result");
                    if let Err(error) = check_result_shape(&method, &result) {
                        return self
                            .fail_invalid_result(&key, &method, &error.to_string())
                            .await;
                    }
                    #[cfg(debug_assertions)]
                    let null_cursor = result.get("nextCursor") == Some(&Value::Null);
                    for fix in shape_result(&method, &mut result) {
                        emit!(RequestInfo: fix.log_line());
                    }
                    if self.data_icons_only {
                        crate::rules::icons::result_data_icons_only(&method, &mut result);
                    }
                    #[cfg(debug_assertions)]
                    if null_cursor && super::test_faults::keep_null_cursor() {
                        result.insert("nextCursor".into(), Value::Null);
                    }
                    Outcome::Result(Value::Object(result))
                }
                ResultKind::InputRequired if may_ask_for_input(&method) => {
                    exchange("input_required");
                    return self.start_input_round(key, result).await;
                }
                ResultKind::InputRequired => {
                    exchange("input_required");
                    Outcome::Error(invalid_response(&format!(
                        "the upstream server asked for input in answer to {method}"
                    )))
                }
                ResultKind::Unknown(kind) => {
                    exchange(&format!("result of the unknown resultType {kind}"));
                    Outcome::Error(invalid_response(&format!(
                        "the result has the resultType {kind}"
                    )))
                }
            },
            Outcome::Result(_) => {
                exchange("result that is not an object");
                Outcome::Error(invalid_response("the result is not an object"))
            }
        };
        self.finish(&key, reply).await;
    }

    /// The upstream refused the `requestState` of a later round (it expired, or the
    /// upstream started again): the user runs the request again.
    async fn state_refused(&mut self, key: IdKey, error: Value) {
        let Some(request) = self.requests.get(&key) else {
            return;
        };
        emit!(InputWarning::StateRefused {
            id: &key,
            method: request.method(),
            time: &format_duration(request.last_input_wait()),
        });
        let reply = if request.method() == "tools/call" {
            Outcome::Result(
                json!({"content":[{"type":"text","text":"The upstream server did not accept the saved state of the request. Run the tool again."}],"isError":true}),
            )
        } else {
            let mut refused = json!({"code":-32602,"message":"The upstream server did not accept the saved state of the request. Send the request again."});
            if let (Some(data), Some(refused)) = (error.get("data"), refused.as_object_mut()) {
                refused.insert("data".into(), data.clone());
            }
            Outcome::Error(refused)
        };
        self.finish(&key, reply).await;
    }

    /// A complete result comes next for the upstream request `id`: the request
    /// needs no other round, so what a round would need goes now.
    pub(super) fn release_kept_request(&mut self, upstream_id: u64) {
        self.requests.release_kept(upstream_id);
    }

    async fn on_upstream_notification(&mut self, mut notification: Notification) {
        if self.on_stream_notification(&mut notification).await {
            return;
        }
        match notification.method.as_str() {
            "notifications/progress" => self.on_upstream_progress(notification.params).await,
            method => {
                emit!(RouterDebug::NotificationDropped { method });
            }
        }
    }

    /// O4: upstream progress goes to VS Code with VS Code's token; without one, nowhere.
    async fn on_upstream_progress(&mut self, params: Option<Map<String, Value>>) {
        let Some(params) = params else {
            return;
        };
        let request = params
            .get(PROGRESS_TOKEN_KEY)
            .and_then(Value::as_u64)
            .and_then(|token| self.requests.by_progress_token(token));
        let Some(client_token) = request.and_then(InFlight::client_token) else {
            emit!(RouterDebug::ProgressDropped);
            return;
        };
        let params = client_progress(params, client_token);
        self.out
            .send(frame::notification_frame(
                "notifications/progress",
                Some(params),
            ))
            .await;
    }

    /// A frame the link could not read: when it names a request in flight, that
    /// request fails with `invalid_response`.
    pub(super) async fn on_unreadable(
        &mut self,
        frame_text: String,
        reason: String,
        id: Option<Value>,
    ) {
        let upstream_id = id.as_ref().and_then(Value::as_u64);
        let pending = upstream_id.and_then(|id| self.requests.pending(id).cloned());
        match pending {
            Some(Pending::Request(key)) => {
                emit!(RouterWarning::DroppedAndRequestFails {
                    frame: &frame_text,
                    reason: &reason,
                    id: &key,
                });
                self.finish(&key, Outcome::Error(invalid_response(&reason)))
                    .await;
            }
            Some(Pending::Discover) => {
                emit!(RouterWarning::DroppedAndDiscoverFails {
                    frame: &frame_text,
                    reason: &reason,
                });
                if let Some(id) = upstream_id {
                    self.requests.take_pending(id);
                }
                let error = json!({"code": -32603, "message": reason});
                self.on_discover(Outcome::Error(error)).await;
            }
            Some(Pending::Listen) | None => {
                emit!(RouterWarning::Dropped {
                    frame: &frame_text,
                    reason: &reason,
                })
            }
        }
    }

    /// The link failed the upstream request `upstream_id` (an HTTP status, a
    /// refused connection): that request fails, and the link stays usable.
    pub(super) async fn on_request_failed(&mut self, upstream_id: u64, failure: RequestFailure) {
        match self.requests.pending(upstream_id).cloned() {
            Some(Pending::Request(key)) => {
                let method = self
                    .requests
                    .get(&key)
                    .map(|request| request.method().to_owned())
                    .unwrap_or_default();
                emit!(RequestWarning::UpstreamRequestFailed {
                    id: &key,
                    method: &method,
                    failure: &failure,
                });
                self.fail_request(&key, failure.to_error()).await;
            }
            Some(Pending::Discover) => {
                self.requests.take_pending(upstream_id);
                self.discover_failed_in_link(failure).await;
            }
            Some(Pending::Listen) => {
                let end = match failure.http_status() {
                    Some(status) => End::Status(status),
                    None => End::Lost(failure.to_string()),
                };
                self.listen_ended(upstream_id, end).await
            }
            None => emit!(BridgeDebug::FailedAfterEnd {
                upstream_id,
                failure: &failure,
            }),
        }
    }
}

/// The error object of `invalid_response`.
pub(super) fn invalid_response(detail: &str) -> Value {
    BridgeError::with_detail(Cause::InvalidResponse, detail).to_object()
}

/// `120 s`, or `1500 ms` when the time is not whole seconds.
pub(super) fn format_duration(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}
