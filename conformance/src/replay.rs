//! Replays a recording of harness-sim (its `tap` or `<profile> --record`)
//! against the bridge, behind the relay, with the fixture as the upstream.
//!
//! The recorded client lines go out in order; before each one the replay waits
//! until the bridge has written as many lines as it had at that point of the
//! recording, so that answers follow their questions. Then the bridge's frames
//! are compared with the recorded ones: responses and the bridge's requests by
//! id, notifications by method and order, with the values that vary from run to
//! run (UUIDs, times) treated as equal. The first difference is shown as a diff.

use crate::checks::{self, CheckOptions};
use crate::format::Transcript;
use crate::launch::{Env, recv, start_bridge};
use crate::outcome::{Failure, diff};
use harness_sim::record::{Dir, Payload, Transcript as Recording};
use serde_json::Value;
use std::collections::BTreeMap;
use tokio::time::{Duration, Instant};

/// Replays `recording`; the failures, or none.
pub async fn replay(transcript: &Transcript, recording: &Recording, env: &Env) -> Vec<Failure> {
    let (mut peer, hub) = match start_bridge(transcript, env).await {
        Ok(started) => started,
        Err(message) => return vec![Failure::at(1, message)],
    };
    let wait = Duration::from_millis(transcript.header.timeout_ms);
    let mut received: Vec<Payload> = Vec::new();
    let mut failures = Vec::new();
    let waits = awaitable_counts(recording);
    let responses_and_requests = recording
        .entries
        .iter()
        .filter(|e| e.dir == Dir::S2c)
        .filter(|e| {
            matches!(&e.payload, Payload::Frame(f) if f.get("id").is_some_and(|id| !id.is_null()))
        })
        .count();
    for (index, entry) in recording.entries.iter().enumerate() {
        match entry.dir {
            Dir::S2c | Dir::Stderr => {}
            Dir::C2s => {
                let count = waits.get(&index).copied().unwrap_or(0);
                receive_until(&mut peer, &mut received, count, wait).await;
                let sent = match &entry.payload {
                    Payload::Frame(frame) => peer.send(frame).await,
                    Payload::Line(line) => {
                        let mut bytes = line.clone().into_bytes();
                        bytes.push(b'\n');
                        peer.send_raw(&bytes).await
                    }
                };
                if let Err(error) = sent {
                    failures.push(Failure {
                        line: None,
                        message: format!("cannot send a recorded client line: {error}"),
                        detail: None,
                    });
                    break;
                }
            }
        }
    }
    receive_until(&mut peer, &mut received, responses_and_requests, wait).await;
    // The notifications that are still on their way.
    while let Some(line) = peer.recv(Duration::from_millis(150)).await {
        received.push(match line.raw {
            Some(text) => Payload::Line(text),
            None => Payload::Frame(line.frame),
        });
    }
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
        received.push(match line.raw {
            Some(text) => Payload::Line(text),
            None => Payload::Frame(line.frame),
        });
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

/// For each client line (by entry index): how many bridge lines to wait for
/// before sending it: the responses recorded before it to requests already
/// sent, and the requests of the bridge recorded before it (the client answers
/// them). Notifications are not waited for, and neither are responses to
/// requests sent only later: the two recorded directions are timed apart, so a
/// fast answer (or its progress) can be recorded before its request.
fn awaitable_counts(recording: &Recording) -> std::collections::HashMap<usize, usize> {
    let mut sent: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut waits = std::collections::HashMap::new();
    let mut before: Vec<&Payload> = Vec::new();
    for (index, entry) in recording.entries.iter().enumerate() {
        match entry.dir {
            Dir::S2c => before.push(&entry.payload),
            Dir::Stderr => {}
            Dir::C2s => {
                let count = before
                    .iter()
                    .filter(|payload| match payload {
                        // A response: only when its request went out already.
                        Payload::Frame(frame) if frame.get("method").is_none() => frame
                            .get("id")
                            .is_some_and(|id| !id.is_null() && sent.contains(&id.to_string())),
                        // A request of the bridge, which the client answers.
                        Payload::Frame(frame) => frame.get("id").is_some_and(|id| !id.is_null()),
                        Payload::Line(_) => false,
                    })
                    .count();
                waits.insert(index, count);
                if let Payload::Frame(frame) = &entry.payload
                    && frame.get("method").is_some()
                    && let Some(id) = frame.get("id")
                {
                    sent.insert(id.to_string());
                }
            }
        }
    }
    waits
}

async fn receive_until(
    peer: &mut harness_sim::StdioPeer,
    received: &mut Vec<Payload>,
    count: usize,
    wait: Duration,
) {
    let deadline = Instant::now() + wait;
    let with_id = |received: &Vec<Payload>| {
        received
            .iter()
            .filter(
                |p| matches!(p, Payload::Frame(f) if f.get("id").is_some_and(|id| !id.is_null())),
            )
            .count()
    };
    while with_id(received) < count {
        match recv(peer, deadline).await {
            Some(line) => received.push(match line.raw {
                Some(text) => Payload::Line(text),
                None => Payload::Frame(line.frame),
            }),
            None => break,
        }
    }
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
