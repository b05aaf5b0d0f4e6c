//! A look at the upstream side of the bridge's own session: the connector of the
//! server start, wrapped so that doctor sees what the session sends and what the
//! upstream answers, as the upstream wrote it, while the session works as it
//! always does. The session's output is what VS Code gets; the tap is what the
//! upstream gave (the revisions of its discover result, the icons the bridge
//! dropped, the lines it wrote on stdout that are not JSON-RPC), and the questions
//! that the link asked VS Code itself (the URL elicitation of its sign-in).

use crate::upstream::{
    ConnectError, Connector, LinkContext, LinkEnd, Outgoing, OutgoingSink, RequestFailure,
    UpstreamEvent, UpstreamEvents, UpstreamLink,
};
use crate::wire::frame::{Message, Outcome};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::time::{Duration, Instant};

/// What the upstream answered to one request of the session.
#[derive(Debug, Clone)]
pub struct Answer {
    pub method: String,
    /// From the request to its answer.
    pub took: Duration,
    /// The result, or the error object.
    pub outcome: Result<Map<String, Value>, Value>,
}

/// A notification of the upstream, and when the session got it.
#[derive(Debug, Clone)]
pub struct Heard {
    pub method: String,
    /// The `level` of a log message.
    pub level: Option<String>,
    pub at: Instant,
}

/// What the tap saw.
#[derive(Debug, Default)]
struct Seen {
    notifications: Vec<Heard>,
    sent: HashMap<u64, (String, Instant)>,
    answers: Vec<Answer>,
    unreadable: Vec<String>,
    failures: Vec<(String, RequestFailure)>,
    ended: Option<LinkEnd>,
    connect_errors: Vec<ConnectError>,
    /// The URL elicitations that the link asked itself (its sign-in after
    /// `notifications/initialized`), by elicitationId and URL: what no upstream
    /// can send, since the id is the link's and the URL carries its state.
    own_questions: Vec<(String, String)>,
}

/// The shared record of the tap.
#[derive(Debug, Default, Clone)]
pub struct Tap(Arc<Mutex<Seen>>);

impl Tap {
    fn lock(&self) -> MutexGuard<'_, Seen> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The answers to the requests of `method`, in order.
    pub fn answers(&self, method: &str) -> Vec<Answer> {
        self.lock()
            .answers
            .iter()
            .filter(|answer| answer.method == method)
            .cloned()
            .collect()
    }

    /// The results of the answers to `method` (its errors left out).
    pub fn results(&self, method: &str) -> Vec<Map<String, Value>> {
        self.answers(method)
            .into_iter()
            .filter_map(|answer| answer.outcome.ok())
            .collect()
    }

    /// The failures of the link for requests of `method` (an HTTP status, a
    /// refused connection).
    pub fn failures(&self, method: &str) -> Vec<RequestFailure> {
        self.lock()
            .failures
            .iter()
            .filter(|(sent, _)| sent == method)
            .map(|(_, failure)| failure.clone())
            .collect()
    }

    /// The notifications of the upstream from `from` on, in order.
    pub fn notifications_since(&self, from: Instant) -> Vec<Heard> {
        self.lock()
            .notifications
            .iter()
            .filter(|heard| heard.at >= from)
            .cloned()
            .collect()
    }

    /// The frames of the upstream that could not be read (a log line on stdout).
    pub fn unreadable(&self) -> Vec<String> {
        self.lock().unreadable.clone()
    }

    /// How the link ended, when it did.
    pub fn ended(&self) -> Option<LinkEnd> {
        self.lock().ended.clone()
    }

    /// The errors of the connects that failed.
    pub fn connect_errors(&self) -> Vec<ConnectError> {
        self.lock().connect_errors.clone()
    }

    /// The URL of a URL elicitation that the link asked itself, once: `params`
    /// has its mode, elicitationId and URL exactly. An elicitation of the
    /// upstream, whatever its message, gets `None`.
    pub fn take_own_sign_in(&self, params: &Value) -> Option<String> {
        if params.get("mode").and_then(Value::as_str) != Some("url") {
            return None;
        }
        let id = params.get("elicitationId").and_then(Value::as_str)?;
        let url = params.get("url").and_then(Value::as_str)?;
        let mut seen = self.lock();
        let at = seen
            .own_questions
            .iter()
            .position(|(own_id, own_url)| own_id == id && own_url == url)?;
        Some(seen.own_questions.remove(at).1)
    }

    fn sent(&self, frame: &Outgoing) {
        if let Outgoing::Request { id, method, .. } = frame {
            self.lock()
                .sent
                .insert(*id, (method.clone(), Instant::now()));
        }
    }

    fn answered(&self, id: u64, outcome: Result<Map<String, Value>, Value>) {
        let mut seen = self.lock();
        if let Some((method, sent)) = seen.sent.remove(&id) {
            seen.answers.push(Answer {
                method,
                took: sent.elapsed(),
                outcome,
            });
        }
    }

    fn observe(&self, event: &UpstreamEvent) {
        match event {
            UpstreamEvent::Result(result) => {
                let outcome = result
                    .result()
                    .to_map()
                    .map_err(|error| Value::String(error.to_string()));
                self.answered(result.id(), outcome);
            }
            UpstreamEvent::Message(Message::Response(response)) => {
                if let Some(id) = response.id.as_u64() {
                    let outcome = match &response.outcome {
                        Outcome::Result(Value::Object(result)) => Ok(result.clone()),
                        Outcome::Result(other) => Err(other.clone()),
                        Outcome::Error(error) => Err(error.clone()),
                    };
                    self.answered(id, outcome);
                }
            }
            UpstreamEvent::Message(Message::Notification(notification)) => {
                let level = notification
                    .params
                    .as_ref()
                    .and_then(|params| params.get("level"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.lock().notifications.push(Heard {
                    method: notification.method.clone(),
                    level,
                    at: Instant::now(),
                });
            }
            UpstreamEvent::Unreadable { frame, .. } => {
                self.lock().unreadable.push(frame.clone());
            }
            UpstreamEvent::RequestFailed { id, failure } => {
                let mut seen = self.lock();
                if let Some((method, _)) = seen.sent.remove(id) {
                    seen.failures.push((method, failure.clone()));
                }
            }
            UpstreamEvent::Ended(end) => self.lock().ended = Some(end.clone()),
            UpstreamEvent::AskClient(question) if question.method == "elicitation/create" => {
                let text = |name: &str| {
                    question
                        .params
                        .get(name)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                if let (Some(id), Some(url)) = (text("elicitationId"), text("url")) {
                    self.lock().own_questions.push((id, url));
                }
            }
            _ => {}
        }
    }
}

/// The connector of the server start, tapped.
pub struct Tapped {
    pub inner: Arc<dyn Connector>,
    pub tap: Tap,
}

impl Connector for Tapped {
    fn connect(&self, context: LinkContext) -> Result<UpstreamLink, ConnectError> {
        let link = match self.inner.connect(context) {
            Ok(link) => link,
            Err(error) => {
                self.tap.lock().connect_errors.push(error.clone());
                return Err(error);
            }
        };
        let UpstreamLink {
            sender,
            events,
            control,
            discover_extra,
        } = link;
        let tap = self.tap.clone();
        let events = futures::stream::unfold((events, tap), |(mut events, tap)| async move {
            let event = events.next().await?;
            tap.observe(&event);
            Some((event, (events, tap)))
        });
        Ok(UpstreamLink {
            sender: Box::new(TappedSink {
                inner: sender,
                tap: self.tap.clone(),
            }),
            events: UpstreamEvents::new(events),
            control,
            discover_extra,
        })
    }
}

#[derive(Debug)]
struct TappedSink {
    inner: Box<dyn OutgoingSink>,
    tap: Tap,
}

impl OutgoingSink for TappedSink {
    fn send(&self, frame: Outgoing) {
        self.tap.sent(&frame);
        self.inner.send(frame);
    }
}
