//! The listen stream (R2, O6, O7 and the quirks of M3), as a state machine.
//!
//! Revision 2026-07-28 pushes list changes and resource updates only on a
//! `subscriptions/listen` request. The bridge keeps one such stream open for
//! VS Code; it opens a new one with the whole set of URIs for each change of the
//! subscriptions, answers VS Code when the new stream is acknowledged (so the
//! answer comes before the first update), then cancels the old one. After the
//! first stream, and after each loss, VS Code gets one list change per declared
//! list and one update per subscribed URI: notifications may have been missed.
//!
//! The machine does no I/O: each event returns the [`Action`]s for the session.

use super::events::{notification, stream_notification};
use crate::catalogue::{BridgeError, Cause, ListenInfo, ListenWarning};
use crate::rules::capabilities::Declared;
use crate::wire::id::IdKey;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

type Object = Map<String, Value>;

/// The first wait before a new stream after a loss; it doubles up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A stream that lived this long after its acknowledgment resets the wait.
pub const HEALTHY_LIFETIME: Duration = Duration::from_secs(10);

/// What the session does for the machine.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send `subscriptions/listen` with this id and `notifications` filter.
    Open { id: u64, notifications: Object },
    /// Cancel this stream upstream.
    Cancel { id: u64 },
    /// Write this frame to VS Code.
    ToClient(Value),
    /// Write this warning line.
    Warn(ListenWarning),
    /// Write this info line.
    Info(ListenInfo),
    /// Call [`Listen::retry`] after this wait.
    RetryIn(Duration),
    /// Call [`Listen::change_timed_out`] for this stream after the time limit.
    WatchChange { id: u64 },
}

/// How a stream ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// The upstream answered the listen request with a result.
    Result,
    /// The upstream cancelled the stream.
    Cancelled,
    /// The upstream answered with a JSON-RPC error (the object).
    Error(Value),
    /// The connection of the stream failed (an HTTP upstream).
    Lost(String),
    /// The upstream, or a proxy, answered the stream with an HTTP status (M4).
    Status(u16),
}

#[derive(Debug)]
struct Active {
    id: u64,
    acked_at: Instant,
}

#[derive(Debug)]
struct Opening {
    id: u64,
    /// Gap recovery on the acknowledgment: the first stream, or one after a loss.
    recover: bool,
    /// The change of subscriptions that this stream makes, if any.
    change: Option<Change>,
}

#[derive(Debug, Clone)]
struct Change {
    /// The request of VS Code (`resources/subscribe` or `resources/unsubscribe`).
    client_id: Value,
    /// The whole set of URIs after the change.
    uris: Vec<String>,
}

/// The listen stream of one session.
#[derive(Debug)]
pub struct Listen {
    declared: Declared,
    uris: Vec<String>,
    started: bool,
    /// The upstream refused the stream: no new stream until a change of subscriptions.
    refused: bool,
    /// A stream was acknowledged once: a refusal before it means the stream could
    /// not start at all.
    acked_once: bool,
    /// The stream failed with 401 or 403: the next sign-in opens it again (M4).
    awaiting_sign_in: bool,
    active: Option<Active>,
    opening: Option<Opening>,
    changes: VecDeque<Change>,
    backoff: Duration,
}

impl Listen {
    pub fn new(declared: Declared) -> Self {
        Self {
            declared,
            uris: Vec::new(),
            started: false,
            refused: false,
            acked_once: false,
            awaiting_sign_in: false,
            active: None,
            opening: None,
            changes: VecDeque::new(),
            backoff: FIRST_BACKOFF,
        }
    }

    /// R2: `notifications/initialized` opens the stream when the initialize result
    /// declared a list change or subscriptions.
    pub fn start(&mut self, next_id: &mut dyn FnMut() -> u64) -> Vec<Action> {
        if self.started || !self.declared.wants_listen_stream() {
            return Vec::new();
        }
        self.started = true;
        vec![self.open(next_id(), true, None)]
    }

    /// Whether the request of VS Code with this id is a change of subscriptions
    /// that waits for its stream.
    pub fn has_change_for(&self, key: &IdKey) -> bool {
        let same = |change: &Change| IdKey::of(&change.client_id).as_ref() == Some(key);
        self.changes.iter().any(same)
            || self
                .opening
                .as_ref()
                .and_then(|o| o.change.as_ref())
                .is_some_and(same)
    }

    /// How many requests of VS Code are changes of subscriptions that wait for
    /// their stream: requests in flight, as the calls are.
    pub fn changes_in_flight(&self) -> usize {
        self.changes.len()
            + usize::from(
                self.opening
                    .as_ref()
                    .is_some_and(|opening| opening.change.is_some()),
            )
    }

    /// Whether `id` is a stream of this machine that is still open or opening.
    pub fn is_stream(&self, id: u64) -> bool {
        self.active.as_ref().is_some_and(|a| a.id == id)
            || self.opening.as_ref().is_some_and(|o| o.id == id)
    }

    /// `notifications/subscriptions/acknowledged` for stream `id`.
    pub fn on_ack(
        &mut self,
        id: u64,
        now: Instant,
        next_id: &mut dyn FnMut() -> u64,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.opening.as_ref().is_some_and(|o| o.id == id) {
            let Some(opening) = self.opening.take() else {
                return actions;
            };
            self.acked_once = true;
            let old = self.active.replace(Active { id, acked_at: now });
            if let Some(change) = opening.change {
                self.uris = change.uris;
                actions.push(Action::ToClient(
                    json!({"jsonrpc":"2.0","id":change.client_id,"result":{}}),
                ));
            }
            if opening.recover {
                actions.extend(self.gap_recovery());
            }
            if let Some(old) = old {
                actions.push(Action::Cancel { id: old.id });
            }
            actions.extend(self.next_change(next_id));
        } else if self.active.as_ref().is_some_and(|a| a.id == id) {
            // A second acknowledgment of the same stream follows a hidden reconnection.
            actions.extend(self.gap_recovery());
        } else {
            // A stream that acknowledges late never replaces a newer one.
            actions.push(Action::Cancel { id });
        }
        actions
    }

    /// A notification tagged with stream `id`: VS Code gets it when it comes from the
    /// stream whose events count.
    pub fn on_event(&self, id: u64, method: &str, params: Option<Object>) -> Vec<Action> {
        if self.active.as_ref().is_none_or(|a| a.id != id) {
            return Vec::new();
        }
        stream_notification(method, params)
            .map(Action::ToClient)
            .into_iter()
            .collect()
    }

    /// A list change or an update that came outside a listen stream: in the response
    /// stream of a request (FastMCP sends the list change of a tool call there), or
    /// untagged on stdio. VS Code gets a list change of a list that it lists, and an
    /// update of a URI whose `resources/subscribe` it got an answer to (it reads the
    /// updates of a resource only after that answer); `None` for the rest.
    pub fn on_untagged(&self, method: &str, params: Option<Object>) -> Option<Value> {
        let wanted = match method {
            "notifications/tools/list_changed" => self.declared.tools,
            "notifications/prompts/list_changed" => self.declared.prompts,
            "notifications/resources/list_changed" => self.declared.resources,
            "notifications/resources/updated" => params
                .as_ref()
                .and_then(|params| params.get("uri"))
                .and_then(Value::as_str)
                .is_some_and(|uri| self.uris.iter().any(|subscribed| subscribed == uri)),
            _ => false,
        };
        wanted
            .then(|| stream_notification(method, params))
            .flatten()
    }

    /// Stream `id` ended.
    pub fn on_end(
        &mut self,
        id: u64,
        end: End,
        now: Instant,
        next_id: &mut dyn FnMut() -> u64,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.opening.as_ref().is_some_and(|o| o.id == id) {
            let Some(opening) = self.opening.take() else {
                return actions;
            };
            match opening.change {
                Some(change) => {
                    let (text, error) = change_failure(&end);
                    actions.push(Action::Warn(ListenWarning::ChangeFailed { error: text }));
                    actions.push(Action::ToClient(
                        json!({"jsonrpc":"2.0","id":change.client_id,"error":error}),
                    ));
                    if self.active.is_none() && !self.refused {
                        actions.extend(self.lost(&end, None));
                    }
                    actions.extend(self.next_change(next_id));
                }
                None => actions.extend(self.lost(&end, None)),
            }
        } else if self.active.as_ref().is_some_and(|a| a.id == id) {
            let lived = self
                .active
                .take()
                .map(|active| now.saturating_duration_since(active.acked_at));
            actions.extend(self.lost(&end, lived));
        }
        actions
    }

    /// The wait after a loss is over: a new stream, unless one is open or opening.
    pub fn retry(&mut self, next_id: &mut dyn FnMut() -> u64) -> Vec<Action> {
        if self.refused
            || self.awaiting_sign_in
            || self.active.is_some()
            || self.opening.is_some()
            || !self.started
        {
            return Vec::new();
        }
        vec![self.open(next_id(), true, None)]
    }

    /// A request signed in (M4): a stream that failed with 401 or 403 opens again.
    pub fn signed_in(&mut self, next_id: &mut dyn FnMut() -> u64) -> Vec<Action> {
        if !std::mem::take(&mut self.awaiting_sign_in) || self.refused || !self.started {
            return Vec::new();
        }
        vec![
            Action::Info(ListenInfo::SignInCompleted),
            self.open(next_id(), true, None),
        ]
    }

    /// O7: `resources/subscribe` (`add`) or `resources/unsubscribe` of `uri`.
    pub fn change(
        &mut self,
        client_id: Value,
        uri: String,
        add: bool,
        next_id: &mut dyn FnMut() -> u64,
    ) -> Vec<Action> {
        if !self.declared.resources_subscribe {
            let error = BridgeError::new(Cause::MethodNotFound).to_object();
            return vec![Action::ToClient(
                json!({"jsonrpc":"2.0","id":client_id,"error":error}),
            )];
        }
        // The set as it will be after the changes already on their way.
        let latest = self
            .changes
            .back()
            .or(self.opening.as_ref().and_then(|o| o.change.as_ref()))
            .map_or(&self.uris, |c| &c.uris);
        if latest.contains(&uri) == add {
            return vec![Action::ToClient(
                json!({"jsonrpc":"2.0","id":client_id,"result":{}}),
            )];
        }
        let mut uris = latest.clone();
        if add {
            uris.push(uri);
        } else {
            uris.retain(|kept| *kept != uri);
        }
        if !self.started {
            self.uris = uris;
            return vec![Action::ToClient(
                json!({"jsonrpc":"2.0","id":client_id,"result":{}}),
            )];
        }
        self.changes.push_back(Change { client_id, uris });
        let mut actions = Vec::new();
        // A new stream after a loss gives way: the change opens a stream anyway.
        if self.opening.as_ref().is_some_and(|o| o.change.is_none())
            && let Some(opening) = self.opening.take()
        {
            actions.push(Action::Cancel { id: opening.id });
        }
        actions.extend(self.next_change(next_id));
        actions
    }

    /// The stream of a change was not acknowledged in time.
    pub fn change_timed_out(
        &mut self,
        id: u64,
        limit: &str,
        now: Instant,
        next_id: &mut dyn FnMut() -> u64,
    ) -> Vec<Action> {
        if !self
            .opening
            .as_ref()
            .is_some_and(|o| o.id == id && o.change.is_some())
        {
            return Vec::new();
        }
        let mut actions = vec![Action::Cancel { id }];
        let text = format!("no acknowledgment in {limit}");
        let error =
            BridgeError::with_detail(Cause::Timeout, format!("subscriptions/listen: {text}"))
                .to_object();
        actions.extend(
            self.on_end(id, End::Error(error), now, next_id)
                .into_iter()
                .map(|action| match action {
                    Action::Warn(_) => Action::Warn(ListenWarning::ChangeFailed {
                        error: text.clone(),
                    }),
                    other => other,
                }),
        );
        actions
    }

    /// The end of stdin: every stream is cancelled.
    pub fn stop(&mut self) -> Vec<Action> {
        self.changes.clear();
        let mut actions = Vec::new();
        if let Some(opening) = self.opening.take() {
            actions.push(Action::Cancel { id: opening.id });
        }
        if let Some(active) = self.active.take() {
            actions.push(Action::Cancel { id: active.id });
        }
        actions
    }

    /// The next waiting change, when no other stream is opening.
    fn next_change(&mut self, next_id: &mut dyn FnMut() -> u64) -> Vec<Action> {
        if self.opening.is_some() {
            return Vec::new();
        }
        let Some(change) = self.changes.pop_front() else {
            return Vec::new();
        };
        let recover = self.active.is_none();
        self.refused = false;
        let id = next_id();
        vec![
            self.open_with(id, recover, change.uris.clone(), Some(change)),
            Action::WatchChange { id },
        ]
    }

    fn open(&mut self, id: u64, recover: bool, change: Option<Change>) -> Action {
        let uris = self.uris.clone();
        self.open_with(id, recover, uris, change)
    }

    fn open_with(
        &mut self,
        id: u64,
        recover: bool,
        uris: Vec<String>,
        change: Option<Change>,
    ) -> Action {
        self.opening = Some(Opening {
            id,
            recover,
            change,
        });
        Action::Open {
            id,
            notifications: self.filter(&uris),
        }
    }

    /// The `notifications` filter: the declared lists and the subscribed URIs.
    fn filter(&self, uris: &[String]) -> Object {
        let mut filter = Object::new();
        let flags = [
            ("toolsListChanged", self.declared.tools_list_changed),
            ("promptsListChanged", self.declared.prompts_list_changed),
            ("resourcesListChanged", self.declared.resources_list_changed),
        ];
        for (name, declared) in flags {
            if declared {
                filter.insert(name.into(), true.into());
            }
        }
        if self.declared.resources_subscribe && !uris.is_empty() {
            filter.insert(
                "resourceSubscriptions".into(),
                uris.iter().cloned().map(Value::from).collect(),
            );
        }
        filter
    }

    /// One list change per declared list and one update per subscribed URI.
    fn gap_recovery(&self) -> Vec<Action> {
        let lists = [
            (
                "notifications/tools/list_changed",
                self.declared.tools_list_changed,
            ),
            (
                "notifications/prompts/list_changed",
                self.declared.prompts_list_changed,
            ),
            (
                "notifications/resources/list_changed",
                self.declared.resources_list_changed,
            ),
        ];
        let changes = lists
            .into_iter()
            .filter(|(_, declared)| *declared)
            .map(|(method, _)| Action::ToClient(notification(method, Object::new())));
        let updates = self.uris.iter().map(|uri| {
            let mut params = Object::new();
            params.insert("uri".into(), uri.clone().into());
            Action::ToClient(notification("notifications/resources/updated", params))
        });
        changes.chain(updates).collect()
    }

    /// The stream of the moment is gone: a new one after the wait, or none after a refusal.
    fn lost(&mut self, end: &End, lived: Option<Duration>) -> Vec<Action> {
        if let End::Error(error) = end {
            self.refused = true;
            let code = error
                .get("code")
                .map_or_else(|| "?".to_owned(), Value::to_string);
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if !self.acked_once {
                // The Output channel table: the first stream after notifications/initialized.
                return vec![Action::Warn(ListenWarning::CannotStart { code, message })];
            }
            return vec![Action::Warn(ListenWarning::RefusedWithError {
                code,
                message,
            })];
        }
        if let End::Status(status) = end {
            match status {
                401 | 403 => {
                    self.awaiting_sign_in = true;
                    return vec![Action::Warn(ListenWarning::FailedWithStatus { n: *status })];
                }
                408 | 429 => {}
                500..=599 if *status != 501 => {}
                _ => {
                    self.refused = true;
                    if !self.acked_once {
                        // The Output channel table: the first stream after
                        // notifications/initialized, as for a JSON-RPC error.
                        return vec![Action::Warn(ListenWarning::CannotStartWithStatus {
                            n: *status,
                        })];
                    }
                    return vec![Action::Warn(ListenWarning::RefusedWithStatus {
                        n: *status,
                    })];
                }
            }
        }
        if lived.is_some_and(|lived| lived >= HEALTHY_LIFETIME) {
            self.backoff = FIRST_BACKOFF;
        }
        let wait = self.backoff;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        let time = format_wait(wait);
        let line = match end {
            End::Lost(error) => Action::Warn(ListenWarning::Ended {
                error: error.clone(),
                time,
            }),
            End::Status(status) => {
                Action::Warn(ListenWarning::EndedWithStatus { n: *status, time })
            }
            _ => Action::Info(ListenInfo::ServerEnded { time }),
        };
        vec![line, Action::RetryIn(wait)]
    }
}

/// The text of the warning line and the error for VS Code, when the stream of a
/// change of subscriptions fails: an upstream error passes unchanged.
fn change_failure(end: &End) -> (String, Value) {
    match end {
        End::Error(error) => {
            let code = error
                .get("code")
                .map_or_else(|| "?".to_owned(), Value::to_string);
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            (format!("the error {code}: {message}"), error.clone())
        }
        End::Lost(text) => (
            text.clone(),
            BridgeError::with_detail(Cause::TransportFailed, text.clone()).to_object(),
        ),
        End::Status(status) => {
            let text = format!("the HTTP status {status}");
            let error = BridgeError::with_detail(Cause::TransportFailed, text.clone()).to_object();
            (text, error)
        }
        End::Result | End::Cancelled => {
            let text = "the upstream server ended the stream before its acknowledgment";
            (
                text.to_owned(),
                BridgeError::with_detail(Cause::InvalidResponse, text).to_object(),
            )
        }
    }
}

/// `500 ms`, `1 s`, `30 s`.
fn format_wait(wait: Duration) -> String {
    if wait.subsec_millis() == 0 {
        format!("{} s", wait.as_secs())
    } else {
        format!("{} ms", wait.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_declared() -> Declared {
        Declared {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resources_subscribe: true,
            tools: true,
            prompts: true,
            resources: true,
        }
    }

    struct Ids(u64);
    impl Ids {
        fn next(&mut self) -> impl FnMut() -> u64 + '_ {
            move || {
                self.0 += 1;
                self.0
            }
        }
    }

    fn frames(actions: &[Action]) -> Vec<Value> {
        actions
            .iter()
            .filter_map(|a| {
                if let Action::ToClient(f) = a {
                    Some(f.clone())
                } else {
                    None
                }
            })
            .collect()
    }

    fn methods(actions: &[Action]) -> Vec<String> {
        frames(actions)
            .iter()
            .map(|f| f["method"].as_str().unwrap_or("response").to_owned())
            .collect()
    }

    #[test]
    fn r2_no_declared_list_means_no_stream_and_no_subscriptions() {
        let mut listen = Listen::new(Declared {
            tools: true,
            ..Declared::default()
        });
        let mut ids = Ids(0);
        assert!(listen.start(&mut ids.next()).is_empty());
        let actions = listen.change(json!(4), "file:///a".into(), true, &mut ids.next());
        assert_eq!(frames(&actions)[0]["error"]["code"], -32601);
    }

    #[test]
    fn quirk_the_first_stream_gives_one_list_change_per_declared_list_after_its_ack() {
        let mut listen = Listen::new(Declared {
            resources_subscribe: false,
            ..all_declared()
        });
        let mut ids = Ids(10);
        let open = listen.start(&mut ids.next());
        assert_eq!(
            open,
            vec![Action::Open { id: 11, notifications: json!({"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}).as_object().unwrap().clone() }]
        );
        let ack = listen.on_ack(11, Instant::now(), &mut ids.next());
        assert_eq!(
            methods(&ack),
            vec![
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed"
            ]
        );
        let event = listen.on_event(
            11,
            "notifications/tools/list_changed",
            Some(
                json!({"_meta":{"io.modelcontextprotocol/subscriptionId":11}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        );
        assert_eq!(
            frames(&event),
            vec![json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})]
        );
        assert!(
            listen
                .on_event(99, "notifications/tools/list_changed", None)
                .is_empty()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn o7_subscribe_answers_at_the_ack_of_the_new_stream_then_cancels_the_old() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        let change = listen.change(
            json!(7),
            "file:///fixture/notes.txt".into(),
            true,
            &mut ids.next(),
        );
        let Action::Open {
            id: 2,
            notifications,
        } = &change[0]
        else {
            panic!("{change:?}")
        };
        assert_eq!(
            notifications["resourceSubscriptions"],
            json!(["file:///fixture/notes.txt"])
        );
        assert_eq!(change[1], Action::WatchChange { id: 2 });
        // Until the new ack, the old stream's events still count.
        assert_eq!(
            listen
                .on_event(1, "notifications/tools/list_changed", None)
                .len(),
            1
        );
        let ack = listen.on_ack(2, Instant::now(), &mut ids.next());
        assert_eq!(
            ack,
            vec![
                Action::ToClient(json!({"jsonrpc":"2.0","id":7,"result":{}})),
                Action::Cancel { id: 1 }
            ]
        );
        // Already subscribed: {} at once, no stream.
        let again = listen.change(
            json!(8),
            "file:///fixture/notes.txt".into(),
            true,
            &mut ids.next(),
        );
        assert_eq!(
            again,
            vec![Action::ToClient(
                json!({"jsonrpc":"2.0","id":8,"result":{}})
            )]
        );
        // Not subscribed: {} at once.
        let absent = listen.change(json!(9), "file:///other".into(), false, &mut ids.next());
        assert_eq!(
            absent,
            vec![Action::ToClient(
                json!({"jsonrpc":"2.0","id":9,"result":{}})
            )]
        );
        let unsubscribe = listen.change(
            json!(10),
            "file:///fixture/notes.txt".into(),
            false,
            &mut ids.next(),
        );
        let Action::Open {
            id: 3,
            notifications,
        } = &unsubscribe[0]
        else {
            panic!()
        };
        assert!(notifications.get("resourceSubscriptions").is_none());
    }

    #[test]
    fn o7_one_change_at_a_time() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        assert!(matches!(
            listen.change(json!(1), "a:1".into(), true, &mut ids.next())[0],
            Action::Open { id: 2, .. }
        ));
        assert!(
            listen
                .change(json!(2), "a:2".into(), true, &mut ids.next())
                .is_empty()
        );
        let ack = listen.on_ack(2, Instant::now(), &mut ids.next());
        assert_eq!(
            ack[0],
            Action::ToClient(json!({"jsonrpc":"2.0","id":1,"result":{}}))
        );
        assert_eq!(ack[1], Action::Cancel { id: 1 });
        let Action::Open {
            id: 3,
            notifications,
        } = &ack[2]
        else {
            panic!("{ack:?}")
        };
        assert_eq!(
            notifications["resourceSubscriptions"],
            json!(["a:1", "a:2"])
        );
    }

    #[test]
    fn o7_a_failed_change_keeps_the_old_stream_and_set() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        listen.change(json!(5), "a:1".into(), true, &mut ids.next());
        let error = json!({"code":-32602,"message":"unknown resource"});
        let end = listen.on_end(
            2,
            End::Error(error.clone()),
            Instant::now(),
            &mut ids.next(),
        );
        assert_eq!(
            end,
            vec![
                Action::Warn(ListenWarning::ChangeFailed {
                    error: "the error -32602: unknown resource".into()
                }),
                Action::ToClient(json!({"jsonrpc":"2.0","id":5,"error":error})),
            ]
        );
        assert!(listen.is_stream(1));
        assert_eq!(
            listen
                .on_event(1, "notifications/tools/list_changed", None)
                .len(),
            1
        );
        // The set did not change: subscribing again opens a stream.
        assert!(matches!(
            listen.change(json!(6), "a:1".into(), true, &mut ids.next())[0],
            Action::Open { .. }
        ));
    }

    #[test]
    fn o7_a_change_without_an_ack_in_time_fails_with_timeout_and_keeps_the_old_stream() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        listen.change(json!(5), "a:1".into(), true, &mut ids.next());
        // The time limit of a stream that is not the change's opening one: nothing.
        assert!(
            listen
                .change_timed_out(1, "2 min", Instant::now(), &mut ids.next())
                .is_empty()
        );
        let error = BridgeError::with_detail(
            Cause::Timeout,
            "subscriptions/listen: no acknowledgment in 2 min",
        )
        .to_object();
        assert_eq!(
            listen.change_timed_out(2, "2 min", Instant::now(), &mut ids.next()),
            vec![
                Action::Cancel { id: 2 },
                Action::Warn(ListenWarning::ChangeFailed {
                    error: "no acknowledgment in 2 min".into()
                }),
                Action::ToClient(json!({"jsonrpc":"2.0","id":5,"error":error})),
            ]
        );
        assert!(listen.is_stream(1));
        assert!(
            listen
                .change_timed_out(2, "2 min", Instant::now(), &mut ids.next())
                .is_empty()
        );
    }

    #[test]
    fn quirk_a_late_ack_of_an_old_stream_never_replaces_a_newer_one() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        assert_eq!(
            listen.on_ack(42, Instant::now(), &mut ids.next()),
            vec![Action::Cancel { id: 42 }]
        );
        assert!(listen.is_stream(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_stream_comes_back_after_a_doubling_wait_with_gap_recovery() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        listen.change(json!(3), "file:///n".into(), true, &mut ids.next());
        listen.on_ack(2, Instant::now(), &mut ids.next());
        let mut waits = Vec::new();
        let mut id = 2;
        for _ in 0..8 {
            let end = listen.on_end(id, End::Result, Instant::now(), &mut ids.next());
            let Action::RetryIn(wait) = end[1] else {
                panic!("{end:?}")
            };
            if waits.is_empty() {
                assert_eq!(
                    end[0],
                    Action::Info(ListenInfo::ServerEnded {
                        time: "500 ms".into()
                    })
                );
            }
            waits.push(wait.as_millis());
            let retry = listen.retry(&mut ids.next());
            let Action::Open {
                id: new,
                notifications,
            } = &retry[0]
            else {
                panic!()
            };
            assert_eq!(notifications["resourceSubscriptions"], json!(["file:///n"]));
            id = *new;
            let ack = listen.on_ack(id, Instant::now(), &mut ids.next());
            assert_eq!(methods(&ack).len(), 4, "three list changes and one update");
            assert_eq!(
                frames(&ack)[3],
                json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///n"}})
            );
        }
        assert_eq!(
            waits,
            vec![500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]
        );
        // A stream that lived 10 s after its ack resets the wait.
        tokio::time::advance(HEALTHY_LIFETIME).await;
        let end = listen.on_end(
            id,
            End::Lost("the connection closed".into()),
            Instant::now(),
            &mut ids.next(),
        );
        assert_eq!(
            end,
            vec![
                Action::Warn(ListenWarning::Ended {
                    error: "the connection closed".into(),
                    time: "500 ms".into()
                }),
                Action::RetryIn(FIRST_BACKOFF)
            ]
        );
    }

    #[test]
    fn a_refused_stream_stops_the_retries_until_a_change_of_subscriptions() {
        let mut listen = Listen::new(all_declared());
        let mut ids = Ids(0);
        listen.start(&mut ids.next());
        let end = listen.on_end(
            1,
            End::Error(json!({"code":-32601,"message":"Method not found"})),
            Instant::now(),
            &mut ids.next(),
        );
        assert_eq!(
            end,
            vec![Action::Warn(ListenWarning::CannotStart {
                code: "-32601".into(),
                message: "Method not found".into()
            })]
        );
        assert!(listen.retry(&mut ids.next()).is_empty());
        let change = listen.change(json!(2), "a:1".into(), true, &mut ids.next());
        assert!(matches!(change[0], Action::Open { .. }));
    }

    #[test]
    fn a_stream_refused_after_an_acknowledged_one_is_a_refusal() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        let lost = listen.on_end(1, End::Result, Instant::now(), &mut ids.next());
        assert!(matches!(lost[1], Action::RetryIn(_)));
        assert!(matches!(
            listen.retry(&mut ids.next())[0],
            Action::Open { id: 2, .. }
        ));
        let end = listen.on_end(
            2,
            End::Error(json!({"code":-32601,"message":"Method not found"})),
            Instant::now(),
            &mut ids.next(),
        );
        assert_eq!(
            end,
            vec![Action::Warn(ListenWarning::RefusedWithError {
                code: "-32601".into(),
                message: "Method not found".into()
            })]
        );
    }

    #[test]
    fn subscriptions_before_the_stream_starts_are_kept_for_it() {
        let mut listen = Listen::new(all_declared());
        let mut ids = Ids(0);
        let reply = listen.change(json!(1), "a:1".into(), true, &mut ids.next());
        assert_eq!(
            reply,
            vec![Action::ToClient(
                json!({"jsonrpc":"2.0","id":1,"result":{}})
            )]
        );
        let Action::Open { notifications, .. } = &listen.start(&mut ids.next())[0] else {
            panic!()
        };
        assert_eq!(notifications["resourceSubscriptions"], json!(["a:1"]));
    }

    #[test]
    fn the_end_of_input_cancels_every_stream() {
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        listen.change(json!(1), "a:1".into(), true, &mut ids.next());
        assert_eq!(
            listen.stop(),
            vec![Action::Cancel { id: 2 }, Action::Cancel { id: 1 }]
        );
    }

    /// A started machine whose first stream (id 1) is acknowledged.
    fn acknowledged(ids: &mut Ids) -> Listen {
        let mut listen = Listen::new(all_declared());
        listen.start(&mut ids.next());
        listen.on_ack(1, Instant::now(), &mut ids.next());
        listen
    }

    #[test]
    fn m4_408_429_and_5xx_but_501_give_a_new_stream_after_a_wait() {
        for status in [408, 429, 500, 502, 503, 504, 599] {
            let mut ids = Ids(0);
            let mut listen = acknowledged(&mut ids);
            let end = listen.on_end(1, End::Status(status), Instant::now(), &mut ids.next());
            assert_eq!(
                end,
                vec![
                    Action::Warn(ListenWarning::EndedWithStatus {
                        n: status,
                        time: "500 ms".into()
                    }),
                    Action::RetryIn(FIRST_BACKOFF)
                ],
                "{status}"
            );
            assert!(matches!(
                listen.retry(&mut ids.next())[0],
                Action::Open { .. }
            ));
        }
    }

    #[test]
    fn m4_401_and_403_wait_for_the_next_sign_in() {
        for status in [401, 403] {
            let mut ids = Ids(0);
            let mut listen = acknowledged(&mut ids);
            let end = listen.on_end(1, End::Status(status), Instant::now(), &mut ids.next());
            assert_eq!(
                end,
                vec![Action::Warn(ListenWarning::FailedWithStatus { n: status })]
            );
            assert!(
                listen.retry(&mut ids.next()).is_empty(),
                "no retry before a sign-in"
            );
            let signed_in = listen.signed_in(&mut ids.next());
            assert_eq!(signed_in[0], Action::Info(ListenInfo::SignInCompleted));
            assert!(matches!(signed_in[1], Action::Open { .. }));
            assert!(listen.signed_in(&mut ids.next()).is_empty(), "once");
        }
    }

    #[test]
    fn m4_other_statuses_stop_the_stream() {
        for status in [400, 404, 405, 501] {
            let mut ids = Ids(0);
            let mut listen = acknowledged(&mut ids);
            let end = listen.on_end(1, End::Status(status), Instant::now(), &mut ids.next());
            assert_eq!(
                end,
                vec![Action::Warn(ListenWarning::RefusedWithStatus { n: status })]
            );
            assert!(listen.retry(&mut ids.next()).is_empty());
            assert!(listen.signed_in(&mut ids.next()).is_empty());
        }
    }

    #[test]
    fn m4_a_first_stream_refused_with_a_status_writes_the_line_of_a_first_stream() {
        let mut ids = Ids(0);
        let mut listen = Listen::new(all_declared());
        let opened = listen.start(&mut ids.next());
        assert_eq!(opened.len(), 1);
        let end = listen.on_end(1, End::Status(501), Instant::now(), &mut ids.next());
        assert_eq!(
            end,
            vec![Action::Warn(ListenWarning::CannotStartWithStatus {
                n: 501
            })]
        );
        assert_eq!(
            ListenWarning::CannotStartWithStatus { n: 501 }.to_string(),
            "cannot start the listen stream: the HTTP status 501. The client gets no list changes."
        );
        assert!(listen.retry(&mut ids.next()).is_empty());
    }

    #[test]
    fn o6_a_list_change_outside_the_stream_reaches_vscode_for_a_listed_list() {
        let listen = Listen::new(Declared {
            tools: true,
            resources: true,
            ..Declared::default()
        });
        for method in [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
        ] {
            assert_eq!(
                listen.on_untagged(method, None),
                Some(json!({"jsonrpc":"2.0","method":method})),
                "{method}"
            );
        }
        assert_eq!(
            listen.on_untagged("notifications/prompts/list_changed", None),
            None,
            "VS Code lists no prompts of this server"
        );
        for method in ["notifications/message", "notifications/progress", "x"] {
            assert_eq!(listen.on_untagged(method, None), None, "{method}");
        }
    }

    #[test]
    fn o7_an_update_outside_the_stream_reaches_vscode_only_for_an_answered_subscription() {
        let update = |uri: &str| json!({"uri":uri,"_meta":{"x/y":1}}).as_object().cloned();
        let mut ids = Ids(0);
        let mut listen = acknowledged(&mut ids);
        let subscribe = listen.change(json!(7), "file:///a".into(), true, &mut ids.next());
        assert!(matches!(subscribe[0], Action::Open { id: 2, .. }));
        assert_eq!(
            listen.on_untagged("notifications/resources/updated", update("file:///a")),
            None,
            "VS Code has no answer to its subscribe yet"
        );
        listen.on_ack(2, Instant::now(), &mut ids.next());
        assert_eq!(
            listen.on_untagged("notifications/resources/updated", update("file:///a")),
            Some(
                json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a","_meta":{"x/y":1}}})
            )
        );
        for params in [update("file:///b"), update("file:///a/b"), None] {
            assert_eq!(
                listen.on_untagged("notifications/resources/updated", params.clone()),
                None,
                "{params:?}"
            );
        }
    }
}
