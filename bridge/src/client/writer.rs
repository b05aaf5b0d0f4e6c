//! The writing end toward VS Code. The session writes a small frame to stdout
//! itself when stdout takes it at once and nothing waits before it; any other
//! frame goes to a writer task, which has stdout until every frame before it is
//! written ([`WriteThrough`]). Either way the frames leave in the order the session
//! sends them.

use crate::wire::pieces::{Encode, Sink};
use crate::wire::raw::encode_result_line;
use crate::wire::shallow::ShallowObject;
use crate::wire::write_through::{AtEnd, Job, WriteThrough};
use serde_json::Value;
use std::fmt;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

/// Stdout, or what stands for it.
pub(crate) type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// One frame for VS Code.
#[derive(Debug)]
pub(crate) enum ClientFrame {
    Value(Value),
    /// A result passed through from its members' text: a large member is written
    /// from the line it came in.
    Result(PassedResult),
}

impl Encode for ClientFrame {
    fn encode<'f>(&'f self, out: &mut impl Sink<'f>) {
        match self {
            Self::Value(frame) => frame.encode(out),
            Self::Result(result) => result.encode(out),
        }
    }
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
#[derive(Clone)]
pub(crate) struct ClientSink {
    jobs: mpsc::Sender<Job<Output, ClientFrame>>,
    output: WriteThrough<Output>,
}

impl fmt::Debug for ClientSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSink").finish_non_exhaustive()
    }
}

impl ClientSink {
    /// The sink of the frames to `output`, and the writer task that writes those
    /// that cannot be written at once; up to `capacity` frames wait for it.
    pub(crate) fn new(
        output: Output,
        capacity: usize,
    ) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (jobs, queue) = mpsc::channel(capacity);
        let output = WriteThrough::new(output);
        let writer = output.clone().write_queued(queue, AtEnd::Flush);
        (Self { jobs, output }, writer)
    }

    /// Writes or queues one frame. When VS Code reads slowly, this waits: the
    /// bridge reads no faster than VS Code can take the answers.
    pub(crate) async fn send(&self, frame: Value) {
        self.send_frame(ClientFrame::Value(frame)).await;
    }

    /// Writes or queues the response `{"jsonrpc":"2.0","id":id,"result":result}`.
    pub(crate) async fn send_result(&self, id: Value, result: ShallowObject<'static>) {
        self.send_frame(ClientFrame::Result(PassedResult { id, result }))
            .await;
    }

    async fn send_frame(&self, frame: ClientFrame) {
        let unfinished = |job| {
            let _ = self.jobs.try_send(job);
        };
        let Some(frame) = self.output.write_now(frame, unfinished) else {
            return;
        };
        // Stdout is gone only when VS Code is gone; the end of stdin follows.
        let Ok(permit) = self.jobs.reserve().await else {
            return;
        };
        self.output.queue(frame, |job| permit.send(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::write_through::tests::lines_of;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    fn frame(n: usize, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": n, "result": {"text": text}})
    }

    #[tokio::test]
    async fn a_small_frame_is_written_by_the_sender_when_stdout_takes_it() {
        let (output, mut reads) = tokio::io::duplex(4096);
        // The writer task is never run: the frame must be on stdout all the same.
        let (sink, _writer) = ClientSink::new(Box::new(output), 8);
        sink.send(frame(1, "hello")).await;
        let mut got = vec![0; 4096];
        let read = reads.read(&mut got).await.unwrap();
        assert_eq!(lines_of(&got[..read]), vec![frame(1, "hello")]);
    }

    #[tokio::test]
    async fn frames_keep_their_order_when_stdout_is_slow_and_some_are_large() {
        // A pipe of 100 bytes: most frames cannot be written at once.
        let (output, mut reads) = tokio::io::duplex(100);
        let (sink, writer) = ClientSink::new(Box::new(output), 4);
        let writer = tokio::spawn(writer);
        let large = "x".repeat(100 * 1024);
        let sent: Vec<Value> = (0..40)
            .map(|n| frame(n, if n % 7 == 3 { &large } else { "small" }))
            .collect();
        let sender = {
            let sent = sent.clone();
            tokio::spawn(async move {
                for frame in sent {
                    sink.send(frame).await;
                    tokio::task::yield_now().await;
                }
            })
        };
        let mut got = Vec::new();
        let reader = async {
            reads.read_to_end(&mut got).await.unwrap();
        };
        let (sent_all, (), written) = tokio::join!(sender, reader, writer);
        sent_all.unwrap();
        written.unwrap();
        let ids = |frames: &[Value]| frames.iter().map(|f| f["id"].clone()).collect::<Vec<_>>();
        assert_eq!(ids(&lines_of(&got)), ids(&sent));
        assert_eq!(lines_of(&got), sent);
    }

    #[tokio::test]
    async fn after_a_failed_write_the_frames_are_dropped_and_the_sender_never_waits() {
        let (output, reads) = tokio::io::duplex(64);
        drop(reads);
        let (sink, writer) = ClientSink::new(Box::new(output), 1);
        let writer = tokio::spawn(writer);
        for n in 0..10 {
            sink.send(frame(n, "gone")).await;
        }
        drop(sink);
        writer.await.unwrap();
    }
}
