//! The writing end toward VS Code: a task that writes the session's frames to
//! stdout, in the order the session sends them.

use crate::wire::codec::LineWriter;
use crate::wire::pieces::{Encode, Sink};
use crate::wire::raw::encode_result_line;
use crate::wire::shallow::ShallowObject;
use serde_json::Value;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

/// One frame for VS Code.
#[derive(Debug)]
pub(crate) enum ClientFrame {
    Value(Value),
    /// A result passed through from its members' text: a large member is written
    /// from the line it came in.
    Result(PassedResult),
}

/// A response of the bridge to VS Code whose result is JSON text.
#[derive(Debug)]
pub(crate) struct PassedResult {
    id: Value,
    result: ShallowObject<'static>,
}

impl Encode for PassedResult {
    fn encode<'f>(&'f self, out: &mut impl Sink<'f>) {
        encode_result_line(&self.id, &self.result, out);
    }
}

/// The frames for VS Code, in order.
#[derive(Debug, Clone)]
pub(crate) struct ClientSink(mpsc::Sender<ClientFrame>);

impl ClientSink {
    pub(crate) fn new(capacity: usize) -> (Self, mpsc::Receiver<ClientFrame>) {
        let (sender, receiver) = mpsc::channel(capacity);
        (Self(sender), receiver)
    }

    /// Queues one frame. When VS Code reads slowly, this waits: the bridge reads
    /// no faster than VS Code can take the answers.
    pub(crate) async fn send(&self, frame: Value) {
        self.send_frame(ClientFrame::Value(frame)).await;
    }

    /// Queues the response `{"jsonrpc":"2.0","id":id,"result":result}`.
    pub(crate) async fn send_result(&self, id: Value, result: ShallowObject<'static>) {
        self.send_frame(ClientFrame::Result(PassedResult { id, result }))
            .await;
    }

    async fn send_frame(&self, frame: ClientFrame) {
        // Stdout is gone only when VS Code is gone; the end of stdin follows.
        let _ = self.0.send(frame).await;
    }
}

/// Writes frames to stdout until the session drops its sink.
pub(crate) async fn write_client<W: AsyncWrite + Unpin>(
    output: W,
    mut frames: mpsc::Receiver<ClientFrame>,
) {
    let mut output = LineWriter::new(output);
    while let Some(frame) = frames.recv().await {
        let flush = frames.is_empty();
        let written = match frame {
            ClientFrame::Value(frame) => output.write(frame, flush).await,
            ClientFrame::Result(result) => output.write(result, flush).await,
        };
        if written.is_err() {
            return;
        }
    }
    // Stdout stays open: VS Code reads it until the bridge exits.
    let _ = output.flush().await;
}
