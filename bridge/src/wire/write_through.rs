//! An output that the sender writes itself while it is idle, and a writer task
//! otherwise: a frame that the output takes at once passes no task.
//!
//! The sender tries [`WriteThrough::write_now`] first. A frame that cannot be
//! written at once (the output is full, the frame has a large member, or the
//! writer task still has frames to write) goes to the writer task, and so does
//! every frame behind it; the writer task gives the output back once its queue is
//! empty. The hand-over and the queue are decided under one lock, so the frames
//! leave in the order the sender sends them. Stdout toward VS Code and the stdin
//! of an upstream child are written this way.

use super::line_writer::{LineWriter, WrittenNow};
use super::pieces::Encode;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

/// The output, shared by the sender and the writer task.
pub(crate) struct WriteThrough<W: AsyncWrite> {
    slot: Arc<Mutex<Slot<W>>>,
}

impl<W: AsyncWrite> Clone for WriteThrough<W> {
    fn clone(&self) -> Self {
        Self {
            slot: self.slot.clone(),
        }
    }
}

/// The output while no task writes to it.
struct Slot<W: AsyncWrite> {
    /// The writer, while nothing waits to be written; `None` while the writer task
    /// has it.
    idle: Option<LineWriter<W>>,
    /// A write failed: the reader is gone, and nothing more is written.
    broken: bool,
}

/// Work for the writer task: the output itself when the task takes it over, and
/// the frame to write (none: the rest of a frame that the sender began to write).
pub(crate) struct Job<W: AsyncWrite, F> {
    writer: Option<LineWriter<W>>,
    frame: Option<F>,
}

/// What the writer task does with the output when the sender is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtEnd {
    /// Flushes it and leaves it open: VS Code reads stdout until the bridge exits.
    Flush,
    /// Ends it: the end of input, after which an upstream child exits.
    Shutdown,
}

/// Where the writer task gets its jobs: a bounded channel (the sender waits for
/// room) or an unbounded one.
pub(crate) trait JobQueue<J>: Send + 'static {
    fn recv(&mut self) -> impl Future<Output = Option<J>> + Send;
    fn is_empty(&self) -> bool;
}

impl<J: Send + 'static> JobQueue<J> for mpsc::Receiver<J> {
    fn recv(&mut self) -> impl Future<Output = Option<J>> + Send {
        mpsc::Receiver::recv(self)
    }
    fn is_empty(&self) -> bool {
        mpsc::Receiver::is_empty(self)
    }
}

impl<J: Send + 'static> JobQueue<J> for mpsc::UnboundedReceiver<J> {
    fn recv(&mut self) -> impl Future<Output = Option<J>> + Send {
        mpsc::UnboundedReceiver::recv(self)
    }
    fn is_empty(&self) -> bool {
        mpsc::UnboundedReceiver::is_empty(self)
    }
}

impl<W: AsyncWrite + Unpin> WriteThrough<W> {
    pub(crate) fn new(output: W) -> Self {
        Self {
            slot: Arc::new(Mutex::new(Slot {
                idle: Some(LineWriter::new(output)),
                broken: false,
            })),
        }
    }

    /// Writes `frame` when the output is idle and takes it at once, and gives it
    /// back when the writer task must write it ([`Self::queue`]). When the output
    /// took only part of it, the rest goes to the writer task through `queue`,
    /// called under the lock with a job that always finds room: no job waits while
    /// the output is idle.
    pub(crate) fn write_now<F: Encode>(
        &self,
        frame: F,
        queue: impl FnOnce(Job<W, F>),
    ) -> Option<F> {
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
                queue(Job {
                    writer: slot.idle.take(),
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

    /// Gives `frame` to the writer task through `queue`, with the output when it is
    /// idle. Under the lock: the writer task gives the output back only while no job
    /// waits.
    pub(crate) fn queue<F>(&self, frame: F, queue: impl FnOnce(Job<W, F>)) {
        let mut slot = lock(&self.slot);
        if slot.broken {
            return;
        }
        queue(Job {
            writer: slot.idle.take(),
            frame: Some(frame),
        });
    }

    /// The writer task: writes the queued frames until every sender is gone, gives
    /// the output back whenever no more frames wait, and at the end does `at_end`.
    pub(crate) async fn write_queued<F: Encode + Send>(
        self,
        mut jobs: impl JobQueue<Job<W, F>>,
        at_end: AtEnd,
    ) {
        let mut held: Option<LineWriter<W>> = None;
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
                lock(&self.slot).broken = true;
                return;
            }
            if flush {
                let mut slot = lock(&self.slot);
                if jobs.is_empty() {
                    slot.idle = held.take();
                }
            }
        }
        let Some(mut writer) = held.or_else(|| lock(&self.slot).idle.take()) else {
            return;
        };
        let _ = match at_end {
            AtEnd::Flush => writer.flush().await,
            AtEnd::Shutdown => writer.shutdown().await,
        };
    }
}

fn lock<W: AsyncWrite>(slot: &Mutex<Slot<W>>) -> MutexGuard<'_, Slot<W>> {
    // A panic under the lock leaves the slot as whole as before it.
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt, DuplexStream};

    fn frame(n: usize, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"text": text}})
    }

    /// The JSON lines written to an output.
    pub(crate) fn lines_of(bytes: &[u8]) -> Vec<Value> {
        bytes
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect()
    }

    /// The sender of an upstream's stdin: it never waits.
    fn send(
        output: &WriteThrough<DuplexStream>,
        jobs: &mpsc::UnboundedSender<Job<DuplexStream, Value>>,
        frame: Value,
    ) {
        let queue = |job| {
            let _ = jobs.send(job);
        };
        if let Some(frame) = output.write_now(frame, queue) {
            output.queue(frame, queue);
        }
    }

    #[tokio::test]
    async fn a_sender_that_never_waits_keeps_the_order_and_the_output_ends_after_the_last_frame() {
        // A pipe of 100 bytes: most frames cannot be written at once.
        let (pipe, mut reads) = tokio::io::duplex(100);
        let output = WriteThrough::new(pipe);
        let (jobs, queue) = mpsc::unbounded_channel();
        let writer = tokio::spawn(output.clone().write_queued(queue, AtEnd::Shutdown));
        let large = "x".repeat(100 * 1024);
        let sent: Vec<Value> = (0..40)
            .map(|n| frame(n, if n % 7 == 3 { &large } else { "small" }))
            .collect();
        for frame in sent.iter().cloned() {
            send(&output, &jobs, frame);
        }
        // The end of the sender is the end of the output, after every frame.
        drop((output, jobs));
        let mut got = Vec::new();
        reads.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert_eq!(lines_of(&got), sent);
    }

    #[tokio::test]
    async fn an_idle_output_ends_when_the_sender_is_gone() {
        let (pipe, mut reads) = tokio::io::duplex(4096);
        let output = WriteThrough::new(pipe);
        let (jobs, queue) = mpsc::unbounded_channel();
        send(&output, &jobs, frame(1, "only"));
        let writer = tokio::spawn(output.clone().write_queued(queue, AtEnd::Shutdown));
        drop((output, jobs));
        let mut got = Vec::new();
        reads.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert_eq!(lines_of(&got), vec![frame(1, "only")]);
    }
}
