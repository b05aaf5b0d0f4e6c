//! initialize and server/discover (R1, R2, C1-C4).

use super::{ClientContext, Connected, Phase, Session, Timer};
use crate::catalogue::{BridgeError, Cause, StartInfo, StartWarning};
use crate::log::emit;
use crate::notify::listen::Listen;
use crate::rules::capabilities::{Declared, InputKinds, upstream_client_capabilities};
use crate::rules::errors;
use crate::rules::initialize::{check_discover, initialize_result};
use crate::rules::meta::{RequestMeta, SharedMeta, base_meta};
use crate::upstream::{Outgoing, RequestFailure};
use crate::wire::frame::Outcome;
use crate::wire::shallow::ShallowObject;
use serde_json::{Map, Value};
use std::sync::Arc;

impl Session {
    /// The first `initialize` starts the upstream and asks it for server/discover;
    /// VS Code gets the result when the upstream answers (R1).
    pub(super) async fn initialize(&mut self, id: Value, params: Option<Map<String, Value>>) {
        if !matches!(self.phase, Phase::AwaitingInitialize) {
            return self
                .reply_error(id, BridgeError::new(Cause::AlreadyInitialized))
                .await;
        }
        let params = params.unwrap_or_default();
        let capabilities = params
            .get("capabilities")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let client_info = params
            .get("clientInfo")
            .filter(|info| is_implementation(info))
            .cloned();
        match &client_info {
            Some(info) => emit!(StartInfo::InitializeFrom {
                name: info["name"].as_str().unwrap_or_default(),
                version: info["version"].as_str().unwrap_or_default(),
            }),
            None => emit!(StartInfo::InitializeWithoutClientInfo),
        }
        let inputs = InputKinds::of(&capabilities);
        self.client_state
            .send_modify(|state| state.url_elicitation = inputs.elicitation_url);
        // Returns at once: a link connects in its own tasks (R2, C1).
        let link = match self.connector.connect(self.link_context()) {
            Ok(link) => link,
            Err(error) => {
                emit!(StartWarning: error.log_line());
                return self.reply_error(id, error.to_error()).await;
            }
        };
        self.slot.set(link.control.clone());
        self.discover_wait = self.discover_timeout + link.discover_extra;
        self.upstream = Some(Connected::from(link));
        let base = Arc::new(SharedMeta::new(base_meta(
            client_info.as_ref(),
            upstream_client_capabilities(&capabilities),
        )));
        let meta = RequestMeta::shared_only(&base);
        self.client = Some(ClientContext {
            base_meta: base,
            inputs,
        });
        let discover_id = self.requests.next_upstream_id();
        self.requests.open_discover(discover_id);
        self.send_upstream(Outgoing::Request {
            id: discover_id,
            method: "server/discover".into(),
            params: Arc::new(ShallowObject::default()),
            meta,
        });
        let timer = self.timers.insert(Timer::Discover, self.discover_wait);
        self.phase = Phase::Initializing {
            client_id: id,
            discover_id,
            timer,
        };
    }

    /// The answer to server/discover: the initialize result, or `discover_failed`.
    pub(super) async fn on_discover(&mut self, outcome: Outcome) {
        let Some(client_id) = self.end_initializing() else {
            return;
        };
        match outcome {
            Outcome::Result(Value::Object(result)) => match check_discover(&result) {
                Ok(()) => {
                    let mut initialize = initialize_result(&result, &self.fallback);
                    if self.data_icons_only {
                        crate::rules::icons::initialize_data_icons_only(&mut initialize);
                    }
                    let declared = initialize
                        .get("capabilities")
                        .and_then(Value::as_object)
                        .map(Declared::of)
                        .unwrap_or_default();
                    self.listen = Some(Listen::new(declared));
                    emit!(StartInfo::Ready);
                    self.phase = Phase::Initialized;
                    self.reply(client_id, Value::Object(initialize)).await;
                }
                Err(refusal) => {
                    self.fail_discover(client_id, None, refusal.to_string())
                        .await
                }
            },
            Outcome::Result(_) => {
                self.fail_discover(
                    client_id,
                    None,
                    "the discover result is not an object".into(),
                )
                .await
            }
            Outcome::Error(error) => {
                let (code, detail) = match error.as_object().and_then(errors::code_and_message) {
                    // -32042 never reaches VS Code (quirk table).
                    Some((code, message)) if code != errors::URL_ELICITATION_REQUIRED => {
                        (Some(code), message.to_owned())
                    }
                    Some((_, message)) => (None, message.to_owned()),
                    None => (
                        None,
                        "the upstream server sent an error that is not valid".into(),
                    ),
                };
                let line = match code {
                    Some(code) => format!("the error {code}: {detail}"),
                    None => detail.clone(),
                };
                self.fail_discover_with_line(client_id, code, detail, line)
                    .await
            }
        }
    }

    /// The link failed server/discover (an HTTP status, a refused connection).
    pub(super) async fn discover_failed_in_link(&mut self, failure: RequestFailure) {
        let Some(client_id) = self.end_initializing() else {
            return;
        };
        if let RequestFailure::SignIn { .. } = failure {
            // The sign-in of server/discover failed: initialize gets its cause.
            emit!(StartWarning::DiscoverFailed { error: &failure });
            self.disconnect();
            self.client = None;
            return self.reply_error(client_id, failure.to_error()).await;
        }
        self.fail_discover(client_id, None, failure.to_string())
            .await;
    }

    /// The wait for server/discover is over: the id of VS Code's initialize, when
    /// one waited (the phase goes back to waiting for initialize).
    fn end_initializing(&mut self) -> Option<Value> {
        if !matches!(self.phase, Phase::Initializing { .. }) {
            return None;
        }
        let Phase::Initializing {
            client_id, timer, ..
        } = std::mem::replace(&mut self.phase, Phase::AwaitingInitialize)
        else {
            return None;
        };
        self.timers.remove(&timer);
        Some(client_id)
    }

    pub(super) async fn discover_timed_out(&mut self) {
        let Phase::Initializing {
            client_id,
            discover_id,
            ..
        } = std::mem::replace(&mut self.phase, Phase::AwaitingInitialize)
        else {
            return;
        };
        self.requests.take_pending(discover_id);
        self.cancel_upstream(discover_id, "The bridge stopped waiting for the answer.");
        let detail = format!("no response in {} s", self.discover_wait.as_secs());
        self.fail_discover(client_id, None, detail).await;
    }

    async fn fail_discover(&mut self, client_id: Value, code: Option<i64>, detail: String) {
        let line = detail.clone();
        self.fail_discover_with_line(client_id, code, detail, line)
            .await
    }

    /// VS Code gets `discover_failed` with the upstream's code, the upstream stops,
    /// and the connection waits for the next initialize.
    async fn fail_discover_with_line(
        &mut self,
        client_id: Value,
        code: Option<i64>,
        detail: String,
        line: String,
    ) {
        emit!(StartWarning::DiscoverFailed { error: &line });
        self.disconnect();
        self.client = None;
        self.phase = Phase::AwaitingInitialize;
        let error = BridgeError {
            cause: Cause::DiscoverFailed,
            detail: Some(detail),
            code,
        };
        self.reply_error(client_id, error).await;
    }

    /// Lets the upstream go: its input ends, and it stops in the background.
    pub(super) fn disconnect(&mut self) {
        self.requests.forget_upstream();
        if let Some(connected) = self.upstream.take() {
            let grace = self.limits.shutdown_grace;
            self.tasks.spawn(connected.close(grace));
        }
    }
}

/// An `Implementation`: a name and a version.
fn is_implementation(info: &Value) -> bool {
    info.get("name").is_some_and(Value::is_string)
        && info.get("version").is_some_and(Value::is_string)
}
