//! The bridge's own session, in this process, in front of the upstream, with
//! doctor as VS Code's Local harness on its other side: what VS Code gets is what
//! the session writes, and the lines of the Output channel are those it logs.

use super::capture::Lines;
use super::local_harness::{LocalHarness, Notified, Reply, deadline};
use super::tap::{Tap, Tapped};
use crate::auth::browser::Opener;
use crate::config::{Config, UpstreamTarget};
use crate::serve::Serve;
use crate::upstream::Connector;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio::time::{Duration, Instant};

/// How long doctor waits for the list changes of a new listen stream.
const LISTEN_WAIT: Duration = Duration::from_secs(5);
/// How long a list request, a ping or the log level may take.
const REQUEST_LIMIT: Duration = Duration::from_secs(60);
/// How long the tool of `--call` may take.
const CALL_LIMIT: Duration = Duration::from_secs(120);
/// How long the session may take to stop after the end of its input: the
/// upstream's `shutdown_grace` twice (the termination, then the kill), and a margin.
const STOP_LIMIT: Duration = Duration::from_secs(10);
/// The most pages of one list that doctor asks for.
const MAX_PAGES: usize = 1000;

/// What the session run is asked to do beyond the lists.
#[derive(Debug, Clone)]
pub struct Plan {
    /// How long initialize may take: the discover time of the bridge, and a margin.
    pub initialize_limit: Duration,
    /// How long the bridge waits for server/discover: `--discover-timeout`, and
    /// `--sign-in-timeout` with it when a sign-in can start.
    pub discover_wait: Duration,
    /// `--call`: the tool and its arguments.
    pub call: Option<(String, Map<String, Value>)>,
    /// With `--sign-in`: how the URL of a later sign-in opens (`None` inside:
    /// `--no-browser`).
    pub sign_in_urls: Option<Option<Opener>>,
}

/// One list as VS Code gets it.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    /// The capability is declared: VS Code asks for the list.
    pub declared: bool,
    /// Every item of every page.
    pub items: Vec<Value>,
    pub pages: usize,
    /// The length of the lines of the results, in bytes.
    pub bytes: usize,
    /// The error of a page, when one failed (its error object).
    pub error: Option<Value>,
    /// The lines of the bridge during the list.
    pub mark: (usize, usize),
}

/// What happened in the session.
pub struct Run {
    /// The wait of the bridge for server/discover ([`Plan::discover_wait`]).
    pub discover_wait: Duration,
    pub initialize: Reply,
    pub initialize_took: Duration,
    /// The lines from the start of the session to the initialize result.
    pub initialize_lines: (usize, usize),
    pub prompts: Listed,
    pub tools: Listed,
    pub resources: Listed,
    pub templates: Listed,
    pub ping: Option<(Reply, Duration)>,
    /// The lists whose changes the initialize result declares.
    pub listen_declared: Vec<&'static str>,
    /// The notifications after `notifications/initialized`.
    pub notifications: Vec<Notified>,
    pub listen_lines: (usize, usize),
    pub call: Option<(String, Reply, (usize, usize))>,
    /// From the request of `--call` to its answer.
    pub call_window: Option<(Instant, Instant)>,
    /// When the harness sent `notifications/initialized`.
    pub initialized_at: Option<Instant>,
    /// The questions that the bridge asked doctor's harness.
    pub questions: Vec<String>,
    pub tap: Tap,
}

impl Run {
    /// The initialize result, when there is one.
    pub fn initialize_result(&self) -> Option<&Map<String, Value>> {
        match &self.initialize {
            Reply::Result(result, _) => Some(result),
            _ => None,
        }
    }
}

/// The lists that a capability declares with `listChanged`, by their
/// notification, and the notification of each.
pub const LIST_CHANGES: [(&str, &str); 3] = [
    ("tools", "notifications/tools/list_changed"),
    ("prompts", "notifications/prompts/list_changed"),
    ("resources", "notifications/resources/list_changed"),
];

/// Runs the session of `config` in front of `connector`.
pub async fn run(
    config: &Config,
    connector: Arc<dyn Connector>,
    plan: &Plan,
    lines: &Lines,
) -> Run {
    let tap = Tap::default();
    let tapped: Arc<dyn Connector> = Arc::new(Tapped {
        inner: connector,
        tap: tap.clone(),
    });
    let (client_input, session_input) = tokio::io::duplex(1 << 16);
    let (session_output, client_output) = tokio::io::duplex(1 << 16);
    let session_config = config.clone();
    let session = tokio::spawn(async move {
        Serve::new(&session_config, tapped)
            .run(session_input, session_output)
            .await
    });
    let mut harness = LocalHarness::new(client_input, client_output);
    harness.sign_in_urls = plan.sign_in_urls.clone();
    harness.tap = tap.clone();
    if let UpstreamTarget::Url(target) = &config.upstream {
        harness.server_url = target.url.to_string();
    }

    let start_mark = lines.mark();
    let started = Instant::now();
    let initialize = harness
        .request(
            "initialize",
            LocalHarness::initialize_params(),
            deadline(plan.initialize_limit),
        )
        .await;
    let initialize_took = started.elapsed();
    let mut run = Run {
        discover_wait: plan.discover_wait,
        initialize,
        initialize_took,
        initialize_lines: (start_mark, lines.mark()),
        prompts: Listed::default(),
        tools: Listed::default(),
        resources: Listed::default(),
        templates: Listed::default(),
        ping: None,
        listen_declared: Vec::new(),
        notifications: Vec::new(),
        listen_lines: (0, 0),
        call: None,
        call_window: None,
        initialized_at: None,
        questions: Vec::new(),
        tap,
    };
    if let Some(result) = run.initialize_result().cloned() {
        let capabilities = result
            .get("capabilities")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let declared = |name: &str| capabilities.get(name).is_some_and(Value::is_object);
        // The Local harness sets the level before notifications/initialized.
        if declared("logging") {
            let _ = harness
                .request(
                    "logging/setLevel",
                    object(json!({"level": "info"})),
                    deadline(REQUEST_LIMIT),
                )
                .await;
        }
        let listen_mark = lines.mark();
        harness.notify("notifications/initialized").await;
        let initialized_at = Instant::now();
        run.initialized_at = Some(initialized_at);
        run.listen_declared = LIST_CHANGES
            .iter()
            .filter(|(name, _)| {
                capabilities
                    .get(*name)
                    .and_then(|capability| capability.get("listChanged"))
                    == Some(&Value::Bool(true))
            })
            .map(|(name, _)| *name)
            .collect();
        // The Local harness lists the prompts, then the tools; the resources and
        // their templates when the user opens them.
        run.prompts = list_all(
            &mut harness,
            lines,
            "prompts/list",
            "prompts",
            declared("prompts"),
        )
        .await;
        run.tools = list_all(
            &mut harness,
            lines,
            "tools/list",
            "tools",
            declared("tools"),
        )
        .await;
        run.resources = list_all(
            &mut harness,
            lines,
            "resources/list",
            "resources",
            declared("resources"),
        )
        .await;
        run.templates = list_all(
            &mut harness,
            lines,
            "resources/templates/list",
            "resourceTemplates",
            declared("resources"),
        )
        .await;
        let pinged = Instant::now();
        let ping = harness
            .request("ping", Map::new(), deadline(REQUEST_LIMIT))
            .await;
        run.ping = Some((ping, pinged.elapsed()));
        let wanted: Vec<&str> = LIST_CHANGES
            .iter()
            .filter(|(name, _)| run.listen_declared.contains(name))
            .map(|(_, method)| *method)
            .collect();
        harness
            .wait(initialized_at + LISTEN_WAIT, |seen| {
                wanted
                    .iter()
                    .all(|method| seen.iter().any(|notified| notified.method == *method))
            })
            .await;
        run.listen_lines = (listen_mark, lines.mark());
        if let Some((name, arguments)) = &plan.call {
            let mark = lines.mark();
            let mut params = Map::new();
            params.insert("name".into(), name.clone().into());
            params.insert("arguments".into(), Value::Object(arguments.clone()));
            params.insert("_meta".into(), json!({"progressToken": "doctor-call"}));
            let called = Instant::now();
            let reply = harness
                .request("tools/call", params, deadline(CALL_LIMIT))
                .await;
            run.call_window = Some((called, Instant::now()));
            run.call = Some((name.clone(), reply, (mark, lines.mark())));
        }
        run.notifications = harness
            .notifications
            .iter()
            .filter(|notified| notified.at >= initialized_at)
            .cloned()
            .collect();
    }
    run.questions = harness.questions.clone();
    harness.close().await;
    // The session stops the upstream at the end of its input; one that does not
    // stop in time is stopped with the runtime.
    let _ = tokio::time::timeout(STOP_LIMIT, session).await;
    run
}

/// Every page of a list, as the Local harness asks for it.
async fn list_all(
    harness: &mut LocalHarness,
    lines: &Lines,
    method: &str,
    member: &str,
    declared: bool,
) -> Listed {
    let mut listed = Listed {
        declared,
        ..Listed::default()
    };
    let mark = lines.mark();
    let mut cursor: Option<Value> = None;
    while declared && listed.pages < MAX_PAGES {
        let mut params = Map::new();
        if let Some(cursor) = cursor.take() {
            params.insert("cursor".into(), cursor);
        }
        match harness
            .request(method, params, deadline(REQUEST_LIMIT))
            .await
        {
            Reply::Result(result, length) => {
                listed.pages += 1;
                listed.bytes += length;
                if let Some(Value::Array(items)) = result.get(member) {
                    listed.items.extend(items.iter().cloned());
                }
                // VS Code asks again while nextCursor is there (R4).
                match result.get("nextCursor") {
                    Some(next) => cursor = Some(next.clone()),
                    None => break,
                }
            }
            Reply::Error(error) => {
                listed.error = Some(error);
                break;
            }
            Reply::NoAnswer => {
                listed.error = Some(json!({"message": "no answer in time"}));
                break;
            }
        }
    }
    listed.mark = (mark, lines.mark());
    listed
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}
