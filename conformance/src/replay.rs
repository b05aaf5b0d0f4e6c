//! Replays a recording of harness-sim (its `tap` or `<profile> --record`)
//! against the bridge, behind the relay, with the fixture as the upstream.
//!
//! The recorded client lines go out through harness-sim's player
//! ([`harness_sim::replay::play`], the one home of the replay), so that answers
//! follow their questions. Then the bridge's frames
//! are compared with the recorded ones: responses and the bridge's requests by
//! id, notifications by method and order, with the values that vary from run to
//! run (UUIDs, times) treated as equal. The first difference is shown as a diff.

use crate::checks::{self, CheckOptions};
use crate::format::Transcript;
use crate::launch::{Env, start_bridge};
use crate::outcome::{Failure, diff};
use harness_sim::record::{Dir, Payload, Transcript as Recording};
use serde_json::Value;
use std::collections::BTreeMap;
use tokio::time::Duration;

/// Replays `recording`; the failures, or none.
pub async fn replay(transcript: &Transcript, recording: &Recording, env: &Env) -> Vec<Failure> {
    let crate::launch::Launched {
        mut peer,
        hub,
        https: _https,
        secret_service: _secret_service,
    } = match start_bridge(transcript, env).await {
        Ok(started) => started,
        Err(error) => return vec![Failure::at(1, error.to_string())],
    };
    let wait = Duration::from_millis(transcript.header.timeout_ms);
    let mut failures = Vec::new();
    let mut received = match harness_sim::replay::play(&mut peer, recording, wait).await {
        Ok(received) => received,
        Err(error) => {
            failures.push(Failure {
                line: None,
                message: format!("cannot send a recorded client line: {error}"),
                detail: None,
            });
            Vec::new()
        }
    };
    peer.close_stdin().await;
    if peer.wait_exit(Duration::from_secs(10)).await.is_none() {
        failures.push(Failure {
            line: None,
            message: "the bridge did not stop within 10 s after the end of stdin (R7)".into(),
            detail: None,
        });
        peer.kill_tree();
    }
    while let Some(line) = peer.recv(Duration::from_millis(200)).await {
        received.push(harness_sim::replay::payload_of(line));
    }
    let expected: Vec<Payload> = recording
        .entries
        .iter()
        .filter(|e| e.dir == Dir::S2c)
        .map(|e| e.payload.clone())
        .collect();
    if let Some(difference) = first_difference(&expected, &received) {
        failures.push(difference);
    }
    let _ = peer.wait_stderr_closed(Duration::from_secs(2)).await;
    let upstream = hub.as_ref().map(|hub| hub.records()).unwrap_or_default();
    let options = CheckOptions {
        stdout_json: true,
        log_format: true,
        injected_stderr: Vec::new(),
        server_line_prefix: None,
        modern_stdout: false,
    };
    for wire in checks::check(&env.schemas, &peer.entries(), &upstream, &options) {
        failures.push(Failure {
            line: None,
            message: format!("wire check {}: {}", wire.rule, wire.message),
            detail: Some(wire.frame),
        });
    }
    failures
}

/// The key that pairs a recorded frame with a replayed one.
fn pair_key(payload: &Payload, seen: &mut BTreeMap<String, usize>) -> String {
    let base = match payload {
        Payload::Line(_) => "a text line".to_owned(),
        Payload::Frame(frame) => {
            match (frame.get("id"), frame.get("method").and_then(Value::as_str)) {
                (Some(id), Some(method)) => format!("the request {id} ({method}) of the bridge"),
                (Some(id), None) => format!("the response {id}"),
                (None, Some(method)) => format!("the notification {method}"),
                (None, None) => "a frame without id and method".to_owned(),
            }
        }
    };
    let count = seen.entry(base.clone()).or_insert(0);
    *count += 1;
    format!("{base} #{count}")
}

/// The value with what varies from run to run made equal: UUID strings.
pub fn normalize(value: &Value) -> Value {
    match value {
        Value::String(text) if crate::matchers::is_uuid(text) => Value::String("<uuid>".into()),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, value)| (key.clone(), normalize(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn as_value(payload: &Payload) -> Value {
    match payload {
        Payload::Frame(frame) => normalize(frame),
        Payload::Line(text) => Value::String(text.clone()),
    }
}

/// The first recorded frame that the replay did not give back equal, or the
/// first extra frame.
pub fn first_difference(expected: &[Payload], actual: &[Payload]) -> Option<Failure> {
    let mut seen = BTreeMap::new();
    let mut got: BTreeMap<String, Value> = BTreeMap::new();
    let mut got_order = Vec::new();
    for payload in actual {
        let key = pair_key(payload, &mut seen);
        got_order.push(key.clone());
        got.insert(key, as_value(payload));
    }
    let mut seen = BTreeMap::new();
    let mut expected_keys = Vec::new();
    for payload in expected {
        let key = pair_key(payload, &mut seen);
        expected_keys.push(key.clone());
        let want = as_value(payload);
        match got.get(&key) {
            None => {
                return Some(Failure {
                    line: None,
                    message: format!("the replay did not give {key}"),
                    detail: Some(format!("recorded: {want}")),
                });
            }
            Some(actual) if *actual != want => {
                return Some(Failure {
                    line: None,
                    message: format!("{key} differs from the recording"),
                    detail: Some(diff(&want, actual, "recorded", "replayed")),
                });
            }
            Some(_) => {}
        }
    }
    got_order
        .into_iter()
        .find(|key| !expected_keys.contains(key))
        .map(|key| Failure {
            line: None,
            message: format!("the replay gave {key}, which the recording does not have"),
            detail: got.get(&key).map(Value::to_string),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frames(values: &[Value]) -> Vec<Payload> {
        values.iter().cloned().map(Payload::Frame).collect()
    }

    #[test]
    fn responses_pair_by_id_in_any_order_and_uuids_vary() {
        let expected = frames(&[
            json!({"id":3,"result":{"a":1}}),
            json!({"id":4,"result":{"b":"0b9f2c1e-6a57-4c1d-9a3e-5d7f0c2b8a41"}}),
        ]);
        let actual = frames(&[
            json!({"id":4,"result":{"b":"11111111-2222-3333-4444-555555555555"}}),
            json!({"id":3,"result":{"a":1}}),
        ]);
        assert_eq!(first_difference(&expected, &actual), None);
    }

    #[test]
    fn the_first_difference_is_a_diff() {
        let expected = frames(&[json!({"id":3,"result":{"tools":[]}})]);
        let actual = frames(&[json!({"id":3,"result":{"tools":[],"nextCursor":null}})]);
        let failure = first_difference(&expected, &actual).unwrap();
        assert_eq!(
            failure.message,
            "the response 3 #1 differs from the recording"
        );
        assert!(
            failure
                .detail
                .unwrap()
                .contains("+    \"nextCursor\": null")
        );
        let extra = frames(&[json!({"id":3,"result":{"tools":[]}}), json!({"method":"x"})]);
        let failure = first_difference(&expected, &extra).unwrap();
        assert!(
            failure.message.contains("the notification x #1"),
            "{}",
            failure.message
        );
    }
}
