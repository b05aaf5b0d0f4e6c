//! `mcp-conformance run --junit FILE`, read back by a JUnit-reading library of its
//! own: junitparser (PyPI, pinned), in a virtual environment under the target folder
//! (`tests/junit/read.py` prints what it read as JSON).
//!
//! The run is a real one against a bridge that fails one transcript and skips
//! another: a wrapper of the workspace's bridge in a folder named `release` (so the
//! transcripts that need the test faults of a debug build are skipped) that starts
//! it with the fault `keep-null-cursor` (so the transcript of R4's null cursor
//! fails), beside a transcript that passes, one of M2 and a replay of `recorded/`.

// The wrapper bridge is a shell script and the venv has bin/: a test of POSIX hosts.
#![cfg(unix)]

use mcp_conformance::bins::Bins;
use mcp_conformance::paths;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNNER: &str = env!("CARGO_BIN_EXE_mcp-conformance");
const JUNITPARSER: &str = "junitparser==5.0.3";

/// The Python of a virtual environment with junitparser, made on the first run.
fn junitparser_python() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("venv-junitparser-5.0.3");
    let python = venv.join("bin").join("python");
    let ready = || {
        Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m; assert m.version('junitparser') == '5.0.3'",
            ])
            .output()
            .is_ok_and(|output| output.status.success())
    };
    if ready() {
        return python;
    }
    let made = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status()
        .expect("python3 (with its module venv) runs");
    assert!(made.success(), "python3 -m venv {}: {made}", venv.display());
    let installed = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            JUNITPARSER,
        ])
        .status()
        .expect("pip runs");
    assert!(
        installed.success(),
        "pip install {JUNITPARSER}: {installed}"
    );
    assert!(ready(), "junitparser 5.0.3 is not in {}", venv.display());
    python
}

/// What junitparser read of `report`.
fn read_with_junitparser(report: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/junit/read.py");
    let output = Command::new(junitparser_python())
        .arg(script)
        .arg(report)
        .output()
        .expect("the reader runs");
    assert!(
        output.status.success(),
        "junitparser cannot read the report: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(report).unwrap_or_default()
    );
    serde_json::from_slice(&output.stdout).expect("the reader's JSON")
}

/// A bridge in `dir/release/` that is the workspace's with the fault `fault`.
fn faulty_release_bridge(dir: &Path, fault: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bins = Bins::locate(RUNNER.into(), false).expect("the workspace's executables");
    let folder = dir.join("release");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("mcp-bridge-vscode");
    let script = format!(
        "#!/bin/sh\nMCP_BRIDGE_TEST_FAULT={fault} exec '{}' \"$@\"\n",
        bins.bridge.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn suite<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|suite| suite["name"] == name)
        .unwrap_or_else(|| panic!("no suite {name}: {report:#}"))
}

fn case<'a>(suite: &'a Value, path: &str) -> &'a Value {
    suite["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|case| {
            case["properties"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p[0] == "path" && p[1] == path)
        })
        .unwrap_or_else(|| panic!("no case {path}: {suite:#}"))
}

fn counts(value: &Value) -> [u64; 4] {
    ["tests", "failures", "errors", "skipped"].map(|key| value[key].as_u64().unwrap_or(u64::MAX))
}

fn values<'a>(properties: &'a Value, name: &str) -> Vec<&'a str> {
    properties
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p[0] == name)
        .filter_map(|p| p[1].as_str())
        .collect()
}

#[test]
fn junitparser_reads_the_counts_the_failure_and_the_skip_of_a_real_run() {
    let dir = tempfile::tempdir().unwrap();
    let bridge = faulty_release_bridge(dir.path(), "keep-null-cursor");
    let report = dir.path().join("report.xml");
    let transcripts = paths::transcripts_dir();
    let files = [
        "m1/r4-null-cursor.jsonl",
        "m1/cli-version.jsonl",
        "m1/stop-internal-error-kills-upstream.jsonl",
        "m2/q4-bad-url.jsonl",
        "recorded/local-1.141.jsonl",
    ];
    let output = Command::new(RUNNER)
        .arg("run")
        .arg("--bridge")
        .arg(&bridge)
        .arg("--junit")
        .arg(&report)
        .args(files.map(|file| transcripts.join(file)))
        .output()
        .expect("the runner starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(1),
        "one transcript fails:\n{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|line| line == "3 passed, 1 failed, 1 skipped"),
        "{stdout}"
    );

    let read = read_with_junitparser(&report);
    assert_eq!(counts(&read), [5, 1, 0, 1], "{read:#}");
    let names: Vec<&str> = read["suites"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|suite| suite["name"].as_str())
        .collect();
    assert_eq!(names, ["M1", "M2", "recorded"]);

    let m1 = suite(&read, "M1");
    assert_eq!(counts(m1), [3, 1, 0, 1], "{m1:#}");
    assert_eq!(values(&m1["properties"], "mode"), ["strict"]);
    assert_eq!(counts(suite(&read, "M2")), [1, 0, 0, 0]);
    assert_eq!(counts(suite(&read, "recorded")), [1, 0, 0, 0]);

    let failed = case(m1, "m1/r4-null-cursor.jsonl");
    assert_eq!(failed["outcome"], "failure", "{failed:#}");
    assert_eq!(failed["name"], "m1/r4-null-cursor.jsonl [R4]");
    assert_eq!(failed["classname"], "M1");
    assert_eq!(values(&failed["properties"], "item"), ["R4"]);
    assert!(failed["time"].as_f64().unwrap() > 0.0, "{failed:#}");
    // The message is the first difference, as the runner's report gives it first;
    // the text is the whole report, its diff with the null cursor in it.
    let message = failed["message"].as_str().unwrap();
    let first_line = stdout
        .lines()
        .find(|line| line.starts_with("m1/r4-null-cursor.jsonl:"))
        .expect("the report's first failure");
    assert_eq!(message, first_line);
    let text = failed["text"].as_str().unwrap();
    assert!(text.starts_with(message), "{text}");
    assert!(text.contains("\"nextCursor\": null"), "{text}");

    let skipped = case(m1, "m1/stop-internal-error-kills-upstream.jsonl");
    assert_eq!(skipped["outcome"], "skipped", "{skipped:#}");
    assert_eq!(
        skipped["message"],
        "it needs the test faults of a debug build of the bridge"
    );
    assert_eq!(values(&skipped["properties"], "item"), ["STOP", "CLI"]);

    let passed = case(m1, "m1/cli-version.jsonl");
    assert_eq!(passed["outcome"], "passed", "{passed:#}");
    assert_eq!(passed["results"], 0);
}

#[test]
fn a_junit_file_that_cannot_be_written_stops_the_run_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("no-such-folder").join("report.xml");
    let output = Command::new(RUNNER)
        .arg("run")
        .arg("--junit")
        .arg(&report)
        .arg(paths::transcripts_dir().join("m1/cli-version.jsonl"))
        .output()
        .expect("the runner starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(
        stderr.starts_with(&format!("mcp-conformance: --junit {}: ", report.display())),
        "{stderr}"
    );
}

#[test]
fn the_matrix_and_the_json_name_the_mode_that_ran() {
    let run = |json: bool| {
        let output = Command::new(RUNNER)
            .arg("run")
            .args(json.then_some("--json"))
            .arg(paths::transcripts_dir().join("m1/cli-version.jsonl"))
            .output()
            .expect("the runner starts");
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let matrix = run(false);
    assert!(
        matrix.lines().any(|line| line
            == "mode: strict: every expectation of the transcripts is checked exactly as written"),
        "{matrix}"
    );
    let json: Value = serde_json::from_str(&run(true)).unwrap();
    assert_eq!(json["mode"], "strict");
}
