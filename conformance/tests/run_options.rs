//! `mcp-conformance run --bridge PATH` (and `--fixture`, `--embedded`): a run of
//! the real runner against a wrapper of each executable, which notes that it was
//! started and then becomes the workspace's executable; an option wins over its
//! variable; a path that is missing, a folder or not executable stops the run with
//! exit code 2 and a line that names the option (or the variable) and the path.

// The wrappers are shell scripts: a test of POSIX hosts.
#![cfg(unix)]

use mcp_conformance::bins::Bins;
use mcp_conformance::paths;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const RUNNER: &str = env!("CARGO_BIN_EXE_mcp-conformance");

/// The workspace's executables, brought up to date once.
fn workspace_bins() -> &'static Bins {
    static BINS: OnceLock<Bins> = OnceLock::new();
    BINS.get_or_init(|| Bins::locate(RUNNER.into(), true).expect("the workspace's executables"))
}

/// An executable script at `dir/name` that appends `name` to `dir/started`, then
/// becomes `target`.
fn wrapper(dir: &Path, name: &str, target: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\necho {name} >> '{}'\nexec '{}' \"$@\"\n",
        dir.join("started").display(),
        target.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn started(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("started")).unwrap_or_default()
}

fn transcript(path: &str) -> String {
    paths::transcripts_dir()
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// The runner with `args`, without the variables of the executables (the test's own
/// environment must not choose them), plus `env`.
fn runner(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(RUNNER);
    command.arg("run").args(args);
    for variable in [
        "MCP_CONFORMANCE_BRIDGE",
        "MCP_CONFORMANCE_FIXTURE",
        "MCP_CONFORMANCE_EMBEDDED",
    ] {
        command.env_remove(variable);
    }
    command.envs(env.iter().copied());
    command.output().expect("the runner starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_passed(output: &Output, count: usize) {
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    assert!(
        stdout
            .lines()
            .any(|line| line == format!("{count} passed, 0 failed")),
        "{stdout}"
    );
}

#[test]
fn the_bridge_of_the_option_runs_the_transcript_and_wins_over_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let bridge = wrapper(dir.path(), "bridge", &workspace_bins().bridge);
    let output = runner(
        &[
            "--bridge",
            bridge.to_str().unwrap(),
            &transcript("m1/r4-null-cursor.jsonl"),
        ],
        &[("MCP_CONFORMANCE_BRIDGE", "/no/such/bridge")],
    );
    assert_passed(&output, 1);
    assert_eq!(started(dir.path()), "bridge\n");
}

#[test]
fn the_variable_names_the_bridge_when_no_option_does() {
    let dir = tempfile::tempdir().unwrap();
    let bridge = wrapper(dir.path(), "bridge", &workspace_bins().bridge);
    let output = runner(
        &[&transcript("m1/cli-version.jsonl")],
        &[("MCP_CONFORMANCE_BRIDGE", bridge.to_str().unwrap())],
    );
    assert_passed(&output, 1);
    assert_eq!(started(dir.path()), "bridge\n");
}

#[test]
fn the_fixture_and_the_embedded_server_of_the_options_run() {
    let dir = tempfile::tempdir().unwrap();
    let bins = workspace_bins();
    let fixture = wrapper(dir.path(), "fixture", &bins.fixture);
    let embedded = wrapper(dir.path(), "embedded", &bins.embedded().unwrap());
    let output = runner(
        &[
            "--fixture",
            fixture.to_str().unwrap(),
            "--embedded",
            embedded.to_str().unwrap(),
            "--jobs",
            "1",
            &transcript("m1/c3-progress-token-zero.jsonl"),
            &transcript("m5/embed-discover-answered.jsonl"),
        ],
        &[],
    );
    assert_passed(&output, 2);
    let mut started: Vec<String> = started(dir.path()).lines().map(str::to_owned).collect();
    started.sort();
    assert_eq!(started, ["embedded", "fixture"]);
}

/// The runner's exit code and its one error line, for a run that must not start.
fn refused(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut all = args.to_vec();
    let version = transcript("m1/cli-version.jsonl");
    all.push(&version);
    let output = runner(&all, env);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    stderr.trim_end().to_owned()
}

#[test]
fn a_missing_folder_or_not_executable_path_is_refused_with_exit_code_2() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    let plain = plain.to_str().unwrap();

    assert_eq!(
        refused(&["--bridge", missing], &[]),
        format!("mcp-conformance: --bridge {missing}: no such file")
    );
    assert_eq!(
        refused(&["--bridge", folder], &[]),
        format!("mcp-conformance: --bridge {folder}: is a folder, not an executable")
    );
    assert_eq!(
        refused(&["--fixture", plain], &[]),
        format!("mcp-conformance: --fixture {plain}: is not executable (no execute permission)")
    );
    // Checked even when no transcript of the run needs it.
    assert_eq!(
        refused(&["--embedded", missing], &[]),
        format!("mcp-conformance: --embedded {missing}: no such file")
    );
    assert_eq!(
        refused(&[], &[("MCP_CONFORMANCE_BRIDGE", missing)]),
        format!("mcp-conformance: MCP_CONFORMANCE_BRIDGE {missing}: no such file")
    );
}
