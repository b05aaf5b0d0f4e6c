//! The two ends toward VS Code: a task that reads stdin into events and a task that
//! writes the session's frames to stdout, in the order the session sends them.

use crate::log::BRIDGE;
use crate::wire::codec::{self, Line, LineReader, LineWriter, ParseFailure};
use crate::wire::error::Cause;
use crate::wire::frame::{InvalidKind, LineFailure, Message};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

/// What VS Code wrote.
#[derive(Debug)]
pub(crate) enum ClientEvent {
    Message(Message),
    /// A line that is not a message the bridge accepts. `id` is the id the error
    /// response carries; `recovered_id` is any id found in the line, which may
    /// name a request of the bridge that this broken answer resolves (M2).
    Unusable {
        id: Option<Value>,
        recovered_id: Option<Value>,
        cause: Cause,
        detail: Option<String>,
    },
    /// The end of stdin.
    End,
}

/// Reads lines from VS Code until the end of input. `on_end` runs first at the end,
/// before the session sees it: it arms the watchdog even when the session is busy.
pub(crate) async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    max_line_bytes: usize,
    events: mpsc::Sender<ClientEvent>,
    on_end: impl FnOnce(),
) {
    let mut lines = LineReader::new(input, max_line_bytes);
    while let Ok(Some(line)) = lines.next_line().await {
        let Some(event) = event_of_line(line, max_line_bytes) else {
            continue;
        };
        if events.send(event).await.is_err() {
            return;
        }
    }
    on_end();
    let _ = events.send(ClientEvent::End).await;
}

fn event_of_line(line: Line, max_line_bytes: usize) -> Option<ClientEvent> {
    match line {
        Line::Complete(bytes) => match Message::parse(&bytes) {
            Ok(None) => None,
            Ok(Some(message)) => Some(ClientEvent::Message(message)),
            Err(LineFailure::Invalid(invalid)) if invalid.kind == InvalidKind::Notification => {
                tracing::debug!(target: BRIDGE, "dropped a notification of the client that is not valid JSON-RPC");
                None
            }
            Err(LineFailure::Invalid(invalid)) => Some(ClientEvent::Unusable {
                recovered_id: invalid.id.clone(),
                id: invalid.id,
                cause: match invalid.kind {
                    InvalidKind::Shape => Cause::InvalidRequestShape,
                    InvalidKind::Params | InvalidKind::Notification => Cause::InvalidParams,
                },
                detail: None,
            }),
            Err(LineFailure::Parse(failure)) => {
                let recovered_id = codec::recover_id_of_line(&bytes);
                Some(match failure {
                    // JSON-RPC answers a parse error with a null id.
                    ParseFailure::NotJson => ClientEvent::Unusable {
                        id: None,
                        recovered_id,
                        cause: Cause::ParseError,
                        detail: None,
                    },
                    ParseFailure::TooDeep => ClientEvent::Unusable {
                        id: recovered_id.clone(),
                        recovered_id,
                        cause: Cause::TooDeep,
                        detail: Some(format!("the limit is {} levels", codec::MAX_DEPTH)),
                    },
                })
            }
        },
        Line::TooLong { length, head, tail } => {
            let id = codec::recover_id(&head, &tail);
            Some(ClientEvent::Unusable {
                recovered_id: id.clone(),
                id,
                cause: Cause::LineTooLong,
                detail: Some(format!(
                    "the line has {length} bytes, and the limit is {max_line_bytes}"
                )),
            })
        }
    }
}

/// The frames for VS Code, in order.
#[derive(Debug, Clone)]
pub(crate) struct ClientSink(mpsc::Sender<Value>);

impl ClientSink {
    pub(crate) fn new(capacity: usize) -> (Self, mpsc::Receiver<Value>) {
        let (sender, receiver) = mpsc::channel(capacity);
        (Self(sender), receiver)
    }

    /// Queues one frame. When VS Code reads slowly, this waits: the bridge reads
    /// no faster than VS Code can take the answers.
    pub(crate) async fn send(&self, frame: Value) {
        // Stdout is gone only when VS Code is gone; the end of stdin follows.
        let _ = self.0.send(frame).await;
    }
}

/// Writes frames to stdout until the session drops its sink.
pub(crate) async fn write_client<W: AsyncWrite + Unpin>(
    output: W,
    mut frames: mpsc::Receiver<Value>,
) {
    let mut output = LineWriter::new(output);
    while let Some(frame) = frames.recv().await {
        let flush = frames.is_empty();
        if output
            .write(frame, codec::encode_into, flush)
            .await
            .is_err()
        {
            return;
        }
    }
    // Stdout stays open: VS Code reads it until the bridge exits.
    let _ = output.flush().await;
}
