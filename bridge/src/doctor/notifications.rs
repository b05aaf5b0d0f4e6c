//! What became of the notifications of the upstream: the tap heard what the
//! upstream sent, the harness got what the bridge forwarded to VS Code. For the
//! call of `--call`, the notifications that the bridge dropped or could not
//! forward (a list change in the response stream of the call, a log message
//! before VS Code set a level); for the whole session, whether the log messages
//! of the server reach VS Code (`vscode.logging`, O5).

use super::Context;
use super::local_harness::Notified;
use super::report::{Check, Finding, counted};
use super::session::Run;
use super::tap::Heard;
use super::texts::Section;
use crate::notify::events::LOG_LEVELS;
use serde_json::Value;
use std::collections::BTreeMap;
use tokio::time::Instant;

/// The level that doctor sets as VS Code does (logging/setLevel).
pub const VSCODE_LEVEL: &str = "info";

const LOG_MESSAGE: &str = "notifications/message";

/// Whether VS Code, at its level, wants the notification: every one but a log
/// message below [`VSCODE_LEVEL`] (one without a known level counts as wanted).
fn wanted(heard: &Heard) -> bool {
    if heard.method != LOG_MESSAGE {
        return true;
    }
    let rank = |level: &str| LOG_LEVELS.iter().position(|known| *known == level);
    match (heard.level.as_deref().and_then(rank), rank(VSCODE_LEVEL)) {
        (Some(level), Some(floor)) => level >= floor,
        _ => true,
    }
}

/// For one method: how many the upstream sent that VS Code wants, and how many
/// VS Code got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub method: String,
    pub sent: usize,
    pub got: usize,
}

impl Tally {
    fn missing(&self) -> usize {
        self.sent.saturating_sub(self.got)
    }
}

/// The tally of each method that the upstream sent, by method.
pub fn tally(heard: &[Heard], got: &[Notified]) -> Vec<Tally> {
    let mut sent: BTreeMap<&str, usize> = BTreeMap::new();
    for heard in heard.iter().filter(|heard| wanted(heard)) {
        *sent.entry(heard.method.as_str()).or_default() += 1;
    }
    sent.into_iter()
        .map(|(method, sent)| Tally {
            method: method.to_owned(),
            sent,
            got: got.iter().filter(|n| n.method == method).count(),
        })
        .collect()
}

/// `notifications/tools/list_changed (1 of 1)`: what VS Code did not get.
fn missing(tallies: &[Tally]) -> Vec<String> {
    tallies
        .iter()
        .filter(|tally| tally.missing() > 0)
        .map(|tally| format!("{} ({} of {})", tally.method, tally.missing(), tally.sent))
        .collect()
}

/// The lines of the bridge between two marks that tell of a dropped frame (the
/// debug lines "dropped the notification ..." too).
fn dropped_lines(context: &Context<'_>, range: (usize, usize)) -> Vec<String> {
    context
        .lines
        .between(range)
        .into_iter()
        .map(|line| line.text)
        .filter(|text| text.contains(": dropped "))
        .collect()
}

/// The notifications during the call of `--call`, added to its finding: what
/// VS Code got, and what the bridge did not forward (a warning).
pub fn during_call(context: &Context<'_>, run: &Run, finding: Finding) -> Finding {
    let (Some((from, to)), Some((_, _, range))) = (run.call_window, &run.call) else {
        return finding;
    };
    let inside = |at: Instant| at >= from && at <= to;
    let heard: Vec<Heard> = run
        .tap
        .notifications_since(from)
        .into_iter()
        .filter(|heard| inside(heard.at))
        .collect();
    let got: Vec<Notified> = run
        .notifications
        .iter()
        .filter(|notified| inside(notified.at))
        .cloned()
        .collect();
    let tallies = tally(&heard, &got);
    let mut finding = finding;
    if !got.is_empty() {
        let mut by_method: BTreeMap<&str, usize> = BTreeMap::new();
        for notified in &got {
            *by_method.entry(notified.method.as_str()).or_default() += 1;
        }
        let got: Vec<String> = by_method
            .into_iter()
            .map(|(method, count)| format!("{method} ({count})"))
            .collect();
        finding = finding.detail(format!("during the call VS Code got {}", got.join(", ")));
    }
    let missing = missing(&tallies);
    if missing.is_empty() {
        return finding;
    }
    let summary = format!(
        "{}; the bridge did not forward {} of the server during the call",
        finding.summary,
        counted(tallies.iter().map(Tally::missing).sum(), "notification")
    );
    let mut warned = if finding.status == super::report::Status::Pass {
        Finding::warning(Check::Call, summary)
    } else {
        Finding::new(Check::Call, finding.status, summary)
    };
    warned.details = finding.details;
    warned.lines = finding.lines;
    warned.cause = finding.cause;
    warned.advice = finding.advice;
    warned = warned
        .detail(format!("not forwarded to VS Code: {}", missing.join(", ")))
        .lines(dropped_lines(context, *range));
    if warned.advice.is_none() {
        warned = warned.advice(
            Section::WhatVscodeGets,
            "VS Code never sees these notifications: a list change that it misses leaves it with the old list, a log message that it misses is not in the Output channel. The lines above say why the bridge dropped them.",
        );
    }
    warned
}

/// vscode.logging: whether the log messages of the server reach VS Code. VS Code
/// sets a level only when the initialize result declares `logging`, and the
/// bridge forwards log messages only after a level (O5).
pub fn logging(context: &Context<'_>, run: &Run) -> Finding {
    let declared = run
        .initialize_result()
        .and_then(|result| result.get("capabilities"))
        .and_then(|capabilities| capabilities.get("logging"))
        .is_some_and(Value::is_object);
    let heard: Vec<Heard> = run
        .initialized_at
        .map(|from| {
            run.tap
                .notifications_since(from)
                .into_iter()
                .filter(|heard| heard.method == LOG_MESSAGE)
                .collect()
        })
        .unwrap_or_default();
    let tallies = tally(&heard, &run.notifications);
    let (sent, got) = tallies
        .first()
        .map_or((0, 0), |tally| (tally.sent, tally.got));
    let set = if declared {
        format!(
            "VS Code sets the log level {VSCODE_LEVEL} (the initialize result declares logging)"
        )
    } else {
        "VS Code sets no log level: the initialize result declares no logging".to_owned()
    };
    if sent == 0 {
        let summary = format!(
            "{set}; the server sent no log message at {VSCODE_LEVEL} or above while doctor ran"
        );
        return if declared {
            Finding::pass(Check::Logging, summary)
                .detail("--call with a tool that logs shows whether its messages reach VS Code")
        } else {
            Finding::warning(Check::Logging, summary).advice(
                Section::WhatVscodeGets,
                "Without a level the bridge forwards no log message of the server: VS Code's Output channel never shows them.",
            )
        };
    }
    let summary = format!(
        "{set}; the server sent {} at {VSCODE_LEVEL} or above, and VS Code got {got}",
        counted(sent, "log message")
    );
    if got >= sent {
        return Finding::pass(Check::Logging, summary);
    }
    let why = if declared {
        "The bridge did not forward them: the lines above say why."
    } else {
        "The bridge forwards log messages only after VS Code set a level, and VS Code sets one only when the initialize result declares logging: a server of revision 2026-07-28 may leave the capability out and still log."
    };
    let all = (run.initialize_lines.0, context.lines.mark());
    Finding::warning(Check::Logging, summary)
        .lines(
            dropped_lines(context, all)
                .into_iter()
                .filter(|line| line.contains(LOG_MESSAGE)),
        )
        .advice(Section::WhatVscodeGets, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heard(method: &str, level: Option<&str>) -> Heard {
        Heard {
            method: method.into(),
            level: level.map(str::to_owned),
            at: Instant::now(),
        }
    }

    fn got(method: &str) -> Notified {
        Notified {
            method: method.into(),
            at: Instant::now(),
        }
    }

    #[test]
    fn a_log_message_below_the_level_of_vscode_is_not_missing_and_a_list_change_is() {
        let heard = [
            heard(LOG_MESSAGE, Some("debug")),
            heard(LOG_MESSAGE, Some("warning")),
            heard("notifications/tools/list_changed", None),
            heard("notifications/progress", None),
        ];
        let tallies = tally(
            &heard,
            &[
                got(LOG_MESSAGE),
                got("notifications/progress"),
                got("notifications/elicitation/complete"),
            ],
        );
        assert_eq!(
            missing(&tallies),
            vec!["notifications/tools/list_changed (1 of 1)".to_owned()]
        );
        assert_eq!(
            tallies[0],
            Tally {
                method: LOG_MESSAGE.into(),
                sent: 1,
                got: 1
            }
        );
    }
}
