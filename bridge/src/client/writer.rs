//! The writing end toward VS Code: a task that writes the session's frames to
//! stdout, in the order the session sends them.

use crate::wire::codec::{self, LineWriter};
use serde_json::Value;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

/// One frame for VS Code.
#[derive(Debug)]
pub(crate) enum ClientFrame {
    Value(Value),
    /// A frame already encoded, with its newline (a result passed through).
    Line(Vec<u8>),
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

    /// Queues one encoded frame, which ends with its newline.
    pub(crate) async fn send_line(&self, line: Vec<u8>) {
        self.send_frame(ClientFrame::Line(line)).await;
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
            ClientFrame::Value(frame) => output.write(frame, codec::encode_into, flush).await,
            ClientFrame::Line(line) => output.write_line(line, flush).await,
        };
        if written.is_err() {
            return;
        }
    }
    // Stdout stays open: VS Code reads it until the bridge exits.
    let _ = output.flush().await;
}
