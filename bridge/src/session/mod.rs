//! The session with VS Code: the state machine of one connection.
//!
//! One task owns the state of the connection: the lifecycle, the requests in flight
//! and the timers. Frames come in through channels (from the stdin reader and from
//! the upstream link) and go out through one sink to stdout, which the session
//! writes itself or queues for the writer task, so the order of frames toward VS
//! Code is decided here and nowhere else. The tasks around it and the watchdog are
//! in `serve`, which runs the session; the session never imports it.

mod deadlines;
mod forward;
mod in_flight;
mod kept;
mod lifecycle;
mod listen;
mod pass_through;
mod requests;
mod rounds;
mod stop;

pub use stop::Exit;

use crate::catalogue::{BridgeDebug, UpstreamStopped};
use crate::catalogue::{BridgeError, Cause};
use crate::client::{ClientEvent, ClientSink, ForwardedRequest};
use crate::config::{Config, Limits};
use crate::log::emit;
use crate::rules::capabilities::InputKinds;
use crate::rules::initialize::FallbackIdentity;
use crate::rules::meta::SharedMeta;
use crate::upstream::{
    ClientState, Connector, LinkContext, LinkEnd, Outgoing, OutgoingSink, UpstreamControl,
    UpstreamEvent, UpstreamEvents, UpstreamLink, UpstreamSlot,
};
use crate::wire::frame::{self, Message, Notification, Request};
use crate::wire::id::IdKey;
use crate::wire::shallow::ShallowObject;
use futures::StreamExt;
use requests::Requests;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tokio_util::time::{DelayQueue, delay_queue};

/// The phase of the connection.
#[derive(Debug)]
enum Phase {
    AwaitingInitialize,
    /// `initialize` came; the upstream answers server/discover.
    Initializing {
        client_id: Value,
        discover_id: u64,
        timer: delay_queue::Key,
    },
    /// VS Code has the initialize result.
    Initialized,
    /// VS Code sent `notifications/initialized`.
    Ready,
}

/// A connected upstream.
#[derive(Debug)]
struct Connected {
    sender: Box<dyn OutgoingSink>,
    events: UpstreamEvents,
    control: Arc<dyn UpstreamControl>,
}

impl Connected {
    /// Ends the upstream's input and waits for it to stop (`grace`, then the
    /// signals), reading and dropping what it still writes meanwhile: a pipe closed
    /// under it would fail its last writes (EPIPE, or SIGPIPE for a process that does
    /// not ignore it).
    async fn close(self, grace: Duration) {
        let Self {
            sender,
            mut events,
            control,
        } = self;
        drop(sender);
        let shutdown = control.shutdown(grace);
        tokio::pin!(shutdown);
        let mut reading = true;
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                event = events.next(), if reading => reading = event.is_some(),
            }
        }
    }
}

impl From<UpstreamLink> for Connected {
    fn from(link: UpstreamLink) -> Self {
        Self {
            sender: link.sender,
            events: link.events,
            control: link.control,
        }
    }
}

/// What VS Code told at initialize, in the form the upstream requests need.
#[derive(Debug)]
struct ClientContext {
    /// The `_meta` that every upstream request starts from (R3).
    base_meta: Arc<SharedMeta>,
    /// What VS Code can answer (M2).
    inputs: InputKinds,
}

/// The timers of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Timer {
    Discover,
    /// The wait before a new listen stream after a loss.
    ListenRetry,
    /// The time limit of the stream of a change of subscriptions.
    ListenChange(u64),
}

/// Whether the loop goes on.
enum Step {
    Continue,
    Exit(Exit),
}

/// The state of one connection, owned by one task.
pub(crate) struct Session {
    limits: Limits,
    discover_timeout: Duration,
    /// The wait of the last server/discover: with the sign-in time when a
    /// sign-in can start.
    discover_wait: Duration,
    fallback: FallbackIdentity,
    connector: Arc<dyn Connector>,
    slot: UpstreamSlot,
    out: ClientSink,
    /// Where the links spawn their tasks, and the signal that stops them at once.
    tasks: TaskTracker,
    stop: CancellationToken,
    /// VS Code's side, for the link (M4: who asks the user to sign in).
    client_state: watch::Sender<ClientState>,
    phase: Phase,
    upstream: Option<Connected>,
    client: Option<ClientContext>,
    /// The listen stream, from the initialize result on (M3).
    listen: Option<crate::notify::listen::Listen>,
    /// The level of the last `logging/setLevel` (O5).
    log_level: Option<String>,
    /// The requests in flight, both ways, with their ids and time limits.
    requests: Requests,
    /// The rare timers: discover, and the listen stream's waits.
    timers: DelayQueue<Timer>,
    /// The upstream is at a URL: VS Code gets only `data:` icons (O10, M4).
    data_icons_only: bool,
}

impl Session {
    pub(crate) fn new(
        config: &Config,
        connector: Arc<dyn Connector>,
        out: ClientSink,
        slot: UpstreamSlot,
        tasks: TaskTracker,
        stop: CancellationToken,
    ) -> Self {
        Self {
            limits: config.limits.clone(),
            discover_timeout: config.discover_timeout,
            discover_wait: config.discover_timeout,
            fallback: config.fallback_identity(),
            connector,
            slot,
            out,
            tasks,
            stop,
            client_state: watch::channel(ClientState::default()).0,
            phase: Phase::AwaitingInitialize,
            upstream: None,
            client: None,
            listen: None,
            log_level: None,
            requests: Requests::new(),
            timers: DelayQueue::new(),
            data_icons_only: config.remote_upstream(),
        }
    }

    pub(crate) async fn run(mut self, mut client: mpsc::Receiver<ClientEvent>) -> Exit {
        loop {
            let step = tokio::select! {
                biased;
                event = next_upstream_event(&mut self.upstream) => self.on_upstream(event).await,
                event = client.recv() => match event {
                    Some(ClientEvent::End) | None => return self.stop_at_end_of_input().await,
                    Some(event) => {
                        self.on_client(event).await;
                        Step::Continue
                    }
                },
                key = self.requests.next_due() => {
                    self.request_timer(key).await;
                    Step::Continue
                }
                Some(expired) = self.timers.next(), if !self.timers.is_empty() => {
                    self.on_timer(expired.into_inner()).await;
                    Step::Continue
                }
            };
            if let Step::Exit(exit) = step {
                return exit;
            }
        }
    }

    async fn on_client(&mut self, event: ClientEvent) {
        match event {
            ClientEvent::Forward(request) => self.on_forwarded_request(request).await,
            ClientEvent::Message(Message::Request(request)) => self.on_request(request).await,
            ClientEvent::Message(Message::Notification(notification)) => {
                self.on_notification(notification).await
            }
            ClientEvent::Message(Message::Response(response)) => {
                self.on_client_answer(response).await
            }
            ClientEvent::Unusable {
                id,
                recovered_id,
                cause,
                detail,
            } => {
                if let Some(recovered) = &recovered_id
                    && self.on_broken_answer(recovered).await
                {
                    return;
                }
                let error = BridgeError {
                    cause,
                    detail,
                    code: None,
                };
                emit!(BridgeDebug::LineRefused { error: &error });
                self.out
                    .send(frame::error_frame(
                        id.unwrap_or(Value::Null),
                        error.to_object(),
                    ))
                    .await;
            }
            ClientEvent::End => {}
        }
    }

    /// A request of a method that goes upstream, read one level deep. After the
    /// initialize result it goes upstream as [`Self::on_request`] would send it;
    /// before, the full reading answers it (C1, `not_initialized`).
    async fn on_forwarded_request(&mut self, request: ForwardedRequest) {
        let ForwardedRequest { id, method, params } = request;
        if self.before_initialize_result() {
            let params = params.as_ref().map(ShallowObject::to_map).transpose();
            return match params {
                Ok(params) => self.on_request(Request { id, method, params }).await,
                // JSON text that serde_json refuses: the full reading of the line
                // would have failed the same way.
                Err(_) => {
                    let error = BridgeError::new(Cause::ParseError).to_object();
                    self.out.send(frame::error_frame(Value::Null, error)).await
                }
            };
        }
        let Some(id) = self.admit(id, &method).await else {
            return;
        };
        self.forward(id, method, params.unwrap_or_default()).await
    }

    async fn on_request(&mut self, request: Request) {
        let Request { id, method, params } = request;
        let Some(id) = self.admit(id, &method).await else {
            return;
        };
        match method.as_str() {
            // R2: answered by the bridge itself in every phase.
            "ping" => self.reply(id, Value::Object(Map::new())).await,
            "logging/setLevel" => self.set_log_level(id, params).await,
            // C1, C4: never sent upstream, so no late answer can come.
            "server/discover" => {
                self.reply_error(id, BridgeError::new(Cause::MethodNotFound))
                    .await
            }
            // C1: a request of revision 2026-07-28 before the initialize result.
            _ if self.before_initialize_result() && has_modern_meta(params.as_ref()) => {
                self.reply_error(id, BridgeError::new(Cause::MethodNotFound))
                    .await
            }
            "initialize" => self.initialize(id, params).await,
            _ if self.before_initialize_result() => {
                self.reply_error(id, BridgeError::new(Cause::NotInitialized))
                    .await
            }
            "resources/subscribe" => self.change_subscription(id, params, true).await,
            "resources/unsubscribe" => self.change_subscription(id, params, false).await,
            method if crate::rules::FORWARDED_METHODS.contains(&method) => {
                let params = params.as_ref().map(ShallowObject::from_map);
                self.forward(id, method.to_owned(), params.unwrap_or_default())
                    .await
            }
            _ => {
                self.reply_error(id, BridgeError::new(Cause::MethodNotFound))
                    .await
            }
        }
    }

    async fn on_notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/initialized" => {
                if matches!(self.phase, Phase::Initialized) {
                    self.phase = Phase::Ready;
                    self.client_state
                        .send_modify(|state| state.initialized = true);
                    self.start_listening().await;
                }
            }
            "notifications/cancelled" => self.on_client_cancelled(notification.params).await,
            method => {
                emit!(BridgeDebug::NotificationDropped { method });
            }
        }
    }

    /// O5: the level goes with every upstream request that starts after it.
    async fn set_log_level(&mut self, id: Value, params: Option<Map<String, Value>>) {
        let level = params
            .as_ref()
            .and_then(|params| params.get("level"))
            .and_then(Value::as_str)
            .filter(|level| crate::notify::events::LOG_LEVELS.contains(level));
        match level {
            Some(level) => {
                self.log_level = Some(level.to_owned());
                self.reply(id, Value::Object(Map::new())).await;
            }
            None => {
                let error = BridgeError::with_detail(
                    Cause::InvalidParams,
                    "level is one of debug, info, notice, warning, error, critical, alert and emergency",
                );
                self.reply_error(id, error).await;
            }
        }
    }

    fn before_initialize_result(&self) -> bool {
        matches!(
            self.phase,
            Phase::AwaitingInitialize | Phase::Initializing { .. }
        )
    }

    async fn on_upstream(&mut self, event: Option<UpstreamEvent>) -> Step {
        match event {
            Some(UpstreamEvent::Message(message)) => {
                self.on_upstream_message(message).await;
                Step::Continue
            }
            Some(UpstreamEvent::Result(line)) => {
                self.on_result_line(line).await;
                Step::Continue
            }
            Some(UpstreamEvent::Unreadable { frame, reason, id }) => {
                self.on_unreadable(frame, reason, id).await;
                Step::Continue
            }
            Some(UpstreamEvent::RequestFailed { id, failure }) => {
                self.on_request_failed(id, failure).await;
                Step::Continue
            }
            Some(UpstreamEvent::AskClient(question)) => {
                self.ask_client(question).await;
                Step::Continue
            }
            Some(UpstreamEvent::QuestionsWithdrawn { reason }) => {
                self.cancel_withdrawn_questions(&reason).await;
                Step::Continue
            }
            Some(UpstreamEvent::NotifyClient { method, params }) => {
                self.out
                    .send(frame::notification_frame(method, Some(params)))
                    .await;
                Step::Continue
            }
            Some(UpstreamEvent::SignedIn) => {
                self.listen_signed_in().await;
                Step::Continue
            }
            Some(UpstreamEvent::Ended(end)) => self.link_ended(end).await,
            Some(UpstreamEvent::LargeResult { id, seen }) => {
                self.release_kept_request(id);
                let _ = seen.send(());
                Step::Continue
            }
            // A link that goes without its last event ends like one that stops.
            None => {
                let end = LinkEnd::Stopped(UpstreamStopped::LinkClosed);
                self.link_ended(end).await
            }
        }
    }

    async fn on_timer(&mut self, timer: Timer) {
        match timer {
            Timer::Discover => self.discover_timed_out().await,
            Timer::ListenRetry => self.listen_retry().await,
            Timer::ListenChange(id) => self.listen_change_timed_out(id).await,
        }
    }

    fn send_upstream(&self, frame: Outgoing) {
        if let Some(upstream) = &self.upstream {
            upstream.sender.send(frame);
        }
    }

    async fn reply(&self, id: Value, result: Value) {
        self.out.send(frame::result_frame(id, result)).await;
    }

    async fn reply_error(&self, id: Value, error: BridgeError) {
        self.out
            .send(frame::error_frame(id, error.to_object()))
            .await;
    }

    /// What the link gets at connect.
    fn link_context(&self) -> LinkContext {
        LinkContext {
            tasks: self.tasks.clone(),
            stop: self.stop.clone(),
            client: self.client_state.subscribe(),
        }
    }

    /// A cancellation for the upstream request `upstream_id`.
    fn cancel_upstream(&self, upstream_id: u64, reason: &str) {
        let mut params = Map::new();
        params.insert("requestId".into(), upstream_id.into());
        params.insert("reason".into(), reason.into());
        self.send_upstream(Outgoing::Notification {
            method: "notifications/cancelled",
            params,
        });
    }
}

async fn next_upstream_event(upstream: &mut Option<Connected>) -> Option<UpstreamEvent> {
    match upstream {
        Some(connected) => connected.events.next().await,
        None => std::future::pending().await,
    }
}

/// C1: the `_meta` key of revision 2026-07-28 marks a client that tries the new revision first.
fn has_modern_meta(params: Option<&Map<String, Value>>) -> bool {
    params
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(crate::rules::meta::PROTOCOL_VERSION_KEY))
}

/// The key of a request id that the classifier already accepted.
fn key_of(id: &Value) -> IdKey {
    IdKey::of(id).unwrap_or_else(|| IdKey::String(id.to_string()))
}

/// Faults that only debug builds have, so that tests can prove what a panic or a
/// stuck session does (`MCP_BRIDGE_TEST_FAULT`).
#[cfg(debug_assertions)]
mod test_faults {
    use std::sync::OnceLock;

    fn fault() -> Option<&'static str> {
        static FAULT: OnceLock<Option<String>> = OnceLock::new();
        FAULT
            .get_or_init(|| std::env::var("MCP_BRIDGE_TEST_FAULT").ok())
            .as_deref()
    }

    /// `panic-on:<method>` panics when a request of that method comes.
    pub(super) fn check(method: &str) {
        if fault().and_then(|fault| fault.strip_prefix("panic-on:")) == Some(method) {
            panic!("the test fault panic-on:{method}");
        }
    }

    /// `hang-at-end`: the session never finishes its stop, so the watchdog must.
    pub(super) fn hang_at_end() -> bool {
        fault() == Some("hang-at-end")
    }

    /// `block-at-end`: the runtime's only thread is stuck at the stop, so no timer
    /// of the runtime can fire and only the last-resort watchdog of the executable
    /// can stop the bridge.
    pub(super) fn block_at_end() {
        if fault() == Some("block-at-end") {
            #[allow(clippy::disallowed_methods)]
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }

    /// `keep-null-cursor`: R4 is broken on purpose, to prove that the conformance
    /// runner catches a bridge that breaks the contract.
    pub(super) fn keep_null_cursor() -> bool {
        fault() == Some("keep-null-cursor")
    }
}
