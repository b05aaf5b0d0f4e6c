//! The official TypeScript SDK (pinned in `interop/package-lock.json`) against
//! `bridge-embedded-server`, each major version on its own path. They need `npm ci
//! --prefix interop` first.
//!
//! - 1.x (`@modelcontextprotocol/sdk`), a client of revision 2025-11-25: its
//!   initialize selects the bridge inside the server, which does the input round of
//!   ask_name for it.
//! - 2.x (`@modelcontextprotocol/client`), a client of revision 2026-07-28: no
//!   initialize, so rmcp's transport answers without the bridge, and the client does
//!   the input round of ask_name itself (`input_required`, then the retry with
//!   `inputResponses`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../interop")
}

/// Runs `node <script> <bridge-embedded-server>` in `interop/` and returns its
/// report (stdout) after checking the exit code.
fn run_script(package: &str, script: &str) -> String {
    let interop = interop_dir();
    assert!(
        interop.join("node_modules").join(package).is_dir(),
        "{package} is not installed: run `npm ci --prefix interop` first"
    );
    let server = Path::new(env!("CARGO_BIN_EXE_bridge-embedded-server"));
    let output = Command::new("node")
        .arg(interop.join(script))
        .arg(server)
        .current_dir(&interop)
        .output()
        .expect("node runs: install Node.js 20 or later");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the interop run failed:\n{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    report
}

/// The checks that passed, after asserting that none failed and that the report
/// ends with the line of the scripts.
fn passed_checks(report: &str) -> Vec<&str> {
    assert!(report.ends_with("all checks passed\n"), "{report}");
    assert!(
        !report.lines().any(|line| line.starts_with("FAIL")),
        "{report}"
    );
    report
        .lines()
        .filter_map(|line| line.strip_prefix("ok   "))
        .collect()
}

#[test]
fn the_typescript_sdk_calls_the_tools_of_an_embedded_server_and_answers_its_input() {
    let report = run_script("@modelcontextprotocol/sdk", "embedded_stdio_client.mjs");
    assert_eq!(passed_checks(&report).len(), 6, "{report}");
}

#[test]
fn the_typescript_sdk_2_takes_the_modern_path_of_an_embedded_server_and_does_its_input_round() {
    let report = run_script("@modelcontextprotocol/client", "embedded_modern_client.mjs");
    let checks = passed_checks(&report);
    assert_eq!(checks.len(), 23, "{report}");
    for expected in [
        "the SDK probed with one server/discover on a sibling process (server/discover)",
        "the first line of the session process is tools/list, not initialize (tools/list)",
        "ask_name greets after the input round",
        "the retry carries the answer as inputResponses.name",
        "the retry echoes the requestState of the server",
        "in place: one process got server/discover, then tools/call (server/discover,tools/call)",
    ] {
        assert!(
            checks.contains(&expected),
            "{expected:?} is missing:\n{report}"
        );
    }
}
