//! The official TypeScript SDK 1.x (pinned in `interop/package-lock.json`) as a
//! client of revision 2025-11-25 in front of the bridge and the fixture: M1 to M3
//! tried as a new user would. It needs `npm ci --prefix interop` first.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_typescript_sdk_lists_calls_answers_input_and_sees_list_changes_through_the_bridge() {
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../interop");
    assert!(
        interop
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "the TypeScript SDK is not installed: run `npm ci --prefix interop` first"
    );
    let fixture = workspace_bin::path("bridge-fixture-server", "bridge-fixture-server")
        .expect("the fixture builds");
    let output = Command::new("node")
        .arg(interop.join("legacy_stdio_client.mjs"))
        .arg(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .arg(&fixture)
        .current_dir(&interop)
        .output()
        .expect("node runs: install Node.js 20 or later");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the interop run failed:\n{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(report.ends_with("all checks passed\n"), "{report}");
}
