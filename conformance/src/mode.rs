//! How strictly a run checks the expectations of the transcripts: every output
//! (the matrix, `--json`, `--markdown`, `--junit`) names the mode that ran, so a
//! result is never read in the terms of another mode.

use crate::format::{Body, Transcript, Upstream};
use crate::outcome::Outcome;
use crate::suite::Loaded;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The reason of every transcript that `--contract` does not run, before its why.
pub const NOT_APPLICABLE: &str = "not applicable in --contract mode: ";

/// The mode of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunMode {
    /// Every expectation of the transcripts exactly as written: the contract's
    /// texts and this implementation's own (its wording, its help, its paths);
    /// the marks `"ours"` change nothing.
    #[default]
    Strict,
    /// The contract's terms (`--contract`): each text marked as this
    /// implementation's is checked by its shape, and a transcript that cannot
    /// apply to another implementation does not run (never a pass).
    Contract,
}

impl RunMode {
    /// The name in the outputs (`"mode": "strict"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::Contract => "contract",
        }
    }

    /// One line for a person: the mode and what it checks.
    pub fn line(self) -> String {
        let what = match self {
            Self::Strict => "every expectation of the transcripts is checked exactly as written",
            Self::Contract => {
                "the texts marked as this implementation's are checked by their shape only, and what cannot apply to another implementation is skipped as not applicable"
            }
        };
        format!("mode: {}: {what}", self.name())
    }

    /// The lines under the matrix: the mode, and in the contract's terms what the
    /// marks relaxed and what did not apply, by milestone.
    pub fn lines(
        self,
        marks: &BTreeMap<String, (usize, usize)>,
        outcomes: &[Outcome],
    ) -> Vec<String> {
        let mut lines = vec![self.line()];
        if self == Self::Contract {
            lines.extend(contract_lines(
                marks,
                &not_applicable_by_milestone(outcomes),
            ));
        }
        lines
    }

    /// The same in the JSON of `--json`: `mode`, and in the contract's terms
    /// `marked_texts` and `not_applicable`.
    pub fn describe_in_json(
        self,
        json: &mut Value,
        marks: &BTreeMap<String, (usize, usize)>,
        outcomes: &[Outcome],
    ) {
        json["mode"] = self.name().into();
        if self == Self::Contract {
            let marked: Map<String, Value> = marks
                .iter()
                .map(|(milestone, (texts, transcripts))| {
                    let counts = json!({"texts": texts, "transcripts": transcripts});
                    (milestone.clone(), counts)
                })
                .collect();
            json["marked_texts"] = Value::Object(marked);
            json["not_applicable"] = json!(not_applicable_by_milestone(outcomes));
        }
    }

    /// A loaded transcript as this mode runs it: in the contract's terms its marks
    /// relaxed, or the outcome "not applicable" when it cannot apply.
    pub fn prepare(self, loaded: Loaded) -> Loaded {
        let mut transcript = loaded?;
        if self == Self::Contract {
            if let Some(why) = not_applicable(&transcript) {
                let reason = format!("{NOT_APPLICABLE}{why}");
                return Err(Box::new(crate::runner::not_run(&transcript, &reason)));
            }
            transcript.relax_marks();
        }
        Ok(transcript)
    }
}

/// Whether a run in the contract's terms left the transcript out as not applicable.
pub fn is_not_applicable(outcome: &Outcome) -> bool {
    outcome
        .skipped
        .as_deref()
        .is_some_and(|why| why.starts_with(NOT_APPLICABLE))
}

/// By milestone, how many texts the transcripts mark as this implementation's,
/// and in how many transcripts.
pub fn marks_by_milestone(loaded: &[Loaded]) -> BTreeMap<String, (usize, usize)> {
    let mut marks = BTreeMap::new();
    for transcript in loaded.iter().filter_map(|loaded| loaded.as_ref().ok()) {
        let texts = transcript.marked_texts();
        if texts > 0 {
            let entry: &mut (usize, usize) = marks
                .entry(transcript.header.milestone.clone())
                .or_default();
            entry.0 += texts;
            entry.1 += 1;
        }
    }
    marks
}

/// By milestone (`recorded` for the replays), how many transcripts `--contract`
/// did not run as not applicable.
pub fn not_applicable_by_milestone(outcomes: &[Outcome]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for outcome in outcomes.iter().filter(|outcome| is_not_applicable(outcome)) {
        *counts
            .entry(crate::junit::suite_of(outcome).to_owned())
            .or_default() += 1;
    }
    counts
}

/// The two lines of a run in the contract's terms: what its marks relaxed and
/// what did not apply, by milestone.
pub fn contract_lines(
    marks: &BTreeMap<String, (usize, usize)>,
    not_applicable: &BTreeMap<String, usize>,
) -> [String; 2] {
    let marks: Vec<String> = marks
        .iter()
        .map(|(milestone, (texts, transcripts))| format!("{milestone} {texts} in {transcripts}"))
        .collect();
    let not_applicable: Vec<String> = not_applicable
        .iter()
        .map(|(milestone, count)| format!("{milestone} {count}"))
        .collect();
    let or_none = |parts: Vec<String>| match parts.is_empty() {
        true => "none".to_owned(),
        false => parts.join(", "),
    };
    [
        format!(
            "checked by their shape (texts marked as this implementation's, in transcripts): {}",
            or_none(marks)
        ),
        format!("not applicable (transcripts): {}", or_none(not_applicable)),
    ]
}

/// Why a transcript cannot apply to another implementation of the contract.
pub fn not_applicable(transcript: &Transcript) -> Option<&'static str> {
    let header = &transcript.header;
    if matches!(transcript.body, Body::Recording(_)) {
        Some("it replays a recorded session of this project's bridge, frame by frame")
    } else if header.upstream == Upstream::Embedded {
        Some(
            "it drives this project's embedded server (bridge-embedded-server) through its own options",
        )
    } else if header.needs_test_faults {
        Some("it needs the test faults of this project's debug build (MCP_BRIDGE_TEST_FAULT)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{StepKind, parse};
    use std::path::Path;

    const MARKED: &str = r#"{"transcript":1,"name":"t","items":["CLI"],"milestone":"M1","description":"d","upstream":"none","bridge_args":["--log-level","loud"],"check_log_format":false}
{"expect_stderr":"mcp-bridge-vscode: vscode: error: the value of --log-level is not valid","ours":"^mcp-bridge-vscode: vscode: error: .*--log-level"}
{"expect_exit":{"code":2}}
"#;

    fn first_step(loaded: Loaded) -> StepKind {
        let transcript = loaded.unwrap();
        let Body::Steps(steps) = transcript.body else {
            panic!("no steps");
        };
        steps[0].kind.clone()
    }

    fn loaded(text: &str) -> Loaded {
        Ok(parse(text, Path::new("t.jsonl"), "t.jsonl").unwrap())
    }

    #[test]
    fn strict_mode_keeps_the_exact_text_and_contract_mode_its_shape() {
        assert_eq!(loaded(MARKED).unwrap().marked_texts(), 1);
        let StepKind::ExpectStderr(line) = first_step(RunMode::Strict.prepare(loaded(MARKED)))
        else {
            panic!("strict mode changed the step");
        };
        assert!(line.ends_with("--log-level is not valid"), "{line}");
        let StepKind::ExpectStderrMatch(shape) =
            first_step(RunMode::Contract.prepare(loaded(MARKED)))
        else {
            panic!("contract mode kept the exact text");
        };
        assert_eq!(
            shape.as_str(),
            "^mcp-bridge-vscode: vscode: error: .*--log-level"
        );
    }

    #[test]
    fn the_embedded_server_is_not_applicable_in_contract_mode_only() {
        let embedded = MARKED.replacen(r#""upstream":"none""#, r#""upstream":"embedded""#, 1);
        assert!(RunMode::Strict.prepare(loaded(&embedded)).is_ok());
        let outcome = RunMode::Contract.prepare(loaded(&embedded)).unwrap_err();
        assert!(!outcome.passed() && !outcome.failed());
        let why = outcome.skipped.unwrap_or_default();
        assert!(
            why.starts_with("not applicable in --contract mode: "),
            "{why}"
        );
    }
}
