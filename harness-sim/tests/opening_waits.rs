//! The waits of the two openings: the Local harness's log line while the
//! initialize answer is outstanding, and copilot-cli's delay between
//! `notifications/initialized` and `tools/list`.

mod common;

use common::{client, scripted};
use harness_sim::client::{EventKind, INITIALIZE_WAIT_LOG_LINE, SimError};
use harness_sim::{AnswerPolicy, Profile, SimClient};
use tokio::time::Duration;

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
