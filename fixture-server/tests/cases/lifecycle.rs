//! Cancellation, the end of input, the tools that end the process, and the command line.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use crate::common::{Fixture, methods, result_of, text_of};

#[tokio::test]
async fn a_cancelled_slow_call_gets_no_response_and_the_server_goes_on() {
    let mut fixture = Fixture::start(&[]).await;
    let slow = fixture
        .send_request(
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60000}}),
        )
        .await;
    let started = Instant::now();
    fixture.cancel(&slow).await;
    assert_eq!(
        fixture.call_text("echo", json!({"text": "after"})).await,
        "after"
    );
    fixture.assert_quiet(Duration::from_millis(200)).await;
    fixture.close_stdin().await;
    assert!(fixture.rest().await.is_empty());
    assert_eq!(fixture.exit_code().await, 0);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_cancelled_progress_call_stops_its_notifications() {
    let mut fixture = Fixture::start(&[]).await;
    let id = fixture
        .send_request_with(
            "tools/call",
            json!({"name": "progress", "arguments": {"count": 1000, "ms": 20}}),
            json!({"progressToken": "t"}),
        )
        .await;
    let first = fixture.next().await;
    assert_eq!(first["params"]["progress"], 1);
    fixture.cancel(&id).await;
    // Notifications already queued may arrive; then nothing, and never a response.
    tokio::time::sleep(Duration::from_millis(100)).await;
    fixture.close_stdin().await;
    let rest = fixture.rest().await;
    assert!(rest.len() < 10, "{rest:?}");
    assert!(
        rest.iter()
            .all(|frame| frame["method"] == "notifications/progress")
    );
    assert_eq!(fixture.exit_code().await, 0);
}

#[tokio::test]
async fn the_end_of_stdin_ends_listen_streams_cancels_slow_calls_and_exits_0_promptly() {
    let mut fixture = Fixture::start(&[]).await;
    let stream = fixture
        .send_request(
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await;
    assert_eq!(
        fixture.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    let _slow = fixture
        .send_request(
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60000}}),
        )
        .await;
    let quick = fixture
        .send_request(
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 100}}),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let closed = Instant::now();
    fixture.close_stdin().await;
    let rest = fixture.rest().await;
    assert_eq!(
        methods(&rest),
        [
            format!("response {stream}"),
            "notifications/cancelled".to_owned(),
            format!("response {quick}"),
        ]
    );
    assert_eq!(
        rest[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        stream
    );
    assert_eq!(
        result_of(rest[0].clone()),
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": stream}})
    );
    assert_eq!(rest[1]["params"]["requestId"], stream);
    assert_eq!(text_of(&result_of(rest[2].clone())), "slept 100 ms");
    assert_eq!(fixture.exit_code().await, 0);
    assert!(
        closed.elapsed() < Duration::from_secs(2),
        "{:?}",
        closed.elapsed()
    );
    let stderr = fixture.stderr().await;
    for line in stderr.lines() {
        assert!(line.starts_with("bridge-fixture-server: "), "{line}");
    }
    assert!(stderr.contains("bridge-fixture-server: info(stdio): the end of stdin: 1 listen streams ended, 1 requests cancelled"), "{stderr}");
}

#[tokio::test]
async fn crash_exits_3_at_once_without_a_response() {
    let mut fixture = Fixture::start(&[]).await;
    let _crash = fixture
        .send_request("tools/call", json!({"name": "crash"}))
        .await;
    assert_eq!(fixture.exit_code().await, 3);
    assert!(fixture.rest().await.is_empty());
}

#[tokio::test]
async fn crash_with_after_ms_answers_then_exits_3() {
    let mut fixture = Fixture::start(&[]).await;
    assert_eq!(
        fixture.call_text("crash", json!({"after_ms": 50})).await,
        "the server stops in 50 ms"
    );
    assert_eq!(fixture.exit_code().await, 3);
}

#[tokio::test]
async fn shutdown_ends_listen_streams_answers_and_exits_0() {
    let mut fixture = Fixture::start(&[]).await;
    let stream = fixture
        .send_request(
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true}}),
        )
        .await;
    fixture.next().await;
    let id = fixture
        .send_request(
            "tools/call",
            json!({"name": "shutdown", "arguments": {"after_ms": 50}}),
        )
        .await;
    let (before, response) = fixture.until_response(&id).await;
    assert_eq!(
        methods(&before),
        [
            format!("response {stream}"),
            "notifications/cancelled".to_owned()
        ]
    );
    assert_eq!(
        before[1]["params"],
        json!({"requestId": stream, "reason": "the server shuts down", "_meta": {"io.modelcontextprotocol/subscriptionId": stream}})
    );
    assert_eq!(
        text_of(&result_of(response)),
        "the server ended its listen streams and stops in 50 ms"
    );
    assert_eq!(fixture.exit_code().await, 0);
}

#[tokio::test]
async fn close_stdout_closes_stdout_at_once_and_keeps_running() {
    let mut fixture = Fixture::start(&["--close-stdout"]).await;
    assert!(fixture.rest().await.is_empty());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(fixture.running());
    fixture.kill().await;
    let stderr = fixture.stderr().await;
    assert!(
        stderr.contains("bridge-fixture-server: info(stdio): --close-stdout: stdout is closed"),
        "{stderr}"
    );
}

async fn run(args: &[&str]) -> (i32, String, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridge-fixture-server"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run");
    (
        output.status.code().expect("an exit code"),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[tokio::test]
async fn bad_arguments_exit_2_with_the_argument_and_the_usage() {
    for (args, message) in [
        (&["--nope"][..], "unexpected argument '--nope' found"),
        (
            &["--many-tools", "x"][..],
            "the value 'x' of --many-tools is not a number from 0 to 100000",
        ),
        (
            &["--many-tools"][..],
            "a value is required for '--many-tools <N>'",
        ),
        (
            &["--profile", "nope"][..],
            "the value 'nope' of --profile is not a profile (fixture, conformance)",
        ),
        (&["--auth"][..], "--auth needs --https or --http"),
    ] {
        let (code, stdout, stderr) = run(args).await;
        assert_eq!(code, 2, "{args:?}");
        assert!(stdout.is_empty());
        assert!(
            stderr.starts_with("error: ") && stderr.contains(message),
            "{stderr}"
        );
    }
}

#[tokio::test]
async fn help_and_version_print_to_stdout_and_exit_0() {
    let (code, stdout, stderr) = run(&["--help"]).await;
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(stdout.contains("Usage: bridge-fixture-server [OPTIONS]"));
    assert!(stdout.contains("--many-tools <N>") && stdout.contains("pages of 100"));
    let (code, stdout, _) = run(&["--version"]).await;
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        format!("bridge-fixture-server {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[tokio::test]
async fn an_empty_stdin_exits_0() {
    let (code, stdout, stderr) = run(&[]).await;
    assert_eq!(code, 0);
    assert!(stdout.is_empty());
    assert!(stderr.contains("bridge-fixture-server: info(stdio): serving MCP 2026-07-28 on stdio with the profile fixture: tools 21, prompts 3, resources 1"), "{stderr}");
}
