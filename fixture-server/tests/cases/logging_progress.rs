//! Request-scoped log messages and progress notifications.

use serde_json::{Value, json};

use crate::common::Fixture;

fn message(level: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
        "level": level, "logger": "fixture", "data": format!("a message at the level {level}"),
    }})
}

#[tokio::test]
async fn log_sends_messages_at_or_above_the_request_level_only() {
    let mut fixture = Fixture::start(&[]).await;
    let cases: [(Option<&str>, &[&str]); 6] = [
        (None, &[]),
        (Some("debug"), &["debug", "info", "warning", "error"]),
        (Some("info"), &["info", "warning", "error"]),
        (Some("notice"), &["warning", "error"]),
        (Some("error"), &["error"]),
        (Some("emergency"), &[]),
    ];
    for (level, expected) in cases {
        let extra = match level {
            Some(level) => json!({"io.modelcontextprotocol/logLevel": level}),
            None => json!({}),
        };
        let (before, response) = fixture
            .exchange_with("tools/call", json!({"name": "log"}), extra)
            .await;
        let expected: Vec<Value> = expected.iter().map(|level| message(level)).collect();
        assert_eq!(before, expected, "{level:?}");
        assert_eq!(
            response["result"]["content"][0]["text"],
            "logged 4 messages"
        );
    }
}

#[tokio::test]
async fn progress_uses_the_request_token_and_sends_nothing_without_one() {
    let mut fixture = Fixture::start(&[]).await;
    for token in [json!("p-1"), json!(0), json!(42)] {
        let (before, response) = fixture
            .exchange_with(
                "tools/call",
                json!({"name": "progress", "arguments": {"count": 3, "ms": 1}}),
                json!({"progressToken": token}),
            )
            .await;
        let expected: Vec<Value> = (1..=3)
            .map(|step| {
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": token, "progress": step, "total": 3, "message": format!("Step {step} of 3"),
                }})
            })
            .collect();
        assert_eq!(before, expected);
        assert_eq!(
            response["result"]["content"][0]["text"],
            "sent 3 progress notifications"
        );
    }
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "progress", "arguments": {"count": 2}}),
            json!({}),
        )
        .await;
    assert!(before.is_empty());
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "progress", "arguments": {"count": 0}}),
            json!({"progressToken": "none"}),
        )
        .await;
    assert!(before.is_empty());
}

#[tokio::test]
async fn log_undeclared_leaves_logging_out_and_still_logs() {
    let mut fixture = Fixture::start(&["--log-undeclared"]).await;
    let discover = fixture.result("server/discover", json!({})).await;
    let capabilities = discover["capabilities"].as_object().unwrap();
    assert!(!capabilities.contains_key("logging"), "{capabilities:?}");
    assert!(capabilities.contains_key("tools"));
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "log"}),
            json!({"io.modelcontextprotocol/logLevel": "warning"}),
        )
        .await;
    assert_eq!(before, [message("warning"), message("error")]);
}
