//! The state of one connection: requests in flight, listen streams, and the tool and
//! prompt that `toggle` switches.
//!
//! Why the fixture drives its own JSON-RPC loop instead of rmcp's server runtime
//! (`serve_server`), measured on rmcp 3.11.0: that runtime also accepts `initialize`
//! and then serves the legacy era (the fixture must be a strict 2026-07-28 server); it
//! checks the per-request `_meta` only before its lifecycle starts; it writes
//! notifications and responses from separate spawned send tasks, so "list change before
//! result" is not a property of the code; it answers no `-32700` for a bad line; and at
//! the end of input it waits up to 5 s for handlers. The fixture keeps rmcp for what fits:
//! the model types (tools, prompts, resources, results, errors) and the requestState
//! codec.
//!
//! One mutex guards all of it, and every frame that depends on this state is queued
//! while the mutex is held. So the order of the output follows the order of the state
//! changes: a list change is queued before the result of the `toggle` that caused it, an
//! acknowledgment before the first notification of its stream, and no frame of a
//! cancelled request after its cancellation.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use rmcp::model::{ErrorData, Implementation};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::context::Host;
use crate::outbox::Outbox;
use crate::state::StateCodec;
use crate::switch::Switch;
use crate::wire::{self, RequestId};

/// A list whose changes a listen stream can receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    Tools,
    Prompts,
    Resources,
}

impl ListKind {
    fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        }
    }
}

/// The notifications that a listen stream asked for and that the fixture honours
/// (`SubscriptionFilter`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    /// `resourceSubscriptions`; `None` when the request had none.
    pub uris: Option<Vec<String>>,
}

impl Filter {
    fn wants(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools,
            ListKind::Prompts => self.prompts,
            ListKind::Resources => self.resources,
        }
    }

    /// The acknowledged filter: the members asked for, without `false` ones.
    pub fn to_json(&self) -> Value {
        let mut filter = Map::new();
        if self.tools {
            filter.insert("toolsListChanged".into(), true.into());
        }
        if self.prompts {
            filter.insert("promptsListChanged".into(), true.into());
        }
        if self.resources {
            filter.insert("resourcesListChanged".into(), true.into());
        }
        if let Some(uris) = &self.uris {
            filter.insert("resourceSubscriptions".into(), json!(uris));
        }
        Value::Object(filter)
    }
}

/// What the reader loop must do besides reading.
#[derive(Debug)]
pub enum Control {
    /// Stop serving: the process exits with this code.
    Exit(i32),
}

struct Listen {
    id: RequestId,
    filter: Filter,
}

struct Shared {
    requests: HashMap<String, CancellationToken>,
    listens: Vec<Listen>,
    tool_enabled: bool,
    prompt_enabled: bool,
    param_header_marked: bool,
}

/// One connection.
pub struct Session {
    pub config: Config,
    pub catalog: Catalog,
    pub outbox: Outbox,
    pub states: StateCodec,
    control: mpsc::UnboundedSender<Control>,
    shared: Mutex<Shared>,
}

const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The `serverInfo` of every result; `None` with `--anonymous`.
pub fn server_info(config: &Config) -> Option<Value> {
    if config.anonymous {
        return None;
    }
    let mut info = Implementation::new(crate::SERVER_NAME, crate::SERVER_VERSION);
    if config.icons {
        info.icons = Some(crate::catalog::three_scheme_icons("server"));
    }
    serde_json::to_value(info).ok()
}

/// Adds `resultType: "complete"` when the result has no `resultType`, and the
/// `serverInfo` that servers SHOULD put in the `_meta` of every result
/// (basic/index.mdx §`_meta`).
pub fn stamp(mut result: Value, config: &Config) -> Value {
    if let Value::Object(object) = &mut result {
        object
            .entry("resultType")
            .or_insert_with(|| "complete".into());
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let (Value::Object(meta), Some(info)) = (meta, server_info(config)) {
            meta.insert(META_SERVER_INFO.into(), info);
        }
    }
    result
}

impl Session {
    pub fn new(
        config: Config,
        catalog: Catalog,
        outbox: Outbox,
        states: StateCodec,
        control: mpsc::UnboundedSender<Control>,
    ) -> Session {
        Session {
            config,
            catalog,
            outbox,
            states,
            control,
            shared: Mutex::new(Shared {
                requests: HashMap::new(),
                listens: Vec::new(),
                tool_enabled: true,
                prompt_enabled: true,
                param_header_marked: true,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic of another task must not stop the server: the state stays usable.
        self.shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Asks the reader loop to stop with `code`.
    pub fn exit(&self, code: i32) {
        let _ = self.control.send(Control::Exit(code));
    }

    /// Registers a request in flight. Refuses an id that a request in flight (or an
    /// open listen stream) already uses: ids must be unique among requests in flight.
    pub fn begin(&self, id: &RequestId) -> Result<CancellationToken, ErrorData> {
        let mut shared = self.lock();
        let key = id.key();
        if shared.requests.contains_key(&key) || shared.listens.iter().any(|l| l.id == *id) {
            return Err(wire::invalid_request(format!(
                "The request id {id} is already in use by a request in flight."
            )));
        }
        let token = CancellationToken::new();
        shared.requests.insert(key, token.clone());
        Ok(token)
    }

    /// Writes the response of a request that [`begin`](Self::begin) registered, unless the
    /// client cancelled it: a cancelled request gets no response.
    pub fn finish(&self, id: &RequestId, outcome: Result<Value, ErrorData>) {
        let mut shared = self.lock();
        let Some(token) = shared.requests.remove(&id.key()) else {
            return;
        };
        if token.is_cancelled() {
            return;
        }
        self.outbox.answer(
            id,
            match outcome {
                Ok(result) => wire::response(id, stamp(result, &self.config)),
                Err(error) => wire::error(Some(id), &error),
            },
        );
    }

    /// Writes a notification of a request in flight (progress, log message), unless the
    /// request is finished or cancelled.
    pub fn notify_for(&self, id: &RequestId, frame: String) {
        let shared = self.lock();
        if shared
            .requests
            .get(&id.key())
            .is_some_and(|token| !token.is_cancelled())
        {
            self.outbox.push_to(id, frame);
        }
    }

    /// `notifications/cancelled` of the client: a request in flight stops and gets no
    /// response; a listen stream ends silently. Unknown ids are ignored.
    pub fn cancel(&self, id: &RequestId) -> bool {
        let mut shared = self.lock();
        if let Some(token) = shared.requests.remove(&id.key()) {
            token.cancel();
            return true;
        }
        let before = shared.listens.len();
        shared.listens.retain(|listen| listen.id != *id);
        before != shared.listens.len()
    }

    /// Cancels every request in flight (at the end of input); returns how many.
    pub fn cancel_all(&self) -> usize {
        let mut shared = self.lock();
        let count = shared.requests.len();
        for (_, token) in shared.requests.drain() {
            token.cancel();
        }
        count
    }

    /// How many requests are in flight (listen streams not counted).
    pub fn in_flight(&self) -> usize {
        self.lock().requests.len()
    }

    /// Opens a listen stream: queues its acknowledgment first, so that no notification
    /// of the stream can precede it.
    pub fn open_listen(&self, id: &RequestId, filter: Filter) -> Result<(), ErrorData> {
        let mut shared = self.lock();
        if shared.requests.contains_key(&id.key()) || shared.listens.iter().any(|l| l.id == *id) {
            return Err(wire::invalid_request(format!(
                "The request id {id} is already in use by a request in flight."
            )));
        }
        self.outbox.push_to(
            id,
            wire::notification(
                "notifications/subscriptions/acknowledged",
                Some(json!({
                    "_meta": {META_SUBSCRIPTION: id.value()},
                    "notifications": filter.to_json(),
                })),
            ),
        );
        shared.listens.push(Listen {
            id: id.clone(),
            filter,
        });
        Ok(())
    }

    /// Ends every listen stream on the server's initiative: each gets its
    /// `SubscriptionsListenResult` response, then `notifications/cancelled` for its id
    /// (basic/patterns/subscriptions.mdx §Graceful Closure, cancellation.mdx).
    /// Returns how many streams ended.
    pub fn end_listens(&self, reason: &str) -> usize {
        let mut shared = self.lock();
        let listens = std::mem::take(&mut shared.listens);
        for listen in &listens {
            let id = listen.id.value();
            self.outbox.answer(
                &listen.id,
                wire::response(
                    &listen.id,
                    stamp(
                        json!({"resultType": "complete", "_meta": {META_SUBSCRIPTION: id}}),
                        &self.config,
                    ),
                ),
            );
            // On stdio the client learns that the stream ended; over HTTP the response
            // closed the route, and the end of the stream says it.
            self.outbox.push_to(
                &listen.id,
                wire::notification(
                    "notifications/cancelled",
                    Some(json!({
                        "requestId": id,
                        "reason": reason,
                        "_meta": {META_SUBSCRIPTION: id},
                    })),
                ),
            );
        }
        listens.len()
    }

    /// Whether the switchable tool or prompt (or the annotation) is listed.
    pub fn enabled(&self, switch: Switch) -> bool {
        let shared = self.lock();
        match switch {
            Switch::Tool => shared.tool_enabled,
            Switch::Prompt => shared.prompt_enabled,
            Switch::ParamHeader => shared.param_header_marked,
        }
    }

    /// Sets a switch for the request `by`. When the list changes, every listen stream
    /// that asked for that list gets the list change now, before the caller writes its
    /// result (with `--list-change-in-response`, the response stream of `by` gets it
    /// instead). Returns whether the state changed.
    pub fn set_enabled(&self, by: &RequestId, switch: Switch, enabled: bool) -> bool {
        let mut shared = self.lock();
        let (slot, kind) = match switch {
            Switch::Tool => (&mut shared.tool_enabled, ListKind::Tools),
            Switch::Prompt => (&mut shared.prompt_enabled, ListKind::Prompts),
            Switch::ParamHeader => (&mut shared.param_header_marked, ListKind::Tools),
        };
        if *slot == enabled {
            return false;
        }
        *slot = enabled;
        if self.config.list_change_in_response {
            self.push_in_response(&shared, by, wire::notification(kind.method(), None));
        } else {
            self.push_list_changed(&shared, kind);
        }
        true
    }

    /// A notification in the response stream of the request `by` while it is in
    /// flight, without a subscription id: what FastMCP does with the changes that a
    /// call makes.
    fn push_in_response(&self, shared: &Shared, by: &RequestId, frame: String) {
        if shared
            .requests
            .get(&by.key())
            .is_some_and(|token| !token.is_cancelled())
        {
            self.outbox.push_to(by, frame);
        }
    }

    fn push_list_changed(&self, shared: &Shared, kind: ListKind) {
        for listen in shared.listens.iter().filter(|l| l.filter.wants(kind)) {
            self.outbox.push_to(
                &listen.id,
                wire::notification(
                    kind.method(),
                    Some(json!({"_meta": {META_SUBSCRIPTION: listen.id.value()}})),
                ),
            );
        }
    }

    /// `notifications/resources/updated` for `uri` on every listen stream subscribed to
    /// it (the URI itself, or a resource under it). Returns how many streams got it.
    /// With `--list-change-in-response`, only the response stream of the request `by`
    /// gets it, subscribed or not (0 streams).
    pub fn resource_updated(&self, by: &RequestId, uri: &str) -> usize {
        let shared = self.lock();
        if self.config.list_change_in_response {
            let params = json!({"uri": uri});
            let frame = wire::notification("notifications/resources/updated", Some(params));
            self.push_in_response(&shared, by, frame);
            return 0;
        }
        let mut count = 0;
        for listen in &shared.listens {
            let subscribed = listen
                .filter
                .uris
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|watched| covers(watched, uri)));
            if subscribed {
                count += 1;
                self.outbox.push_to(
                    &listen.id,
                    wire::notification(
                        "notifications/resources/updated",
                        Some(json!({"_meta": {META_SUBSCRIPTION: listen.id.value()}, "uri": uri})),
                    ),
                );
            }
        }
        count
    }
}

/// The session as the handlers see it.
impl Host for Session {
    fn notify_for(&self, id: &RequestId, frame: String) {
        Session::notify_for(self, id, frame);
    }

    fn enabled(&self, switch: Switch) -> bool {
        Session::enabled(self, switch)
    }

    fn set_enabled(&self, by: &RequestId, switch: Switch, enabled: bool) -> bool {
        Session::set_enabled(self, by, switch, enabled)
    }

    fn resource_updated(&self, by: &RequestId, uri: &str) -> usize {
        Session::resource_updated(self, by, uri)
    }

    fn exit(&self, code: i32) {
        Session::exit(self, code);
    }

    fn end_listens(&self, reason: &str) -> usize {
        Session::end_listens(self, reason)
    }

    fn states(&self) -> &StateCodec {
        &self.states
    }
}

/// Whether a subscription to `watched` covers an update of `uri`: the same URI, or a
/// sub-resource of it (subscriptions.mdx: the URI may be a sub-resource).
fn covers(watched: &str, uri: &str) -> bool {
    uri == watched
        || uri
            .strip_prefix(watched)
            .is_some_and(|rest| watched.ends_with('/') || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn a_subscription_covers_its_sub_resources_only() {
        assert!(covers("file:///a", "file:///a"));
        assert!(covers("file:///a", "file:///a/b"));
        assert!(covers("file:///a/", "file:///a/b"));
        assert!(!covers("file:///a", "file:///ab"));
        assert!(!covers("file:///a/b", "file:///a"));
    }
}
