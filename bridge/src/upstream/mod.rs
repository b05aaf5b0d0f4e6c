//! The upstream server, behind one small interface.
//!
//! The session talks to every upstream through an [`UpstreamLink`]: it sends
//! [`Outgoing`] frames, receives [`UpstreamEvent`]s in the order the upstream wrote
//! them, and stops the upstream through [`UpstreamControl`]. A [`Connector`] makes
//! the link. There are three kinds of upstream: a child process over stdio (here),
//! a server at a URL over Streamable HTTP, and a server in the same process; the
//! session never knows which one it talks to.

pub mod memory;
pub mod stdio;

use crate::rules::meta::RequestMeta;
use crate::wire::codec::{self, Line, ParseFailure};
use crate::wire::frame::{LineFailure, Message};
use crate::wire::shallow::{ShallowObject, write_json_string};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

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
        match self {
            Self::Request {
                id,
                method,
                params,
                meta,
            } => {
                // Written from its pieces: the members of params are JSON text
                // already, and the shared `_meta` too.
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                // Writing into a Vec cannot fail.
                let _ = write!(out, "{id}");
                out.extend_from_slice(br#","method":"#);
                write_json_string(method, out);
                out.extend_from_slice(br#","params":{"#);
                if params.write_members_into(out, |name| name != "_meta") {
                    out.push(b',');
                }
                out.extend_from_slice(br#""_meta":"#);
                meta.write_into(out);
                out.extend_from_slice(b"}}\n");
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
                    out.push(b'\n');
                }
            }
        }
    }
}

/// What the upstream sends or does, in the order it happened.
#[derive(Debug)]
#[non_exhaustive]
pub enum UpstreamEvent {
    /// One JSON-RPC message.
    Message(Message),
    /// One whole line, not parsed yet: the session parses it with
    /// [`event_of_line`] once it knows what the line answers.
    Line(Vec<u8>),
    /// A frame that the link could not read. When `id` names a request in flight,
    /// that request fails with `invalid_response`.
    Unreadable {
        frame: String,
        reason: String,
        id: Option<Value>,
    },
    /// The upstream stopped (stdio: the process exited). No event follows.
    Exited(ExitReport),
    /// A complete result of at least [`LARGE_RESULT_BYTES`] for the request `id`
    /// comes next. The session lets go of what only another round of input would
    /// need, then answers on `seen`; the link parses the result after that, so that
    /// a large request and its large result are never in memory together.
    LargeResult {
        id: u64,
        seen: tokio::sync::oneshot::Sender<()>,
    },
}

/// The size from which a complete result is announced with [`UpstreamEvent::LargeResult`].
pub const LARGE_RESULT_BYTES: usize = 1 << 20;

/// How the upstream process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitReport {
    Code(i32),
    Signal(i32),
    /// The exit status could not be read.
    Unknown(String),
}

impl ExitReport {
    /// `exit code 3`, `signal 9`: the form of the `mcp_stdio` line.
    pub fn short(&self) -> String {
        match self {
            Self::Code(code) => format!("exit code {code}"),
            Self::Signal(signal) => format!("signal {signal}"),
            Self::Unknown(error) => format!("unknown status: {error}"),
        }
    }
}

/// `code 3` or `signal 9`: the form of the bridge's error line
/// ("the upstream server exited with code 3").
impl fmt::Display for ExitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Code(code) => write!(f, "code {code}"),
            Self::Signal(signal) => write!(f, "signal {signal}"),
            Self::Unknown(error) => write!(f, "an unknown status ({error})"),
        }
    }
}

/// Stops the upstream.
#[async_trait::async_trait]
pub trait UpstreamControl: Send + Sync + fmt::Debug {
    /// Stops the upstream politely once the session has dropped its sender (which
    /// ends the upstream's input): waits `grace`, then a termination signal, then,
    /// after one more `grace`, a kill. Returns when the upstream is gone.
    async fn shutdown(&self, grace: Duration);

    /// Stops the upstream at once (the watchdog, an internal error).
    fn kill_now(&self);
}

/// The parts of a connected upstream.
#[derive(Debug)]
pub struct UpstreamLink {
    pub sender: mpsc::UnboundedSender<Outgoing>,
    pub events: mpsc::Receiver<UpstreamEvent>,
    pub control: Arc<dyn UpstreamControl>,
}

/// Why the upstream could not be reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The command did not start (the `spawn_failed` cause).
    #[error("{0}")]
    Spawn(String),
}

/// Makes the link to the upstream, at the first `initialize` (and again after a
/// failed one).
#[async_trait::async_trait]
pub trait Connector: Send + Sync {
    async fn connect(&self) -> Result<UpstreamLink, ConnectError>;
}

/// The event for one upstream line; `None` for a blank line.
pub(crate) fn event_of_line(line: Line) -> Option<UpstreamEvent> {
    match line {
        Line::Complete(bytes) => match Message::parse(&bytes) {
            Ok(None) => None,
            Ok(Some(message)) => Some(UpstreamEvent::Message(message)),
            Err(LineFailure::Invalid(invalid)) => Some(UpstreamEvent::Unreadable {
                frame: "a frame".into(),
                reason: "it is not a valid JSON-RPC message".into(),
                id: invalid.id.or_else(|| codec::recover_id_of_line(&bytes)),
            }),
            Err(LineFailure::Parse(failure)) => Some(UpstreamEvent::Unreadable {
                frame: format!("a frame of {} bytes", bytes.len()),
                reason: match failure {
                    ParseFailure::NotJson => "it is not valid JSON".into(),
                    ParseFailure::TooDeep => {
                        format!("it has more than {} levels of nesting", codec::MAX_DEPTH)
                    }
                },
                id: codec::recover_id_of_line(&bytes),
            }),
        },
        Line::TooLong { length, head, tail } => Some(UpstreamEvent::Unreadable {
            frame: format!("a frame of {length} bytes"),
            reason: "it is longer than --max-line-bytes".into(),
            id: codec::recover_id(&head, &tail),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::codec::Line;

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
        assert!(matches!(
            ok,
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
            params: Arc::new(call_params.unwrap().into_owned()),
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
