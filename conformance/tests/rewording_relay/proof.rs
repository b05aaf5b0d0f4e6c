//! The trials of the proof: the whole suite runs in the contract's terms behind
//! the rewording relay and must pass; behind each break variant, the transcripts
//! that hold the broken text must fail, on that text.
//!
//! Each run is `mcp-conformance run --json --bridge WRAPPER`, WRAPPER a script
//! that starts this program as the relay of the workspace's bridge: the runner
//! tests it as it tests any other implementation.

use crate::rewrite::{BROKEN_CAUSE, BROKEN_CODE, BROKEN_ROW, Break};
use libtest_mimic::{Failed, Trial};
use mcp_conformance::mode::NOT_APPLICABLE;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNNER: &str = env!("CARGO_BIN_EXE_mcp-conformance");

/// The transcripts that hold the text each break changes (an expected stderr
/// line, an expected cause, an expected code), and that apply in the contract's
/// terms.
fn broken_in(broken: Break) -> [&'static str; 2] {
    match broken {
        Break::Row => [
            "m1/cli-log-level-default.jsonl",
            "m1/r1-initialize-from-discover.jsonl",
        ],
        Break::Cause => [
            "m1/upstream-stop-crash.jsonl",
            "m1/upstream-stop-scripted.jsonl",
        ],
        Break::Code => ["m1/c1-copilot-discover.jsonl", "m1/stop-idle.jsonl"],
    }
}

/// What a failure report of a transcript that failed on the broken text shows.
fn broken_text(broken: Break) -> String {
    match broken {
        Break::Row => BROKEN_ROW.to_owned(),
        Break::Cause => mcp_conformance::reword::reword_cause(BROKEN_CAUSE),
        Break::Code => BROKEN_CODE.1.to_string(),
    }
}

/// The outcome of one transcript of a run.
struct Ran {
    path: String,
    passed: bool,
    skipped: Option<String>,
    report: String,
}

/// A run of the runner behind the relay started with `relay_options`, `jobs`
/// transcripts at once.
fn run_behind_relay(
    relay_options: &[&str],
    contract: bool,
    files: &[&str],
    jobs: usize,
) -> Result<Vec<Ran>, Failed> {
    let folder = tempfile::tempdir().map_err(|error| error.to_string())?;
    let wrapper = wrapper(folder.path(), relay_options)?;
    let transcripts = mcp_conformance::paths::transcripts_dir();
    let mut command = Command::new(RUNNER);
    command.arg("run").arg("--json");
    if contract {
        command.arg("--contract");
    }
    command
        .arg("--jobs")
        .arg(jobs.to_string())
        .arg("--bridge")
        .arg(&wrapper)
        .args(files.iter().map(|file| transcripts.join(file)))
        .env_remove("MCP_CONFORMANCE_BRIDGE");
    let output = command.output().map_err(|error| error.to_string())?;
    let json: Value = serde_json::from_slice(&output.stdout).map_err(|error| {
        format!(
            "the runner wrote no JSON ({error}); its stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    let transcripts = json["transcripts"].as_array().cloned().unwrap_or_default();
    Ok(transcripts.iter().map(ran).collect())
}

fn ran(outcome: &Value) -> Ran {
    let failures = outcome["failures"].as_array().cloned().unwrap_or_default();
    let report = failures
        .iter()
        .map(|failure| {
            format!(
                "  line {}: {}\n{}",
                failure["line"],
                failure["message"].as_str().unwrap_or_default(),
                failure["detail"].as_str().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Ran {
        path: outcome["path"].as_str().unwrap_or_default().to_owned(),
        passed: outcome["passed"].as_bool().unwrap_or(false),
        skipped: outcome["skipped"].as_str().map(str::to_owned),
        report,
    }
}

/// As many transcripts at once as the `transcripts` test runs.
fn jobs() -> usize {
    std::env::var("RUST_TEST_THREADS")
        .ok()
        .and_then(|threads| threads.parse().ok())
        .unwrap_or_else(mcp_conformance::suite::default_jobs)
}

/// A script in `folder` that runs this program as the relay of the workspace's
/// bridge, with `relay_options`: the bridge that the runner is given.
fn wrapper(folder: &Path, relay_options: &[&str]) -> Result<PathBuf, Failed> {
    use std::os::unix::fs::PermissionsExt;
    let relay = std::env::current_exe().map_err(|error| error.to_string())?;
    let bridge = bridge()?;
    let quoted = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
    let mut line = vec![
        "exec".to_owned(),
        quoted(&relay.to_string_lossy()),
        crate::RELAY_ARG.to_owned(),
    ];
    line.extend(relay_options.iter().map(|option| quoted(option)));
    line.push(quoted(&bridge.to_string_lossy()));
    line.push("\"$@\"".to_owned());
    let path = folder.join("mcp-bridge-vscode");
    std::fs::write(&path, format!("#!/bin/sh\n{}\n", line.join(" ")))
        .map_err(|error| error.to_string())?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|error| error.to_string())?;
    Ok(path)
}

/// The workspace's bridge, brought up to date under Cargo as the runner does
/// for its own (it builds no bridge that `--bridge` names).
fn bridge() -> Result<PathBuf, Failed> {
    const BRIDGE: workspace_bin::Executable =
        workspace_bin::Executable::new("mcp-bridge-vscode", "mcp-bridge-vscode");
    if std::env::var_os("CARGO").is_some() {
        workspace_bin::build(&[BRIDGE]).map_err(|error| error.to_string())?;
    }
    workspace_bin::path(BRIDGE.package, BRIDGE.bin).map_err(|error| error.to_string().into())
}

/// The transcripts that failed, each with its report.
fn failed(runs: &[Ran]) -> Vec<&Ran> {
    runs.iter()
        .filter(|ran| !ran.passed && ran.skipped.is_none())
        .collect()
}

fn reports(runs: &[&Ran]) -> String {
    runs.iter()
        .map(|ran| format!("FAILED {}\n{}\n", ran.path, ran.report))
        .collect()
}

/// The whole suite, in the contract's terms, must pass behind the rewording
/// relay, with what cannot apply skipped as not applicable.
fn whole_suite_passes() -> Result<(), Failed> {
    let runs = run_behind_relay(&[], true, &[], jobs())?;
    if runs.len() < 100 {
        return Err(format!("the run had only {} transcripts", runs.len()).into());
    }
    // A few transcripts answer within a short wait of the bridge's (a subscribe
    // within the 500 ms before a new listen stream); with a relay process more
    // per transcript on a loaded machine, one can miss its wait. As mutants.py
    // counts, a failed transcript runs once more, alone, and only a second
    // failure counts: a text of ours without its mark fails every time.
    let first_failed: Vec<&str> = failed(&runs).iter().map(|ran| ran.path.as_str()).collect();
    let again = match first_failed.is_empty() {
        true => Vec::new(),
        false => run_behind_relay(&[], true, &first_failed, 1)?,
    };
    if !first_failed.is_empty() {
        eprintln!("ran again alone after a failure: {first_failed:?}");
    }
    if again.len() != first_failed.len() {
        return Err(format!("of {first_failed:?} run again, {} ran", again.len()).into());
    }
    let failed = failed(&again);
    if !failed.is_empty() {
        let names: Vec<&str> = failed.iter().map(|ran| ran.path.as_str()).collect();
        return Err(format!(
            "{} of {} transcripts failed: {names:?}\n{}",
            failed.len(),
            runs.len(),
            reports(&failed)
        )
        .into());
    }
    let not_applicable: Vec<&Ran> = runs
        .iter()
        .filter(|ran| {
            ran.skipped
                .as_deref()
                .is_some_and(|why| why.starts_with(NOT_APPLICABLE))
        })
        .collect();
    let expected_not_applicable =
        |path: &str| path.starts_with("m5/") || path.starts_with("recorded/");
    let missing: Vec<&str> = runs
        .iter()
        .filter(|ran| expected_not_applicable(&ran.path))
        .filter(|ran| {
            !ran.skipped
                .as_deref()
                .is_some_and(|why| why.starts_with(NOT_APPLICABLE))
        })
        .map(|ran| ran.path.as_str())
        .collect();
    if !missing.is_empty() || not_applicable.is_empty() {
        return Err(format!("not applicable in the wrong mode, or not at all: {missing:?}").into());
    }
    Ok(())
}

/// Behind the break variant `broken`, its transcripts must each fail, and
/// their reports show the broken text.
fn break_fails(broken: Break) -> Result<(), Failed> {
    let files = broken_in(broken);
    let runs = run_behind_relay(&["--break", broken.name()], true, &files, jobs())?;
    let text = broken_text(broken);
    let mut wrong = Vec::new();
    for file in files {
        match runs.iter().find(|ran| ran.path == file) {
            Some(ran) if ran.passed || ran.skipped.is_some() => {
                wrong.push(format!("{file} did not fail: {:?}", ran.skipped))
            }
            Some(ran) if !ran.report.contains(&text) => wrong.push(format!(
                "{file} failed, but its report does not show {text:?}:\n{}",
                ran.report
            )),
            Some(_) => {}
            None => wrong.push(format!("{file} did not run")),
        }
    }
    match wrong.is_empty() {
        true => Ok(()),
        false => Err(wrong.join("\n").into()),
    }
}

pub fn trials() -> Vec<Trial> {
    let mut trials = vec![
        // The relay's own transparency (stdin, line ends, exit codes, signals) is
        // in its trials of `passing`; in this run every frame that is not an error
        // response, every code, order and time limit stays exact behind it too.
        Trial::test(
            "proof: the whole suite passes in --contract mode behind the rewording relay",
            whole_suite_passes,
        ),
    ];
    for broken in Break::ALL {
        trials.push(Trial::test(
            format!(
                "proof: --contract fails behind the relay with --break {}",
                broken.name()
            ),
            move || break_fails(broken),
        ));
    }
    trials
}
