//! The upstream server, behind one small interface.
//!
//! The session talks to every upstream through an [`UpstreamLink`]: it sends
//! [`Outgoing`] frames, receives [`UpstreamEvent`]s in the order the upstream wrote
//! them, and stops the upstream through [`UpstreamControl`]. A [`Connector`] makes
//! the link. There are three kinds of upstream: a child process over stdio
//! ([`stdio`]), a server at a URL over Streamable HTTP (M4), and a server in the
//! same process ([`memory`]); the session never knows which one it talks to, and
//! no event speaks of a process: a link reports a failed request, a question for
//! VS Code, or its end and whether the session ends with it.

pub mod http;
pub mod memory;
pub mod program;
mod slot;
pub mod stderr_tail;
pub mod stdio;

pub(crate) use slot::UpstreamSlot;

use crate::catalogue::{BridgeError, Cause, StartWarning, UpstreamLost, UpstreamStopped};
use crate::rules::meta::RequestMeta;
use crate::wire::frame::{Message, Outcome};
use crate::wire::line_reader::Line;
use crate::wire::pieces::{Encode, Sink};
use crate::wire::raw::{self, ResultLine, Unreadable, UpstreamLine};
use crate::wire::shallow::{ShallowObject, write_json_string};
use futures::stream::{Stream, StreamExt};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// A frame for the upstream server.
#[derive(Debug)]
pub enum Outgoing {
    /// A request. The params (without `_meta`) are shared with the session, which
    /// keeps them for the next round of an input request (M2) without a copy; the
    /// `_meta` is written from its shared part at encode time.
    Request {
        id: u64,
        method: String,
        params: Arc<ShallowObject<'static>>,
        meta: RequestMeta,
    },
    Notification {
        method: &'static str,
        params: Map<String, Value>,
    },
}

impl Outgoing {
    /// The frame as one JSON line.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        self.encode(out);
    }
}

impl Encode for Outgoing {
    fn encode<'f>(&'f self, out: &mut impl Sink<'f>) {
        match self {
            Self::Request {
                id,
                method,
                params,
                meta,
            } => {
                // Written from its pieces: the members of params are JSON text
                // already (a large one written from the line it came in), and the
                // shared `_meta` too.
                out.bytes(br#"{"jsonrpc":"2.0","id":"#);
                // Writing into a buffer cannot fail.
                let _ = write!(out, "{id}");
                out.bytes(br#","method":"#);
                write_json_string(method, out);
                out.bytes(br#","params":{"#);
                if params.write_members_into(out, |name| name != "_meta") {
                    out.bytes(b",");
                }
                out.bytes(br#""_meta":"#);
                meta.write_into(out);
                out.bytes(b"}}\n");
            }
            Self::Notification { method, params } => {
                #[derive(Serialize)]
                struct Notification<'a> {
                    jsonrpc: &'static str,
                    method: &'a str,
                    params: &'a Map<String, Value>,
                }
                let notification = Notification {
                    jsonrpc: "2.0",
                    method,
                    params,
                };
                // Serializing maps of JSON values into a Vec cannot fail.
                if serde_json::to_writer(&mut *out, &notification).is_ok() {
                    out.bytes(b"\n");
                }
            }
        }
    }
}

/// What the upstream sends or does, in the order it happened.
#[derive(Debug)]
#[non_exhaustive]
pub enum UpstreamEvent {
    /// One JSON-RPC message, other than a clean response.
    Message(Message),
    /// A clean response (an integer id, an object result), read one level deep:
    /// the session passes a tools/call result on from its members' text, and
    /// builds the tree of any other result from the same text.
    Result(ResultLine),
    /// A frame that the link could not read. When `id` names a request in flight,
    /// that request fails with `invalid_response`.
    Unreadable {
        frame: String,
        reason: String,
        id: Option<Value>,
    },
    /// The upstream request `id` failed in the link (an HTTP status, a refused
    /// connection, a broken stream); the upstream stays usable for the others.
    RequestFailed { id: u64, failure: RequestFailure },
    /// The link needs VS Code for something that serves no request of VS Code
    /// (the URL elicitation of a sign-in, M4): the session sends it as a `b-N`
    /// request and hands the answer back on the question's channel.
    AskClient(ClientQuestion),
    /// The link no longer waits for some of its questions (a sign-in that timed
    /// out before VS Code answered its URL elicitation): it dropped their answer
    /// channels, and the session cancels each such question toward VS Code with
    /// `reason`, so that no dialog of a finished sign-in stays open.
    QuestionsWithdrawn { reason: String },
    /// The link needs VS Code to get a notification that belongs to no request
    /// of VS Code (`notifications/elicitation/complete` after the URL elicitation
    /// of a sign-in, O1, M4).
    NotifyClient {
        method: &'static str,
        params: Map<String, Value>,
    },
    /// A sign-in completed (M4): a listen stream that failed with 401 or 403
    /// opens again.
    SignedIn,
    /// The link ended. No event follows.
    Ended(LinkEnd),
    /// A complete result of at least [`LARGE_RESULT_BYTES`] for the request `id`
    /// comes next. The session lets go of what only another round of input would
    /// need, then answers on `seen`; a link whose tasks read the result parses it
    /// after that, so that a large request and its large result are never in
    /// memory together (the session reads a child's stdout itself, and takes the
    /// announcement before it reads on).
    LargeResult { id: u64, seen: oneshot::Sender<()> },
}

/// The size from which a complete result is announced with [`UpstreamEvent::LargeResult`].
pub const LARGE_RESULT_BYTES: usize = 1 << 20;

/// How a link ended; its line is also the `data.detail` of the requests in flight
/// ("the upstream server exited with code 3").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEnd {
    /// The upstream stopped, and the session ends with it (exit code 1, "When the
    /// upstream server stops").
    Stopped(UpstreamStopped),
    /// The connection ended, and the session serves on: the requests in flight
    /// fail, and the next requests get `not_connected`.
    Lost(UpstreamLost),
}

impl LinkEnd {
    /// Whether the session ends with the link.
    pub fn ends_session(&self) -> bool {
        matches!(self, Self::Stopped(_))
    }

    /// The text of its line, which is the `data.detail` of the requests in flight.
    pub fn detail(&self) -> String {
        match self {
            Self::Stopped(line) => line.to_string(),
            Self::Lost(line) => line.to_string(),
        }
    }
}

/// Why one upstream request failed in the link. Each kind maps to one cause in
/// [`RequestFailure::cause`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestFailure {
    /// The request did not reach the upstream, or its answer did not come back: a
    /// refused connection, a TLS failure, a stream that broke.
    Transport(String),
    /// The upstream, or a proxy, answered with an HTTP status and no JSON-RPC answer.
    Status { status: u16, detail: String },
    /// The answer came but cannot be read: not JSON, or longer than the limit.
    Unreadable(String),
    /// The upstream answered `status` (401 or 403), and the sign-in that followed
    /// gave no token that it takes.
    SignIn {
        status: u16,
        error: crate::auth::errors::SignInError,
    },
}

impl RequestFailure {
    /// The cause that VS Code gets in `data.cause`.
    pub fn cause(&self) -> Cause {
        match self {
            Self::Transport(_) | Self::Status { .. } => Cause::TransportFailed,
            Self::Unreadable(_) => Cause::InvalidResponse,
            Self::SignIn { error, .. } => error.cause(),
        }
    }

    /// The HTTP status, where there is one.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } | Self::SignIn { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The error that VS Code gets for the request.
    pub fn to_error(&self) -> BridgeError {
        match self {
            Self::SignIn { error, .. } => error.to_error(),
            _ => BridgeError::with_detail(self.cause(), self.to_string()),
        }
    }
}

/// `connection refused`, or `Not Found (HTTP status 404)`: the form of the lines.
impl fmt::Display for RequestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Transport(detail) | Self::Unreadable(detail) => f.write_str(detail),
            Self::Status { status, detail } => write!(f, "{detail} (HTTP status {status})"),
            Self::SignIn { status, error } => write!(f, "{error} (HTTP status {status})"),
        }
    }
}

/// A request of the link to VS Code.
#[derive(Debug)]
pub struct ClientQuestion {
    /// `elicitation/create`, for example.
    pub method: String,
    pub params: Map<String, Value>,
    /// VS Code's result or error object. Dropped without an answer when the
    /// request ends without one (the end of stdin, or a cancellation).
    pub answer: oneshot::Sender<Outcome>,
}

/// What the link may need to know of VS Code's side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientState {
    /// VS Code sent `notifications/initialized`: from then on a question to the
    /// user is a URL elicitation, never a browser that the bridge opens (M4).
    pub initialized: bool,
    /// VS Code declared URL elicitation at initialize.
    pub url_elicitation: bool,
}

/// What a link gets from the session at connect.
#[derive(Debug, Clone)]
pub struct LinkContext {
    /// Every task of the link is spawned here, so that the bridge can wait for
    /// them and none is left detached.
    pub tasks: TaskTracker,
    /// Fires when the bridge stops at once (the watchdog, an internal error, the
    /// end of the session): the link's tasks end without their polite steps.
    pub stop: CancellationToken,
    /// VS Code's side, as the session sees it.
    pub client: watch::Receiver<ClientState>,
}

impl LinkContext {
    /// A context of its own, for a link outside a session (tests, tools).
    pub fn detached() -> Self {
        Self {
            tasks: TaskTracker::new(),
            stop: CancellationToken::new(),
            client: watch::channel(ClientState::default()).1,
        }
    }
}

/// Stops the upstream.
#[async_trait::async_trait]
pub trait UpstreamControl: Send + Sync + fmt::Debug {
    /// Stops the upstream politely once the session has dropped its sender (which
    /// ends the upstream's input): waits `grace`, then a termination signal, then,
    /// after one more `grace`, a kill. Returns when the upstream is gone. A link
    /// without a process (HTTP, in-process) closes its connections here.
    async fn shutdown(&self, grace: Duration);

    /// Stops the upstream at once (the watchdog, an internal error).
    fn kill_now(&self);
}

/// Where the session puts the frames for the upstream, in order. Dropping it ends
/// the upstream's input.
pub trait OutgoingSink: Send + Sync + fmt::Debug {
    /// Sends or queues `frame` without a wait. A closed link drops it: it reports
    /// its end through its events.
    fn send(&self, frame: Outgoing);
}

/// The link's own tasks take the frames (HTTP, in-process).
impl OutgoingSink for mpsc::UnboundedSender<Outgoing> {
    fn send(&self, frame: Outgoing) {
        let _ = mpsc::UnboundedSender::send(self, frame);
    }
}

/// What the upstream sends or does, in order, as the session reads it: from a
/// channel that the link's tasks fill (HTTP, in-process), or from the child's
/// stdout itself (stdio: no task between the two, so a large
/// line is never handed over between tasks).
pub struct UpstreamEvents(Pin<Box<dyn Stream<Item = UpstreamEvent> + Send + Sync>>);

impl UpstreamEvents {
    pub fn new(events: impl Stream<Item = UpstreamEvent> + Send + Sync + 'static) -> Self {
        Self(Box::pin(events))
    }

    /// The next event; `None` when the link ended without its last event.
    pub async fn next(&mut self) -> Option<UpstreamEvent> {
        self.0.next().await
    }
}

impl From<mpsc::Receiver<UpstreamEvent>> for UpstreamEvents {
    fn from(mut events: mpsc::Receiver<UpstreamEvent>) -> Self {
        Self::new(futures::stream::poll_fn(move |context| {
            events.poll_recv(context)
        }))
    }
}

impl fmt::Debug for UpstreamEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamEvents").finish_non_exhaustive()
    }
}

/// The parts of a connected upstream.
#[derive(Debug)]
pub struct UpstreamLink {
    pub sender: Box<dyn OutgoingSink>,
    pub events: UpstreamEvents,
    pub control: Arc<dyn UpstreamControl>,
    /// How much longer server/discover may wait than `--discover-timeout`: the
    /// sign-in time of an upstream at a URL when a sign-in can start (contract,
    /// "Options of the bridge").
    pub discover_extra: Duration,
}

/// Why the upstream could not be reached. [`ConnectError::cause`] and
/// [`ConnectError::log_line`] are the one place that maps each to what VS Code
/// and the Output channel get.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The command did not start.
    #[error("{0}")]
    Spawn(String),
    /// No connection to the upstream's host (a refused connection, a proxy that
    /// failed, a name that does not resolve).
    #[error("{0}")]
    Connect(String),
    /// The TLS handshake failed (an unknown CA, an expired certificate, a wrong host).
    #[error("{0}")]
    Tls(String),
    /// The link cannot be made from its configuration (the URL, a proxy variable,
    /// the CA certificates).
    #[error("{0}")]
    Configuration(String),
}

impl ConnectError {
    /// The cause of the initialize error.
    pub fn cause(&self) -> Cause {
        match self {
            Self::Spawn(_) => Cause::SpawnFailed,
            Self::Connect(_) | Self::Tls(_) => Cause::TransportFailed,
            Self::Configuration(_) => Cause::NotConnected,
        }
    }

    /// The warning line of the Output channel.
    pub fn log_line(&self) -> StartWarning<'_> {
        match self {
            Self::Spawn(error) => StartWarning::CannotStartCommand { error },
            // Reaching the upstream is the first step of server/discover.
            Self::Connect(error) | Self::Tls(error) => StartWarning::DiscoverFailed { error },
            Self::Configuration(error) => StartWarning::CannotMakeHttpClient { error },
        }
    }

    /// The error that VS Code gets for initialize.
    pub fn to_error(&self) -> BridgeError {
        BridgeError::with_detail(self.cause(), self.to_string())
    }
}

/// Makes the link to the upstream, at the first `initialize` (and again after a
/// failed one).
///
/// `connect` returns at once: it may check its configuration and start a process,
/// but every slow step (a TCP or TLS connection, a sign-in that waits for the
/// browser) runs in the link's own tasks, spawned on [`LinkContext::tasks`], and
/// reports through the link's events. So the session answers `ping`,
/// `logging/setLevel` and `server/discover` at once while an upstream connects
/// (R2, C1).
///
/// The session sends every request as an [`Outgoing`] frame and expects, for each
/// request id, exactly one of: a response ([`UpstreamEvent::Result`] or
/// [`UpstreamEvent::Message`]), an [`UpstreamEvent::Unreadable`] naming the id, or an
/// [`UpstreamEvent::RequestFailed`]. A `notifications/cancelled` for a request
/// means the session no longer waits for it: a link over HTTP closes that
/// request's response stream. An HTTP link sends each request as a POST, turns an
/// SSE event or a JSON body into an event with [`event_of_line`], a status into `RequestFailed`,
/// and never sends [`UpstreamEvent::Ended`] with [`LinkEnd::Stopped`] (an upstream
/// at a URL never stops the bridge). A link that needs VS Code (the URL elicitation of
/// a sign-in after `notifications/initialized`) sends
/// [`UpstreamEvent::AskClient`], and reads [`LinkContext::client`] to know whether
/// it may.
pub trait Connector: Send + Sync {
    fn connect(&self, context: LinkContext) -> Result<UpstreamLink, ConnectError>;
}

/// Reads one line of the upstream, once: the one reading function of this
/// direction, called by every link on each frame it receives (a line of a
/// child's stdout; for an HTTP link, a JSON body or the data of an SSE event as a
/// [`Line::Complete`], or a [`Line::TooLong`] when it is over the limit). `None`
/// for a blank line.
///
/// Content alone decides what the event is (a link does not know what the
/// session waits for): a clean response (an integer id, an object result) is
/// [`UpstreamEvent::Result`], read one level deep; any other frame is a
/// [`UpstreamEvent::Message`]. The session never parses either again.
pub fn event_of_line(line: Line) -> Option<UpstreamEvent> {
    match line {
        Line::Complete(bytes) => match raw::read_upstream_line(bytes) {
            Ok(None) => None,
            Ok(Some(UpstreamLine::Result(result))) => Some(UpstreamEvent::Result(result)),
            Ok(Some(UpstreamLine::Message(message))) => Some(UpstreamEvent::Message(message)),
            Err((bytes, failure)) => Some(Unreadable::of_line(&bytes, failure).into()),
        },
        Line::TooLong { length, head, tail } => {
            Some(Unreadable::too_long(length, &head, &tail).into())
        }
    }
}

impl From<Unreadable> for UpstreamEvent {
    fn from(unreadable: Unreadable) -> Self {
        let Unreadable { frame, reason, id } = unreadable;
        Self::Unreadable { frame, reason, id }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::line_reader::Line;

    fn unreadable(line: Line) -> (String, Option<serde_json::Value>) {
        match event_of_line(line) {
            Some(UpstreamEvent::Unreadable { reason, id, .. }) => (reason, id),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn upstream_lines_become_events() {
        assert!(event_of_line(Line::Complete(b"  ".to_vec())).is_none());
        let ok = event_of_line(Line::Complete(
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
        ));
        assert!(matches!(ok, Some(UpstreamEvent::Result(result)) if result.id() == 1));
        let error = event_of_line(Line::Complete(
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#.to_vec(),
        ));
        assert!(matches!(
            error,
            Some(UpstreamEvent::Message(Message::Response(_)))
        ));
        let (reason, id) = unreadable(Line::Complete(
            br#"{"jsonrpc":"2.0","id":4,"result":{"#.to_vec(),
        ));
        assert_eq!(
            (reason.as_str(), id),
            ("it is not valid JSON", Some(json!(4)))
        );
        let (reason, id) = unreadable(Line::Complete(br#"{"id":4,"result":{}}"#.to_vec()));
        assert_eq!(
            (reason.as_str(), id),
            ("it is not a valid JSON-RPC message", Some(json!(4)))
        );
        let (reason, id) = unreadable(Line::TooLong {
            length: 9,
            head: br#"{"id":2,"#.to_vec(),
            tail: vec![],
        });
        assert_eq!(
            (reason.as_str(), id),
            ("it is longer than --max-line-bytes", Some(json!(2)))
        );
    }

    use serde_json::json;

    #[test]
    fn outgoing_frames_are_json_rpc_lines() {
        use crate::rules::meta::SharedMeta;
        let params = json!({"_meta": {"x": 1}}).as_object().unwrap().clone();
        let shared = Arc::new(SharedMeta::new(
            json!({"x": 1}).as_object().unwrap().clone(),
        ));
        let mut out = Vec::new();
        Outgoing::Request {
            id: 7,
            method: "tools/list".into(),
            params: Arc::new(ShallowObject::default()),
            meta: RequestMeta::shared_only(&shared),
        }
        .encode_into(&mut out);
        let call_params = ShallowObject::parse(
            r#"{"name":"e\"cho","_meta":{"progressToken":"vscode"},"arguments":{}}"#,
        );
        Outgoing::Request {
            id: 8,
            method: "tools/call".into(),
            params: Arc::new(call_params.unwrap()),
            meta: RequestMeta::shared_only(&shared),
        }
        .encode_into(&mut out);
        Outgoing::Notification {
            method: "notifications/cancelled",
            params,
        }
        .encode_into(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"x\":1}}}\n\
             {\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"e\\\"cho\",\"arguments\":{},\"_meta\":{\"x\":1}}}\n\
             {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"_meta\":{\"x\":1}}}\n"
        );
    }
}
