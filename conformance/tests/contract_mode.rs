//! `mcp-conformance run --contract`: the transcripts that mark texts as this
//! implementation's (`"ours"`) pass in both modes against this bridge; a copy with
//! each marked text worded another way (as another implementation would word it,
//! within the shape of the mark) fails the strict run and passes `--contract`; and
//! a copy that also changes what the contract fixes (an error code, an exit code)
//! fails `--contract` too. What cannot apply to another implementation is skipped
//! as not applicable, never passed.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RUNNER: &str = env!("CARGO_BIN_EXE_mcp-conformance");

/// The transcripts with marks, and the examples of each kind of mark.
const MARKED: [&str; 6] = [
    "m1/cli-option-value-not-valid.jsonl",
    "m1/cli-option-value-out-of-range.jsonl",
    "m1/cli-discover-timeout-not-valid.jsonl",
    "m1/c1-copilot-discover.jsonl",
    "m2/r8-input-for-a-list.jsonl",
    // A line with a path of this implementation (the token directory of the file store).
    "m4/token-store-file-key-digit-case.jsonl",
];

fn transcripts_dir() -> PathBuf {
    mcp_conformance::paths::transcripts_dir()
}

fn run(mode: &[&str], files: &[PathBuf]) -> Output {
    Command::new(RUNNER)
        .arg("run")
        .args(mode)
        .args(files)
        .env_remove("MCP_CONFORMANCE_BRIDGE")
        .output()
        .expect("the runner starts")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The summary line of a run.
fn summary(output: &Output) -> String {
    stdout(output)
        .lines()
        .rfind(|line| line.contains(" passed, "))
        .unwrap_or_default()
        .to_owned()
}

/// Each marked text of a step worded another way, within its shape.
fn reword(step: &mut Value) {
    let Some(ours) = step.get("ours").cloned() else {
        return;
    };
    if let Some(regex) = step.get_mut("expect_stderr_match") {
        let text = regex
            .as_str()
            .unwrap()
            .replace("encrypted files", "sealed files");
        assert_ne!(
            regex.as_str().unwrap(),
            text,
            "the regex has no name to change"
        );
        *regex = Value::String(text);
        return;
    }
    if let Some(line) = step.get_mut("expect_stderr") {
        let text = line.as_str().unwrap().replace("is not valid", "is refused");
        assert_ne!(
            line.as_str().unwrap(),
            text,
            "the line has no words to change"
        );
        *line = Value::String(text);
        return;
    }
    let frame = step.get_mut("expect").expect("a marked frame");
    for pointer in ours.as_object().unwrap().keys() {
        let text = frame.pointer_mut(pointer).expect("a marked member");
        *text = Value::String(match pointer.rsplit('/').next() {
            Some("cause") => "another_cause".into(),
            _ => "Worded another way.".into(),
        });
    }
}

/// What the contract fixes, changed: an error's code, or the exit code.
fn break_contract(step: &mut Value) {
    if let Some(code) = step.pointer_mut("/expect/error/code") {
        *code = Value::from(-32600);
    }
    if let Some(code) = step.pointer_mut("/expect_exit/code") {
        *code = Value::from(1);
    }
}

/// A copy of `file` in `dir` with `change` applied to each step.
fn copy_with(dir: &Path, file: &str, change: &dyn Fn(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(transcripts_dir().join(file)).unwrap();
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let mut out = vec![lines.next().unwrap().to_owned()];
    for line in lines {
        let mut step: Value = serde_json::from_str(line).unwrap();
        change(&mut step);
        out.push(step.to_string());
    }
    let path = dir.join(file.replace('/', "-"));
    std::fs::write(&path, out.join("\n") + "\n").unwrap();
    path
}

#[test]
fn the_marked_transcripts_pass_in_both_modes_against_this_bridge() {
    let files: Vec<PathBuf> = MARKED.iter().map(|f| transcripts_dir().join(f)).collect();
    for mode in [&[][..], &["--contract"]] {
        let output = run(mode, &files);
        assert_eq!(
            summary(&output),
            "6 passed, 0 failed",
            "{mode:?}:\n{}",
            stdout(&output)
        );
    }
}

#[test]
fn a_marked_text_worded_another_way_fails_strict_and_passes_contract() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = MARKED
        .iter()
        .map(|file| copy_with(dir.path(), file, &reword))
        .collect();
    let strict = run(&[], &files);
    assert_eq!(
        summary(&strict),
        "0 passed, 6 failed",
        "{}",
        stdout(&strict)
    );
    let contract = run(&["--contract"], &files);
    assert_eq!(
        summary(&contract),
        "6 passed, 0 failed",
        "{}",
        stdout(&contract)
    );
    let text = stdout(&contract);
    assert!(
        text.lines()
            .any(|line| line.starts_with("mode: contract: ")),
        "{text}"
    );
    // c1-copilot-discover marks two texts of each of its seven errors.
    assert!(
        text.lines().any(|line| line
            == "checked by their shape (texts marked as this implementation's, in transcripts): M1 17 in 4, M2 3 in 1, M4 1 in 1"),
        "{text}"
    );
}

#[test]
fn contract_mode_still_fails_what_the_contract_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = MARKED
        .iter()
        .map(|file| {
            copy_with(dir.path(), file, &|step| {
                reword(step);
                break_contract(step);
            })
        })
        .collect();
    let contract = run(&["--contract"], &files);
    assert_eq!(
        summary(&contract),
        "0 passed, 6 failed",
        "{}",
        stdout(&contract)
    );
}

#[test]
fn what_cannot_apply_to_another_bridge_is_not_applicable_in_contract_mode_only() {
    let files = [
        transcripts_dir().join("m5/embed-discover-answered.jsonl"),
        transcripts_dir().join("m1/stop-internal-error-kills-upstream.jsonl"),
        transcripts_dir().join("recorded/local-1.141.jsonl"),
    ];
    let contract = run(&["--contract", "--json"], &files);
    let json: Value = serde_json::from_slice(&contract.stdout).unwrap();
    assert_eq!(json["mode"], "contract");
    assert_eq!(
        json["not_applicable"],
        serde_json::json!({"M1": 1, "M5": 1, "recorded": 1})
    );
    assert_eq!(
        (json["passed"].as_u64(), json["skipped"].as_u64()),
        (Some(0), Some(3))
    );
    for transcript in json["transcripts"].as_array().unwrap() {
        let why = transcript["skipped"].as_str().unwrap_or_default();
        assert!(
            why.starts_with("not applicable in --contract mode: "),
            "{transcript}"
        );
    }
    let strict = run(&[], &files);
    assert_eq!(
        summary(&strict),
        "3 passed, 0 failed",
        "{}",
        stdout(&strict)
    );
}

#[test]
fn the_token_directory_of_the_transcripts_comes_from_the_run() {
    // This bridge keeps its tokens in its own directory: a run that names
    // another one for $TOKEN_DIR looks for them where they are not.
    let file = [transcripts_dir().join("m4/token-store-file-key-digit-case.jsonl")];
    let elsewhere = run(&["--token-dir", "another-product/tokens"], &file);
    assert_eq!(
        summary(&elsewhere),
        "0 passed, 1 failed",
        "{}",
        stdout(&elsewhere)
    );
    let named = run(&["--token-dir", "mcp-bridge-rs/vscode/tokens"], &file);
    assert_eq!(summary(&named), "1 passed, 0 failed", "{}", stdout(&named));
}
