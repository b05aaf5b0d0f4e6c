//! The rounds of input requests, done for VS Code (R8, O1-O3, C2, M2).
//!
//! An upstream result `input_required` becomes requests of the bridge to VS Code
//! (`b-1`, `b-2`, ...), all of a round at once. When VS Code has answered them all,
//! the original request goes upstream again with a new id, the answers as
//! `inputResponses`, and the `requestState` unchanged. VS Code only ever sees the
//! complete result or an error.

use super::Session;
use super::forward::invalid_response;
use super::requests::{Answered, ClientRound, PendingInput};
use crate::catalogue::{BridgeDebug, BridgeError, Cause, InputInfo, InputWarning, RequestWarning};
use crate::log::emit;
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

/// The levels above an answer in the upstream request of the next round: the
/// frame, `params` and `inputResponses`.
const ANSWER_LEVELS: usize = 3;

impl Session {
    /// Starts a round of input for VS Code from an `input_required` result.
    pub(super) async fn start_input_round(&mut self, key: IdKey, result: Map<String, Value>) {
        let Some(request) = self.requests.get(&key) else {
            return;
        };
        let method = request.method().to_owned();
        if request.round() >= self.limits.max_rounds {
            emit!(InputWarning::TooManyRounds {
                id: &key,
                method: &method,
                rounds: request.round(),
            });
            let error = BridgeError::with_detail(
                Cause::TooManyRounds,
                format!("{} rounds", request.round()),
            );
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
                emit!(InputWarning::InputRequestsFailed {
                    id: &key,
                    method: &method,
                    detail: &detail,
                });
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
        let mut round = ClientRound::new(plan.request_state, plan.inputs.len());
        for input in plan.inputs {
            match input {
                Planned::Refused {
                    key: input_key,
                    answer,
                } => {
                    emit!(InputWarning::UrlRefused { key: &input_key });
                    round.answers.insert(input_key, answer);
                }
                Planned::Ask {
                    key: input_key,
                    method: input_method,
                    mut params,
                    ask,
                } => {
                    let elicitation_id =
                        matches!(ask, Ask::Url { .. }).then(|| uuid::Uuid::new_v4().to_string());
                    if let Some(elicitation_id) = &elicitation_id {
                        params.insert("elicitationId".into(), elicitation_id.clone().into());
                    }
                    let input = PendingInput {
                        key: input_key,
                        ask,
                        elicitation_id,
                    };
                    let bridge_id = self.requests.ask_input(&key, &mut round, input);
                    emit!(BridgeDebug::InputRequestSent {
                        id: &key,
                        method: &method,
                        input_method,
                        bridge_id: &bridge_id,
                    });
                    self.out
                        .send(frame::request_frame(bridge_id.into(), input_method, params))
                        .await;
                }
            }
        }
        let Some(request) = self.requests.get_mut(&key) else {
            return;
        };
        request.accepted_urls = kept;
        let (first_notice, limit) = (self.limits.still_waiting_after, self.limits.input_timeout);
        if !self
            .requests
            .await_answers(&key, round, first_notice, limit)
        {
            self.next_round(&key).await;
        }
    }

    /// VS Code answered a request of the bridge.
    pub(super) async fn on_client_answer(&mut self, response: Response) {
        let Response { id, outcome } = response;
        let (key, input) = match self.take_bridge_request(&id) {
            Some((
                _,
                Answered::Input {
                    key,
                    input: Some(input),
                },
            )) => (key, input),
            Some((bridge_id, Answered::Link(answer))) => {
                emit!(BridgeDebug::LinkQuestionAnswered {
                    bridge_id: &bridge_id
                });
                let _ = answer.send(outcome);
                return;
            }
            // The request no longer waits for this answer.
            Some((_, Answered::Input { input: None, .. })) | None => return,
        };
        let Some(request) = self.requests.get_mut(&key) else {
            return;
        };
        let method = request.method().to_owned();
        let answer = match outcome {
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
                    answer
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
                | Ask::Url { .. } => elicitation_error_answer(),
                // O2, O3: the request fails with VS Code's error (a refusal of the user: -32000).
                Ask::Sampling | Ask::Roots => {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message")
                        .to_owned();
                    emit!(InputInfo::ClientAnsweredWithError {
                        id: &key,
                        method: &method,
                        message: &message,
                    });
                    let error = errors::client_error(error).unwrap_or_else(|| {
                        invalid_response("the error of the client is not valid JSON-RPC")
                    });
                    return self.finish(&key, Outcome::Error(error)).await;
                }
            },
        };
        let Some(round) = request.client_round_mut() else {
            return;
        };
        round.answers.insert(input.key, answer);
        if round.unanswered() == 0 {
            self.next_round(&key).await;
        }
    }

    /// A line of VS Code that is not valid but carries the id of a request of the
    /// bridge: that answer is not usable, and the request it serves fails.
    pub(super) async fn on_broken_answer(&mut self, id: &Value) -> bool {
        // The broken line answered its request: it is no longer pending.
        let key = match self.take_bridge_request(id) {
            Some((_, Answered::Input { key, .. })) => key,
            // The link sees its question end without an answer.
            Some((_, Answered::Link(_))) => return true,
            None => return false,
        };
        let method = self
            .requests
            .get(&key)
            .map(|r| r.method().to_owned())
            .unwrap_or_default();
        let detail = format!("the answer to the request {id} is not a valid JSON-RPC response");
        self.fail_input(&key, &method, Cause::InvalidClientAnswer, detail)
            .await;
        true
    }

    /// The request of the bridge that `id` answers, taken out of the table; `None`
    /// (with a debug line) for an unknown, late, numeric or null id.
    fn take_bridge_request(&mut self, id: &Value) -> Option<(String, Answered)> {
        let found = id.as_str().and_then(|bridge_id| {
            let owner = self.requests.take_answered(bridge_id)?;
            Some((bridge_id.to_owned(), owner))
        });
        if found.is_none() {
            emit!(BridgeDebug::LateAnswer { id });
        }
        found
    }

    /// A question of the link for VS Code, which serves no request of VS Code:
    /// it goes out as a `b-N` request, and its answer goes back to the link.
    pub(super) async fn ask_client(&mut self, question: crate::upstream::ClientQuestion) {
        let bridge_id = self.requests.ask_for_link(question.answer);
        emit!(BridgeDebug::LinkQuestionSent {
            input_method: &question.method,
            bridge_id: &bridge_id,
        });
        self.out
            .send(frame::request_frame(
                bridge_id.into(),
                &question.method,
                question.params,
            ))
            .await;
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
        for bridge_id in self.requests.take_link_questions(ended) {
            self.cancel_client_request(&bridge_id, reason).await;
        }
    }

    async fn fail_input(&mut self, key: &IdKey, method: &str, cause: Cause, detail: String) {
        emit!(InputWarning::InputRequestsFailed {
            id: key,
            method,
            detail: &detail,
        });
        let error = BridgeError::with_detail(cause, detail);
        self.fail_request(key, error).await;
    }

    /// All answers are in: the original request goes upstream again with a new id,
    /// the answers and the unchanged state.
    async fn next_round(&mut self, key: &IdKey) {
        let Some(request) = self.requests.get(key) else {
            return;
        };
        let Some(original) = &request.kept else {
            return;
        };
        let meta = original.meta.clone();
        let original_params = match original.params.load().await {
            Ok(params) => params,
            Err(error) => {
                let method = request.method().to_owned();
                let detail =
                    format!("the request kept for its next round cannot be read back: {error}");
                emit!(RequestWarning::Failed {
                    id: key,
                    method: &method,
                    detail: &detail,
                });
                let error = BridgeError::with_detail(Cause::OutOfMemory, detail);
                self.fail_request(key, error).await;
                return;
            }
        };
        let method = request.method().to_owned();
        let limit = self.round_limit(&method, request.round() + 1);
        let upstream_id = self.requests.next_upstream_id();
        let first_notice = self.limits.still_waiting_after;
        let Some(round) = self
            .requests
            .next_round(key, upstream_id, first_notice, limit)
        else {
            return;
        };
        let mut params = ShallowObject::clone(&original_params);
        params.insert_value("inputResponses", &Value::Object(round.answers));
        if let Some(state) = round.request_state {
            params.insert_value("requestState", &state);
        }
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
