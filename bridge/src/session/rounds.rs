//! The rounds of input requests, done for VS Code (R8, O1-O3, C2, M2).
//!
//! An upstream result `input_required` becomes requests of the bridge to VS Code
//! (`b-1`, `b-2`, ...), all of a round at once. When VS Code has answered them all,
//! the original request goes upstream again with a new id, the answers as
//! `inputResponses`, and the `requestState` unchanged. VS Code only ever sees the
//! complete result or an error.

use super::Session;
use super::forward::invalid_response;
use super::table::{BridgeRequest, ClientRound, Pending, PendingInput, RoundPhase};
use crate::cause::{BridgeError, Cause};
use crate::log::BRIDGE;
use crate::rules::errors;
use crate::rules::input::{
    Answer, Ask, Planned, RoundError, answer_of, elicitation_error_answer, plan_round,
};
use crate::upstream::Outgoing;
use crate::wire::frame::{self, Outcome, Response};
use crate::wire::id::IdKey;
use crate::wire::shallow::ShallowObject;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use tokio::time::Instant;

/// The levels above an answer in the upstream request of the next round: the
/// frame, `params` and `inputResponses`.
const ANSWER_LEVELS: usize = 3;

impl Session {
    /// Starts a round of input for VS Code from an `input_required` result.
    pub(super) async fn start_input_round(&mut self, key: IdKey, result: Map<String, Value>) {
        let Some(request) = self.requests.client.get(&key) else {
            return;
        };
        let method = request.method.clone();
        if request.round >= self.limits.max_rounds {
            tracing::warn!(
                target: BRIDGE,
                "request {key} ({method}): the upstream server asked for input in {} rounds",
                request.round
            );
            let error =
                BridgeError::with_detail(Cause::TooManyRounds, format!("{} rounds", request.round));
            return self.fail_request(&key, error).await;
        }
        let inputs = self
            .client
            .as_ref()
            .map(|client| client.inputs)
            .unwrap_or_default();
        let accepted: HashSet<String> = request
            .accepted_urls
            .iter()
            .map(|(url, _)| url.clone())
            .collect();
        let plan = match plan_round(&result, inputs, &accepted, self.limits.max_inputs_per_round) {
            Ok(plan) => plan,
            Err(error) => {
                let detail = error.detail();
                tracing::warn!(
                    target: BRIDGE,
                    "request {key} ({method}): the input requests of the upstream server failed: {detail}"
                );
                let cause = match error {
                    RoundError::InvalidResult(_) => Cause::InvalidResponse,
                    RoundError::TooMany { .. } => Cause::TooManyInputRequests,
                    RoundError::Undeclared { .. } => Cause::UndeclaredInputRequest,
                    RoundError::Invalid { .. } => Cause::InvalidInputRequest,
                };
                let error = BridgeError::with_detail(cause, detail);
                return self.fail_request(&key, error).await;
            }
        };
        // O1: a URL step that this round does not ask for again is over.
        let asked_again: HashSet<&str> = plan
            .inputs
            .iter()
            .filter_map(|input| match input {
                Planned::Ask {
                    ask: Ask::ContinueUrl { url },
                    ..
                } => Some(url.as_str()),
                _ => None,
            })
            .collect();
        let (kept, done): (Vec<_>, Vec<_>) = request
            .accepted_urls
            .iter()
            .cloned()
            .partition(|(url, _)| asked_again.contains(url.as_str()));
        self.complete_url_steps(done).await;
        let mut round = ClientRound {
            request_state: plan.request_state,
            total: plan.inputs.len(),
            ..Default::default()
        };
        for input in plan.inputs {
            match input {
                Planned::Refused {
                    key: input_key,
                    answer,
                } => {
                    tracing::warn!(
                        target: BRIDGE,
                        "input request '{input_key}': the bridge refused the URL of a URL elicitation, and the upstream server gets decline"
                    );
                    round.answers.insert(input_key, answer);
                }
                Planned::Ask {
                    key: input_key,
                    method: input_method,
                    mut params,
                    ask,
                } => {
                    let bridge_id = self.requests.next_bridge_id();
                    let elicitation_id =
                        matches!(ask, Ask::Url { .. }).then(|| uuid::Uuid::new_v4().to_string());
                    if let Some(elicitation_id) = &elicitation_id {
                        params.insert("elicitationId".into(), elicitation_id.clone().into());
                    }
                    tracing::debug!(
                        target: BRIDGE,
                        "request {key} ({method}): sent {input_method} to the client as request \"{bridge_id}\""
                    );
                    self.out
                        .send(frame::request_frame(
                            bridge_id.clone().into(),
                            input_method,
                            params,
                        ))
                        .await;
                    self.requests
                        .bridge
                        .insert(bridge_id.clone(), BridgeRequest::Input(key.clone()));
                    round.pending.insert(
                        bridge_id,
                        PendingInput {
                            key: input_key,
                            ask,
                            elicitation_id,
                        },
                    );
                }
            }
        }
        let Some(request) = self.requests.client.get_mut(&key) else {
            return;
        };
        request.accepted_urls = kept;
        if round.pending.is_empty() {
            request.phase = RoundPhase::Client(round);
            return self.next_round(&key).await;
        }
        request.phase = RoundPhase::Client(round);
        request.waiting_since = Instant::now();
        request.next_notice = self.limits.still_waiting_after;
        self.requests.deadlines.remove(request.timer);
        let first = self
            .limits
            .still_waiting_after
            .min(self.limits.input_timeout);
        request.timer = self
            .requests
            .deadlines
            .insert(request.waiting_since + first, key.clone());
    }

    /// VS Code answered a request of the bridge.
    pub(super) async fn on_client_answer(&mut self, response: Response) {
        let Response { id, outcome } = response;
        let (bridge_id, key) = match self.take_bridge_request(&id) {
            Some((bridge_id, BridgeRequest::Input(key))) => (bridge_id, key),
            Some((bridge_id, BridgeRequest::Link(answer))) => {
                tracing::debug!(target: BRIDGE, "the client answered the request \"{bridge_id}\" of the upstream link");
                let _ = answer.send(outcome);
                return;
            }
            None => return,
        };
        let Some(request) = self.requests.client.get_mut(&key) else {
            return;
        };
        let RoundPhase::Client(round) = &mut request.phase else {
            return;
        };
        let Some(input) = round.pending.remove(&bridge_id) else {
            return;
        };
        let method = request.method.clone();
        match outcome {
            Outcome::Result(result) => match answer_of(&input.ask, result) {
                // The answer goes upstream three levels deeper than VS Code sent it
                // (params, inputResponses, its key): past the limit, no server of
                // revision 2026-07-28 could read the next round.
                Answer::Ready(answer)
                    if ANSWER_LEVELS + frame::depth(&answer) > frame::MAX_DEPTH =>
                {
                    let detail = format!(
                        "input request '{}': the answer has more levels of nesting than the limit of the bridge",
                        input.key
                    );
                    return self
                        .fail_input(&key, &method, Cause::InvalidClientAnswer, detail)
                        .await;
                }
                Answer::Ready(answer) => {
                    if let (Ask::Url { url }, Some(elicitation_id)) =
                        (&input.ask, &input.elicitation_id)
                        && answer.get("action").and_then(Value::as_str) == Some("accept")
                    {
                        request
                            .accepted_urls
                            .push((url.clone(), elicitation_id.clone()));
                    }
                    round.answers.insert(input.key, answer);
                }
                Answer::Invalid(why) => {
                    let detail = format!("input request '{}': {why}", input.key);
                    return self
                        .fail_input(&key, &method, Cause::InvalidClientAnswer, detail)
                        .await;
                }
            },
            Outcome::Error(error) => match input.ask {
                // O1: an error of VS Code to an elicitation is a cancel for the upstream.
                Ask::Form { .. }
                | Ask::ContinueForm
                | Ask::ContinueUrl { .. }
                | Ask::Url { .. } => {
                    round.answers.insert(input.key, elicitation_error_answer());
                }
                // O2, O3: the request fails with VS Code's error (a refusal of the user: -32000).
                Ask::Sampling | Ask::Roots => {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message")
                        .to_owned();
                    tracing::info!(
                        target: BRIDGE,
                        "request {key} ({method}): the client answered an input request with an error: {message}"
                    );
                    let error = errors::client_error(error).unwrap_or_else(|| {
                        invalid_response("the error of the client is not valid JSON-RPC")
                    });
                    return self.finish(&key, Outcome::Error(error)).await;
                }
            },
        }
        if round.pending.is_empty() {
            self.next_round(&key).await;
        }
    }

    /// A line of VS Code that is not valid but carries the id of a request of the
    /// bridge: that answer is not usable, and the request it serves fails.
    pub(super) async fn on_broken_answer(&mut self, id: &Value) -> bool {
        let (bridge_id, key) = match self.take_bridge_request(id) {
            Some((bridge_id, BridgeRequest::Input(key))) => (bridge_id, key),
            // The link sees its question end without an answer.
            Some((_, BridgeRequest::Link(_))) => return true,
            None => return false,
        };
        // The broken line answered its request: it is no longer pending.
        if let Some(RoundPhase::Client(round)) =
            self.requests.client.get_mut(&key).map(|r| &mut r.phase)
        {
            round.pending.remove(&bridge_id);
        }
        let method = self
            .requests
            .client
            .get(&key)
            .map(|r| r.method.clone())
            .unwrap_or_default();
        let detail = format!("the answer to the request {id} is not a valid JSON-RPC response");
        self.fail_input(&key, &method, Cause::InvalidClientAnswer, detail)
            .await;
        true
    }

    /// The request of the bridge that `id` answers, taken out of the table; `None`
    /// (with a debug line) for an unknown, late, numeric or null id.
    fn take_bridge_request(&mut self, id: &Value) -> Option<(String, BridgeRequest)> {
        let found = id.as_str().and_then(|bridge_id| {
            let owner = self.requests.bridge.remove(bridge_id)?;
            Some((bridge_id.to_owned(), owner))
        });
        if found.is_none() {
            tracing::debug!(
                target: BRIDGE,
                "dropped an answer of the client with the id {id}: no request of the bridge with this id waits"
            );
        }
        found
    }

    /// A question of the link for VS Code, which serves no request of VS Code:
    /// it goes out as a `b-N` request, and its answer goes back to the link.
    pub(super) async fn ask_client(&mut self, question: crate::upstream::ClientQuestion) {
        let bridge_id = self.requests.next_bridge_id();
        tracing::debug!(
            target: BRIDGE,
            "the upstream link: sent {} to the client as request \"{bridge_id}\"",
            question.method
        );
        self.out
            .send(frame::request_frame(
                bridge_id.clone().into(),
                &question.method,
                question.params,
            ))
            .await;
        self.requests
            .bridge
            .insert(bridge_id, BridgeRequest::Link(question.answer));
    }

    /// The questions of the link end without an answer (the end of stdin): VS Code
    /// learns it, and the link sees its channel closed.
    pub(super) async fn cancel_link_questions(&mut self, reason: &str) {
        self.cancel_link_questions_where(reason, |_| true).await;
    }

    /// The questions whose answer the link no longer waits for (it dropped their
    /// channel): VS Code learns that they ended.
    pub(super) async fn cancel_withdrawn_questions(&mut self, reason: &str) {
        self.cancel_link_questions_where(reason, |answer| answer.is_closed())
            .await;
    }

    async fn cancel_link_questions_where(
        &mut self,
        reason: &str,
        ended: impl Fn(&tokio::sync::oneshot::Sender<Outcome>) -> bool,
    ) {
        let mut questions: Vec<String> = self
            .requests
            .bridge
            .iter()
            .filter(|(_, owner)| matches!(owner, BridgeRequest::Link(answer) if ended(answer)))
            .map(|(id, _)| id.clone())
            .collect();
        questions.sort_by_key(|id| bridge_number(id));
        for bridge_id in questions {
            self.requests.bridge.remove(&bridge_id);
            self.cancel_client_request(&bridge_id, reason).await;
        }
    }

    async fn fail_input(&mut self, key: &IdKey, method: &str, cause: Cause, detail: String) {
        tracing::warn!(
            target: BRIDGE,
            "request {key} ({method}): the input requests of the upstream server failed: {detail}"
        );
        let error = BridgeError::with_detail(cause, detail);
        self.fail_request(key, error).await;
    }

    /// All answers are in: the original request goes upstream again with a new id,
    /// the answers and the unchanged state.
    async fn next_round(&mut self, key: &IdKey) {
        let Some(request) = self.requests.client.get(key) else {
            return;
        };
        let Some(original) = &request.kept else {
            return;
        };
        let meta = original.meta.clone();
        let original_params = match original.params.load().await {
            Ok(params) => params,
            Err(error) => {
                let method = request.method.clone();
                let detail =
                    format!("the request kept for its next round cannot be read back: {error}");
                tracing::warn!(target: BRIDGE, "request {key} ({method}): {detail}");
                let error = BridgeError::with_detail(Cause::OutOfMemory, detail);
                self.fail_request(key, error).await;
                return;
            }
        };
        let upstream_id = self.requests.next_upstream_id();
        let still_waiting_after = self.limits.still_waiting_after;
        let Some(request) = self.requests.client.get_mut(key) else {
            return;
        };
        let RoundPhase::Client(round) = std::mem::replace(&mut request.phase, RoundPhase::Upstream)
        else {
            return;
        };
        let mut params = ShallowObject::clone(&original_params);
        params.insert_value("inputResponses", &Value::Object(round.answers));
        request.state_sent = round.request_state.is_some();
        if let Some(state) = round.request_state {
            params.insert_value("requestState", &state);
        }
        request.last_input_wait = request.waiting_since.elapsed();
        request.round += 1;
        request.upstream_id = upstream_id;
        request.waiting_since = Instant::now();
        request.next_notice = still_waiting_after;
        let method = request.method.clone();
        let round = request.round;
        let limit = self.round_limit(&method, round);
        let Some(request) = self.requests.client.get_mut(key) else {
            return;
        };
        self.requests.deadlines.remove(request.timer);
        let at = request.waiting_since + still_waiting_after.min(limit);
        request.timer = self.requests.deadlines.insert(at, key.clone());
        self.requests
            .upstream
            .insert(upstream_id, Pending::Request(key.clone()));
        self.send_upstream(Outgoing::Request {
            id: upstream_id,
            method,
            params: Arc::new(params),
            meta,
        });
    }

    /// O1: VS Code learns that URL steps are over.
    pub(super) async fn complete_url_steps(&mut self, steps: Vec<(String, String)>) {
        for (_, elicitation_id) in steps {
            let mut params = Map::new();
            params.insert("elicitationId".into(), elicitation_id.into());
            self.out
                .send(frame::notification_frame(
                    "notifications/elicitation/complete",
                    Some(params),
                ))
                .await;
        }
    }

    /// Quirk table: VS Code ignores this, but the bridge says it, and drops a late answer.
    pub(super) async fn cancel_client_request(&mut self, bridge_id: &str, reason: &str) {
        let mut params = Map::new();
        params.insert("requestId".into(), bridge_id.into());
        params.insert("reason".into(), reason.into());
        self.out
            .send(frame::notification_frame(
                "notifications/cancelled",
                Some(params),
            ))
            .await;
    }
}

/// The number of a request id `b-N`, for a stable order of cancellations.
pub(super) fn bridge_number(id: &str) -> u64 {
    id.trim_start_matches("b-")
        .parse::<u64>()
        .unwrap_or(u64::MAX)
}
