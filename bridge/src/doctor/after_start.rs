//! The checks after the start: a ping, the listen stream and the list changes
//! that it carries (R2, O6), the log messages (`notifications`), and the call of
//! `--call` (never a call without it).

use super::Context;
use super::local_harness::Reply;
use super::notifications;
use super::report::{Check, Finding, Report, counted};
use super::revision::cause_of;
use super::session::{LIST_CHANGES, Run};
use super::texts::Section;
use serde_json::Value;

pub fn findings(context: &Context<'_>, run: &Run, report: &mut Report) {
    report.add(ping(run));
    report.add(listen(context, run));
    report.add(notifications::logging(context, run));
    report.add(notifications::during_call(context, run, call(context, run)));
}

/// vscode.ping: VS Code's ping, which the bridge answers itself in each state.
fn ping(run: &Run) -> Finding {
    match &run.ping {
        Some((Reply::Result(result, _), took)) if result.is_empty() => Finding::pass(
            Check::Ping,
            format!("the bridge answered ping in {} ms", took.as_millis()),
        ),
        Some((reply, _)) => Finding::fail(Check::Ping, format!("ping got {reply:?}, not {{}}"))
            .advice(
                Section::Errors,
                "This is a fault of the bridge: report it with the report of doctor.",
            ),
        None => Finding::skipped(Check::Ping, "initialize failed"),
    }
}

/// vscode.listen: after notifications/initialized, the listen stream opens when a
/// list change is declared, and VS Code gets one list change for each declared
/// list once the upstream acknowledged it.
fn listen(context: &Context<'_>, run: &Run) -> Finding {
    if run.listen_declared.is_empty() {
        return Finding::pass(
            Check::Listen,
            "the server declares no list changes: the bridge opens no listen stream, and VS Code lists once",
        );
    }
    let received: Vec<&str> = LIST_CHANGES
        .iter()
        .filter(|(name, _)| run.listen_declared.contains(name))
        .filter(|(_, method)| {
            run.notifications
                .iter()
                .any(|notified| notified.method == *method)
        })
        .map(|(_, method)| *method)
        .collect();
    let warnings = context.lines.warnings_between(run.listen_lines);
    let declared = run.listen_declared.join(", ");
    if received.len() == run.listen_declared.len() && warnings.is_empty() {
        return Finding::pass(
            Check::Listen,
            format!(
                "the listen stream opened for the changes of {declared}; VS Code got {}",
                received.join(", ")
            ),
        );
    }
    Finding::warning(
        Check::Listen,
        format!(
            "the server declares changes of {declared}, but VS Code got {} of them: without the listen stream VS Code does not see a list change",
            if received.is_empty() {
                "none".to_owned()
            } else {
                received.join(", ")
            }
        ),
    )
    .lines(warnings)
    .advice(
        Section::Listen,
        "The upstream must acknowledge subscriptions/listen; the lines above say what it answered.",
    )
}

/// vscode.call: the tool of `--call`, as VS Code calls it.
fn call(context: &Context<'_>, run: &Run) -> Finding {
    let Some((name, reply, range)) = &run.call else {
        return Finding::skipped(
            Check::Call,
            if context.call.is_some() {
                "initialize failed"
            } else {
                "doctor calls no tool unless --call names it"
            },
        );
    };
    let asked = if run.questions.is_empty() {
        String::new()
    } else {
        format!("; the bridge asked doctor: {}", run.questions.join("; "))
    };
    let lines = context.lines.warnings_between(*range);
    match reply {
        Reply::Result(result, length) => {
            let kinds: Vec<&str> = result
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|block| block.get("type").and_then(Value::as_str))
                .collect();
            let summary = format!(
                "'{name}' answered with {} ({}), {}{asked}",
                counted(kinds.len(), "content block"),
                kinds.join(", "),
                counted(*length, "byte")
            );
            if result.get("isError") == Some(&Value::Bool(true)) {
                Finding::warning(Check::Call, format!("{summary}; the tool reports an error"))
                    .lines(lines)
                    .advice(
                        Section::WhatVscodeGets,
                        "The tool itself failed: check its arguments (--arguments) and its server.",
                    )
            } else {
                Finding::pass(Check::Call, summary).lines(lines)
            }
        }
        Reply::Error(error) if context.refused_sign_in(error) => {
            Finding::skipped(Check::Call, super::NEEDS_SIGN_IN)
        }
        Reply::Error(error) => {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let code = error
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or_default();
            let mut finding = Finding::fail(
                Check::Call,
                format!("'{name}' failed: VS Code shows MPC {code}: {message}{asked}"),
            )
            .lines(lines)
            .advice(
                Section::Errors,
                "An error with a cause is the bridge's: its table says what to do. Another comes from the upstream server.",
            );
            if let Some(cause) = cause_of(error) {
                finding = finding.cause(cause);
            }
            finding
        }
        Reply::NoAnswer => Finding::fail(
            Check::Call,
            format!("'{name}' did not answer in time{asked}"),
        )
        .lines(lines)
        .advice(
            Section::Errors,
            "The upstream server did not answer the call.",
        ),
    }
}
