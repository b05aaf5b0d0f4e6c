//! Upstream servers that misbehave as processes (harness-sim's scripted upstream),
//! behind the real bridge executable. Each case: the error of the contract, the exit code,
//! the lines of the Output channel, and no process left behind (stderr ends, and
//! the process group of the upstream is empty).

use crate::pipes;

use harness_sim::process::StdioPeer;
use pipes::*;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::time::Instant;

/// harness-sim's scripted upstream with `script`: it writes its pid to stderr,
/// answers server/discover, and runs the script's actions for each other request
/// (`calls`: by the number of the call, from 1); without an action it answers
/// "ok <calls>" (see `harness_sim::scripted_upstream`).
fn scripted(script: Value) -> Vec<String> {
    vec![
        harness_sim_exe(),
        "scripted-upstream".into(),
        script.to_string(),
    ]
}

fn start_scripted(bridge_args: &[&str], script: Value) -> StdioPeer {
    start(bridge_args, &scripted(script), &[])
}

/// The pid of the scripted upstream, which the bridge starts at initialize (its
/// process group: the bridge starts it as the leader of its own group).
async fn upstream_pid(bridge: &StdioPeer) -> u32 {
    let line = bridge
        .wait_stderr(EXCHANGE, |l| l.starts_with("upstream pid "))
        .await
        .expect("the upstream started");
    line["upstream pid ".len()..].parse().unwrap()
}

/// The bridge exits with `code`, its stderr ends (no process holds it), and the
/// upstream's process group is empty.
async fn exits_with_nothing_left(bridge: &mut StdioPeer, code: i32, group: u32) -> Duration {
    let (status, after) = bridge
        .wait_exit(EXCHANGE)
        .await
        .expect("the bridge exits in time");
    assert_eq!(status.code(), Some(code), "{:?}", bridge.stderr_lines());
    assert!(
        bridge.wait_stderr_closed(EXCHANGE).await,
        "a process still holds the bridge's stderr: {:?}",
        bridge.stderr_lines()
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !harness_sim::process_group::is_gone(group) {
        assert!(
            Instant::now() < deadline,
            "the upstream's process group is not empty"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    after
}

fn has_line(bridge: &StdioPeer, line: &str) {
    assert!(
        bridge.stderr_lines().iter().any(|l| l == line),
        "no line {line:?} in {:?}",
        bridge.stderr_lines()
    );
}

fn exited(id: u64, report: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,
        "message":"The upstream server process stopped. See the Output channel of the server.",
        "data":{"cause":"upstream_exited","detail":format!("the upstream server exited with {report}")}}})
}

fn invalid(id: u64, detail: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,
        "message":"The upstream server sent a response that is not valid. See the Output channel of the server.",
        "data":{"cause":"invalid_response","detail":detail}}})
}

fn echo(id: u64) -> Value {
    call(id, "echo", json!({"text":"x"}))
}

#[tokio::test]
async fn an_upstream_that_exits_before_answering_discover_fails_initialize_and_the_bridge_exits_one()
 {
    let mut bridge = start_scripted(&[], json!({"on_discover": [{"exit": 5}]}));
    bridge.send(&initialize_frame()).await.unwrap();
    let group = upstream_pid(&bridge).await;
    assert_eq!(response(&mut bridge).await, exited(1, "code 5"));
    exits_with_nothing_left(&mut bridge, 1, group).await;
    has_line(
        &bridge,
        "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (exit code 5); no restart is left",
    );
    has_line(
        &bridge,
        "mcp-bridge-vscode: bridge: error: the upstream server exited with code 5",
    );
}

#[tokio::test]
async fn after_the_end_of_stdin_the_upstream_can_still_write_until_it_exits() {
    // At the end of its input the upstream writes one more line (a log message of a
    // server that finishes its work), 300 ms later, well inside shutdown_grace.
    // A failed write ends the upstream with its error line instead.
    let late = json!({"at_end": [
        {"sleep_ms": 300},
        {"raw": r#"{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "bye"}}"#},
        {"stderr": "late write: ok"},
    ]});
    let mut bridge = start_scripted(&[], late);
    initialize(&mut bridge).await;
    let (code, _) = stop(&mut bridge, Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
    let lines = bridge.stderr_lines();
    assert!(
        lines.iter().any(|line| line == "late write: ok"),
        "the upstream's last write failed: {lines:?}"
    );
}

#[tokio::test]
async fn frames_that_are_not_valid_fail_their_calls_and_the_next_call_works() {
    // Not JSON; a result and an error at once; 200 levels of nesting.
    let deep = format!(
        r#"{{"jsonrpc": "2.0", "id": {{id}}, "result": {{"content": {}1{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let calls = json!({"calls": {
        "1": [{"raw": r#"{"jsonrpc": "2.0", "id": {id}, "result": {"#}],
        "2": [{"send": {"jsonrpc": "2.0", "id": "{id}", "result": {}, "error": {"code": 1, "message": "x"}}}],
        "3": [{"raw": deep}],
    }});
    let mut bridge = start_scripted(&[], calls);
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    for (id, detail) in [
        (10, "it is not valid JSON"),
        (11, "it is not a valid JSON-RPC message"),
        (12, "it has more than 127 levels of nesting"),
    ] {
        bridge.send(&echo(id)).await.unwrap();
        assert_eq!(response(&mut bridge).await, invalid(id, detail));
        let suffix = format!(": {detail}, and the request {id} of the client fails");
        assert!(
            bridge.stderr_lines().iter().any(|l| {
                l.starts_with("mcp-bridge-vscode: mcp_router: warning: dropped a frame")
                    && l.ends_with(&suffix)
            }),
            "{:?}",
            bridge.stderr_lines()
        );
    }
    bridge.send(&echo(13)).await.unwrap();
    assert_eq!(text_of(&response(&mut bridge).await), "ok 4");
    bridge.close_stdin().await;
    let after = exits_with_nothing_left(&mut bridge, 0, group).await;
    assert!(after < Duration::from_secs(2), "{after:?}");
}

#[tokio::test]
async fn frames_over_the_line_limit_fail_their_calls_with_the_id_at_either_end() {
    // The first answer has its id first, the second its id last.
    let text = "x".repeat(10_000);
    let calls = json!({"calls": {
        "1": [{"raw": format!(r#"{{"jsonrpc": "2.0", "id": {{id}}, "result": {{"content": [{{"type": "text", "text": "{text}"}}]}}}}"#)}],
        "2": [{"raw": format!(r#"{{"jsonrpc": "2.0", "result": {{"content": [{{"type": "text", "text": "{text}"}}]}}, "id": {{id}}}}"#)}],
    }});
    let mut bridge = start_scripted(&["--max-line-bytes", "2000"], calls);
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    for id in [20, 21] {
        bridge.send(&echo(id)).await.unwrap();
        assert_eq!(
            response(&mut bridge).await,
            invalid(id, "it is longer than --max-line-bytes")
        );
        let prefix = "mcp-bridge-vscode: mcp_router: warning: dropped a frame of ";
        let suffix = format!(
            " bytes: it is longer than --max-line-bytes, and the request {id} of the client fails"
        );
        assert!(
            bridge
                .stderr_lines()
                .iter()
                .any(|l| l.starts_with(prefix) && l.ends_with(&suffix)),
            "{:?}",
            bridge.stderr_lines()
        );
    }
    bridge.send(&echo(22)).await.unwrap();
    assert_eq!(text_of(&response(&mut bridge).await), "ok 3");
    bridge.close_stdin().await;
    exits_with_nothing_left(&mut bridge, 0, group).await;
}

#[tokio::test]
async fn a_response_to_an_unknown_id_is_dropped_with_a_warning_and_the_call_is_answered_once() {
    let calls = json!({"calls": {"1": [
        {"send": {"jsonrpc": "2.0", "id": 777, "result": {"content": []}}},
        {"send": {"jsonrpc": "2.0", "id": "x", "result": {}}},
        "ok",
    ]}});
    let mut bridge = start_scripted(&[], calls);
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    bridge.send(&echo(30)).await.unwrap();
    assert_eq!(text_of(&response(&mut bridge).await), "ok 1");
    bridge
        .send(&json!({"jsonrpc":"2.0","id":31,"method":"ping"}))
        .await
        .unwrap();
    assert_eq!(response(&mut bridge).await["id"], 31);
    has_line(
        &bridge,
        "mcp-bridge-vscode: mcp_router: warning: dropped a response with the id 777: the bridge sent no request with this id",
    );
    has_line(
        &bridge,
        "mcp-bridge-vscode: mcp_router: warning: dropped a response with the id \"x\": the bridge sent no request with this id",
    );
    bridge.close_stdin().await;
    exits_with_nothing_left(&mut bridge, 0, group).await;
}

#[tokio::test]
async fn an_upstream_killed_by_a_signal_during_a_call_fails_it_and_the_bridge_exits_one() {
    let mut bridge = start_scripted(&[], json!({"calls": {"1": ["kill_self"]}}));
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    bridge.send(&echo(40)).await.unwrap();
    assert_eq!(response(&mut bridge).await, exited(40, "signal 9"));
    exits_with_nothing_left(&mut bridge, 1, group).await;
    has_line(
        &bridge,
        "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (signal 9); no restart is left",
    );
    has_line(
        &bridge,
        "mcp-bridge-vscode: bridge: error: the upstream server exited with signal 9",
    );
}

/// A grandchild that sleeps in the upstream's process group and holds stderr.
fn grandchild() -> Value {
    json!({"spawn": {"pid_line": false, "start": [{"sleep_ms": 300_000}]}})
}

/// The same, but it ignores the termination signal.
fn stubborn_grandchild() -> Value {
    json!({"spawn": {"pid_line": false, "start": [
        "ignore_term",
        {"stderr": "grandchild ready"},
        {"sleep_ms": 300_000},
    ]}})
}

#[tokio::test]
async fn a_crash_leaves_no_grandchild_of_the_upstream_behind() {
    let mut bridge = start_scripted(
        &[],
        json!({"start": [grandchild()], "calls": {"1": [{"exit": 3}]}}),
    );
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    bridge.send(&echo(50)).await.unwrap();
    assert_eq!(response(&mut bridge).await, exited(50, "code 3"));
    exits_with_nothing_left(&mut bridge, 1, group).await;
}

/// A grandchild that, at the termination signal, cleans up for 300 ms, writes
/// `grandchild cleaned up` and exits.
fn tidy_grandchild() -> Value {
    json!({"spawn": {"pid_line": false, "start": [
        {"on_term": [{"sleep_ms": 300}, {"stderr": "grandchild cleaned up"}]},
        {"stderr": "grandchild ready"},
        {"sleep_ms": 300_000},
    ]}})
}

/// A bridge after initialize with the upstream of `script`, whose grandchild has
/// written `grandchild ready`, and the upstream's process group.
async fn with_ready_grandchild(script: Value) -> (StdioPeer, u32) {
    with_ready_grandchild_in(script, &[]).await
}

/// The same, with the bridge's environment `env`.
async fn with_ready_grandchild_in(script: Value, env: &[(&str, &str)]) -> (StdioPeer, u32) {
    let mut bridge = start(&[], &scripted(script), env);
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    bridge
        .wait_stderr(EXCHANGE, |l| l == "grandchild ready")
        .await
        .expect("the grandchild started");
    (bridge, group)
}

#[tokio::test]
async fn after_a_crash_a_grandchild_gets_shutdown_grace_to_clean_up_after_the_termination_signal() {
    // The contract: a termination signal to the process group, and the kill only
    // after one more shutdown_grace (2 s); 300 ms of cleanup fit well inside it, and
    // a kill at once would cut them.
    let (mut bridge, group) =
        with_ready_grandchild(json!({"start": [tidy_grandchild()], "calls": {"1": [{"exit": 3}]}}))
            .await;
    bridge.send(&echo(55)).await.unwrap();
    assert_eq!(response(&mut bridge).await, exited(55, "code 3"));
    exits_with_nothing_left(&mut bridge, 1, group).await;
    has_line(&bridge, "grandchild cleaned up");
}

#[tokio::test]
async fn a_grandchild_that_ignores_the_termination_signal_is_killed_at_the_end_of_stdin() {
    let (mut bridge, group) =
        with_ready_grandchild(json!({"start": [stubborn_grandchild()]})).await;
    bridge.send(&echo(60)).await.unwrap();
    assert_eq!(text_of(&response(&mut bridge).await), "ok 1");
    // The upstream exits at the end of its input; its grandchild stays.
    bridge.close_stdin().await;
    let after = exits_with_nothing_left(&mut bridge, 0, group).await;
    assert!(after < Duration::from_secs(8), "{after:?}");
}

#[tokio::test]
async fn an_upstream_that_ignores_the_end_of_input_and_the_termination_signal_is_killed() {
    // After the end of its input, the upstream sleeps instead of exiting.
    let script = json!({"start": ["ignore_term"], "at_end": [{"sleep_ms": 300_000}]});
    let mut bridge = start_scripted(&[], script);
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    bridge.close_stdin().await;
    let after = exits_with_nothing_left(&mut bridge, 0, group).await;
    // shutdown_grace (2 s) for the end of input, 2 s more after the termination
    // signal, then the kill: before the watchdog (8 s).
    assert!(
        after >= Duration::from_secs(4) && after < Duration::from_secs(7),
        "{after:?}"
    );
    assert!(
        !bridge
            .stderr_lines()
            .iter()
            .any(|l| l.contains("did not stop in 8 s"))
    );
}

#[tokio::test]
async fn an_upstream_that_stops_reading_its_stdin_does_not_block_the_bridge() {
    // After discover and the line of the first call, the upstream never reads again.
    let mut bridge = start_scripted(&[], json!({"calls": {"1": [{"sleep_ms": 300_000}]}}));
    initialize(&mut bridge).await;
    let group = upstream_pid(&bridge).await;
    // 4 MiB for a pipe that holds 64 KiB: the writer of the bridge blocks.
    let big = "y".repeat(4 << 20);
    for id in [70, 71] {
        bridge
            .send(&call(id, "echo", json!({ "text": big })))
            .await
            .unwrap();
    }
    let started = Instant::now();
    for id in 72..82 {
        bridge
            .send(&json!({"jsonrpc":"2.0","id":id,"method":"ping"}))
            .await
            .unwrap();
        assert_eq!(
            response(&mut bridge).await,
            json!({"jsonrpc":"2.0","id":id,"result":{}})
        );
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    bridge.close_stdin().await;
    let after = exits_with_nothing_left(&mut bridge, 0, group).await;
    assert!(after < Duration::from_secs(5), "{after:?}");
    // The two calls got no response: they were cancelled by the end of stdin.
    assert!(bridge.try_recv().is_none());
}

#[tokio::test]
async fn a_panic_in_the_session_is_the_internal_error_line_and_exit_one_with_no_process_left() {
    let mut bridge = start(
        &[],
        &[fixture_exe()],
        &[("MCP_BRIDGE_TEST_FAULT", "panic-on:tools/list")],
    );
    initialize(&mut bridge).await;
    bridge.send(&echo(2)).await.unwrap();
    assert!(response(&mut bridge).await.get("result").is_some());
    bridge
        .send(&json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}))
        .await
        .unwrap();
    let (status, _) = bridge
        .wait_exit(EXCHANGE)
        .await
        .expect("the bridge exits, it does not hang");
    assert_eq!(status.code(), Some(1));
    // The fixture shares the bridge's stderr: its end proves the fixture is gone.
    assert!(bridge.wait_stderr_closed(EXCHANGE).await);
    let prefix = "mcp-bridge-vscode: vscode: error: the bridge stopped because of an internal error: the test fault panic-on:tools/list at bridge/src/session/mod.rs:";
    assert!(
        bridge.stderr_lines().iter().any(|l| l.starts_with(prefix)),
        "{:?}",
        bridge.stderr_lines()
    );
    // No response to the request that panicked, and nothing that is not JSON-RPC.
    while let Some(frame) = bridge.try_recv() {
        assert!(frame.is_json());
        assert_ne!(frame.frame["id"], 3);
    }
}

#[tokio::test]
async fn a_panic_kills_the_grandchild_that_ignores_the_end_of_input_and_the_termination_signal() {
    // The upstream itself exits at the end of its input when the bridge is gone;
    // its grandchild does not read that input and ignores the termination signal, so
    // only the kill of the process group by the panic path itself ends it.
    let (mut bridge, group) = with_ready_grandchild_in(
        json!({"start": [stubborn_grandchild()]}),
        &[("MCP_BRIDGE_TEST_FAULT", "panic-on:tools/list")],
    )
    .await;
    bridge
        .send(&json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}))
        .await
        .unwrap();
    exits_with_nothing_left(&mut bridge, 1, group).await;
}
