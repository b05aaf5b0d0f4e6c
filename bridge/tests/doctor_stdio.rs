//! `mcp-bridge-vscode doctor -- <command>`: the report of a stdio upstream, for the
//! fixture and for each of its faults, for its conformance profile, for servers
//! that write logs on stdout, do not start or stop at once, for a scripted server
//! with names and schemas that VS Code cannot take, and for a server of revision
//! 2025-11-25 only. Each finding is checked by its id, its status and its words,
//! and the text output by its columns.

use crate::doctor_run::{IDS, doctor, run};
use crate::pipes::fixture_exe;
use std::path::{Path, PathBuf};

/// A Python script as an upstream command.
fn python_server(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// A server of revision 2025-11-25 only: initialize, and -32601 for the rest.
const OLD_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message:
        continue
    if message.get("method") == "initialize":
        answer = {"result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                             "serverInfo": {"name": "old-server", "version": "1.0.0"}}}
    else:
        answer = {"error": {"code": -32601, "message": "Method not found"}}
    answer.update({"jsonrpc": "2.0", "id": message["id"]})
    print(json.dumps(answer), flush=True)
"#;

/// A server of revision 2026-07-28 whose tools VS Code cannot all take: two names
/// that become one id, a name with a dot, a schema that is not draft-07.
const ODD_TOOLS_SERVER: &str = r#"
import json, sys
DEEP = {"type": "string"}
for _ in range(70):
    DEEP = {"type": "array", "items": DEEP}
TOOLS = [
    {"name": "files.read", "inputSchema": {"type": "object"}},
    {"name": "files_read", "inputSchema": {"type": "object"}},
    {"name": "broken", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}}},
    {"name": "deep", "inputSchema": DEEP},
]
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "server/discover":
        answer = {"result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                             "capabilities": {"tools": {}},
                             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "odd-tools", "version": "1.0.0"}}}}
    elif method == "tools/list":
        answer = {"result": {"resultType": "complete", "tools": TOOLS}}
    else:
        answer = {"error": {"code": -32601, "message": "Method not found"}}
    answer.update({"jsonrpc": "2.0", "id": message["id"]})
    print(json.dumps(answer), flush=True)
"#;

/// A server of revision 2026-07-28 whose tool names and error message carry
/// terminal controls: OSC 52 (writes the clipboard), OSC 0 (sets the title), CSI
/// sequences in their 7-bit and C1 forms, DEL.
const CONTROLS_SERVER: &str = r#"
import json, sys
TOOLS = [
    {"name": "\x1b]52;c;aGVsbG8=\x07copy", "inputSchema": {"type": "object"}},
    {"name": "\x1b]0;pwned\x07title", "inputSchema": {"type": "object"}},
    {"name": "\x1b[2J\x1b[Hclear", "inputSchema": {"type": "object"}},
    {"name": "\x9b31mred\x7f", "inputSchema": {"type": "object"}},
]
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "server/discover":
        answer = {"result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                             "capabilities": {"tools": {}, "prompts": {}},
                             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "controls", "version": "1.0.0"}}}}
    elif method == "tools/list":
        answer = {"result": {"resultType": "complete", "tools": TOOLS}}
    elif method == "prompts/list":
        answer = {"error": {"code": -32603, "message": "\x1b[1A\x1b[2K\x1b]0;done\x07VS Code will work \x9b2K"}}
    else:
        answer = {"error": {"code": -32601, "message": "Method not found"}}
    answer.update({"jsonrpc": "2.0", "id": message["id"]})
    print(json.dumps(answer), flush=True)
"#;

/// A server of revision 2026-07-28 that declares no logging and, during the call
/// of its tool, sends a log message, a progress notification for a token that is
/// not the bridge's, and a notification that no revision knows.
const NOISY_SERVER: &str = r#"
import json, sys
def send(message):
    print(json.dumps(message), flush=True)
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "server/discover":
        answer = {"result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                             "capabilities": {"tools": {}},
                             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "noisy", "version": "1.0.0"}}}}
    elif method == "tools/list":
        answer = {"result": {"resultType": "complete",
                             "tools": [{"name": "noisy", "inputSchema": {"type": "object"}}]}}
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "logger": "noisy", "data": "a message at the level info"}})
        send({"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": "not-a-token-of-the-bridge", "progress": 1}})
        send({"jsonrpc": "2.0", "method": "notifications/example/unknown", "params": {}})
        answer = {"result": {"resultType": "complete",
                             "content": [{"type": "text", "text": "done"}], "isError": False}}
    else:
        answer = {"error": {"code": -32601, "message": "Method not found"}}
    answer.update({"jsonrpc": "2.0", "id": message["id"]})
    send(answer)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_passes_with_its_tools_lists_listen_stream_and_the_repairs_of_the_bridge() {
    let report = doctor(&["--", &fixture_exe()], &[]).await;
    report.assert_well_formed();
    assert_eq!(report.code, Some(0), "{}", report.stdout);
    assert_eq!(
        report.ids(),
        IDS.iter()
            .copied()
            .filter(|id| !id.starts_with("sign_in.")
                && ![
                    "reach.proxy",
                    "reach.dns",
                    "reach.tcp",
                    "reach.tls",
                    "reach.post"
                ]
                .contains(id))
            .collect::<Vec<_>>()
    );
    report.expect("reach.command", "pass", "started");
    report.expect("reach.stdout", "pass", "every line on stdout is JSON-RPC");
    report.expect("revision.discover", "pass", "revision 2026-07-28");
    report.expect("revision.capabilities", "pass", "tools (listChanged)");
    report.expect("vscode.initialize", "pass", "bridge-fixture-server");
    report.expect("vscode.tools", "pass", "21 tools in 1 page");
    report.expect("vscode.tool_names", "pass", "21 tool names");
    report.expect(
        "vscode.tool_schemas",
        "warning",
        "the bridge repairs 3 places",
    );
    assert!(
        report.finding("vscode.tool_schemas")["lines"]
            .as_array()
            .unwrap()
            .contains(&"mcp-bridge-vscode: bridge: info: tool 'bare_array': added an items schema at '/properties/values' of the input schema".into()),
        "{}",
        report.stdout
    );
    report.expect("vscode.prompts", "pass", "3 prompts");
    report.expect("vscode.resources", "pass", "1 resource in 1 page");
    report.expect("vscode.ping", "pass", "answered ping");
    report.expect("vscode.listen", "pass", "notifications/tools/list_changed");
    report.expect("vscode.call", "skipped", "unless --call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_of_the_fixture_over_stdio_gives_its_finding() {
    // (the fixture's options, the finding, its status, words of its summary, of its advice)
    let cases: [(&[&str], &str, &str, &str, &str); 6] = [
        (
            &["--close-stdout"],
            "reach.command",
            "fail",
            "stopped before it answered server/discover",
            "wrote on stderr (its last lines above)",
        ),
        (
            &["--anonymous"],
            "vscode.initialize",
            "warning",
            "bridge-fixture-server",
            "Give the server a name in its serverInfo",
        ),
        (
            &["--icons"],
            "vscode.icons",
            "warning",
            "VS Code drops",
            "data: URIs",
        ),
        (
            &["--array-output"],
            "vscode.tool_schemas",
            "warning",
            "the bridge repairs",
            "give output schemas the type object",
        ),
        (
            &["--many-tools", "150"],
            "vscode.tools",
            "warning",
            "171 tools in 2 pages",
            "at most 128 tools",
        ),
        (
            &["--no-completions"],
            "revision.capabilities",
            "pass",
            "VS Code gets the capabilities: logging, prompts",
            "",
        ),
    ];
    for (options, id, status, summary, advice) in cases {
        let mut args = vec!["--", "placeholder"];
        let fixture = fixture_exe();
        args[1] = &fixture;
        args.extend_from_slice(options);
        let report = doctor(&args, &[]).await;
        report.assert_well_formed();
        report.expect(id, status, summary);
        assert!(
            report.finding(id)["advice"]["text"]
                .as_str()
                .unwrap_or_default()
                .contains(advice),
            "{options:?}: {}",
            report.stdout
        );
    }
    let array_output = doctor(&["--", &fixture_exe(), "--array-output"], &[]).await;
    assert!(
        array_output
            .text("vscode.tool_schemas")
            .contains("the output schemas of 'array_output' go"),
        "{}",
        array_output.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_profile_of_the_fixture_gives_its_report() {
    let report = doctor(&["--", &fixture_exe(), "--profile", "conformance"], &[]).await;
    report.assert_well_formed();
    assert_eq!(report.code, Some(0), "{}", report.stdout);
    report.expect("revision.discover", "pass", "revision 2026-07-28");
    report.expect("vscode.tools", "pass", "tools in 1 page");
    report.expect("vscode.resource_templates", "pass", "resource template");
    report.expect("vscode.ping", "pass", "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_line_on_stdout_warns_and_a_command_that_does_not_start_or_exits_fails_reach() {
    let logging = format!("echo 'starting the server'; exec '{}'", fixture_exe());
    let report = doctor(&["--", "/bin/sh", "-c", &logging], &[]).await;
    report.assert_well_formed();
    // The bridge drops the line and VS Code works: a warning, and exit code 0.
    report.expect(
        "reach.stdout",
        "warning",
        "the server wrote 1 line on stdout that is not JSON-RPC: the bridge drops it with a warning line and reads on, so VS Code works",
    );
    assert_eq!(report.code, Some(0), "{}", report.stdout);
    let two = format!("echo one; echo two; exec '{}'", fixture_exe());
    let plural = doctor(&["--", "/bin/sh", "-c", &two], &[]).await;
    plural.expect(
        "reach.stdout",
        "warning",
        "2 lines on stdout that are not JSON-RPC: the bridge drops them",
    );
    let lines = report.finding("reach.stdout")["lines"].to_string();
    assert!(
        lines.contains("mcp-bridge-vscode: mcp_router: warning: dropped"),
        "{lines}"
    );
    assert!(
        report
            .text("reach.stdout")
            .contains("Write the logs of the server to stderr")
    );
    // The bridge drops the line, and the rest still works.
    report.expect("vscode.tools", "pass", "21 tools");

    let missing = doctor(&["--", "/nonexistent/mcp-server"], &[]).await;
    missing.assert_well_formed();
    missing.expect("reach.command", "fail", "did not start");
    assert_eq!(missing.finding("reach.command")["cause"], "spawn_failed");
    assert!(
        missing.finding("reach.command")["lines"][0]
            .as_str()
            .unwrap()
            .starts_with("mcp-bridge-vscode: bridge: warning: cannot start the upstream command: "),
        "{}",
        missing.stdout
    );
    missing.expect("revision.discover", "skipped", "");
    missing.expect("vscode.tools", "skipped", "");

    let exits = doctor(&["--", "/bin/sh", "-c", "exit 3"], &[]).await;
    exits.assert_well_formed();
    assert!(
        exits
            .text("reach.command")
            .contains("the command wrote nothing on stderr"),
        "{}",
        exits.stdout
    );
    // The summary itself says how the command ended, not only the lines under it.
    exits.expect(
        "reach.command",
        "fail",
        "stopped before it answered server/discover: the upstream server exited with code 3",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_revision_2025_11_25_only_is_told_that_vscode_can_use_it_directly() {
    let dir = tempfile::tempdir().unwrap();
    let script = python_server(dir.path(), "old_server.py", OLD_SERVER);
    let report = doctor(&["--", "python3", script.to_str().unwrap()], &[]).await;
    report.assert_well_formed();
    report.expect(
        "revision.discover",
        "fail",
        "speaks revision 2025-11-25, not 2026-07-28: VS Code can use it directly",
    );
    assert!(
        report
            .text("revision.discover")
            .contains("without mcp-bridge-vscode and --"),
        "{}",
        report.stdout
    );
    assert!(
        report
            .text("revision.discover")
            .contains("server/discover failed"),
        "the line of the bridge: {}",
        report.stdout
    );
    report.expect("vscode.tools", "skipped", "initialize failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_that_collide_in_vscode_and_schemas_that_vscode_omits_fail() {
    let dir = tempfile::tempdir().unwrap();
    let script = python_server(dir.path(), "odd_tools.py", ODD_TOOLS_SERVER);
    let report = doctor(&["--", "python3", script.to_str().unwrap()], &[]).await;
    report.assert_well_formed();
    assert_eq!(report.code, Some(1));
    report.expect("vscode.tools", "pass", "4 tools");
    report.expect(
        "vscode.tool_names",
        "fail",
        "VS Code cannot tell some tools apart",
    );
    assert!(
        report
            .text("vscode.tool_names")
            .contains("'files.read' and 'files_read' get one id"),
        "{}",
        report.stdout
    );
    report.expect("vscode.tool_schemas", "fail", "VS Code omits 1 tool");
    assert_eq!(
        report.finding("vscode.tool_schemas")["lines"][0],
        "VS Code: 1 tools have invalid JSON schemas and will be omitted"
    );
    let deep_line = format!(
        "mcp-bridge-vscode: bridge: info: tool 'deep': the input schema at '{}' is too deep to examine",
        "/items".repeat(64)
    );
    assert_eq!(
        report.finding("vscode.tool_schemas")["lines"][1],
        deep_line.as_str(),
        "{}",
        report.stdout
    );
    report.expect("vscode.listen", "pass", "declares no list changes");
    report.expect("vscode.prompts", "skipped", "declares no prompts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_made_only_with_call_and_its_answer_is_reported() {
    let report = doctor(
        &[
            "--call",
            "echo",
            "--arguments",
            r#"{"text":"hello"}"#,
            "--",
            &fixture_exe(),
        ],
        &[],
    )
    .await;
    report.assert_well_formed();
    report.expect(
        "vscode.call",
        "pass",
        "'echo' answered with 1 content block (text)",
    );
    assert!(
        !report.stdout.contains("hello"),
        "the output of a tool is not reported"
    );
    let unknown = doctor(&["--call", "no_such_tool", "--", &fixture_exe()], &[]).await;
    unknown.assert_well_formed();
    assert_ne!(unknown.status("vscode.call"), "pass", "{}", unknown.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_report_is_aligned_without_colour_and_bad_arguments_exit_2_with_the_usage() {
    let output = run(&["--", &fixture_exe()], &[("NO_COLOR", "1")]).await;
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.starts_with("mcp-bridge-vscode doctor "), "{text}");
    assert!(
        text.contains("\nReach\n  pass     reach.command  "),
        "{text}"
    );
    assert!(text.contains("\nWhat VS Code will get\n"), "{text}");
    assert!(text.trim_end().ends_with("failed, 1 skipped)."), "{text}");
    // The status, the id and the summary in three columns: the summary of every
    // finding starts at one column.
    let summary_columns: Vec<usize> = text
        .lines()
        .filter(|line| {
            ["  pass ", "  warning ", "  fail ", "  skipped "]
                .iter()
                .any(|s| line.starts_with(s))
        })
        .map(|line| {
            let after_id = 11 + line[11..].find(' ').unwrap();
            after_id + line[after_id..].find(|c: char| c != ' ').unwrap()
        })
        .collect();
    assert!(summary_columns.len() > 10, "{text}");
    assert!(
        summary_columns.windows(2).all(|pair| pair[0] == pair[1]),
        "{summary_columns:?}\n{text}"
    );

    for (args, line) in [
        (
            vec!["--sign-in", "--", "/abs/server"],
            "the option --sign-in is for the URL form, not for -- and a command",
        ),
        (
            vec!["--frobnicate", "--", "/abs/server"],
            "the option --frobnicate is not known",
        ),
        (
            vec![],
            "the upstream command is missing: write -- and the command of the server",
        ),
    ] {
        let output = run(&args, &[]).await;
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty());
        assert!(
            stderr.starts_with(&format!("mcp-bridge-vscode: vscode: error: {line}\nUsage: mcp-bridge-vscode doctor [options] <url>\n")),
            "{stderr}"
        );
    }
    // The lines of the bridge stay in the report, unless --log-level asks for them.
    let quiet = run(&["--", &fixture_exe()], &[]).await;
    let quiet = String::from_utf8(quiet.stderr).unwrap();
    assert!(!quiet.contains("mcp-bridge-vscode: bridge:"), "{quiet}");
    let echoed = run(&["--log-level", "info", "--", &fixture_exe()], &[]).await;
    let echoed = String::from_utf8(echoed.stderr).unwrap();
    assert!(
        echoed.contains("mcp-bridge-vscode: bridge: info: the upstream server is ready"),
        "{echoed}"
    );
    let help = run(&["--help"], &[]).await;
    let help = String::from_utf8(help.stdout).unwrap();
    for option in [
        "--json",
        "--sign-in",
        "--call",
        "--arguments",
        "--ca-file",
        "--redirect-port",
    ] {
        assert!(help.contains(option), "{option}: {help}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_report_writes_no_control_character_of_the_server_to_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let script = python_server(dir.path(), "controls.py", CONTROLS_SERVER);
    let output = run(&["--", "python3", script.to_str().unwrap()], &[]).await;
    let text = String::from_utf8(output.stdout).unwrap();
    let controls: Vec<char> = text
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert!(controls.is_empty(), "{controls:?} in:\n{text}");
    // The names and the message are there, escaped as the lines of the bridge are.
    for shown in [
        "\\u{1b}]52;c;aGVsbG8=\\u{7}copy",
        "\\u{1b}]0;pwned\\u{7}title",
        "\\u{1b}[2J\\u{1b}[Hclear",
        "\\u{9b}31mred\\u{7f}",
        "\\u{1b}[1A\\u{1b}[2K\\u{1b}]0;done\\u{7}VS Code will work \\u{9b}2K",
    ] {
        assert!(text.contains(shown), "{shown} not in:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_exits_at_its_start_has_its_last_stderr_lines_quoted_escaped() {
    let script = "for n in $(seq 1 30); do echo \"loading module $n\" >&2; done; \
                  printf 'Error: \\033]0;pwned\\007no API_KEY in the environment\\n' >&2; exit 3";
    let report = doctor(&["--", "/bin/sh", "-c", script], &[]).await;
    report.assert_well_formed();
    report.expect("reach.command", "fail", "exited with code 3");
    let details: Vec<&str> = report.finding("reach.command")["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|detail| detail.as_str())
        .collect();
    // The last lines, a bounded number, escaped also in --json.
    assert_eq!(details.len(), 10, "{details:?}");
    assert_eq!(details[0], "stderr: loading module 22");
    assert_eq!(
        details[9],
        "stderr: Error: \\u{1b}]0;pwned\\u{7}no API_KEY in the environment"
    );
    let text = run(&["--", "/bin/sh", "-c", script], &[]).await;
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("- stderr: Error: \\u{1b}]0;pwned\\u{7}no API_KEY in the environment\n"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_messages_of_the_fixture_reach_vscode_during_the_call() {
    let report = doctor(&["--call", "log", "--", &fixture_exe()], &[]).await;
    report.assert_well_formed();
    assert_eq!(report.code, Some(0), "{}", report.stdout);
    // The fixture declares logging; at the level info it sends info, warning, error.
    report.expect(
        "vscode.logging",
        "pass",
        "VS Code sets the log level info (the initialize result declares logging); the server sent 3 log messages at info or above, and VS Code got 3",
    );
    report.expect("vscode.call", "pass", "'log' answered");
    assert!(
        report
            .text("vscode.call")
            .contains("during the call VS Code got notifications/message (3)"),
        "{}",
        report.stdout
    );
    // Without --call the fixture logs nothing.
    let quiet = doctor(&["--", &fixture_exe()], &[]).await;
    quiet.expect("vscode.logging", "pass", "the server sent no log message");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notifications_that_the_bridge_did_not_forward_during_the_call_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let script = python_server(dir.path(), "noisy.py", NOISY_SERVER);
    let report = doctor(
        &["--call", "noisy", "--", "python3", script.to_str().unwrap()],
        &[],
    )
    .await;
    report.assert_well_formed();
    report.expect("vscode.call", "warning", "the bridge did not forward");
    let call = report.text("vscode.call");
    for part in [
        "notifications/example/unknown (1 of 1)",
        "notifications/progress (1 of 1)",
        "mcp-bridge-vscode: mcp_router: debug: dropped the notification notifications/example/unknown of the upstream server",
        "mcp-bridge-vscode: mcp_router: debug: dropped a progress notification for no request in flight",
    ] {
        assert!(call.contains(part), "{part} not in {call}");
    }
    // The log message of a server that declares no logging reaches VS Code: the
    // bridge declares logging to VS Code itself (O5 for every server).
    report.expect(
        "vscode.logging",
        "pass",
        "the server sent 1 log message at info or above, and VS Code got 1",
    );
    assert!(
        call.contains("VS Code got notifications/message (1)"),
        "{call}"
    );
}
