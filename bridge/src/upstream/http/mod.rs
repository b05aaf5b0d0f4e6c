//! The upstream server at a URL, over Streamable HTTP of revision 2026-07-28 (M4).
//!
//! Each request of the session is its own POST, served by its own task on the
//! session's tracker: its answer (a JSON body, or the events of an SSE stream up to
//! the response) comes back as lines, the same events a stdio link sends. A
//! `notifications/cancelled` of the session closes that request's response
//! stream, which is the cancellation of this transport; it is never POSTed. A
//! failed request fails alone ([`UpstreamEvent::RequestFailed`]): an upstream at
//! a URL never stops the bridge.

mod exchange;
pub mod headers;
pub mod sse;
mod user_side;

use super::{
    ClientState, ConnectError, Connector, LinkContext, Outgoing, UpstreamControl, UpstreamEvent,
    UpstreamLink,
};
use crate::auth::environment::SignInEnvironment;
use crate::auth::receiver::Lingering;
use crate::auth::sign_in::Authorizer;
use crate::auth::store::{ClientOption, EntryKey, TokenStore};
use crate::catalogue::{BridgeDebug, RequestWarning, SignInInfo};
use crate::config::{HttpTarget, StaticHeader};
use crate::log::emit;
use crate::net::ProxyEnvironment;
use exchange::ToolHeaders;
pub use exchange::base_headers;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

/// Makes a link to the upstream at `target.url` at each connect.
#[derive(Debug, Clone)]
pub struct HttpConnector {
    target: HttpTarget,
    proxies: ProxyEnvironment,
    /// The sign-in, unless a static Authorization header disables it.
    sign_in: Option<SignIn>,
    /// The receiver of the last sign-in, for the links of every connect.
    lingering: Lingering,
}

/// What the sign-in of a link needs from the process: its store, the secret of
/// `--client-id`, and the environment it runs in.
#[derive(Debug, Clone)]
pub struct SignIn {
    pub store: Arc<dyn TokenStore>,
    pub environment: SignInEnvironment,
}

impl HttpConnector {
    pub fn new(target: HttpTarget, proxies: ProxyEnvironment) -> Self {
        Self {
            target,
            proxies,
            sign_in: None,
            lingering: Lingering::default(),
        }
    }

    /// The sign-in for a 401 or a 403 (M4), unless the command line gave a
    /// static Authorization header.
    pub fn with_sign_in(mut self, sign_in: SignIn) -> Self {
        let static_authorization = self
            .target
            .headers
            .iter()
            .any(|header| header.name == "authorization");
        if !static_authorization {
            self.sign_in = Some(sign_in);
        }
        self
    }

    fn authorizer(&self, client: &reqwest::Client) -> Option<Arc<Authorizer>> {
        let sign_in = self.sign_in.as_ref()?;
        let mut settings = sign_in.environment.settings(&self.target);
        settings.lingering = self.lingering.clone();
        Some(Arc::new(Authorizer::new(
            settings,
            client.clone(),
            sign_in.store.clone(),
            entry_key(&self.target),
        )))
    }
}

/// The entry of the token store that the sign-in of `target` keeps: its URL, its
/// account and its redirect URI, with the client option that changes the client.
pub fn entry_key(target: &HttpTarget) -> EntryKey {
    let options = &target.sign_in;
    EntryKey::new(
        target.url.as_str(),
        &options.account,
        &crate::auth::receiver::redirect_uri(options.redirect_port),
        match (&options.client_id, &options.client_metadata_url) {
            (Some(id), _) => ClientOption::ClientId(id),
            (None, Some(url)) => ClientOption::MetadataDocument(url.as_str()),
            (None, None) => ClientOption::Default,
        },
    )
}

impl Connector for HttpConnector {
    fn connect(&self, context: LinkContext) -> Result<UpstreamLink, ConnectError> {
        // The connections come with the first request, in its own task.
        let client = crate::net::build_client(&self.target.extra_roots, &self.proxies)
            .map_err(|crate::net::ConfigurationError(error)| ConnectError::Configuration(error))?;
        let auth = self.authorizer(&client);
        let discover_extra = match &auth {
            Some(auth) if auth.sign_in_can_start() => self.target.sign_in.sign_in_timeout,
            _ => Duration::ZERO,
        };
        let shared = Arc::new(Shared {
            client,
            url: self.target.url.clone(),
            headers: static_headers(&self.target.headers),
            max_response_bytes: self.target.max_response_bytes,
            tools: Mutex::default(),
            auth,
            client_state: context.client.clone(),
        });
        let (sender, frames) = mpsc::unbounded_channel();
        let (event_sender, events) = mpsc::channel(256);
        let (done, finished) = watch::channel(false);
        let stop = context.stop.child_token();
        context.tasks.spawn(dispatch(
            shared,
            frames,
            event_sender,
            context.clone(),
            stop.clone(),
            done,
        ));
        Ok(UpstreamLink {
            sender: Box::new(sender),
            events: events.into(),
            control: Arc::new(HttpControl { stop, finished }),
            discover_extra,
        })
    }
}

/// What the tasks of one link share.
#[derive(Debug)]
struct Shared {
    client: reqwest::Client,
    url: url::Url,
    headers: Vec<(HeaderName, HeaderValue)>,
    max_response_bytes: usize,
    /// The `x-mcp-header`s of the tools, as the last tools/list that listed each
    /// tool gave them; a tool without any has no entry.
    tools: Mutex<ToolHeaders>,
    auth: Option<Arc<Authorizer>>,
    client_state: watch::Receiver<ClientState>,
}

impl Shared {
    /// VS Code's side, for a sign-in that asks it.
    fn user_side(&self, events: &mpsc::Sender<UpstreamEvent>) -> user_side::LinkUserSide {
        user_side::LinkUserSide {
            state: self.client_state.clone(),
            events: events.clone(),
        }
    }

    /// The headers of a POST of `method`: the revision's, then the static ones.
    fn request_headers(&self, method: &str) -> HeaderMap {
        let mut map = exchange::base_headers(method);
        for (name, value) in &self.headers {
            map.append(name.clone(), value.clone());
        }
        map
    }

    fn param_headers(&self, tool: &str) -> Vec<headers::ParamHeader> {
        self.tools
            .lock()
            .ok()
            .and_then(|tools| tools.get(tool).cloned())
            .unwrap_or_default()
    }

    /// A tools/list response: the link learns the `x-mcp-header`s of its tools, and
    /// the tools whose annotations are not valid leave the list (Streamable HTTP,
    /// "Schema Extension").
    fn learn_tools(&self, line: Vec<u8>, id: u64) -> Vec<u8> {
        // A list without annotations still takes away the headers of a tool that
        // had them.
        let knows_headers = self.tools.lock().is_ok_and(|tools| !tools.is_empty());
        if !knows_headers && !headers::may_have_param_headers(&line) {
            return line;
        }
        let Ok(mut frame) = serde_json::from_slice::<Value>(&line) else {
            return line;
        };
        if frame.get("id").and_then(Value::as_u64) != Some(id) {
            return line;
        }
        let Some(result) = frame.get_mut("result").and_then(Value::as_object_mut) else {
            return line;
        };
        let (learned, warnings) = headers::learn_tools(result);
        for left_out in &warnings {
            emit!(RequestWarning: left_out.log_line());
        }
        if let Ok(mut tools) = self.tools.lock() {
            // A page changes the tools it lists, and only those: a later page adds
            // to the first.
            for (tool, headers) in learned {
                if headers.is_empty() {
                    tools.remove(&tool);
                } else {
                    tools.insert(tool, headers);
                }
            }
        }
        if warnings.is_empty() {
            line
        } else {
            serde_json::to_vec(&frame).unwrap_or(line)
        }
    }
}

/// The static headers, checked by the command line already.
pub fn static_headers(headers: &[StaticHeader]) -> Vec<(HeaderName, HeaderValue)> {
    headers
        .iter()
        .filter_map(|header| {
            let name = HeaderName::from_bytes(header.name.as_bytes()).ok()?;
            let mut value = HeaderValue::from_str(header.value()).ok()?;
            value.set_sensitive(true);
            Some((name, value))
        })
        .collect()
}

/// Takes the frames of the session: each request to its own task, each
/// cancellation to the task of its request.
async fn dispatch(
    shared: Arc<Shared>,
    mut frames: mpsc::UnboundedReceiver<Outgoing>,
    events: mpsc::Sender<UpstreamEvent>,
    context: LinkContext,
    stop: CancellationToken,
    done: watch::Sender<bool>,
) {
    let mut requests: HashMap<u64, AbortHandle> = HashMap::new();
    let (ended, mut ends) = mpsc::unbounded_channel::<u64>();
    let mut client = context.client.clone();
    let mut told_no_url_elicitation = shared.auth.is_none();
    loop {
        let frame = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            Ok(()) = client.changed(), if !told_no_url_elicitation => {
                let state = *client.borrow_and_update();
                if state.initialized {
                    told_no_url_elicitation = true;
                    if !state.url_elicitation {
                        emit!(SignInInfo::NoUrlElicitation);
                    }
                }
                continue;
            }
            Some(id) = ends.recv() => {
                requests.remove(&id);
                continue;
            }
            frame = frames.recv() => match frame {
                Some(frame) => frame,
                // The session let go of the link: the end of its input.
                None => break,
            },
        };
        match frame {
            Outgoing::Request { id, .. } => {
                let (shared, events, ended) = (shared.clone(), events.clone(), ended.clone());
                let task = context.tasks.spawn(async move {
                    exchange::exchange(&shared, frame, events).await;
                    let _ = ended.send(id);
                });
                requests.insert(id, task.abort_handle());
            }
            Outgoing::Notification {
                method: "notifications/cancelled",
                params,
            } => {
                // Closing the response stream is the cancellation of this transport.
                let id = params.get("requestId").and_then(Value::as_u64);
                if let Some(task) = id.and_then(|id| requests.remove(&id)) {
                    task.abort();
                }
            }
            Outgoing::Notification { method, .. } => {
                emit!(BridgeDebug::NotSentOverHttp { method });
            }
        }
    }
    for task in requests.into_values() {
        task.abort();
    }
    done.send_replace(true);
}

/// Stops a link: its requests end, and its connections close with the client.
#[derive(Debug)]
struct HttpControl {
    stop: CancellationToken,
    finished: watch::Receiver<bool>,
}

#[async_trait::async_trait]
impl UpstreamControl for HttpControl {
    async fn shutdown(&self, grace: Duration) {
        let mut finished = self.finished.clone();
        if tokio::time::timeout(grace, finished.wait_for(|done| *done))
            .await
            .is_err()
        {
            self.stop.cancel();
        }
    }

    fn kill_now(&self) {
        self.stop.cancel();
    }
}
