//! The official TypeScript SDK 1.x (pinned in `interop/package-lock.json`) as a
//! client of revision 2025-11-25 in front of `bridge-embedded-server`: its
//! initialize selects the bridge inside the server, which does the input round of
//! ask_name for it. It needs `npm ci --prefix interop` first.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_typescript_sdk_calls_the_tools_of_an_embedded_server_and_answers_its_input() {
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../interop");
    assert!(
        interop
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "the TypeScript SDK is not installed: run `npm ci --prefix interop` first"
    );
    let server = PathBuf::from(env!("CARGO_BIN_EXE_bridge-embedded-server"));
    let output = Command::new("node")
        .arg(interop.join("embedded_stdio_client.mjs"))
        .arg(&server)
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
