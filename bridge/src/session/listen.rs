//! The listen stream and the log messages in the session (R2, O5-O7, M3): the
//! state machine of `notify::listen` decides, this file carries out its actions.

use super::table::{Pending, Timer};
use super::{Session, key_of};
use crate::log::BRIDGE;
use crate::notify::events::{log_message, subscription_id};
use crate::notify::listen::{Action, End};
use crate::rules::meta::RequestMeta;
use crate::upstream::Outgoing;
use crate::wire::error::{BridgeError, Cause};
use crate::wire::frame::Notification;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::time::Instant;

impl Session {
    /// R2: `notifications/initialized` opens the listen stream.
    pub(super) async fn start_listening(&mut self) {
        let Self {
            listen,
            next_upstream_id,
            ..
        } = self;
        let Some(listen) = listen else {
            return;
        };
        let actions = listen.start(&mut counter(next_upstream_id));
        self.run_listen_actions(actions).await;
    }

    /// O7: `resources/subscribe` and `resources/unsubscribe`.
    pub(super) async fn change_subscription(
        &mut self,
        id: Value,
        params: Option<Map<String, Value>>,
        add: bool,
    ) {
        let Some(uri) = params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            let error = BridgeError::with_detail(Cause::InvalidParams, "uri is a string");
            return self.reply_error(id, error).await;
        };
        let Self {
            listen,
            next_upstream_id,
            ..
        } = self;
        let Some(listen) = listen else {
            return self
                .reply_error(id, BridgeError::new(Cause::MethodNotFound))
                .await;
        };
        tracing::debug!(target: BRIDGE, "request {} (resources/{}subscribe): a new listen stream", key_of(&id), if add { "" } else { "un" });
        let actions = listen.change(id, uri, add, &mut counter(next_upstream_id));
        self.run_listen_actions(actions).await;
    }

    /// The upstream answered a listen request: the stream ended.
    pub(super) async fn listen_answered(&mut self, id: u64, error: Option<Value>) {
        let end = match error {
            Some(error) => End::Error(error),
            None => End::Result,
        };
        self.listen_ended(id, end).await;
    }

    pub(super) async fn listen_ended(&mut self, id: u64, end: End) {
        self.table.upstream.remove(&id);
        let Self {
            listen,
            next_upstream_id,
            ..
        } = self;
        let Some(listen) = listen else {
            return;
        };
        let actions = listen.on_end(id, end, Instant::now(), &mut counter(next_upstream_id));
        self.run_listen_actions(actions).await;
    }

    /// The notifications of the upstream that belong to listen streams or carry logs;
    /// `false` for the others.
    pub(super) async fn on_stream_notification(&mut self, notification: &mut Notification) -> bool {
        let params = notification.params.as_ref();
        match notification.method.as_str() {
            "notifications/message" => {
                if let Some(frame) =
                    log_message(notification.params.take(), self.log_level.as_deref())
                {
                    self.out.send(frame).await;
                }
                true
            }
            "notifications/subscriptions/acknowledged" => {
                if let Some(id) = subscription_id(params) {
                    let Self {
                        listen,
                        next_upstream_id,
                        ..
                    } = self;
                    if let Some(listen) = listen {
                        let actions =
                            listen.on_ack(id, Instant::now(), &mut counter(next_upstream_id));
                        self.run_listen_actions(actions).await;
                    }
                }
                true
            }
            "notifications/cancelled" => {
                let id = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(Value::as_u64);
                match id.filter(|id| self.listen.as_ref().is_some_and(|l| l.is_stream(*id))) {
                    Some(id) => {
                        self.listen_ended(id, End::Cancelled).await;
                        true
                    }
                    None => false,
                }
            }
            method => match subscription_id(params) {
                Some(id) => {
                    let actions = match &self.listen {
                        Some(listen) => listen.on_event(id, method, notification.params.take()),
                        None => Vec::new(),
                    };
                    self.run_listen_actions(actions).await;
                    true
                }
                None => false,
            },
        }
    }

    pub(super) async fn listen_retry(&mut self) {
        let Self {
            listen,
            next_upstream_id,
            ..
        } = self;
        let Some(listen) = listen else {
            return;
        };
        let actions = listen.retry(&mut counter(next_upstream_id));
        self.run_listen_actions(actions).await;
    }

    pub(super) async fn listen_change_timed_out(&mut self, id: u64) {
        let limit = super::forward::format_duration(self.limits.list_timeout);
        let Self {
            listen,
            next_upstream_id,
            ..
        } = self;
        let Some(listen) = listen else {
            return;
        };
        let actions = listen.change_timed_out(id, &limit, &mut counter(next_upstream_id));
        self.run_listen_actions(actions).await;
    }

    /// The end of stdin: every stream is cancelled.
    pub(super) async fn stop_listening(&mut self) {
        if let Some(listen) = &mut self.listen {
            let actions = listen.stop();
            self.run_listen_actions(actions).await;
        }
    }

    async fn run_listen_actions(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Open { id, notifications } => {
                    let Some(client) = &self.client else {
                        continue;
                    };
                    let meta = RequestMeta::shared_only(&client.base_meta);
                    let mut params = Map::new();
                    params.insert("notifications".into(), Value::Object(notifications));
                    self.table.upstream.insert(id, Pending::Listen);
                    self.send_upstream(Outgoing::Request {
                        id,
                        method: "subscriptions/listen".into(),
                        params: Arc::new(params),
                        meta,
                    });
                }
                Action::Cancel { id } => {
                    self.table.upstream.remove(&id);
                    self.cancel_upstream(id, "The bridge no longer needs this stream.");
                }
                Action::ToClient(frame) => self.out.send(frame).await,
                Action::Warn(line) => tracing::warn!(target: BRIDGE, "{line}"),
                Action::Info(line) => tracing::info!(target: BRIDGE, "{line}"),
                Action::RetryIn(wait) => {
                    self.timers.insert(Timer::ListenRetry, wait);
                }
                Action::WatchChange { id } => {
                    self.timers
                        .insert(Timer::ListenChange(id), self.limits.list_timeout);
                }
            }
        }
    }
}

/// The session's counter of upstream ids, as the machine takes it.
fn counter(next: &mut u64) -> impl FnMut() -> u64 + '_ {
    move || {
        let id = *next;
        *next += 1;
        id
    }
}
