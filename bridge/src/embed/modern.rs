//! The modern path: rmcp's own stdio transport, with the two limits of the
//! contract that rmcp does not have.
//!
//! - Requests in flight: a request above the limit gets -32603
//!   (`too_many_requests`, as the bridge gives it) at once, and never reaches the
//!   server.
//! - The end of stdin: rmcp would wait a fixed 5 s for the handlers. This transport
//!   ends the listen streams at once, gives the other requests `shutdown_grace`,
//!   and then fires the cancel tokens of the requests that are left; a frame that
//!   the client does not read gets `shutdown_grace` more, then it is dropped.

use crate::catalogue::{BridgeError, Cause, EmbedInfo, EmbedWarning, RequestWarning};
use crate::log::emit;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage,
    RequestId, ServerJsonRpcMessage,
};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use std::collections::{HashSet, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
struct InFlight {
    /// Requests other than listen streams.
    requests: HashSet<RequestId>,
    listens: HashSet<RequestId>,
}

impl InFlight {
    fn len(&self) -> usize {
        self.requests.len() + self.listens.len()
    }

    fn remove(&mut self, id: &RequestId) {
        self.requests.remove(id);
        self.listens.remove(id);
    }
}

/// A send of the inner transport that `receive` started.
type Sending<E> = Pin<Box<dyn Future<Output = Result<(), E>> + Send>>;

/// rmcp's transport with the limit of requests in flight and the end of the contract.
///
/// rmcp drops an unfinished `receive` when another event of its loop comes first
/// and then calls it again, so whatever `receive` waits for lives here: the
/// refusal being written, and the deadline of the end.
pub(crate) struct Limited<T: Transport<RoleServer>> {
    inner: T,
    max_in_flight: usize,
    grace: Duration,
    /// The token of the service: cancelling it fires every handler's token.
    service: CancellationToken,
    in_flight: watch::Sender<InFlight>,
    /// After the end of input: the cancellations of the listen streams, still to give.
    ending: Option<VecDeque<ClientJsonRpcMessage>>,
    /// When the requests' grace after the end of input ends.
    grace_ends: Option<Instant>,
    /// The refusal of a request above the limit, until it is written.
    refusing: Option<Sending<T::Error>>,
    /// Whether a frame was dropped at the end (its line is written once).
    dropped: Arc<AtomicBool>,
}

impl<T: Transport<RoleServer>> Limited<T> {
    pub(crate) fn new(
        inner: T,
        max_in_flight: usize,
        grace: Duration,
        service: CancellationToken,
    ) -> Self {
        Self {
            inner,
            max_in_flight,
            grace,
            service,
            in_flight: watch::Sender::new(InFlight::default()),
            ending: None,
            grace_ends: None,
            refusing: None,
            dropped: Arc::default(),
        }
    }
}

/// The error of a request above the limit, as the bridge gives it on the legacy path.
fn too_many_requests() -> ErrorData {
    let object = BridgeError::new(Cause::TooManyRequests).to_object();
    ErrorData::new(
        ErrorCode(Cause::TooManyRequests.code() as i32),
        Cause::TooManyRequests.message(),
        object.get("data").cloned(),
    )
}

fn cancellation(id: RequestId) -> Option<ClientJsonRpcMessage> {
    serde_json::from_value(serde_json::json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the end of stdin"},
    }))
    .ok()
}

impl<T: Transport<RoleServer>> Limited<T> {
    /// Waits until the requests in flight are answered, at most `grace`; then
    /// fires the cancel tokens that are left and lets rmcp's loop end on them.
    async fn end(&mut self) -> Option<ClientJsonRpcMessage> {
        if !self.service.is_cancelled() {
            let grace = self.grace;
            let deadline = *self
                .grace_ends
                .get_or_insert_with(|| Instant::now() + grace);
            let mut in_flight = self.in_flight.subscribe();
            let answered = in_flight.wait_for(|in_flight| in_flight.requests.is_empty());
            if tokio::time::timeout_at(deadline, answered).await.is_err() {
                emit!(EmbedInfo::RequestsLeft {
                    n: self.grace.as_millis()
                });
            }
            // Cancelled in both cases, not closed: after a close rmcp waits a fixed
            // 5 s for the handlers before it cancels them, after a cancel 2 s, and
            // only a handler stuck in a send (a listen stream being acknowledged at
            // the end) can still use them.
            self.service.cancel();
        }
        // rmcp's loop ends on the cancelled token; it reads no more.
        std::future::pending().await
    }

    /// Writes the refusal that a receive before this one started, if any.
    async fn finish_refusal(&mut self) -> Result<(), T::Error> {
        let Some(refusing) = self.refusing.as_mut() else {
            return Ok(());
        };
        let sent = refusing.await;
        self.refusing = None;
        sent
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Limited<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            self.in_flight.send_modify(|in_flight| in_flight.remove(id));
        }
        let sent = self.inner.send(item);
        let (service, grace, dropped) = (self.service.clone(), self.grace, self.dropped.clone());
        async move {
            // A client that reads no more of stdout holds a send, and rmcp's loop
            // with it: after the end of the requests' grace, a send gets one more.
            let abandoned = async {
                service.cancelled().await;
                tokio::time::sleep(grace).await;
            };
            tokio::select! {
                biased;
                result = sent => result,
                () = abandoned => {
                    if !dropped.swap(true, Ordering::Relaxed) {
                        emit!(EmbedWarning::OutputLeft { n: grace.as_millis() });
                    }
                    Ok(())
                }
            }
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.finish_refusal().await.is_err() {
                return None;
            }
            if let Some(ending) = &mut self.ending {
                if let Some(cancel) = ending.pop_front() {
                    return Some(cancel);
                }
                return self.end().await;
            }
            let Some(message) = self.inner.receive().await else {
                // The end of stdin: the listen streams end at once.
                let mut listens = Vec::new();
                self.in_flight.send_modify(|in_flight| {
                    listens.extend(in_flight.listens.drain());
                });
                self.ending = Some(listens.into_iter().filter_map(cancellation).collect());
                continue;
            };
            match &message {
                JsonRpcMessage::Request(request) => {
                    let listen = matches!(
                        request.request,
                        ClientRequest::SubscriptionsListenRequest(_)
                    );
                    let mut admitted = false;
                    self.in_flight.send_modify(|in_flight| {
                        if in_flight.len() < self.max_in_flight {
                            admitted = true;
                            let set = if listen {
                                &mut in_flight.listens
                            } else {
                                &mut in_flight.requests
                            };
                            set.insert(request.id.clone());
                        }
                    });
                    if !admitted {
                        // The line of the contract's Output channel table, as the
                        // legacy path writes it.
                        let key = serde_json::to_string(&request.id).unwrap_or_default();
                        emit!(RequestWarning::Rejected {
                            id: &key,
                            method: request.request.method()
                        });
                        let refusal = ServerJsonRpcMessage::error(
                            too_many_requests(),
                            Some(request.id.clone()),
                        );
                        self.refusing = Some(Box::pin(self.inner.send(refusal)));
                        continue;
                    }
                }
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancelled) =
                        &notification.notification
                        && let Some(id) = &cancelled.params.request_id
                    {
                        self.in_flight.send_modify(|in_flight| in_flight.remove(id));
                    }
                }
                _ => {}
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), T::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use tokio::sync::Semaphore;

    /// A transport whose client sends `incoming` and whose sends finish only when
    /// the test gives them a permit.
    struct Scripted {
        incoming: VecDeque<ClientJsonRpcMessage>,
        permits: Arc<Semaphore>,
        written: Arc<Mutex<Vec<serde_json::Value>>>,
    }

    impl Transport<RoleServer> for Scripted {
        type Error = std::io::Error;

        fn send(
            &mut self,
            item: ServerJsonRpcMessage,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            let (permits, written) = (self.permits.clone(), self.written.clone());
            async move {
                let _permit = permits.acquire().await.map_err(std::io::Error::other)?;
                let frame = serde_json::to_value(&item).map_err(std::io::Error::other)?;
                written.lock().unwrap().push(frame);
                Ok(())
            }
        }

        async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
            match self.incoming.pop_front() {
                Some(message) => Some(message),
                None => std::future::pending().await,
            }
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn call(id: u64) -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {}},
        }))
        .unwrap()
    }

    /// rmcp drops an unfinished receive when another event comes first: a refusal
    /// that was being written then still reaches the client, whole.
    #[tokio::test(start_paused = true)]
    async fn a_refusal_survives_a_receive_that_rmcp_dropped() {
        let permits = Arc::new(Semaphore::new(0));
        let written = Arc::new(Mutex::new(Vec::new()));
        let scripted = Scripted {
            incoming: VecDeque::from([call(1), call(2)]),
            permits: permits.clone(),
            written: written.clone(),
        };
        let mut limited = Limited::new(
            scripted,
            1,
            Duration::from_millis(500),
            CancellationToken::new(),
        );
        assert!(
            limited.receive().await.is_some(),
            "the first call is admitted"
        );
        // The second is above the limit: its refusal waits for the client.
        let dropped = tokio::time::timeout(Duration::from_millis(50), limited.receive()).await;
        assert!(dropped.is_err(), "the receive waits for the refusal's send");
        permits.add_permits(1);
        let again = tokio::time::timeout(Duration::from_millis(50), limited.receive()).await;
        assert!(again.is_err(), "no more input");
        let written = written.lock().unwrap();
        assert_eq!(written.len(), 1, "{written:?}");
        assert_eq!(written[0]["id"], 2);
        assert_eq!(written[0]["error"]["data"]["cause"], "too_many_requests");
    }
}
