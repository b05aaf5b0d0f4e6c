//! What the session does with a request of VS Code in flight: the one duplicate-id
//! check, the opening of its first round, its time limits, a cancellation, and
//! its end. The table of the requests is `requests.rs`.

use super::forward::{format_duration, invalid_response, may_ask_for_input};
use super::kept::KeptParams;
use super::requests::{InFlight, KeptRequest, RoundPhase};
use super::{Phase, Session, key_of};
use crate::catalogue::{
    BridgeDebug, BridgeError, Cause, InputInfo, InputWarning, RequestInfo, RequestWarning,
};
use crate::log::emit;
use crate::rules::meta::{client_progress_token, request_meta};
use crate::upstream::Outgoing;
use crate::wire::frame::{self, Outcome};
use crate::wire::id::IdKey;
use crate::wire::shallow::ShallowObject;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

impl Session {
    /// What every request passes first, whatever its method: the test faults, and
    /// the check that no request with its id is in flight. A second request with
    /// such an id gets its own error, so VS Code gets exactly one answer for each
    /// request. The id comes back when the request goes on.
    pub(super) async fn admit(&mut self, id: Value, method: &str) -> Option<Value> {
        #[cfg(debug_assertions)]
        super::test_faults::check(method);
        // R2, C1: ping and server/discover are answered at once in every state, also
        // when their id is the id of a request in flight; they never enter the table.
        let answered_at_once = matches!(method, "ping" | "server/discover");
        if !answered_at_once && self.is_in_flight(&id) {
            self.reply_error(id, BridgeError::new(Cause::DuplicateId))
                .await;
            return None;
        }
        Some(id)
    }

    /// Whether a request of VS Code with this id waits for its answer: a forwarded
    /// request, the initialize of the moment, or a change of subscriptions.
    pub(super) fn is_in_flight(&self, id: &Value) -> bool {
        let key = key_of(id);
        self.requests.contains(&key)
            || matches!(&self.phase, Phase::Initializing { client_id, .. } if key_of(client_id) == key)
            || self
                .listen
                .as_ref()
                .is_some_and(|listen| listen.has_change_for(&key))
    }

    /// Whether a new request of VS Code is at the limit of requests in flight:
    /// the forwarded requests and the changes of subscriptions that wait for
    /// their stream count alike.
    pub(super) fn at_in_flight_limit(&self) -> bool {
        let changes = self
            .listen
            .as_ref()
            .map_or(0, |listen| listen.changes_in_flight());
        self.requests.len() + changes >= self.limits.max_in_flight
    }

    /// Refuses a new request at the limit of requests in flight: the warning
    /// line, and `too_many_requests` at once. `None` when the request goes on.
    pub(super) async fn refuse_at_limit(&mut self, id: Value, method: &str) -> Option<Value> {
        if !self.at_in_flight_limit() {
            return Some(id);
        }
        emit!(RequestWarning::Rejected {
            id: &key_of(&id),
            method
        });
        self.reply_error(id, BridgeError::new(Cause::TooManyRequests))
            .await;
        None
    }

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
        // `admit` has checked that no request with this id is in flight.
        let Some(id) = self.refuse_at_limit(id, &method).await else {
            return;
        };
        let key = key_of(&id);
        if self.client.is_none() || self.upstream.is_none() {
            return self
                .reply_error(id, BridgeError::new(Cause::NotConnected))
                .await;
        }
        let upstream_id = self.requests.next_upstream_id();
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
            params: KeptParams::keep(params.clone(), self.limits.kept_in_file_from),
            meta: meta.clone(),
        });
        self.send_upstream(Outgoing::Request {
            id: upstream_id,
            method: method.clone(),
            params,
            meta,
        });
        let limit = self.round_limit(&method, 1);
        let first_notice = self.limits.still_waiting_after;
        self.requests.open(
            key,
            id,
            method,
            client_token,
            progress_token,
            upstream_id,
            kept,
            first_notice,
            limit,
        );
    }

    /// Ends a request of VS Code whose upstream result is not valid, with the
    /// warning line and `invalid_response`.
    pub(super) async fn fail_invalid_result(&mut self, key: &IdKey, method: &str, detail: &str) {
        emit!(RequestWarning::Failed {
            id: key,
            method,
            detail: &detail
        });
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

    /// A request of VS Code that waits: a "still waiting" line, or its time limit.
    pub(super) async fn request_timer(&mut self, key: IdKey) {
        let Some(request) = self.requests.get(&key) else {
            return;
        };
        let elapsed = request.waiting_since().elapsed();
        let method = request.method().to_owned();
        match request.phase() {
            RoundPhase::Upstream => {
                let limit = self.round_limit(&method, request.round());
                if elapsed >= limit {
                    let upstream_id = request.upstream_id();
                    let limit = format_duration(limit);
                    emit!(RequestWarning::NoResponse {
                        id: &key,
                        method: &method,
                        limit: &limit,
                    });
                    self.cancel_upstream(upstream_id, "The bridge stopped waiting for the answer.");
                    let error = BridgeError::with_detail(
                        Cause::Timeout,
                        format!("{method}: no response in {limit}"),
                    );
                    return self.fail_request(&key, error).await;
                }
                emit!(RequestInfo::StillWaiting {
                    method: &method,
                    id: &key,
                    n: elapsed.as_secs(),
                });
                self.next_notice(&key, limit);
            }
            RoundPhase::Client(round) => {
                let limit = self.limits.input_timeout;
                if elapsed >= limit {
                    let (left, total) = (round.unanswered(), round.total);
                    let limit = format_duration(limit);
                    emit!(InputWarning::NoAnswers {
                        id: &key,
                        method: &method,
                        limit: &limit,
                        left,
                        total,
                    });
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
                emit!(InputInfo::StillWaitingForAnswers {
                    method: &method,
                    id: &key,
                    n: elapsed.as_secs(),
                });
                self.next_notice(&key, limit);
            }
        }
    }

    /// Schedules the next "still waiting" line of a request, or its time limit.
    fn next_notice(&mut self, key: &IdKey, limit: Duration) {
        let every = self.limits.still_waiting_every;
        self.requests.next_notice(key, every, limit);
    }

    /// VS Code cancelled a request: the upstream gets the cancellation, the
    /// bridge's requests to VS Code for it are cancelled, and VS Code gets no response.
    pub(super) async fn on_client_cancelled(&mut self, params: Option<Map<String, Value>>) {
        let Some(key) = params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(IdKey::of)
        else {
            emit!(BridgeDebug::CancelWithoutId);
            return;
        };
        let Some(request) = self
            .close_request(&key, "the client canceled the request", None)
            .await
        else {
            emit!(BridgeDebug::LateCancel { id: &key });
            return;
        };
        emit!(BridgeDebug::Canceled {
            id: &key,
            method: request.method()
        });
        if matches!(request.phase(), RoundPhase::Upstream) {
            self.cancel_upstream(request.upstream_id(), "The client canceled the request.");
        }
    }

    /// Ends a request of VS Code: its accepted URL steps are complete, its requests
    /// to VS Code are cancelled (with `reason`), and VS Code gets `reply` if any.
    pub(super) async fn close_request(
        &mut self,
        key: &IdKey,
        reason: &str,
        reply: Option<Outcome>,
    ) -> Option<InFlight> {
        let request = self.end_request(key, reason).await?;
        if let Some(reply) = reply {
            let frame = match reply {
                Outcome::Result(result) => frame::result_frame(request.id().clone(), result),
                Outcome::Error(error) => frame::error_frame(request.id().clone(), error),
            };
            self.out.send(frame).await;
        }
        Some(request)
    }

    /// [`Self::close_request`] but for the reply, which the caller sends.
    pub(super) async fn end_request(&mut self, key: &IdKey, reason: &str) -> Option<InFlight> {
        let mut request = self.requests.close(key)?;
        // No round follows: the kept params go before the reply is written, so
        // that a large request and its large result are not in memory together.
        request.kept = None;
        self.complete_url_steps(std::mem::take(&mut request.accepted_urls))
            .await;
        if let RoundPhase::Client(round) = request.phase() {
            for bridge_id in round.unanswered_ids() {
                self.cancel_client_request(&bridge_id, reason).await;
            }
        }
        Some(request)
    }
}
