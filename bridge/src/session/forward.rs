//! Forwarded requests and what the upstream sends back (R3-R6, O4, O8-O11, C3).

use super::table::{InFlight, KeptRequest, Pending, RoundPhase};
use super::{Session, key_of};
use crate::log::{BRIDGE, MCP_ROUTER};
use crate::notify::listen::End;
use crate::rules::errors;
use crate::rules::meta::{PROGRESS_TOKEN_KEY, client_progress_token, request_meta};
use crate::rules::progress::client_progress;
use crate::rules::results::{ResultKind, check_result_shape, result_kind, shape_result};
use crate::upstream::{Outgoing, RequestFailure};
use crate::wire::error::{BridgeError, Cause};
use crate::wire::frame::{self, Message, Notification, Outcome, Response};
use crate::wire::id::IdKey;
use crate::wire::shallow::ShallowObject;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The debug line of one answered upstream round.
pub(super) fn log_round(key: &IdKey, upstream_id: u64, request: &InFlight, outcome: &str) {
    tracing::debug!(
        target: BRIDGE,
        "upstream request {upstream_id} ({}, round {} of client request {key}): {outcome} after {} ms",
        request.method,
        request.round,
        request.waiting_since.elapsed().as_millis()
    );
}

/// The methods whose result can ask for input (R8, O9).
pub(super) fn may_ask_for_input(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

impl Session {
    /// The time limit of one upstream round: 1 h for tools/call and for the later
    /// rounds of prompts/get and resources/read, 120 s for the rest.
    pub(super) fn round_limit(&self, method: &str, round: u32) -> Duration {
        if method == "tools/call" || (round > 1 && may_ask_for_input(method)) {
            self.limits.call_timeout
        } else {
            self.limits.list_timeout
        }
    }

    /// Sends a request of VS Code upstream (R3): the client's `_meta` is replaced by
    /// the bridge's, and `task` goes (the bridge declares no tasks).
    pub(super) async fn forward(
        &mut self,
        id: Value,
        method: String,
        mut params: ShallowObject<'static>,
    ) {
        let key = key_of(&id);
        if self.table.client.contains_key(&key) {
            return self
                .reply_error(id, BridgeError::new(Cause::DuplicateId))
                .await;
        }
        if self.table.client.len() >= self.limits.max_in_flight {
            tracing::warn!(target: BRIDGE, "rejected request {key} ({method}): too many requests in flight");
            return self
                .reply_error(id, BridgeError::new(Cause::TooManyRequests))
                .await;
        }
        if self.client.is_none() || self.upstream.is_none() {
            return self
                .reply_error(id, BridgeError::new(Cause::NotConnected))
                .await;
        }
        let upstream_id = self.next_upstream_id();
        let Some(client) = &self.client else {
            return;
        };
        let client_meta = params.remove("_meta");
        params.remove("task");
        // Only an object is a `_meta`; anything else is dropped as it was.
        let client_meta = client_meta.as_deref().and_then(ShallowObject::parse);
        let client_token = client_progress_token(client_meta.as_ref());
        // The upstream gets a token of the bridge, the first upstream id: progress
        // is keyed by request, never by VS Code's token (C3).
        let progress_token = client_token.as_ref().map(|_| upstream_id);
        let meta = request_meta(
            &client.base_meta,
            self.log_level.as_deref(),
            progress_token,
            client_meta.as_ref(),
        );
        let params = Arc::new(params);
        let kept = may_ask_for_input(&method).then(|| KeptRequest {
            params: params.clone(),
            meta: meta.clone(),
        });
        self.send_upstream(Outgoing::Request {
            id: upstream_id,
            method: method.clone(),
            params,
            meta,
        });
        let first_notice = self.limits.still_waiting_after;
        let limit = self.round_limit(&method, 1);
        let now = Instant::now();
        let timer = self
            .deadlines
            .insert(now + first_notice.min(limit), key.clone());
        self.table
            .upstream
            .insert(upstream_id, Pending::Request(key.clone()));
        if let Some(token) = progress_token {
            self.table.progress.insert(token, key.clone());
        }
        self.table.client.insert(
            key,
            InFlight {
                id,
                method,
                client_token,
                progress_token,
                round: 1,
                upstream_id,
                phase: RoundPhase::Upstream,
                waiting_since: now,
                next_notice: first_notice,
                timer,
                kept,
                state_sent: false,
                last_input_wait: Duration::ZERO,
                accepted_urls: Vec::new(),
            },
        );
    }

    pub(super) async fn on_upstream_message(&mut self, message: Message) {
        match message {
            Message::Response(response) => self.on_upstream_response(response).await,
            Message::Notification(notification) => {
                self.on_upstream_notification(notification).await
            }
            Message::Request(request) => {
                tracing::warn!(
                    target: MCP_ROUTER,
                    "dropped a request ({}) of the upstream server: a server of revision 2026-07-28 sends no requests",
                    request.method
                );
            }
        }
    }

    async fn on_upstream_response(&mut self, response: Response) {
        let Response { id, outcome } = response;
        let pending = id
            .as_u64()
            .and_then(|id| self.table.upstream.remove(&id).map(|p| (id, p)));
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
            None if id.as_u64().is_some_and(|id| id < self.next_upstream_id) => {
                tracing::debug!(
                    target: MCP_ROUTER,
                    "dropped a response with the id {id}: the request is no longer in flight"
                );
            }
            None => tracing::warn!(
                target: MCP_ROUTER,
                "dropped a response with the id {id}: the bridge sent no request with this id"
            ),
        }
    }

    /// The upstream answered one round of a request of VS Code.
    async fn on_round_done(&mut self, key: IdKey, upstream_id: u64, outcome: Outcome) {
        let Some(request) = self.table.client.get(&key) else {
            return;
        };
        let method = request.method.clone();
        let exchange = |outcome: &str| log_round(&key, upstream_id, request, outcome);
        let reply = match outcome {
            Outcome::Error(error) => {
                let code = error.get("code").and_then(Value::as_i64);
                exchange(&format!(
                    "error {}",
                    code.map_or_else(|| "?".to_owned(), |c| c.to_string())
                ));
                if code == Some(-32602) && request.state_sent {
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
                        tracing::info!(target: BRIDGE, "{}", fix.log_line());
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
        let Some(request) = self.table.client.get(&key) else {
            return;
        };
        tracing::warn!(
            target: BRIDGE,
            "request {key} ({}): the upstream server refused the request state after an input wait of {}",
            request.method,
            format_duration(request.last_input_wait)
        );
        let reply = if request.method == "tools/call" {
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
        if let Some(Pending::Request(key)) = self.table.upstream.get(&upstream_id)
            && let Some(request) = self.table.client.get_mut(key)
        {
            request.kept = None;
        }
    }

    /// Ends a request of VS Code whose upstream result is not valid, with the
    /// warning line and `invalid_response`.
    pub(super) async fn fail_invalid_result(&mut self, key: &IdKey, method: &str, detail: &str) {
        tracing::warn!(target: BRIDGE, "request {key} ({method}): {detail}");
        self.finish(key, Outcome::Error(invalid_response(detail)))
            .await;
    }

    /// Ends a request of VS Code with its response.
    pub(super) async fn finish(&mut self, key: &IdKey, reply: Outcome) {
        self.close_request(key, "the request ended", Some(reply))
            .await;
    }

    /// Ends a request of VS Code with an error of the bridge.
    pub(super) async fn fail_request(&mut self, key: &IdKey, error: BridgeError) {
        self.finish(key, Outcome::Error(error.to_object())).await;
    }

    async fn on_upstream_notification(&mut self, mut notification: Notification) {
        if self.on_stream_notification(&mut notification).await {
            return;
        }
        match notification.method.as_str() {
            "notifications/progress" => self.on_upstream_progress(notification.params).await,
            method => {
                tracing::debug!(target: MCP_ROUTER, "dropped the notification {method} of the upstream server");
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
            .and_then(|token| self.table.progress.get(&token))
            .and_then(|key| self.table.client.get(key));
        let Some(client_token) = request.and_then(|request| request.client_token.as_ref()) else {
            tracing::debug!(target: MCP_ROUTER, "dropped a progress notification for no request in flight");
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
        let pending = upstream_id.and_then(|id| self.table.upstream.get(&id).cloned());
        match pending {
            Some(Pending::Request(key)) => {
                tracing::warn!(target: MCP_ROUTER, "dropped {frame_text}: {reason}, and the request {key} of the client fails");
                self.finish(&key, Outcome::Error(invalid_response(&reason)))
                    .await;
            }
            Some(Pending::Discover) => {
                tracing::warn!(target: MCP_ROUTER, "dropped {frame_text}: {reason}, and server/discover fails");
                if let Some(id) = upstream_id {
                    self.table.upstream.remove(&id);
                }
                let error = json!({"code": -32603, "message": reason});
                self.on_discover(Outcome::Error(error)).await;
            }
            Some(Pending::Listen) | None => {
                tracing::warn!(target: MCP_ROUTER, "dropped {frame_text}: {reason}")
            }
        }
    }

    /// The link failed the upstream request `upstream_id` (an HTTP status, a
    /// refused connection): that request fails, and the link stays usable.
    pub(super) async fn on_request_failed(&mut self, upstream_id: u64, failure: RequestFailure) {
        match self.table.upstream.get(&upstream_id).cloned() {
            Some(Pending::Request(key)) => {
                let method = self
                    .table
                    .client
                    .get(&key)
                    .map(|request| request.method.clone())
                    .unwrap_or_default();
                tracing::warn!(target: BRIDGE, "request {key} ({method}): the upstream request failed: {failure}");
                self.fail_request(&key, failure.to_error()).await;
            }
            Some(Pending::Discover) => {
                self.table.upstream.remove(&upstream_id);
                self.discover_failed_in_link(failure).await;
            }
            Some(Pending::Listen) => {
                self.listen_ended(upstream_id, End::Lost(failure.to_string()))
                    .await
            }
            None => tracing::debug!(
                target: BRIDGE,
                "the upstream request {upstream_id} failed after its end: {failure}"
            ),
        }
    }

    /// A request of VS Code that waits: a "still waiting" line, or its time limit.
    pub(super) async fn request_timer(&mut self, key: IdKey) {
        let Some(request) = self.table.client.get(&key) else {
            return;
        };
        let elapsed = request.waiting_since.elapsed();
        let method = request.method.clone();
        match &request.phase {
            RoundPhase::Upstream => {
                let limit = self.round_limit(&method, request.round);
                if elapsed >= limit {
                    let upstream_id = request.upstream_id;
                    let limit = format_duration(limit);
                    tracing::warn!(target: BRIDGE, "request {key} ({method}): no response in {limit}");
                    self.cancel_upstream(upstream_id, "The bridge stopped waiting for the answer.");
                    let error = BridgeError::with_detail(
                        Cause::Timeout,
                        format!("{method}: no response in {limit}"),
                    );
                    return self.fail_request(&key, error).await;
                }
                tracing::info!(
                    target: BRIDGE,
                    "still waiting for the upstream server: {method} (request {key}, {} s)",
                    elapsed.as_secs()
                );
                self.next_notice(&key, limit);
            }
            RoundPhase::Client(round) => {
                let limit = self.limits.input_timeout;
                if elapsed >= limit {
                    let (left, total) = (round.pending.len(), round.total);
                    let limit = format_duration(limit);
                    tracing::warn!(
                        target: BRIDGE,
                        "request {key} ({method}): no answers of the client in {limit} (input requests without an answer: {left} of {total})"
                    );
                    let error = BridgeError::with_detail(
                        Cause::InputTimeout,
                        format!(
                            "no answers of the client in {limit} ({left} of {total} input requests)"
                        ),
                    );
                    self.close_request(
                        &key,
                        "the client did not answer in time",
                        Some(Outcome::Error(error.to_object())),
                    )
                    .await;
                    return;
                }
                tracing::info!(
                    target: BRIDGE,
                    "still waiting for the answers of the client to the input requests of {method} (request {key}, {} s)",
                    elapsed.as_secs()
                );
                self.next_notice(&key, limit);
            }
        }
    }

    /// Schedules the next "still waiting" line of a request, or its time limit.
    fn next_notice(&mut self, key: &IdKey, limit: Duration) {
        let every = self.limits.still_waiting_every;
        let Some(request) = self.table.client.get_mut(key) else {
            return;
        };
        request.next_notice += every;
        let at = request.waiting_since + request.next_notice.min(limit);
        request.timer = self.deadlines.insert(at, key.clone());
    }

    /// VS Code cancelled a request: the upstream gets the cancellation, the
    /// bridge's requests to VS Code for it are cancelled, and VS Code gets no response.
    pub(super) async fn on_client_cancelled(&mut self, params: Option<Map<String, Value>>) {
        let Some(key) = params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(IdKey::of)
        else {
            tracing::debug!(target: BRIDGE, "dropped a notifications/cancelled without a valid requestId");
            return;
        };
        let Some(request) = self
            .close_request(&key, "the client canceled the request", None)
            .await
        else {
            tracing::debug!(target: BRIDGE, "dropped a notifications/cancelled for request {key}, which is not in flight");
            return;
        };
        tracing::debug!(target: BRIDGE, "request {key} ({}): the client canceled it", request.method);
        if matches!(request.phase, RoundPhase::Upstream) {
            self.cancel_upstream(request.upstream_id, "The client canceled the request.");
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
