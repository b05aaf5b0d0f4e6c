//! [`SimClient`]: one simulated client of VS Code driving a server over a [`StdioPeer`].
//!
//! The client is single-task and event-driven: every wait pumps the server's
//! stdout, answers the server's requests by the [`AnswerPolicy`] at once (as
//! the real clients do while a call is in flight), and reacts to notifications
//! as its profile does (Local relists at once on a list change; Copilot relists
//! after the result). Everything that happens goes to an event log.
//!
//! Layout: `frames` (frame builders in each client's key order), `answering`
//! (answers to server requests), `schema_check` (R6), `listing` (paging and
//! the nextCursor loop), `calls` (tools/call, cancellation, MRTR rounds),
//! `tool_tasks` (Local tool calls run as tasks), `task_manager` (server
//! requests the Local harness runs as tasks), `opening` (the opening
//! sequences), `stop` (the stop sequences), `events`.

mod answering;
mod calls;
pub mod events;
pub mod frames;
mod listing;
mod opening;
pub mod schema_check;
pub mod stop;
mod task_manager;
mod tool_tasks;

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::{Duration, Instant};

pub use answering::{COPILOT_SAMPLING_CANCELLED, SAMPLING_REFUSED_CODE, SAMPLING_REFUSED_MESSAGE};
pub use calls::CallOutcome;
pub use events::{Event, EventKind};
pub use listing::{ListFailure, ListKind, Listing};
pub use opening::{INITIALIZE_WAIT_LOG_EVERY, INITIALIZE_WAIT_LOG_LINE};
pub use stop::{SecondStop, StopReport, StopStep, StopTimers};

use crate::answers::AnswerPolicy;
use crate::process::{PeerError, Received, StdioPeer};
use crate::profile::{Harness, Profile};

/// Time limits and bounds of a simulated session.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// How long to wait for the initialize result (VS Code waits forever and
    /// logs every 5 s; a simulator needs a bound).
    pub initialize_timeout: Duration,
    /// copilot-cli's time limit for `server/discover` (observed ≈ 9.7 s).
    pub discover_timeout: Duration,
    /// How long to wait for other responses.
    pub request_timeout: Duration,
    /// Local: after this many pages in a row with the same `nextCursor`, the
    /// list is reported as a loop (VS Code would ask forever, R4).
    pub cursor_loop_bound: usize,
    /// At most this many pages in one list.
    pub max_pages: usize,
    /// Modern path: at most this many rounds of one request.
    pub max_input_rounds: usize,
    /// Local: apply the schema checks of R6 to tool calls (a blocked list stops calls).
    pub enforce_schema_checks: bool,
    /// The stop timers.
    pub stop: StopTimers,
    /// Copilot: the wait between `notifications/initialized` and the first
    /// `tools/list` ([`Profile::tools_list_delay`]); zero with [`SimOptions::no_delay`].
    pub tools_list_delay: Duration,
    /// Local: how long a tool call that runs as a task may take (VS Code waits
    /// without end).
    pub task_timeout: Duration,
}

impl SimOptions {
    /// The defaults of `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        Self {
            initialize_timeout: Duration::from_secs(60),
            discover_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            cursor_loop_bound: 10,
            max_pages: 1000,
            max_input_rounds: 10,
            enforce_schema_checks: true,
            stop: StopTimers::of(profile.harness()),
            tools_list_delay: profile.tools_list_delay(),
            task_timeout: Duration::from_secs(300),
        }
    }

    /// Without the client's pauses (copilot-cli's wait before `tools/list`):
    /// for runs that measure the server or must be quick, not for frame timing.
    pub fn no_delay(mut self) -> Self {
        self.tools_list_delay = Duration::ZERO;
        self
    }
}

/// Which revision the session speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WirePath {
    /// `initialize`, revision 2025-11-25.
    Legacy,
    /// No handshake, `_meta` on every request, revision 2026-07-28.
    Modern,
}

/// What the opening sequence negotiated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Negotiated {
    /// Legacy or modern.
    pub path: WirePath,
    /// The protocolVersion of the initialize result (VS Code does not check
    /// it), or `2026-07-28` on the modern path.
    pub protocol_version: Option<String>,
    /// The server capabilities.
    pub capabilities: Value,
    /// serverInfo (modern: `_meta["io.modelcontextprotocol/serverInfo"]`).
    pub server_info: Value,
    /// The instructions.
    pub instructions: Option<String>,
    /// Copilot: how `server/discover` ended.
    pub discover: Option<String>,
}

/// Why a simulated session failed.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The pipe to the server failed.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// The server's stdout ended.
    #[error("the server closed its stdout (it exited or crashed)")]
    ServerClosed,
    /// No response in time.
    #[error("no response to {method} (id {id}) in {after:?}")]
    Timeout {
        /// The method.
        method: String,
        /// The id.
        id: i64,
        /// The limit.
        after: Duration,
    },
    /// An error response where the client needs a result, shown as VS Code shows it.
    #[error("{method} failed: {display}")]
    Rpc {
        /// The method.
        method: String,
        /// `MPC <code>: <message>`.
        display: String,
        /// The error object.
        error: Value,
    },
    /// A response that the client cannot use.
    #[error("{method}: {message}")]
    Invalid {
        /// The method.
        method: String,
        /// Why.
        message: String,
    },
    /// The Local harness dropped its own request because the server sent
    /// `notifications/cancelled` with its id (the integer id quirk).
    #[error("request {id} was dropped: the server sent notifications/cancelled with its id")]
    DroppedByServer {
        /// The id.
        id: i64,
    },
    /// A list did not complete (an error response, or the nextCursor loop of R4).
    #[error(transparent)]
    List(#[from] ListFailure),
    /// An operation that needs `start()` first.
    #[error("the session is not started")]
    NotStarted,
}

/// What a pending request of the client is for.
#[derive(Debug)]
enum Pending {
    /// A caller waits for the response in `done`.
    Await { method: String },
    /// A page of a Local list; the paging state travels with the request.
    ListPage(listing::Paging),
    /// `logging/setLevel`: the client does not wait for it.
    SetLevel,
    /// Cancelled by the client: a late response is ignored.
    Cancelled,
    /// `server/discover` after its time limit: a late answer is ignored (C4).
    LateDiscover,
    /// The modern listen stream.
    Listen,
}

/// One simulated client session.
pub struct SimClient {
    profile: Profile,
    peer: StdioPeer,
    policy: AnswerPolicy,
    counts: answering::Counts,
    options: SimOptions,
    next_id: i64,
    next_progress: i64,
    pending: HashMap<i64, Pending>,
    done: HashMap<i64, Value>,
    dropped: HashSet<i64>,
    events: Vec<Event>,
    negotiated: Option<Negotiated>,
    local_meta: frames::LocalMeta,
    lists: listing::Lists,
    tools_stale: bool,
    roots_asked: bool,
    listen_id: Option<i64>,
    unanswered: Vec<Value>,
    stop_report: Option<StopReport>,
    second_stop: SecondStop,
    task_manager: task_manager::TaskManager,
    watched_tasks: HashMap<String, tool_tasks::WatchedTask>,
    calls: HashMap<i64, String>,
    modern_meta: Value,
}

impl SimClient {
    /// A client of `profile` on `peer`, answering by `policy`.
    pub fn new(profile: Profile, peer: StdioPeer, policy: AnswerPolicy) -> Self {
        Self::with_options(profile, peer, policy, SimOptions::for_profile(profile))
    }

    /// A client with explicit options.
    pub fn with_options(
        profile: Profile,
        peer: StdioPeer,
        policy: AnswerPolicy,
        options: SimOptions,
    ) -> Self {
        Self {
            profile,
            peer,
            policy,
            counts: answering::Counts::default(),
            options,
            next_id: profile.first_id(),
            next_progress: 0,
            pending: HashMap::new(),
            done: HashMap::new(),
            dropped: HashSet::new(),
            events: Vec::new(),
            negotiated: None,
            local_meta: frames::LocalMeta::new(),
            lists: listing::Lists::default(),
            tools_stale: false,
            roots_asked: false,
            listen_id: None,
            unanswered: Vec::new(),
            stop_report: None,
            second_stop: SecondStop::new(),
            task_manager: task_manager::TaskManager::default(),
            watched_tasks: HashMap::new(),
            calls: HashMap::new(),
            modern_meta: frames::modern_meta_base(profile),
        }
    }

    /// Starts `command` and makes a client of `profile` for it.
    pub fn spawn(
        profile: Profile,
        command: &[String],
        policy: AnswerPolicy,
    ) -> Result<Self, SimError> {
        Ok(Self::new(profile, StdioPeer::spawn(command)?, policy))
    }

    /// The profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The options (tests shorten the timers here).
    pub fn options_mut(&mut self) -> &mut SimOptions {
        &mut self.options
    }

    /// The process.
    pub fn peer(&self) -> &StdioPeer {
        &self.peer
    }

    /// The process, mutable (for raw sends in tests).
    pub fn peer_mut(&mut self) -> &mut StdioPeer {
        &mut self.peer
    }

    /// The answer policy, mutable.
    pub fn policy_mut(&mut self) -> &mut AnswerPolicy {
        &mut self.policy
    }

    /// The event log.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// What `start()` negotiated.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.as_ref()
    }

    /// The tools the client shows (after the R6 checks on the Local harness).
    pub fn tools(&self) -> &[Value] {
        &self.lists.tools.shown
    }

    /// The names of the tools the client shows.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools().iter().map(schema_check::tool_name).collect()
    }

    /// The prompts the client shows.
    pub fn prompts(&self) -> &[Value] {
        &self.lists.prompts.shown
    }

    /// The server requests left without an answer.
    pub fn unanswered(&self) -> &[Value] {
        &self.unanswered
    }

    /// How the stop sequence went, after `stop()`.
    pub fn stop_report(&self) -> Option<&StopReport> {
        self.stop_report.as_ref()
    }

    /// VS Code's second `stop()`, for another task to call while
    /// [`SimClient::stop`] runs: the Local sequence then kills the tree at once.
    pub fn second_stop(&self) -> SecondStop {
        self.second_stop.clone()
    }

    /// Runs the profile's stop sequence and reports how long the server took.
    pub async fn stop(&mut self) -> StopReport {
        let report = stop::stop(
            &mut self.peer,
            self.profile.harness(),
            self.options.stop,
            &self.second_stop,
        )
        .await;
        self.log(EventKind::Stopped {
            report: report.clone(),
        });
        self.stop_report = Some(report.clone());
        report
    }

    /// Processes frames for `duration` (answers requests, follows list changes).
    pub async fn idle(&mut self, duration: Duration) -> Result<(), SimError> {
        let deadline = Instant::now() + duration;
        while Instant::now() < deadline {
            self.pump_once(deadline).await?;
        }
        Ok(())
    }

    /// Processes frames until none arrives for `quiet` (or `max` passed).
    pub async fn settle(&mut self, quiet: Duration, max: Duration) -> Result<(), SimError> {
        let end = Instant::now() + max;
        loop {
            let deadline = (Instant::now() + quiet).min(end);
            if !self.pump_once(deadline).await? || Instant::now() >= end {
                return Ok(());
            }
        }
    }

    /// Local: changes the roots. After the server has asked once, VS Code sends
    /// `notifications/roots/list_changed` one time and waits for the next roots/list.
    pub async fn set_roots(&mut self, roots: Vec<crate::answers::Root>) -> Result<(), SimError> {
        self.policy.roots = roots;
        if self.profile.is_local() && self.roots_asked {
            self.roots_asked = false;
            let frame =
                frames::notification(Harness::Local, "notifications/roots/list_changed", None);
            self.peer.send(&frame).await?;
            self.log(EventKind::RootsChanged);
        }
        Ok(())
    }

    /// Local: a change of the Output channel's log level sends another setLevel.
    pub async fn set_log_level(&mut self, level: &str) -> Result<(), SimError> {
        let id = self.take_id();
        let frame = frames::request(id, "logging/setLevel", json!({"level": level}));
        self.pending.insert(id, Pending::SetLevel);
        self.peer.send(&frame).await?;
        Ok(())
    }

    fn take_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn take_progress(&mut self) -> i64 {
        let token = self.next_progress;
        self.next_progress += 1;
        token
    }

    /// The harness's answer to a server request, by the answer policy.
    fn answer_by_policy(&mut self, method: &str, params: &Value) -> answering::Answer {
        answering::answer(
            self.profile.harness(),
            &self.policy,
            &mut self.counts,
            method,
            params,
        )
    }

    fn log(&mut self, kind: EventKind) {
        let t_ms = Instant::now()
            .saturating_duration_since(self.peer.started())
            .as_secs_f64()
            * 1000.0;
        self.events.push(Event { t_ms, kind });
    }

    fn is_modern(&self) -> bool {
        self.negotiated
            .as_ref()
            .is_some_and(|n| n.path == WirePath::Modern)
    }

    /// Sends a request whose response a caller will take from `done`.
    async fn send_awaited(&mut self, id: i64, method: &str, params: Value) -> Result<(), SimError> {
        let frame = frames::request(id, method, params);
        self.pending.insert(
            id,
            Pending::Await {
                method: method.to_owned(),
            },
        );
        self.peer.send(&frame).await?;
        Ok(())
    }

    /// Waits for the response to `id`, pumping everything else meanwhile.
    async fn wait_response(&mut self, id: i64, timeout: Duration) -> Result<Value, SimError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(response) = self.done.remove(&id) {
                return Ok(response);
            }
            if self.dropped.remove(&id) {
                return Err(SimError::DroppedByServer { id });
            }
            if Instant::now() >= deadline {
                let method = match self.pending.get(&id) {
                    Some(Pending::Await { method }) => method.clone(),
                    _ => String::from("request"),
                };
                return Err(SimError::Timeout {
                    method,
                    id,
                    after: timeout,
                });
            }
            self.pump_once(deadline).await?;
        }
    }

    /// Handles the next frame; `Ok(false)` when none came before `deadline`.
    async fn pump_once(&mut self, deadline: Instant) -> Result<bool, SimError> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match self.peer.recv(remaining).await {
            Some(received) => {
                self.handle(received).await?;
                Ok(true)
            }
            None if self.peer.stdout_closed() => Err(SimError::ServerClosed),
            None => Ok(false),
        }
    }

    async fn handle(&mut self, received: Received) -> Result<(), SimError> {
        if let Some(line) = received.raw {
            self.log(EventKind::NotJson { line });
            return Ok(());
        }
        let frame = received.frame;
        let has_method = frame.get("method").is_some_and(Value::is_string);
        let id = frame.get("id").filter(|id| !id.is_null());
        match (has_method, id) {
            (true, Some(_)) => self.answer_server_request(frame).await,
            (true, None) => self.handle_notification(frame).await,
            (false, Some(_)) => self.handle_response(frame).await,
            (false, None) => {
                self.log(EventKind::Unexpected { frame });
                Ok(())
            }
        }
    }

    async fn handle_response(&mut self, frame: Value) -> Result<(), SimError> {
        let id_value = frame.get("id").cloned().unwrap_or(Value::Null);
        let Some(id) = id_value.as_i64() else {
            self.log(EventKind::LateResponse {
                id: id_value,
                why: "the client never sends string ids".into(),
            });
            return Ok(());
        };
        match self.pending.remove(&id) {
            Some(Pending::Await { .. }) => {
                self.done.insert(id, frame);
            }
            Some(Pending::ListPage(paging)) => self.on_list_page(paging, frame).await?,
            Some(Pending::SetLevel) => {
                if let Some(error) = frame.get("error") {
                    self.log(EventKind::Notification {
                        method: "logging/setLevel error".into(),
                        params: error.clone(),
                    });
                }
            }
            Some(Pending::Cancelled) => self.log(EventKind::LateResponse {
                id: id_value,
                why: "the client cancelled the request".into(),
            }),
            Some(Pending::LateDiscover) => self.log(EventKind::LateResponse {
                id: id_value,
                why: "server/discover answered after its time limit (C4)".into(),
            }),
            Some(Pending::Listen) => {
                self.listen_id = None;
                self.log(EventKind::Notification {
                    method: "subscriptions/listen ended".into(),
                    params: frame
                        .get("result")
                        .or(frame.get("error"))
                        .cloned()
                        .unwrap_or_default(),
                });
            }
            None => self.log(EventKind::LateResponse {
                id: id_value,
                why: "no request of the client has this id".into(),
            }),
        }
        Ok(())
    }

    async fn answer_server_request(&mut self, frame: Value) -> Result<(), SimError> {
        let id = frame.get("id").cloned().unwrap_or(Value::Null);
        let method = frame
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let params = frame.get("params").cloned().unwrap_or_else(|| json!({}));
        self.log(EventKind::Asked {
            id: id.clone(),
            method: method.clone(),
            summary: answering::summary(&method, &params),
        });
        if method == "roots/list" {
            self.roots_asked = true;
        }
        let (answer, task_update) = match self.answer_by_task_manager(&method, &params) {
            Some(by_task_manager) => by_task_manager,
            None => (self.answer_by_policy(&method, &params), None),
        };
        let (response, logged) = match answer {
            answering::Answer::Result(result) => {
                (Some(frames::result_response(&id, result.clone())), result)
            }
            answering::Answer::Error { code, message } => (
                Some(frames::error_response(&id, code, &message)),
                json!({"error": {"code": code, "message": message}}),
            ),
            answering::Answer::None(why) => {
                self.unanswered.push(frame);
                self.log(EventKind::NotAnswered { id, method, why });
                return Ok(());
            }
        };
        if let Some(response) = response {
            self.peer.send(&response).await?;
        }
        self.log(EventKind::Answered {
            id,
            method,
            answer: logged,
        });
        if let Some(task) = task_update {
            self.announce_task(task).await?;
        }
        Ok(())
    }

    async fn handle_notification(&mut self, frame: Value) -> Result<(), SimError> {
        let method = frame
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let params = frame.get("params").cloned().unwrap_or(Value::Null);
        match method.as_str() {
            "notifications/tools/list_changed" => {
                self.log(EventKind::ListChanged {
                    list: "tools".into(),
                });
                if self.profile.is_local() {
                    // "Tool list changed, refreshing tools...": a new list at once.
                    self.begin_local_list(ListKind::Tools).await?;
                } else {
                    self.tools_stale = true;
                }
            }
            "notifications/prompts/list_changed" => {
                self.log(EventKind::ListChanged {
                    list: "prompts".into(),
                });
                if self.profile.is_local() {
                    self.begin_local_list(ListKind::Prompts).await?;
                }
            }
            "notifications/resources/list_changed" => self.log(EventKind::ListChanged {
                list: "resources".into(),
            }),
            "notifications/tasks/status" => self.on_task_status(params),
            "notifications/cancelled" => {
                let request_id = params.get("requestId").cloned().unwrap_or(Value::Null);
                self.on_server_cancel(request_id);
            }
            _ => self.log(EventKind::Notification { method, params }),
        }
        Ok(())
    }

    /// Local: the pending request of VS Code with that id is dropped (integer
    /// ids of both sides collide; seed quirk table). A cancel of a request that
    /// the client received is ignored. Copilot and the modern path: only a
    /// cancel of the listen stream means something.
    fn on_server_cancel(&mut self, request_id: Value) {
        let own = request_id.as_i64();
        if let Some(id) = own
            && self.listen_id == Some(id)
        {
            self.pending.remove(&id);
            self.listen_id = None;
            self.log(EventKind::Notification {
                method: "subscriptions/listen cancelled by the server".into(),
                params: json!({"requestId": id}),
            });
            return;
        }
        if self.profile.is_local()
            && let Some(id) = own
            && let Some(pending) = self.pending.remove(&id)
        {
            match pending {
                Pending::ListPage(paging) => self.lists.fail_dropped(paging),
                Pending::Await { .. } => {
                    self.dropped.insert(id);
                }
                _ => {}
            }
            self.log(EventKind::OwnRequestDropped { id });
            return;
        }
        self.log(EventKind::CancelIgnored { request_id });
    }
}
