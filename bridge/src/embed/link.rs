//! The in-process link of the legacy path: the bridge's upstream is the author's
//! rmcp server, in the same process, over channels. No second process, no pipe.
//!
//! What is converted, and why:
//!
//! - Bridge → server: an [`Outgoing`] frame is written once as JSON text (its
//!   params are JSON text already, kept from VS Code's line) and parsed once into
//!   rmcp's typed [`ClientJsonRpcMessage`]. rmcp's handlers take typed requests, so
//!   one parse is the least there is; going through a `serde_json::Value` tree
//!   would add a step, not remove one.
//! - Server → bridge: rmcp hands over a typed [`ServerJsonRpcMessage`], which is
//!   serialized once to a line and read once by the reading function of every
//!   link ([`event_of_line`]). The session takes a `tools/call` result one level
//!   deep from that line (its fast path, as for a stdio upstream); a `Value` tree
//!   here would cost a full conversion and lose that path.
//!
//! Order: rmcp writes responses and notifications from spawned send tasks, but it
//! calls the transport's `send` in the order of its loop. This transport queues each
//! frame inside `send` itself, before it returns its future, so a list change that a
//! handler awaited reaches the session before that handler's result (the
//! contract's "writes its list change to VS Code ... before the result"). A task
//! moves the queue to the session's bounded channel in the same order.

use crate::catalogue::{EmbedRouterWarning, UpstreamStopped};
use crate::log::emit;
use crate::upstream::{
    ConnectError, Connector, LinkContext, LinkEnd, Outgoing, UpstreamControl, UpstreamEvent,
    UpstreamLink, event_of_line,
};
use crate::wire::frame::{Message, Outcome, Response};
use crate::wire::line_reader::Line;
use rmcp::ServerHandler;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RoleServer, serve_server_with_ct};
use rmcp::transport::Transport;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

/// A [`Connector`] whose upstream is an rmcp server in the same process. Each
/// connect serves the server anew on its own in-process link; the server is
/// shared, so its state outlives a failed initialize.
pub struct RmcpConnector<S> {
    server: Arc<S>,
}

impl<S> RmcpConnector<S> {
    /// The connector of `server`; the bridge of [`super::serve_stdio`] makes one
    /// for the author's server, and a test or another embedding may make its own.
    pub fn new(server: Arc<S>) -> Self {
        Self { server }
    }
}

impl<S: ServerHandler> Connector for RmcpConnector<S> {
    fn connect(&self, context: LinkContext) -> Result<UpstreamLink, ConnectError> {
        let (sender, frames) = mpsc::unbounded_channel();
        let (events_sender, events) = mpsc::channel(256);
        let (queue, mut queued) = mpsc::unbounded_channel::<UpstreamEvent>();
        let stop = context.stop.clone();
        context
            .tasks
            .spawn(stop.run_until_cancelled_owned(async move {
                while let Some(event) = queued.recv().await {
                    if events_sender.send(event).await.is_err() {
                        break;
                    }
                }
            }));
        let (stopped, stopped_watch) = watch::channel(false);
        let kill = CancellationToken::new();
        let closed = CancellationToken::new();
        let transport = LinkTransport {
            frames,
            events: queue.clone(),
            scratch: Vec::new(),
            closed: closed.clone(),
        };
        let server = self.server.clone();
        let killed = kill.clone();
        let stop = context.stop.clone();
        context.tasks.spawn(async move {
            let service = CancellationToken::new();
            let outcome = tokio::select! {
                outcome = run(server, transport, service.clone()) => outcome,
                // The session ended the link after it cancelled every request: it
                // reads no more, so rmcp's drain of the handlers is not waited for
                // (a handler stuck in a send would hold it for rmcp's fixed 5 s).
                _ = closed.cancelled() => Ok(()),
                _ = killed.cancelled() => Ok(()),
                _ = stop.cancelled() => Ok(()),
            };
            // Fires the cancel tokens of the handlers that are left.
            service.cancel();
            if let Err(stopped) = outcome {
                let _ = queue.send(UpstreamEvent::Ended(LinkEnd::Stopped(stopped)));
            }
            stopped.send_replace(true);
        });
        Ok(UpstreamLink {
            sender: Box::new(sender),
            events: events.into(),
            control: Arc::new(EmbedControl {
                stopped: stopped_watch,
                kill,
            }),
            discover_extra: Duration::ZERO,
        })
    }
}

/// Serves the server on the link until the session drops its sender.
async fn run<S: ServerHandler>(
    server: Arc<S>,
    transport: LinkTransport,
    service: CancellationToken,
) -> Result<(), UpstreamStopped> {
    let running = match serve_server_with_ct(server, transport, service).await {
        Ok(running) => running,
        // The session ended before it sent anything.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => {
            return Err(UpstreamStopped::InProcessDidNotStart {
                error: error.to_string(),
            });
        }
    };
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|error| UpstreamStopped::InProcessStopped {
            error: error.to_string(),
        })
}

/// The session dropped the link.
#[derive(Debug, thiserror::Error)]
#[error("the bridge closed the in-process link")]
pub struct LinkClosed;

struct LinkTransport {
    frames: mpsc::UnboundedReceiver<Outgoing>,
    events: mpsc::UnboundedSender<UpstreamEvent>,
    scratch: Vec<u8>,
    /// Cancelled when the session drops its sender.
    closed: CancellationToken,
}

impl Transport<RoleServer> for LinkTransport {
    type Error = LinkClosed;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), LinkClosed>> + Send + 'static {
        // Queued here, not in the future: see the module's note on order.
        let result = match serde_json::to_vec(&item) {
            Ok(line) => match event_of_line(Line::Complete(line)) {
                Some(event) => self.events.send(event).map_err(|_| LinkClosed),
                None => Ok(()),
            },
            Err(error) => {
                emit!(EmbedRouterWarning::FrameUnreadable { error: &error });
                Ok(())
            }
        };
        std::future::ready(result)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let Some(frame) = self.frames.recv().await else {
                self.closed.cancel();
                return None;
            };
            self.scratch.clear();
            frame.encode_into(&mut self.scratch);
            match serde_json::from_slice::<ClientJsonRpcMessage>(&self.scratch) {
                Ok(message) => return Some(message),
                Err(error) => {
                    // rmcp's model refuses the frame (params of the wrong shape):
                    // the request gets -32602, as a stdio server would give it.
                    if let Outgoing::Request { id, .. } = frame {
                        let response = Response {
                            id: json!(id),
                            outcome: Outcome::Error(json!({
                                "code": -32602,
                                "message": format!("Invalid params: {error}"),
                            })),
                        };
                        let event = UpstreamEvent::Message(Message::Response(response));
                        if self.events.send(event).is_err() {
                            return None;
                        }
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), LinkClosed> {
        Ok(())
    }
}

#[derive(Debug)]
struct EmbedControl {
    stopped: watch::Receiver<bool>,
    kill: CancellationToken,
}

#[async_trait::async_trait]
impl UpstreamControl for EmbedControl {
    /// The session has dropped its sender, so the server's loop ends; a handler that
    /// ignores its cancel token gets `grace`, then its task is left behind and the
    /// link stops.
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
        self.kill.cancel();
    }
}
