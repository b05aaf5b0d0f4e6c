//! The reading end toward VS Code: a task that reads stdin into events, one per
//! line, each read once.

use crate::catalogue::{BridgeDebug, Cause};
use crate::log::emit;
use crate::rules::FORWARDED_METHODS;
use crate::wire::frame::{InvalidKind, LineFailure, Message};
use crate::wire::frame::{MAX_DEPTH, ParseFailure};
use crate::wire::id::{recover_id, recover_id_of_line};
use crate::wire::line_reader::{Line, LineReader};
use crate::wire::raw::{self, ClientLine};
use crate::wire::shallow::ShallowObject;
use crate::wire::text::SharedLine;
use serde_json::Value;
use tokio::io::AsyncRead;
use tokio::sync::mpsc;

/// What VS Code wrote.
#[derive(Debug)]
pub(crate) enum ClientEvent {
    /// A request of a method that goes upstream, read one level deep.
    Forward(ForwardedRequest),
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
///
/// `hangup` resolves when the writer of the input has closed it, even while unread
/// lines remain. It is watched only while the session takes no more events: a
/// client that stopped reading stdout and then closed stdin would otherwise leave
/// the reader waiting for room, the end never seen and the watchdog never armed.
pub(crate) async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    max_line_bytes: usize,
    events: mpsc::Sender<ClientEvent>,
    hangup: impl Future<Output = ()>,
    on_end: impl FnOnce(),
) {
    let mut lines = LineReader::new(input, max_line_bytes);
    let mut end = EndOnce(Some(on_end));
    // Not polled again once it resolved: the end has run by then.
    tokio::pin!(hangup);
    while let Ok(Some(line)) = lines.next_line().await {
        let Some(event) = event_of_line(line, max_line_bytes) else {
            continue;
        };
        let permit = tokio::select! {
            biased;
            permit = events.reserve() => permit,
            () = &mut hangup, if !end.done() => {
                end.run();
                events.reserve().await
            }
        };
        match permit {
            Ok(permit) => permit.send(event),
            Err(_) => return,
        }
    }
    end.run();
    let _ = events.send(ClientEvent::End).await;
}

/// The action at the end of input, which runs once: at the hangup or at the end.
struct EndOnce<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> EndOnce<F> {
    fn run(&mut self) {
        if let Some(on_end) = self.0.take() {
            on_end();
        }
    }

    fn done(&self) -> bool {
        self.0.is_none()
    }
}

/// A request of VS Code whose params stay JSON text: the hot path of tools/call.
#[derive(Debug)]
pub(crate) struct ForwardedRequest {
    pub id: Value,
    pub method: String,
    pub params: Option<ShallowObject<'static>>,
}

/// Reads one line of VS Code, once: the one reading function of this direction.
/// A clean request of a method that goes upstream stays JSON text; any other
/// line is a message, or the error that VS Code gets for it.
fn event_of_line(line: Line, max_line_bytes: usize) -> Option<ClientEvent> {
    match line {
        Line::Complete(bytes) => {
            // The params of a forwarded request stay in the line, shared: a large
            // argument is not copied.
            let line = match String::from_utf8(bytes) {
                Ok(text) => SharedLine::new(text),
                Err(error) => {
                    return Some(parse_failure(&error.into_bytes(), ParseFailure::NotJson));
                }
            };
            let forward = |method: &str| FORWARDED_METHODS.contains(&method);
            match raw::read_client_text(&line, forward) {
                Ok(None) => None,
                Ok(Some(ClientLine::Forward(request))) => {
                    Some(ClientEvent::Forward(ForwardedRequest {
                        id: request.id,
                        method: request.method.into_owned(),
                        params: request.params.map(|params| params.into_shared(&line)),
                    }))
                }
                Ok(Some(ClientLine::Message(message))) => Some(ClientEvent::Message(message)),
                Err(LineFailure::Invalid(invalid)) if invalid.kind == InvalidKind::Notification => {
                    emit!(BridgeDebug::InvalidNotification);
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
                Err(LineFailure::Parse(failure)) => Some(parse_failure(line.as_bytes(), failure)),
            }
        }
        Line::TooLong { length, head, tail } => {
            let id = recover_id(&head, &tail);
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

/// The error event of a whole line that is not JSON or too deep.
fn parse_failure(line: &[u8], failure: ParseFailure) -> ClientEvent {
    let recovered_id = recover_id_of_line(line);
    match failure {
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
            detail: Some(format!("the limit is {} levels", MAX_DEPTH)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    const PING: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";

    #[tokio::test]
    async fn a_hangup_while_the_session_takes_no_events_runs_the_end_at_once() {
        let (events, _held) = mpsc::channel(1);
        let input: Vec<u8> = PING.repeat(3);
        let ended = Arc::new(AtomicBool::new(false));
        let flag = ended.clone();
        let (hang_up, hangup) = tokio::sync::oneshot::channel::<()>();
        let reader = tokio::spawn(read_client(
            std::io::Cursor::new(input),
            1024,
            events,
            async move {
                let _ = hangup.await;
            },
            move || flag.store(true, Ordering::SeqCst),
        ));
        tokio::task::yield_now().await;
        assert!(!ended.load(Ordering::SeqCst), "one event waits for room");
        hang_up.send(()).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while !ended.load(Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the end runs while the reader still waits for room");
        assert!(!reader.is_finished());
    }

    #[tokio::test]
    async fn without_a_hangup_the_end_runs_once_at_the_end_of_input() {
        let (events, mut received) = mpsc::channel(8);
        let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = runs.clone();
        read_client(PING, 1024, events, std::future::pending(), move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .await;
        assert!(matches!(
            received.recv().await,
            Some(ClientEvent::Message(_))
        ));
        assert!(matches!(received.recv().await, Some(ClientEvent::End)));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
