//! The listen stream and the log messages in the session (R2, O5-O7, M3): the
//! state machine of `notify::listen` decides, this file carries out its actions.

use super::{Session, Timer, key_of};
use crate::catalogue::{BridgeDebug, BridgeError, Cause, ListenInfo, ListenWarning, RouterDebug};
use crate::log::emit;
use crate::notify::events::{is_stream_kind, log_message, subscription_id};
use crate::notify::listen::{Action, End, Listen};
use crate::rules::meta::RequestMeta;
use crate::upstream::Outgoing;
use crate::wire::frame::Notification;
use crate::wire::shallow::ShallowObject;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::time::Instant;

impl Session {
    /// Runs one step of the listen machine, with the session's upstream ids, and
    /// carries out its actions. `false` before the initialize result (no machine).
    async fn listen_step(
        &mut self,
        step: impl FnOnce(&mut Listen, &mut dyn FnMut() -> u64) -> Vec<Action>,
    ) -> bool {
        let Self {
            listen, requests, ..
        } = self;
        let Some(listen) = listen else {
            return false;
        };
        let mut next_id = || requests.next_upstream_id();
        let actions = step(listen, &mut next_id);
        self.run_listen_actions(actions).await;
        true
    }

    /// R2: `notifications/initialized` opens the listen stream.
    pub(super) async fn start_listening(&mut self) {
        self.listen_step(|listen, next_id| listen.start(next_id))
            .await;
    }

    /// O7: `resources/subscribe` and `resources/unsubscribe`.
    pub(super) async fn change_subscription(
        &mut self,
        id: Value,
        params: Option<Map<String, Value>>,
        add: bool,
    ) {
        let kind = if add { "subscribe" } else { "unsubscribe" };
        let method = format!("resources/{kind}");
        let Some(id) = self.refuse_at_limit(id, &method).await else {
            return;
        };
        let Some(uri) = params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            let error = BridgeError::with_detail(Cause::InvalidParams, "uri is a string");
            return self.reply_error(id, error).await;
        };
        let key = key_of(&id);
        emit!(BridgeDebug::NewListenStream {
            id: &key,
            change: kind
        });
        let changed = self
            .listen_step(|listen, next_id| listen.change(id.clone(), uri, add, next_id))
            .await;
        if !changed {
            self.reply_error(id, BridgeError::new(Cause::MethodNotFound))
                .await;
        }
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
        self.requests.take_pending(id);
        self.listen_step(|listen, next_id| listen.on_end(id, end, Instant::now(), next_id))
            .await;
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
                    self.listen_step(|listen, next_id| listen.on_ack(id, Instant::now(), next_id))
                        .await;
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
                    let params = notification.params.take();
                    self.listen_step(|listen, _| listen.on_event(id, method, params))
                        .await;
                    true
                }
                None => self.on_untagged_notification(notification).await,
            },
        }
    }

    /// O6, O7: a list change or an update outside a listen stream (in the response
    /// stream of a call, or untagged on stdio) goes to VS Code when VS Code lists
    /// that list or subscribed that URI; it comes before the result of the call that
    /// carried it, so VS Code lists again before the next turn. `false` for the
    /// notifications that are none of these.
    async fn on_untagged_notification(&mut self, notification: &mut Notification) -> bool {
        let method = notification.method.as_str();
        if !is_stream_kind(method) {
            return false;
        }
        let frame = self
            .listen
            .as_ref()
            .and_then(|listen| listen.on_untagged(method, notification.params.take()));
        match frame {
            Some(frame) => self.out.send(frame).await,
            None => emit!(RouterDebug::NotificationDropped { method }),
        }
        true
    }

    pub(super) async fn listen_retry(&mut self) {
        self.listen_step(|listen, next_id| listen.retry(next_id))
            .await;
    }

    /// A sign-in completed (M4): a stream that failed with 401 or 403 opens again.
    pub(super) async fn listen_signed_in(&mut self) {
        self.listen_step(|listen, next_id| listen.signed_in(next_id))
            .await;
    }

    pub(super) async fn listen_change_timed_out(&mut self, id: u64) {
        let limit = super::forward::format_duration(self.limits.list_timeout);
        self.listen_step(|listen, next_id| {
            listen.change_timed_out(id, &limit, Instant::now(), next_id)
        })
        .await;
    }

    /// The end of stdin: every stream is cancelled.
    pub(super) async fn stop_listening(&mut self) {
        self.listen_step(|listen, _| listen.stop()).await;
    }

    async fn run_listen_actions(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Open { id, notifications } => {
                    let Some(client) = &self.client else {
                        continue;
                    };
                    let meta = RequestMeta::shared_only(&client.base_meta);
                    let mut params = ShallowObject::default();
                    params.insert_value("notifications", &Value::Object(notifications));
                    self.requests.open_listen(id);
                    self.send_upstream(Outgoing::Request {
                        id,
                        method: "subscriptions/listen".into(),
                        params: Arc::new(params),
                        meta,
                    });
                }
                Action::Cancel { id } => {
                    self.requests.take_pending(id);
                    self.cancel_upstream(id, "The bridge no longer needs this stream.");
                }
                Action::ToClient(frame) => self.out.send(frame).await,
                Action::Warn(line) => emit!(ListenWarning: line),
                Action::Info(line) => emit!(ListenInfo: line),
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
