//! The writing end toward VS Code. The session writes a small frame to stdout
//! itself when stdout takes it at once and nothing waits before it (issue 20: a
//! call then passes no task between the session and stdout); any other frame goes
//! to a writer task, which has stdout until every frame before it is written.
//! Either way the frames leave in the order the session sends them.

use crate::wire::codec::{LineWriter, WrittenNow};
use crate::wire::pieces::{Encode, Sink};
use crate::wire::raw::encode_result_line;
use crate::wire::shallow::ShallowObject;
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
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

/// Stdout while no task writes to it.
struct Slot {
    /// The writer, while nothing waits to be written; `None` while the writer
    /// task has it.
    idle: Option<LineWriter<Output>>,
    /// A write failed: VS Code is gone, and nothing more is written.
    broken: bool,
}

/// Work for the writer task: stdout itself when the task takes it over, and the
/// frame to write (none: the rest of a frame that the session began to write).
struct Job {
    writer: Option<LineWriter<Output>>,
    frame: Option<ClientFrame>,
}

/// The frames for VS Code, in order.
#[derive(Clone)]
pub(crate) struct ClientSink {
    jobs: mpsc::Sender<Job>,
    slot: Arc<Mutex<Slot>>,
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
        let slot = Arc::new(Mutex::new(Slot {
            idle: Some(LineWriter::new(output)),
            broken: false,
        }));
        let writer = write_client(queue, slot.clone());
        (Self { jobs, slot }, writer)
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
        let Some(frame) = self.write_now(frame) else {
            return;
        };
        // Stdout is gone only when VS Code is gone; the end of stdin follows.
        let Ok(permit) = self.jobs.reserve().await else {
            return;
        };
        // Under the lock: the writer task gives stdout back only while no job waits.
        let mut slot = lock(&self.slot);
        let writer = slot.idle.take();
        permit.send(Job {
            writer,
            frame: Some(frame),
        });
    }

    /// Writes `frame` when stdout is idle and takes it at once; gives it back when
    /// the writer task must write it.
    fn write_now(&self, frame: ClientFrame) -> Option<ClientFrame> {
        let mut slot = lock(&self.slot);
        if slot.broken {
            return None;
        }
        let Some(writer) = slot.idle.as_mut() else {
            return Some(frame);
        };
        match writer.write_now(&frame) {
            Ok(WrittenNow::Done) => None,
            Ok(WrittenNow::NotNow) => Some(frame),
            Ok(WrittenNow::Unfinished) => {
                // Stdout is full, or the frame is larger than its buffer: the
                // writer task writes the rest of its encoding when stdout has room.
                // No job waits while stdout is idle, so the queue has room.
                let writer = slot.idle.take();
                let _ = self.jobs.try_send(Job {
                    writer,
                    frame: None,
                });
                None
            }
            Err(_) => {
                slot.broken = true;
                slot.idle = None;
                None
            }
        }
    }
}

fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    // A panic under the lock leaves the slot as whole as before it.
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes the queued frames to stdout until the session drops its sink, and gives
/// stdout back to the session whenever no more frames wait.
async fn write_client(mut jobs: mpsc::Receiver<Job>, slot: Arc<Mutex<Slot>>) {
    let mut held: Option<LineWriter<Output>> = None;
    while let Some(job) = jobs.recv().await {
        if job.writer.is_some() {
            held = job.writer;
        }
        let Some(writer) = held.as_mut() else {
            continue;
        };
        let flush = jobs.is_empty();
        let written = match job.frame {
            Some(frame) => writer.write(frame, flush).await,
            None => writer.finish().await,
        };
        if written.is_err() {
            lock(&slot).broken = true;
            return;
        }
        if flush {
            let mut slot = lock(&slot);
            if jobs.is_empty() {
                slot.idle = held.take();
            }
        }
    }
    // Stdout stays open: VS Code reads it until the bridge exits.
    if let Some(mut writer) = held {
        let _ = writer.flush().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    fn frame(n: usize, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": n, "result": {"text": text}})
    }

    fn lines_of(bytes: &[u8]) -> Vec<Value> {
        bytes
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect()
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
