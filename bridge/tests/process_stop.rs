//! The two ends of a bridge process (R7, the stop sequence, "When the upstream server
//! stops"): exit codes, bounded stops, and no process left behind.

use crate::pipes;

use pipes::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_session_gives_one_json_rpc_message_per_line_and_stops_at_the_end_of_stdin_while_idle() {
    let mut bridge = with_fixture(&[]);
    let result = initialize(&mut bridge).await;
    assert_eq!(
        result["result"]["serverInfo"]["name"],
        "bridge-fixture-server"
    );
    // After the first acknowledgment: one list change per declared list.
    expect_three_list_changes(&mut bridge).await;
    bridge
        .send(&call(2, "add", json!({"a":2,"b":3})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut bridge).await), "5");
    let (code, after) = stop(&mut bridge, Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
    assert!(
        after < Duration::from_secs(2),
        "stopped {after:?} after the end of stdin"
    );
    assert!(bridge.wait_group_gone(EXCHANGE).await);
    assert!(bridge.stderr_lines().iter().any(
        |l| l == "mcp-bridge-vscode: bridge: info: initialize from Visual Studio Code 1.141.0"
    ));
}

#[tokio::test]
async fn the_bridge_stops_at_the_end_of_stdin_during_a_slow_call_which_gets_no_response() {
    let mut bridge = with_fixture(&[]);
    initialize(&mut bridge).await;
    bridge
        .send(&call(2, "slow", json!({"ms":60000})))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (code, after) = stop(&mut bridge, Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
    assert!(
        after < Duration::from_secs(2),
        "stopped {after:?} after the end of stdin"
    );
    let answered = bridge
        .received_frames()
        .iter()
        .any(|frame| frame["id"] == 2);
    assert!(!answered, "the cancelled call got a response");
}

#[tokio::test]
async fn a_crash_of_the_upstream_fails_the_calls_in_flight_and_the_bridge_exits_one() {
    let mut bridge = with_fixture(&[]);
    initialize(&mut bridge).await;
    bridge
        .send(&call(2, "slow", json!({"ms":60000})))
        .await
        .unwrap();
    bridge.send(&call(3, "crash", json!({}))).await.unwrap();
    let mut failed = Vec::new();
    for _ in 0..2 {
        let error = response(&mut bridge).await;
        assert_eq!(error["error"]["code"], -32603);
        assert_eq!(error["error"]["data"]["cause"], "upstream_exited");
        failed.push(error["id"].as_u64().unwrap());
    }
    failed.sort();
    assert_eq!(failed, [2, 3]);
    let (status, _) = bridge.wait_exit(EXCHANGE).await.expect("the bridge exits");
    assert_eq!(status.code(), Some(1));
    assert!(bridge.wait_stderr_closed(EXCHANGE).await);
    let lines = bridge.stderr_lines();
    assert!(lines.iter().any(|l| l == "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (exit code 3); no restart is left"), "{lines:#?}");
    assert!(
        lines.iter().any(
            |l| l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 3"
        )
    );
}

#[tokio::test]
async fn a_crash_while_requests_of_the_bridge_wait_cancels_them_and_the_bridge_exits_one() {
    let mut bridge = with_fixture(&[]);
    initialize(&mut bridge).await;
    bridge.send(&call(2, "ask_form", json!({}))).await.unwrap();
    let form = response(&mut bridge).await;
    assert_eq!(form["id"], "b-1");
    bridge
        .send(&call(3, "crash", json!({"after_ms":200})))
        .await
        .unwrap();
    assert_eq!(
        text_of(&response(&mut bridge).await),
        "the server stops in 200 ms"
    );
    let cancel = recv(&mut bridge).await;
    assert_eq!(
        cancel,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"the upstream server stopped"}})
    );
    assert_eq!(
        response(&mut bridge).await["error"]["data"]["cause"],
        "upstream_exited"
    );
    let (status, _) = bridge.wait_exit(EXCHANGE).await.expect("the bridge exits");
    assert_eq!(status.code(), Some(1));
}

#[tokio::test]
async fn the_end_of_stdin_while_two_input_requests_wait_cancels_both_and_exits_zero() {
    let mut bridge = with_fixture(&[]);
    initialize(&mut bridge).await;
    bridge.send(&call(2, "multi", json!({}))).await.unwrap();
    let first = response(&mut bridge).await;
    let second = response(&mut bridge).await;
    assert_eq!(
        (first["id"].as_str(), second["id"].as_str()),
        (Some("b-1"), Some("b-2"))
    );
    bridge.close_stdin().await;
    for id in ["b-1", "b-2"] {
        let cancel = recv(&mut bridge).await;
        assert_eq!(cancel["method"], "notifications/cancelled");
        assert_eq!(cancel["params"]["requestId"], id);
    }
    let (status, after) = bridge
        .wait_exit(Duration::from_secs(5))
        .await
        .expect("the bridge exits");
    assert_eq!(status.code(), Some(0));
    assert!(after < Duration::from_secs(2));
}

#[tokio::test]
async fn an_upstream_that_closes_its_stdout_and_keeps_running_is_stopped_at_the_end_of_stdin() {
    let mut bridge = with_fixture(&["--close-stdout"]);
    bridge.send(&initialize_frame()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The grace after the end of its input, then a termination signal to its group.
    let (code, after) = stop(&mut bridge, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    assert!(
        after < Duration::from_secs(5),
        "stopped {after:?} after the end of stdin"
    );
    assert!(
        bridge.wait_group_gone(EXCHANGE).await,
        "the upstream still runs"
    );
}

#[tokio::test]
async fn an_upstream_that_closes_its_stdout_while_stdin_is_open_is_stopped_and_the_bridge_exits_one()
 {
    let mut bridge = with_fixture(&["--close-stdout"]);
    bridge.send(&initialize_frame()).await.unwrap();
    let error = response(&mut bridge).await;
    assert_eq!(error["id"], 1);
    assert_eq!(error["error"]["data"]["cause"], "upstream_exited");
    // The bridge stopped it: its exit is that signal's, reported as any other.
    assert_eq!(
        error["error"]["data"]["detail"],
        "the upstream server exited with signal 15"
    );
    let (status, _) = bridge.wait_exit(EXCHANGE).await.expect("the bridge exits");
    assert_eq!(status.code(), Some(1));
    assert!(bridge.wait_stderr_closed(EXCHANGE).await);
    assert!(bridge.stderr_lines().iter().any(|l| l == "mcp-bridge-vscode: bridge: warning: the upstream server closed its stdout but did not exit, thus the bridge stops it"));
    assert!(bridge.wait_group_gone(EXCHANGE).await);
}

#[tokio::test]
async fn the_watchdog_stops_a_bridge_that_does_not_stop_eight_seconds_after_the_end_of_stdin() {
    let mut bridge = start(
        &[],
        &[fixture_exe()],
        &[("MCP_BRIDGE_TEST_FAULT", "hang-at-end")],
    );
    initialize(&mut bridge).await;
    let (code, after) = stop(&mut bridge, Duration::from_secs(15)).await;
    assert_eq!(code, Some(0));
    assert!(
        after >= Duration::from_secs(8) && after < Duration::from_secs(10),
        "{after:?}"
    );
    assert!(bridge.stderr_lines().iter().any(|l| l == "mcp-bridge-vscode: vscode: warning: the bridge did not stop in 8 s after the end of stdin, thus it stops now"));
    assert!(
        bridge.wait_group_gone(EXCHANGE).await,
        "the watchdog left the upstream running"
    );
}

#[tokio::test]
async fn the_last_resort_watchdog_stops_a_bridge_whose_runtime_is_stuck() {
    let mut bridge = start(
        &[],
        &[fixture_exe()],
        &[("MCP_BRIDGE_TEST_FAULT", "block-at-end")],
    );
    initialize(&mut bridge).await;
    let (code, after) = stop(&mut bridge, Duration::from_secs(15)).await;
    assert_eq!(code, Some(0));
    assert!(
        after >= Duration::from_secs(9) && after < Duration::from_secs(11),
        "{after:?}"
    );
    let line = "mcp-bridge-vscode: vscode: warning: the bridge did not stop in 8 s after the end of stdin, thus it stops now";
    assert_eq!(
        bridge.stderr_lines().iter().filter(|l| *l == line).count(),
        1
    );
    assert!(
        bridge.wait_group_gone(EXCHANGE).await,
        "the watchdog left the upstream running"
    );
}

#[tokio::test]
async fn a_command_that_does_not_start_fails_initialize_and_the_bridge_goes_on() {
    let mut bridge = start(&[], &["/nonexistent/mcp-server".into()], &[]);
    bridge.send(&initialize_frame()).await.unwrap();
    let error = response(&mut bridge).await;
    assert_eq!(error["error"]["data"]["cause"], "spawn_failed");
    bridge
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
        .await
        .unwrap();
    assert_eq!(response(&mut bridge).await["result"], json!({}));
    assert!(bridge.stderr_lines().iter().any(|l| {
        l.starts_with("mcp-bridge-vscode: bridge: warning: cannot start the upstream command: ")
    }));
    let (code, _) = stop(&mut bridge, Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
}
