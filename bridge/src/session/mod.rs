//! The session with VS Code.
//!
//! One task owns the state of the connection: the lifecycle, the requests in flight
//! and the timers. Frames come in through channels (from the stdin reader and from
//! the upstream link) and go out through one channel to the stdout writer, so the
//! order of frames toward VS Code is decided here and nowhere else.

mod client_io;
mod deadlines;
mod forward;
mod lifecycle;
mod listen;
mod pass_through;
mod rounds;
mod stop;
mod table;

use crate::config::{Config, Limits};
use crate::log::{BRIDGE, VSCODE};
use crate::rules::capabilities::InputKinds;
use crate::rules::initialize::FallbackIdentity;
use crate::rules::meta::SharedMeta;
use crate::upstream::{Connector, Outgoing, UpstreamControl, UpstreamEvent, UpstreamLink};
use crate::wire::error::{BridgeError, Cause};
use crate::wire::frame::{self, Message, Notification, Request};
use crate::wire::id::IdKey;
use crate::wire::shallow::ShallowObject;
use client_io::{ClientEvent, ClientSink, ForwardedRequest};
use futures::StreamExt;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use table::{Table, Timer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, mpsc};
use tokio_util::time::{DelayQueue, delay_queue};

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The end of stdin (also when the watchdog stopped the bridge): exit code 0.
    EndOfInput,
    /// The upstream command stopped, or an internal error: exit code 1.
    Failure,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Self::EndOfInput => 0,
            Self::Failure => 1,
        }
    }
}

/// The upstream of the moment, for the watchdog, which must stop it even when the
/// session task is stuck.
#[derive(Debug, Clone, Default)]
pub(crate) struct UpstreamSlot(Arc<Mutex<Option<Arc<dyn UpstreamControl>>>>);

impl UpstreamSlot {
    fn set(&self, control: Arc<dyn UpstreamControl>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(control);
        }
    }

    fn kill_now(&self) {
        if let Ok(slot) = self.0.lock()
            && let Some(control) = slot.as_ref()
        {
            control.kill_now();
        }
    }
}

/// Serves VS Code on `input` and `output` (stdin and stdout in the executable) until
/// the end of input or the end of the upstream.
pub async fn serve<R, W>(
    config: &Config,
    connector: Arc<dyn Connector>,
    input: R,
    output: W,
) -> Exit
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(
        config,
        connector,
        input,
        output,
        Box::pin(std::future::pending()),
        Box::new(|| {}),
    )
    .await
}

/// [`serve`], with two hooks of the executable. `input_hangup` resolves when the
/// writer of stdin has closed it, before its last lines are read (the end of a
/// pipe); `on_end_of_input` runs as soon as stdin ends or hangs up, outside the
/// session: the executable arms its last-resort watchdog there.
pub async fn serve_with<R, W>(
    config: &Config,
    connector: Arc<dyn Connector>,
    input: R,
    output: W,
    input_hangup: Pin<Box<dyn Future<Output = ()> + Send>>,
    on_end_of_input: Box<dyn FnOnce() + Send>,
) -> Exit
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (client_sender, client_events) = mpsc::channel(1024);
    let (sink, frames) = ClientSink::new(1024);
    let end_of_input = Arc::new(Notify::new());
    let end = end_of_input.clone();
    tokio::spawn(client_io::read_client(
        input,
        config.max_line_bytes,
        client_sender,
        input_hangup,
        move || {
            end.notify_one();
            on_end_of_input();
        },
    ));
    let writer = tokio::spawn(client_io::write_client(output, frames));
    let slot = UpstreamSlot::default();
    let session = Session::new(config, connector, sink, slot.clone());
    let mut session = tokio::spawn(session.run(client_events));

    let watchdog_limit = config.limits.watchdog;
    let watchdog = async {
        end_of_input.notified().await;
        tokio::time::sleep(watchdog_limit).await;
    };
    tokio::pin!(watchdog);
    tokio::select! {
        outcome = &mut session => {
            let exit = match outcome {
                Ok(exit) => exit,
                Err(error) => {
                    tracing::error!(target: VSCODE, "the bridge stopped because of an internal error: {error}");
                    slot.kill_now();
                    return Exit::Failure;
                }
            };
            // The session dropped its sink: the writer ends after the last frame.
            tokio::select! {
                _ = writer => {}
                _ = &mut watchdog => fire_watchdog(watchdog_limit, &slot),
            }
            exit
        }
        _ = &mut watchdog => {
            fire_watchdog(watchdog_limit, &slot);
            session.abort();
            Exit::EndOfInput
        }
    }
}

fn fire_watchdog(limit: Duration, slot: &UpstreamSlot) {
    tracing::warn!(target: VSCODE, "{}", watchdog_line(limit));
    slot.kill_now();
}

/// The text of the watchdog's warning line.
pub fn watchdog_line(limit: Duration) -> String {
    format!(
        "the bridge did not stop in {} s after the end of stdin, thus it stops now",
        limit.as_secs()
    )
}

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
    sender: mpsc::UnboundedSender<Outgoing>,
    events: mpsc::Receiver<UpstreamEvent>,
    control: Arc<dyn UpstreamControl>,
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

/// Whether the loop goes on.
enum Step {
    Continue,
    Exit(Exit),
}

/// The state of one connection, owned by one task.
struct Session {
    limits: Limits,
    discover_timeout: Duration,
    fallback: FallbackIdentity,
    connector: Arc<dyn Connector>,
    slot: UpstreamSlot,
    out: ClientSink,
    phase: Phase,
    upstream: Option<Connected>,
    client: Option<ClientContext>,
    /// The listen stream, from the initialize result on (M3).
    listen: Option<crate::notify::listen::Listen>,
    /// The level of the last `logging/setLevel` (O5).
    log_level: Option<String>,
    table: Table,
    next_upstream_id: u64,
    /// The number of the last request of the bridge to VS Code (`b-N`), never reused.
    next_bridge_id: u64,
    /// The rare timers: discover, and the listen stream's waits.
    timers: DelayQueue<Timer>,
    /// The next moments of the requests in flight.
    deadlines: deadlines::Deadlines,
}

impl Session {
    fn new(
        config: &Config,
        connector: Arc<dyn Connector>,
        out: ClientSink,
        slot: UpstreamSlot,
    ) -> Self {
        let crate::config::UpstreamTarget::Command { program, .. } = &config.upstream;
        Self {
            limits: config.limits.clone(),
            discover_timeout: config.discover_timeout,
            fallback: FallbackIdentity {
                name: crate::rules::initialize::fallback_name(
                    config.name.as_deref(),
                    std::path::Path::new(program),
                ),
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            connector,
            slot,
            out,
            phase: Phase::AwaitingInitialize,
            upstream: None,
            client: None,
            listen: None,
            log_level: None,
            table: Table::default(),
            next_upstream_id: 1,
            next_bridge_id: 0,
            timers: DelayQueue::new(),
            deadlines: deadlines::Deadlines::new(),
        }
    }

    async fn run(mut self, mut client: mpsc::Receiver<ClientEvent>) -> Exit {
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
                key = self.deadlines.next() => {
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
                tracing::debug!(target: BRIDGE, "refused a line of the client: {error}");
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

    /// What every request passes first, whatever its method: the test faults, and
    /// the check that no request with its id is in flight. A second request with
    /// such an id gets its own error, so VS Code gets exactly one answer for each
    /// request. The id comes back when the request goes on.
    async fn admit(&mut self, id: Value, method: &str) -> Option<Value> {
        #[cfg(debug_assertions)]
        test_faults::check(method);
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
                    self.start_listening().await;
                }
            }
            "notifications/cancelled" => self.on_client_cancelled(notification.params).await,
            method => {
                tracing::debug!(target: BRIDGE, "dropped the notification {method} of the client");
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

    /// Whether a request of VS Code with this id waits for its answer: a forwarded
    /// request, the initialize of the moment, or a change of subscriptions.
    fn is_in_flight(&self, id: &Value) -> bool {
        let key = key_of(id);
        self.table.client.contains_key(&key)
            || matches!(&self.phase, Phase::Initializing { client_id, .. } if key_of(client_id) == key)
            || self
                .listen
                .as_ref()
                .is_some_and(|listen| listen.has_change_for(&key))
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
            Some(UpstreamEvent::Line(line)) => {
                match self.pass_call_result(line).await {
                    Some(UpstreamEvent::Message(message)) => {
                        self.on_upstream_message(message).await
                    }
                    Some(UpstreamEvent::Unreadable { frame, reason, id }) => {
                        self.on_unreadable(frame, reason, id).await
                    }
                    // Passed through; a parsed line is one of the two above.
                    _ => {}
                }
                Step::Continue
            }
            Some(UpstreamEvent::Unreadable { frame, reason, id }) => {
                self.on_unreadable(frame, reason, id).await;
                Step::Continue
            }
            Some(UpstreamEvent::Exited(report)) => {
                Step::Exit(self.upstream_exited(Some(report)).await)
            }
            Some(UpstreamEvent::LargeResult { id, seen }) => {
                self.release_kept_request(id);
                let _ = seen.send(());
                Step::Continue
            }
            None => Step::Exit(self.upstream_exited(None).await),
        }
    }

    async fn on_timer(&mut self, timer: Timer) {
        match timer {
            Timer::Discover => self.discover_timed_out().await,
            Timer::ListenRetry => self.listen_retry().await,
            Timer::ListenChange(id) => self.listen_change_timed_out(id).await,
        }
    }

    fn next_upstream_id(&mut self) -> u64 {
        let id = self.next_upstream_id;
        self.next_upstream_id += 1;
        id
    }

    fn send_upstream(&self, frame: Outgoing) {
        if let Some(upstream) = &self.upstream {
            // A closed link reports its end through its events.
            let _ = upstream.sender.send(frame);
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
        Some(connected) => connected.events.recv().await,
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
