//! What the session's initialize showed: whether the command started and kept
//! its stdout clean (stdio), how the upstream answered server/discover (its
//! revisions, the time against `--discover-timeout`), the capabilities and the
//! name that VS Code gets, and for a server of an older revision, that VS Code
//! can use it without the bridge.

use super::Context;
use super::local_harness::{CLIENT_NAME, Reply};
use super::report::{Check, Finding, Report, Status, counted};
use super::session::Run;
use super::texts::{Section, connect_line, is_router_warning};
use crate::catalogue::Cause;
use crate::config::UpstreamTarget;
use crate::rules::SERVER_INFO_KEY;
use crate::rules::initialize::{DiscoverRefusal, check_discover};
use crate::rules::meta::{RequestMeta, SharedMeta};
use crate::upstream::{Connector, LinkContext, Outgoing, RequestFailure, UpstreamEvent};
use crate::wire::frame::{Message, Outcome};
use crate::wire::shallow::ShallowObject;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio::time::{Duration, Instant, timeout_at};

/// How long the probe of an older revision may take.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// The cause of an error that the bridge gave VS Code.
pub fn cause_of(error: &Value) -> Option<Cause> {
    let name = error.get("data")?.get("cause")?.as_str()?;
    Cause::ALL.into_iter().find(|cause| cause.name() == name)
}

/// Whether a cause is one of the sign-in's.
pub fn is_sign_in_cause(cause: Cause) -> bool {
    let first = Cause::ALL
        .iter()
        .position(|c| *c == Cause::SignInFailed)
        .unwrap_or(Cause::ALL.len());
    Cause::ALL
        .iter()
        .position(|c| *c == cause)
        .is_some_and(|at| at >= first)
}

/// The findings of the start: the command (stdio), the revision, the capabilities
/// and the initialize result. `connector` is the session's, for the probe of an
/// older revision.
pub async fn findings(
    context: &Context<'_>,
    run: &Run,
    connector: &dyn Connector,
    report: &mut Report,
) {
    let stdio = matches!(context.config.upstream, UpstreamTarget::Command { .. });
    let lines = context.lines.warnings_between(run.initialize_lines);
    if stdio {
        command_findings(context, run, report);
    }
    if report.status(Check::Command) == Some(Status::Fail) {
        skip_after_start(report, "the upstream command did not start or did not stay");
        return;
    }
    match &run.initialize {
        Reply::Result(result, _) => {
            discover_passed(context, run, report);
            capabilities(run, result, report);
            initialize_result(context, run, result, report);
        }
        Reply::Error(error) => {
            let cause = cause_of(error);
            if cause.is_some_and(is_sign_in_cause) {
                // The sign-in's own finding tells it (sign_in.rs).
                skip_after_start(report, "the sign-in did not complete");
                return;
            }
            let older = if cause == Some(Cause::DiscoverFailed) && maybe_older(run) {
                older_revision(connector).await
            } else {
                None
            };
            let finding = match older {
                Some(version) => Finding::fail(
                    Check::Discover,
                    format!(
                        "the server speaks revision {version}, not 2026-07-28: VS Code can use it directly, without the bridge"
                    ),
                )
                .cause(Cause::DiscoverFailed)
                .advice(
                    Section::Revision,
                    direct_entry(&context.config.upstream),
                ),
                None => {
                    let mut finding = Finding::fail(
                        Check::Discover,
                        "VS Code gets an error for initialize: the upstream did not give a discover result that the bridge can use",
                    )
                    .advice(Section::Start, discover_advice(run, cause));
                    if let Some(cause) = cause {
                        finding = finding.cause(cause);
                    }
                    finding
                }
            };
            report.add(finding.lines(lines));
            for check in [Check::Capabilities, Check::Initialize] {
                report.add(Finding::skipped(check, "initialize failed"));
            }
        }
        Reply::NoAnswer => {
            report.add(
                Finding::fail(
                    Check::Discover,
                    format!(
                        "no answer to initialize in {} s: VS Code shows \"Waiting for server to respond to `initialize` request...\"",
                        run.initialize_took.as_secs()
                    ),
                )
                .lines(lines)
                .advice(
                    Section::Start,
                    "Read the lines of the upstream server; raise --discover-timeout when it is slow to start.",
                ),
            );
            for check in [Check::Capabilities, Check::Initialize] {
                report.add(Finding::skipped(check, "initialize got no answer"));
            }
        }
    }
}

/// Marks the checks after the start as not run.
pub fn skip_after_start(report: &mut Report, why: &str) {
    for check in [Check::Discover, Check::Capabilities, Check::Initialize] {
        if !report.has(check) {
            report.add(Finding::skipped(check, why));
        }
    }
}

/// reach.command and reach.stdout: the command started, stayed, and wrote only
/// JSON-RPC on stdout (R7).
fn command_findings(context: &Context<'_>, run: &Run, report: &mut Report) {
    let UpstreamTarget::Command { program, args } = &context.config.upstream else {
        return;
    };
    let program = program.to_string_lossy();
    let errors = run.tap.connect_errors();
    if let Some(error) = errors.first() {
        report.add(
            Finding::fail(Check::Command, format!("the command {program} did not start"))
                .line(connect_line(error))
                .cause(error.cause())
                .advice(
                    Section::Start,
                    "Write the absolute path of an executable after -- (VS Code starts it without a shell, with its own PATH).",
                ),
        );
    } else if let (Some(end), None) = (run.tap.ended(), run.initialize_result()) {
        report.add(
            Finding::fail(
                Check::Command,
                format!(
                    "the command {program} stopped before it answered server/discover: {}",
                    end.detail()
                ),
            )
            .details(stderr_details(context))
            .lines(context.lines.warnings_between(run.initialize_lines))
            .cause(Cause::UpstreamExited)
            .advice(
                Section::Start,
                "Read what the command wrote on stderr (its last lines above); run it in a terminal with the same environment to see all of it.",
            ),
        );
    } else {
        report.add(Finding::pass(
            Check::Command,
            format!(
                "the command {program} started (with {}) and stayed",
                counted(args.len(), "argument")
            ),
        ));
    }
    if errors.is_empty() {
        let unreadable = run.tap.unreadable();
        let finding = if unreadable.is_empty() {
            Finding::pass(Check::Stdout, "every line on stdout is JSON-RPC")
        } else {
            // The bridge drops such a line (R7): VS Code works, so a warning.
            let (them, are) = if unreadable.len() == 1 {
                ("it", "is")
            } else {
                ("them", "are")
            };
            Finding::warning(
                Check::Stdout,
                format!(
                    "the server wrote {} on stdout that {are} not JSON-RPC: the bridge drops {them} with a warning line and reads on, so VS Code works; without the bridge VS Code would stop reading the server",
                    counted(unreadable.len(), "line")
                ),
            )
            .lines(
                context
                    .lines
                    .matching_since(run.initialize_lines.0, is_router_warning),
            )
            .advice(
                Section::Reach,
                "Write the logs of the server to stderr: stdout carries only JSON-RPC messages, one per line.",
            )
        };
        report.add(finding);
    }
}

/// The last lines of the command's stderr, quoted (escaped and cut by the tail),
/// or that it wrote none.
fn stderr_details(context: &Context<'_>) -> Vec<String> {
    let lines = context.stderr_tail.lines();
    if lines.is_empty() {
        return vec!["the command wrote nothing on stderr".into()];
    }
    lines
        .into_iter()
        .map(|line| format!("stderr: {line}"))
        .collect()
}

/// revision.discover when the upstream answered: its revisions and its time,
/// against `--discover-timeout` (a start with a usable stored sign-in waits for
/// that alone; one that can sign in waits for `--sign-in-timeout` too).
fn discover_passed(context: &Context<'_>, run: &Run, report: &mut Report) {
    let limit = context.config.discover_timeout;
    let answer = run.tap.answers("server/discover").into_iter().next();
    let versions = answer
        .as_ref()
        .and_then(|answer| answer.outcome.as_ref().ok())
        .and_then(|result| result.get("supportedVersions"))
        .map(Value::to_string)
        .unwrap_or_else(|| "?".into());
    let took = answer.map_or(run.initialize_took, |answer| answer.took);
    let summary = format!(
        "the server speaks revision 2026-07-28 (supportedVersions {versions}); server/discover took {} ms of --discover-timeout {} s",
        took.as_millis(),
        limit.as_secs()
    );
    let mut finding = if took > limit && run.discover_wait > limit {
        Finding::warning(Check::Discover, summary).advice(
            Section::Revision,
            "The answer came after --discover-timeout: it passed only because a sign-in could start (the bridge then also waits for --sign-in-timeout); a start with a stored sign-in fails. Raise --discover-timeout, or make the server answer sooner.",
        )
    } else if took > limit {
        Finding::warning(Check::Discover, summary).advice(
            Section::Revision,
            "The answer came after --discover-timeout. Raise --discover-timeout, or make the server answer sooner.",
        )
    } else if took * 2 > limit {
        Finding::warning(Check::Discover, summary).advice(
            Section::Revision,
            "The answer came late: a slower start runs into --discover-timeout. Raise it, or make the server answer sooner.",
        )
    } else {
        Finding::pass(Check::Discover, summary)
    };
    if run.discover_wait > limit {
        finding = finding.detail(format!(
            "a sign-in can start, so the bridge waits for --discover-timeout and --sign-in-timeout together ({} s)",
            run.discover_wait.as_secs()
        ));
    }
    report.add(finding);
}

/// revision.capabilities: what VS Code gets, and what it does with it (R1).
fn capabilities(run: &Run, result: &Map<String, Value>, report: &mut Report) {
    let given = result
        .get("capabilities")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut names: Vec<String> = given
        .iter()
        .map(|(name, value)| {
            let flags: Vec<&str> = ["listChanged", "subscribe"]
                .into_iter()
                .filter(|flag| value.get(*flag) == Some(&Value::Bool(true)))
                .collect();
            if flags.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect();
    if names.is_empty() {
        names.push("none".into());
    }
    let raw: Vec<String> = run
        .tap
        .results("server/discover")
        .into_iter()
        .filter_map(|discover| {
            discover
                .get("capabilities")
                .and_then(Value::as_object)
                .cloned()
        })
        .flat_map(|capabilities| capabilities.keys().cloned().collect::<Vec<_>>())
        .filter(|name| !given.contains_key(name))
        .collect();
    let summary = format!("VS Code gets the capabilities: {}", names.join(", "));
    let mut finding = if given.contains_key("tools") {
        Finding::pass(Check::Capabilities, summary)
    } else {
        Finding::warning(Check::Capabilities, summary).advice(
            Section::Revision,
            "The server declares no tools: VS Code never asks for its tools.",
        )
    };
    if !raw.is_empty() {
        finding = finding.detail(format!(
            "not for VS Code (revision 2025-11-25 has no such capability, or the bridge does not pass it): {}",
            raw.join(", ")
        ));
    }
    report.add(finding);
}

/// vscode.initialize: the name that VS Code shows and makes the tool ids from.
fn initialize_result(
    context: &Context<'_>,
    run: &Run,
    result: &Map<String, Value>,
    report: &mut Report,
) {
    let info = result.get("serverInfo").cloned().unwrap_or(Value::Null);
    let name = info.get("name").and_then(Value::as_str).unwrap_or_default();
    let version = info
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let named_by_upstream = run
        .tap
        .results("server/discover")
        .into_iter()
        .any(|discover| {
            discover
                .get("_meta")
                .and_then(|meta| meta.get(SERVER_INFO_KEY))
                .is_some()
        });
    let prefix: String = name.chars().take(13).collect();
    let summary = format!(
        "VS Code sees the server {name} {version}; its tools get the ids mcp_{prefix}_<tool>{}",
        if result.contains_key("instructions") {
            ", and it has instructions"
        } else {
            ""
        }
    );
    let finding = if named_by_upstream {
        Finding::pass(Check::Initialize, summary)
    } else {
        let from = if context.config.name.is_some() {
            "--name"
        } else {
            "the name of the command or the host of the URL"
        };
        Finding::warning(Check::Initialize, summary)
            .detail(format!("the server sends no serverInfo: the name comes from {from}"))
            .advice(
                Section::WhatVscodeGets,
                "Give the server a name in its serverInfo, or give --name in the entry: VS Code keys the tool approvals by it.",
            )
    };
    report.add(finding);
}

/// Whether a failed discover looks like a server of an older revision: the
/// method is not found, the HTTP endpoint refuses the request of 2026-07-28, or
/// the discover result names only other revisions.
fn maybe_older(run: &Run) -> bool {
    let not_found = run
        .tap
        .answers("server/discover")
        .iter()
        .any(|answer| match &answer.outcome {
            Err(error) => error.get("code") == Some(&json!(-32601)),
            Ok(result) => matches!(
                check_discover(result),
                Err(DiscoverRefusal::NoVersions | DiscoverRefusal::OtherVersions(_))
            ),
        });
    let refused = run.tap.failures("server/discover").iter().any(|failure| {
        matches!(failure, RequestFailure::Status { status, .. } if matches!(status, 400 | 404 | 405 | 406))
    });
    not_found || refused
}

/// Sends a 2025-11-25 initialize over a link of the same connector: the revision
/// of the result, when the upstream answers it.
async fn older_revision(connector: &dyn Connector) -> Option<String> {
    let context = LinkContext::detached();
    let link = connector.connect(context.clone()).ok()?;
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}
    });
    let params = params.as_object().cloned().unwrap_or_default();
    link.sender.send(Outgoing::Request {
        id: 1,
        method: "initialize".into(),
        params: Arc::new(ShallowObject::from_map(&params)),
        meta: RequestMeta::shared_only(&Arc::new(SharedMeta::new(Map::new()))),
    });
    let deadline = Instant::now() + PROBE_LIMIT;
    let mut events = link.events;
    let version = loop {
        match timeout_at(deadline, events.next()).await {
            Ok(Some(UpstreamEvent::Result(result))) if result.id() == 1 => {
                break result
                    .result()
                    .get("protocolVersion")
                    .and_then(|text| serde_json::from_str::<String>(text).ok());
            }
            Ok(Some(UpstreamEvent::Message(Message::Response(response)))) => {
                if let Outcome::Result(result) = response.outcome {
                    break result
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                break None;
            }
            Ok(Some(UpstreamEvent::RequestFailed { .. } | UpstreamEvent::Ended(_)))
            | Ok(None)
            | Err(_) => break None,
            Ok(Some(_)) => {}
        }
    };
    drop(link.sender);
    link.control.shutdown(Duration::from_secs(2)).await;
    context.stop.cancel();
    version.filter(|version| version.as_str() != crate::rules::UPSTREAM_PROTOCOL_VERSION)
}

/// The entry for VS Code without the bridge.
fn direct_entry(upstream: &UpstreamTarget) -> String {
    match upstream {
        UpstreamTarget::Command { .. } => "Put the command itself in the entry of .vscode/mcp.json (\"command\" and \"args\" of the server, without mcp-bridge-vscode and --).".into(),
        UpstreamTarget::Url(target) => format!(
            "Give VS Code the URL itself: an entry with \"type\": \"http\" and \"url\": \"{}\".",
            shown_url(&target.url)
        ),
    }
}

/// What to do when server/discover failed.
fn discover_advice(run: &Run, cause: Option<Cause>) -> &'static str {
    let timed_out = run.tap.answers("server/discover").is_empty()
        && run.tap.failures("server/discover").is_empty();
    match cause {
        Some(Cause::UpstreamExited) => {
            "The upstream stopped: run its command in a terminal and read what it writes on stderr."
        }
        Some(Cause::TransportFailed | Cause::NotConnected) => {
            "Check the URL, --ca-file and the proxy variables (see reach above)."
        }
        _ if timed_out => {
            "The upstream did not answer server/discover: check that it speaks revision 2026-07-28, or raise --discover-timeout when it is slow."
        }
        _ => {
            "Check that the upstream speaks revision 2026-07-28; the line above says what it answered."
        }
    }
}

/// A URL as doctor shows it: without its query, which can carry a key.
pub fn shown_url(url: &url::Url) -> String {
    let mut shown = url.clone();
    if shown.query().is_some() {
        shown.set_query(Some("..."));
    }
    shown.to_string()
}
