//! The SSE response stream of one request: its notifications, then its response
//! (streamable-http.mdx §Receiving Messages), with `: keep-alive` comment lines while
//! the stream is quiet, and the stream faults of the options.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame};
use serde_json::json;
use tokio::sync::mpsc;

use super::options::Faults;
use crate::outbox::Routed;

/// The comment line that keeps a quiet stream open through proxies and idle timeouts.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// How many encoded events may wait for a slow client before the pump waits too.
const BUFFER: usize = 16;

/// The settings of every SSE stream of the server.
#[derive(Clone, Debug)]
pub struct StreamSettings {
    pub keep_alive: Duration,
    pub faults: Faults,
}

/// One SSE event with the JSON-RPC frame as its data. A frame is one line (serde_json
/// escapes every newline in strings), so one `data:` line carries it.
pub fn event(frame: &str) -> Bytes {
    Bytes::from(format!("data: {frame}\n\n"))
}

/// The event of `--split-sse-data`: the frame's first character on one `data:` line,
/// the rest on a second (a client joins them with a line break, which JSON allows
/// after the `{` of the frame).
pub fn split_event(frame: &str) -> Bytes {
    let cut = frame.chars().next().map_or(0, char::len_utf8);
    let (first, rest) = frame.split_at(cut);
    Bytes::from(format!("data: {first}\ndata: {rest}\n\n"))
}

/// The frame of `--oversized-event`: a `notifications/message` whose JSON text is
/// `bytes` long (or the shortest such frame when `bytes` is smaller).
pub fn oversized_frame(bytes: usize) -> String {
    let frame = |padding: &str| {
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "debug", "logger": "fixture.oversized-event", "data": padding},
        })
        .to_string()
    };
    let empty = frame("").len();
    frame(&"x".repeat(bytes.saturating_sub(empty)))
}

/// The body of an SSE response: what the pump writes, until the pump ends.
pub struct SseBody<G> {
    rx: mpsc::Receiver<Bytes>,
    /// Dropped with the body: when the client goes away before the response, the guard
    /// cancels the request.
    _guard: G,
}

impl<G: Unpin> Body for SseBody<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|chunk| Ok(Frame::data(chunk))))
    }
}

/// Starts the pump of one stream: `first` (already taken from the route), then the rest
/// of the route, until the response or a fault ends it. Returns the body for hyper.
pub fn start<G: Unpin>(
    first: Routed,
    route: mpsc::UnboundedReceiver<Routed>,
    settings: StreamSettings,
    guard: G,
) -> SseBody<G> {
    let (tx, rx) = mpsc::channel(BUFFER);
    tokio::spawn(pump(first, route, tx, settings));
    SseBody { rx, _guard: guard }
}

async fn pump(
    first: Routed,
    mut route: mpsc::UnboundedReceiver<Routed>,
    tx: mpsc::Sender<Bytes>,
    settings: StreamSettings,
) {
    let faults = &settings.faults;
    let mut sent = 0usize;
    let mut next = Some(first);
    if let Some(bytes) = faults.oversized_event {
        next = match send_event(&tx, faults, &mut sent, &oversized_frame(bytes), next).await {
            Some(next) => next,
            None => return,
        };
    }
    let start = tokio::time::Instant::now() + settings.keep_alive;
    let mut keep_alive = tokio::time::interval_at(start, settings.keep_alive);
    loop {
        let item = match next.take() {
            Some(item) => item,
            None => tokio::select! {
                item = route.recv() => match item {
                    Some(item) => item,
                    // The server stopped without a response: the stream just ends.
                    None => return,
                },
                _ = keep_alive.tick() => {
                    if tx.send(Bytes::from_static(KEEP_ALIVE)).await.is_err() {
                        return;
                    }
                    continue;
                }
                _ = tx.closed() => return,
            },
        };
        let (frame, last) = match item {
            Routed::Event(frame) => (frame, false),
            Routed::Final(frame) => (frame, true),
        };
        if send_event(&tx, faults, &mut sent, &frame, None)
            .await
            .is_none()
            || last
        {
            return;
        }
        keep_alive.reset();
    }
}

/// Sends one event after the faults: `None` when the stream must end (a break, or the
/// client is gone); else `Some(carry)`, handing back what the caller held.
async fn send_event(
    tx: &mpsc::Sender<Bytes>,
    faults: &Faults,
    sent: &mut usize,
    frame: &str,
    carry: Option<Routed>,
) -> Option<Option<Routed>> {
    if faults
        .break_stream_after
        .is_some_and(|limit| *sent >= limit)
    {
        crate::info!(
            "http",
            "--break-stream-after: closed an SSE stream after {sent} events"
        );
        return None;
    }
    if let Some(delay) = faults.slow_stream {
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = tx.closed() => return None,
        }
    }
    let bytes = if faults.split_sse_data {
        split_event(frame)
    } else {
        event(frame)
    };
    match faults.sse_piece_bytes {
        Some(piece) => {
            for start in (0..bytes.len()).step_by(piece) {
                let end = (start + piece).min(bytes.len());
                tx.send(bytes.slice(start..end)).await.ok()?;
            }
        }
        None => tx.send(bytes).await.ok()?,
    }
    *sent += 1;
    Some(carry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_frame_has_the_asked_length_and_is_json() {
        for bytes in [200, 4096, 70_000] {
            let frame = oversized_frame(bytes);
            assert_eq!(frame.len(), bytes);
            let value: serde_json::Value = serde_json::from_str(&frame).unwrap();
            assert_eq!(value["method"], "notifications/message");
        }
        assert!(oversized_frame(1).len() > 1);
    }

    #[test]
    fn an_event_carries_the_frame_on_one_data_line() {
        assert_eq!(
            event(r#"{"a":1}"#),
            Bytes::from_static(b"data: {\"a\":1}\n\n")
        );
    }

    async fn collect(mut body: SseBody<()>) -> String {
        let mut text = String::new();
        while let Some(chunk) = body.rx.recv().await {
            text.push_str(std::str::from_utf8(&chunk).unwrap());
        }
        text
    }

    #[tokio::test(start_paused = true)]
    async fn a_break_closes_the_stream_before_the_response() {
        let (route_tx, route) = mpsc::unbounded_channel();
        route_tx.send(Routed::Event("2".into())).unwrap();
        route_tx.send(Routed::Final("3".into())).unwrap();
        let settings = StreamSettings {
            keep_alive: Duration::from_secs(15),
            faults: Faults {
                break_stream_after: Some(2),
                ..Faults::default()
            },
        };
        let body = start(Routed::Event("1".into()), route, settings, ());
        assert_eq!(collect(body).await, "data: 1\n\ndata: 2\n\n");
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_stream_gets_keep_alive_comments() {
        let (route_tx, route) = mpsc::unbounded_channel();
        let settings = StreamSettings {
            keep_alive: Duration::from_millis(100),
            faults: Faults::default(),
        };
        let body = start(Routed::Event("1".into()), route, settings, ());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(250)).await;
            route_tx.send(Routed::Final("2".into())).unwrap();
        });
        assert_eq!(
            collect(body).await,
            "data: 1\n\n: keep-alive\n\n: keep-alive\n\ndata: 2\n\n"
        );
    }
}
