//! Where the frames of the session go: the one writer of the stdio stream, or the
//! routes of Streamable HTTP, one per request.
//!
//! On stdio every frame goes through one queue and one task, so frames reach the output
//! in the order they were queued. The ordering rules of the fixture rest on this:
//! `toggle` queues its list changes before its result, a listen stream queues its
//! acknowledgment before any notification of the stream. Over HTTP each request has its
//! own response stream, so each frame goes to the route of the request it belongs to
//! (one queue per route keeps that order), and the final response ends the route.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::wire::RequestId;

enum Item {
    Frame(String),
    Flush(oneshot::Sender<()>),
}

/// A handle to queue frames; cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    sink: Sink,
}

#[derive(Clone)]
enum Sink {
    Stream(mpsc::UnboundedSender<Item>),
    Routes(Arc<Routes>),
}

/// One frame on the route of a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Routed {
    /// A notification of the request (progress, log message, a listen stream's
    /// notifications).
    Event(String),
    /// The response: the last frame of the route.
    Final(String),
}

/// The open routes of Streamable HTTP, by request id: each POST of a request opens one
/// and reads the frames of its request from it.
#[derive(Default)]
pub struct Routes {
    open: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    routes: HashMap<String, (u64, mpsc::UnboundedSender<Routed>)>,
    /// Tells a route from a later one of the same id.
    opened: u64,
}

/// An open route: the frames of its request, and what closes it.
pub struct Route {
    pub frames: mpsc::UnboundedReceiver<Routed>,
    pub generation: u64,
}

impl Routes {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic of another task must not stop the server: the table stays usable.
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens the route of `id`; `None` when a request in flight already uses that id.
    pub fn open(&self, id: &RequestId) -> Option<Route> {
        let mut table = self.table();
        let key = id.key();
        if table
            .routes
            .get(&key)
            .is_some_and(|(_, route)| !route.is_closed())
        {
            return None;
        }
        table.opened += 1;
        let generation = table.opened;
        let (tx, frames) = mpsc::unbounded_channel();
        table.routes.insert(key, (generation, tx));
        Some(Route { frames, generation })
    }

    /// Closes the route `generation` of `id` when its stream ended before the response;
    /// returns whether it was still open (the request then needs a cancellation).
    pub fn close(&self, id: &RequestId, generation: u64) -> bool {
        let mut table = self.table();
        let key = id.key();
        if table
            .routes
            .get(&key)
            .is_some_and(|(open, _)| *open == generation)
        {
            table.routes.remove(&key);
            return true;
        }
        false
    }

    /// Closes every route (the server stops): each stream ends without a response.
    pub fn close_all(&self) {
        self.table().routes.clear();
    }

    fn send(&self, id: &RequestId, frame: Routed) {
        let mut table = self.table();
        let key = id.key();
        let last = matches!(frame, Routed::Final(_));
        if let Some((_, route)) = table.routes.get(&key) {
            let _ = route.send(frame);
        }
        if last {
            table.routes.remove(&key);
        }
    }
}

impl Outbox {
    /// Starts the writer task on `output`. The task ends when every handle is dropped
    /// (after writing what was queued), or with the error of a failed write.
    pub fn spawn<W>(output: W) -> (Outbox, JoinHandle<std::io::Result<()>>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Outbox {
                sink: Sink::Stream(tx),
            },
            tokio::spawn(write_frames(output, rx)),
        )
    }

    /// An outbox that sends each frame to the route of its request.
    pub fn routed(routes: Arc<Routes>) -> Outbox {
        Outbox {
            sink: Sink::Routes(routes),
        }
    }

    /// Queues one frame (a JSON text without line end) that belongs to no request: on
    /// stdio it is written; over HTTP there is no stream for it, and it is dropped. After
    /// a failed write the frame is dropped: the session is ending anyway.
    pub fn push(&self, frame: String) {
        match &self.sink {
            Sink::Stream(tx) => {
                let _ = tx.send(Item::Frame(frame));
            }
            Sink::Routes(_) => crate::warning!("http", "dropped a frame of no request"),
        }
    }

    /// Queues a notification of the request `id`.
    pub fn push_to(&self, id: &RequestId, frame: String) {
        match &self.sink {
            Sink::Stream(tx) => {
                let _ = tx.send(Item::Frame(frame));
            }
            Sink::Routes(routes) => routes.send(id, Routed::Event(frame)),
        }
    }

    /// Queues the response of the request `id`: its last frame.
    pub fn answer(&self, id: &RequestId, frame: String) {
        match &self.sink {
            Sink::Stream(tx) => {
                let _ = tx.send(Item::Frame(frame));
            }
            Sink::Routes(routes) => routes.send(id, Routed::Final(frame)),
        }
    }

    /// Waits until every frame queued before this call is written and flushed (on
    /// stdio; routes have no writer to wait for).
    pub async fn flush(&self) {
        let Sink::Stream(tx) = &self.sink else {
            return;
        };
        let (done, wait) = oneshot::channel();
        if tx.send(Item::Flush(done)).is_ok() {
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
