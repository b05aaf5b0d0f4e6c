//! The one writer of the output stream.
//!
//! Every frame goes through one queue and one task, so frames reach the output in the
//! order they were queued. The ordering rules of the fixture rest on this: `toggle`
//! queues its list changes before its result, a listen stream queues its acknowledgment
//! before any notification of the stream.

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

enum Item {
    Frame(String),
    Flush(oneshot::Sender<()>),
}

/// A handle to queue frames; cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Item>,
}

impl Outbox {
    /// Starts the writer task on `output`. The task ends when every handle is dropped
    /// (after writing what was queued), or with the error of a failed write.
    pub fn spawn<W>(output: W) -> (Outbox, JoinHandle<std::io::Result<()>>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbox { tx }, tokio::spawn(write_frames(output, rx)))
    }

    /// Queues one frame (a JSON text without line end). After a failed write the frame
    /// is dropped: the session is ending anyway.
    pub fn push(&self, frame: String) {
        let _ = self.tx.send(Item::Frame(frame));
    }

    /// Waits until every frame queued before this call is written and flushed.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Item::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

async fn write_frames<W>(
    mut output: W,
    mut rx: mpsc::UnboundedReceiver<Item>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut buffer = Vec::new();
    while let Some(first) = rx.recv().await {
        // Batch what is already queued: one write and one flush for a burst of frames.
        let mut item = Some(first);
        let mut flushed = Vec::new();
        while let Some(current) = item.take() {
            match current {
                Item::Frame(frame) => {
                    buffer.extend_from_slice(frame.as_bytes());
                    buffer.push(b'\n');
                }
                Item::Flush(done) => flushed.push(done),
            }
            if buffer.len() < 1 << 20 {
                item = rx.try_recv().ok();
            }
        }
        output.write_all(&buffer).await?;
        output.flush().await?;
        buffer.clear();
        for done in flushed {
            let _ = done.send(());
        }
    }
    output.shutdown().await
}
