//! An upstream in the same process, over channels.
//!
//! The server side gets a [`MemoryPeer`] for each connect: the frames the bridge
//! sends, and a sender for what the server answers. Tests script upstreams with it,
//! and a server embedded in the same executable (M5) serves the bridge through it.

use super::stdio::{ExitReport, exit_event, log_exit};
use super::{
    ClientQuestion, ClientState, ConnectError, Connector, LinkContext, LinkEnd, Outgoing,
    RequestFailure, UpstreamControl, UpstreamEvent, UpstreamLink,
};
use crate::wire::frame::Outcome;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::timeout;

/// The server side of one connection.
#[derive(Debug)]
pub struct MemoryPeer {
    /// What the bridge sends; `None` once the bridge ended the connection.
    pub frames: mpsc::UnboundedReceiver<Outgoing>,
    /// What the server sends to the bridge, in order.
    pub events: mpsc::Sender<UpstreamEvent>,
    /// VS Code's side, as the session tells it.
    pub client: watch::Receiver<ClientState>,
    stopped: watch::Sender<bool>,
    killed: watch::Receiver<bool>,
}

impl MemoryPeer {
    /// The server ends like a process that exits: its line, a last event, then
    /// nothing.
    pub async fn exit(self, report: ExitReport) {
        log_exit(&report);
        let _ = self.events.send(exit_event(&report)).await;
        self.stopped.send_replace(true);
    }

    /// The link ends, and says whether the session ends with it.
    pub async fn end(self, end: LinkEnd) {
        let _ = self.events.send(UpstreamEvent::Ended(end)).await;
        self.stopped.send_replace(true);
    }

    /// The request `id` fails in the link; the link stays usable.
    pub async fn fail(&self, id: u64, failure: RequestFailure) {
        let _ = self
            .events
            .send(UpstreamEvent::RequestFailed { id, failure })
            .await;
    }

    /// Asks VS Code through the session, for no request of VS Code; `None` when
    /// the question ended without an answer.
    pub async fn ask_client(&self, method: &str, params: Map<String, Value>) -> Option<Outcome> {
        let (answer, answered) = oneshot::channel();
        let question = ClientQuestion {
            method: method.to_owned(),
            params,
            answer,
        };
        self.events
            .send(UpstreamEvent::AskClient(question))
            .await
            .ok()?;
        answered.await.ok()
    }

    /// Resolves when the bridge asks the server to stop at once.
    pub async fn killed(&mut self) {
        let _ = self.killed.wait_for(|killed| *killed).await;
    }
}

impl Drop for MemoryPeer {
    fn drop(&mut self) {
        self.stopped.send_replace(true);
    }
}

/// Hands a new [`MemoryPeer`] to the server side at each connect.
#[derive(Debug, Clone)]
pub struct MemoryConnector {
    peers: mpsc::UnboundedSender<MemoryPeer>,
    refuse: Arc<Mutex<Option<String>>>,
}

impl MemoryConnector {
    /// The connector, and where its peers arrive.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<MemoryPeer>) {
        let (peers, arrivals) = mpsc::unbounded_channel();
        (
            Self {
                peers,
                refuse: Arc::default(),
            },
            arrivals,
        )
    }

    /// The next connects fail as a command that does not start.
    pub fn refuse_with(&self, error: Option<&str>) {
        if let Ok(mut refuse) = self.refuse.lock() {
            *refuse = error.map(str::to_owned);
        }
    }
}

impl Connector for MemoryConnector {
    fn connect(&self, context: LinkContext) -> Result<UpstreamLink, ConnectError> {
        if let Some(error) = self.refuse.lock().ok().and_then(|refuse| refuse.clone()) {
            return Err(ConnectError::Spawn(error));
        }
        let (sender, frames) = mpsc::unbounded_channel();
        let (events_sender, events) = mpsc::channel(256);
        let (stopped, stopped_watch) = watch::channel(false);
        let (kill, killed) = watch::channel(false);
        let peer = MemoryPeer {
            frames,
            events: events_sender,
            client: context.client,
            stopped,
            killed,
        };
        self.peers
            .send(peer)
            .map_err(|_| ConnectError::Spawn("the in-process server is gone".into()))?;
        let control = Arc::new(MemoryControl {
            stopped: stopped_watch,
            kill,
        });
        Ok(UpstreamLink {
            sender: Box::new(sender),
            events: events.into(),
            control,
            discover_extra: Duration::ZERO,
        })
    }
}

#[derive(Debug)]
struct MemoryControl {
    stopped: watch::Receiver<bool>,
    kill: watch::Sender<bool>,
}

#[async_trait::async_trait]
impl UpstreamControl for MemoryControl {
    async fn shutdown(&self, grace: Duration) {
        let mut stopped = self.stopped.clone();
        if timeout(grace, stopped.wait_for(|stopped| *stopped))
            .await
            .is_err()
        {
            self.kill_now();
        }
    }

    fn kill_now(&self) {
        self.kill.send_replace(true);
    }
}
