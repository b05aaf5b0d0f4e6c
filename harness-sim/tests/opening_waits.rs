//! The waits of the two openings: the Local harness's log line while the
//! initialize answer is outstanding, and copilot-cli's delay between
//! `notifications/initialized` and `tools/list` (60-300 ms observed).

use crate::common;

use common::{client, copilot_opening, script, scripted};
use harness_sim::client::{EventKind, INITIALIZE_WAIT_LOG_LINE, SimError};
use harness_sim::record::Dir;
use harness_sim::{AnswerPolicy, Profile, SimClient, StdioPeer};
use serde_json::json;
use tokio::time::Duration;

const COPILOT_START: &str = "copilot-1.0.92-start.jsonl";

/// A server that reads everything and never answers.
fn silent_server() -> Vec<String> {
    vec!["sh".into(), "-c".into(), "cat >/dev/null".into()]
}

/// The times (ms since the start) of the initialize wait lines in the log.
fn wait_lines(client: &SimClient) -> Vec<f64> {
    client
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::WaitingForInitialize { log_line } => {
                assert_eq!(log_line, INITIALIZE_WAIT_LOG_LINE);
                Some(e.t_ms)
            }
            _ => None,
        })
        .collect()
}

// Paused time: the server never writes, so the clock jumps from timer to timer
// and the times are exact.
#[tokio::test(start_paused = true)]
async fn local_logs_every_5_s_while_initialize_is_unanswered() {
    let mut client = client(Profile::Local141, &silent_server(), AnswerPolicy::new());
    client.options_mut().initialize_timeout = Duration::from_secs(12);
    let error = client.start().await.unwrap_err();
    assert!(
        matches!(&error, SimError::Timeout { method, after, .. }
            if method == "initialize" && *after == Duration::from_secs(12)),
        "{error:?}"
    );
    let times = wait_lines(&client);
    assert_eq!(times.len(), 2, "at 5 s and 10 s: {times:?}");
    assert!((5000.0..5050.0).contains(&times[0]), "{times:?}");
    assert!((10000.0..10050.0).contains(&times[1]), "{times:?}");
    // The report shows VS Code's text.
    let report = harness_sim::report::Report::of(&client, Vec::new(), Some(error.to_string()));
    assert_eq!(
        report
            .text()
            .matches("Waiting for server to respond to `initialize` request...")
            .count(),
        2
    );
}

#[tokio::test(start_paused = true)]
async fn copilot_has_no_initialize_wait_line() {
    let mut client = client(Profile::Copilot092, &silent_server(), AnswerPolicy::new());
    client.options_mut().discover_timeout = Duration::from_secs(10);
    client.options_mut().initialize_timeout = Duration::from_secs(12);
    let error = client.start().await.unwrap_err();
    assert!(
        matches!(&error, SimError::Timeout { method, .. } if method == "initialize"),
        "{error:?}"
    );
    assert!(client.events().iter().any(|e| matches!(
        &e.kind,
        EventKind::Discover { outcome } if outcome.starts_with("no answer")
    )));
    assert_eq!(wait_lines(&client), Vec::<f64>::new());
}

#[tokio::test]
async fn local_writes_no_wait_line_when_initialize_is_answered_at_once() {
    let mut client = scripted(
        Profile::Local141,
        &["local-1.141-start.jsonl"],
        AnswerPolicy::new(),
    );
    client.start().await.unwrap();
    assert_eq!(wait_lines(&client), Vec::<f64>::new());
    client.stop().await;
}

/// Milliseconds between the client's `notifications/initialized` and its first `tools/list`.
fn tools_list_gap_ms(client: &SimClient) -> f64 {
    let entries = client.peer().entries();
    let sent_at = |method: &str| {
        entries
            .iter()
            .find(|e| {
                e.dir == Dir::C2s
                    && e.payload.frame().and_then(|f| f.get("method")) == Some(&json!(method))
            })
            .map(|e| e.t_ms)
            .unwrap_or_else(|| panic!("no {method} was sent"))
    };
    sent_at("tools/list") - sent_at("notifications/initialized")
}

#[tokio::test]
async fn copilot_lists_tools_about_120_ms_after_initialized() {
    let mut client = scripted(Profile::Copilot092, &[COPILOT_START], AnswerPolicy::new());
    assert_eq!(
        client.options_mut().tools_list_delay,
        Duration::from_millis(120)
    );
    client.start().await.unwrap();
    assert_eq!(client.tool_names(), vec!["add", "echo"]);
    let gap = tools_list_gap_ms(&client);
    assert!((120.0..1500.0).contains(&gap), "{gap} ms");
    client.stop().await;
}

#[tokio::test]
async fn copilot_lists_tools_at_once_with_no_delay() {
    let files = [common::frame_file(COPILOT_START)];
    let peer = StdioPeer::spawn(&common::script_command(&files)).unwrap();
    let options = common::test_options(Profile::Copilot092).no_delay();
    let mut client =
        SimClient::with_options(Profile::Copilot092, peer, AnswerPolicy::new(), options);
    client.start().await.unwrap();
    assert_eq!(client.tool_names(), vec!["add", "echo"]);
    let gap = tools_list_gap_ms(&client);
    assert!(gap < 120.0, "{gap} ms");
    client.stop().await;
}

#[tokio::test]
async fn copilot_answers_a_ping_that_comes_during_its_delay_before_listing() {
    let mut entries = copilot_opening(json!({"tools": {}}));
    entries.extend([
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": "p-1", "method": "ping"}),
        ),
        ("c2s", json!({})),
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}),
        ),
    ]);
    let (_dir, path) = script(&entries);
    let mut client = client(
        Profile::Copilot095,
        &common::script_command(&[path]),
        AnswerPolicy::new(),
    );
    client.start().await.unwrap();
    let sent = client.peer().sent_frames();
    let last_two: Vec<String> = sent[sent.len() - 2..]
        .iter()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect();
    assert_eq!(
        last_two,
        vec![
            r#"{"jsonrpc":"2.0","id":"p-1","result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"progressToken":0}}}"#
                .to_owned(),
        ]
    );
    client.stop().await;
}
