//! Plays the client side of a recording against a server and compares what
//! the server answers with what was recorded.
//!
//! Before each recorded client line, the replay waits until the server has sent
//! as many lines as it had sent at that point of the recording, so that answers
//! to the server's requests go out after the requests. At the end it compares:
//! each response and each server request by its id (equal JSON, with the keys
//! of `ignore_keys` left out everywhere), the number of notifications of each
//! method, and the number of lines that are not JSON. The conformance runner
//! has its own richer `replay`; this one proves that a tap recording replays.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::time::{Duration, Instant};

use crate::process::{PeerError, PeerOptions, StdioPeer};
use crate::record::{Dir, Payload, Transcript};
use crate::server_stdio::StdioKind;

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// How long to wait for the server's lines before each client line.
    pub wait: Duration,
    /// Keys whose values are not compared (volatile values such as times).
    pub ignore_keys: Vec<String>,
    /// How long to wait for the exit after the end of stdin.
    pub exit_within: Duration,
    /// The server's stdin, stdout and stderr.
    pub stdio: StdioKind,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            wait: Duration::from_secs(10),
            ignore_keys: Vec::new(),
            exit_within: Duration::from_secs(10),
            stdio: StdioKind::default(),
        }
    }
}

/// What the replay saw.
#[derive(Clone, Debug, Default)]
pub struct ReplayReport {
    /// Client lines sent.
    pub sent: usize,
    /// Server lines in the recording.
    pub expected: usize,
    /// Server lines received (frames; a non-JSON line as a JSON string).
    pub received: Vec<Value>,
    /// Every difference found.
    pub mismatches: Vec<String>,
    /// The exit code of the server after the end of stdin.
    pub exit_code: Option<i32>,
}

impl ReplayReport {
    /// Whether the server answered as recorded.
    pub fn matches(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// Replays `transcript` against `command`.
pub async fn replay(
    transcript: &Transcript,
    command: &[String],
    options: &ReplayOptions,
) -> Result<ReplayReport, PeerError> {
    let peer_options = PeerOptions {
        stdio: options.stdio,
        ..PeerOptions::default()
    };
    let mut peer = StdioPeer::spawn_with(command, peer_options)?;
    let mut report = ReplayReport::default();
    let mut expected_before = 0;
    for entry in &transcript.entries {
        match entry.dir {
            Dir::S2c => expected_before += 1,
            Dir::Stderr => {}
            Dir::C2s => {
                receive_until(&mut peer, &mut report, expected_before, options.wait).await;
                match &entry.payload {
                    Payload::Frame(frame) => peer.send(frame).await?,
                    Payload::Line(line) => {
                        let mut bytes = line.clone().into_bytes();
                        bytes.push(b'\n');
                        peer.send_raw(&bytes).await?;
                    }
                }
                report.sent += 1;
            }
        }
    }
    report.expected = expected_before;
    receive_until(&mut peer, &mut report, expected_before, options.wait).await;
    peer.close_stdin().await;
    report.exit_code = peer
        .wait_exit(options.exit_within)
        .await
        .and_then(|(status, _)| status.code());
    // Lines written while the server stopped.
    while let Some(received) = peer.try_recv() {
        report
            .received
            .push(received.raw.map(Value::String).unwrap_or(received.frame));
    }
    compare(transcript, &mut report, &options.ignore_keys);
    Ok(report)
}

async fn receive_until(
    peer: &mut StdioPeer,
    report: &mut ReplayReport,
    count: usize,
    wait: Duration,
) {
    let deadline = Instant::now() + wait;
    while report.received.len() < count {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match peer.recv(remaining).await {
            Some(received) => report
                .received
                .push(received.raw.map(Value::String).unwrap_or(received.frame)),
            None => break,
        }
    }
}

fn compare(transcript: &Transcript, report: &mut ReplayReport, ignore: &[String]) {
    let expected: Vec<Value> = transcript
        .entries
        .iter()
        .filter(|e| e.dir == Dir::S2c)
        .map(|e| match &e.payload {
            Payload::Frame(frame) => frame.clone(),
            Payload::Line(line) => Value::String(line.clone()),
        })
        .collect();
    let by_id = |frames: &[Value]| -> BTreeMap<String, Value> {
        frames
            .iter()
            .filter_map(|f| {
                f.get("id").map(|id| {
                    (
                        id.to_string()
                            + if f.get("method").is_some() {
                                " (request)"
                            } else {
                                ""
                            },
                        strip(f, ignore),
                    )
                })
            })
            .collect()
    };
    let counts = |frames: &[Value]| -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for f in frames {
            let key = match (f.get("id"), f.get("method").and_then(Value::as_str)) {
                (None, Some(method)) => method.to_owned(),
                (_, _) if f.is_string() => "(line that is not JSON)".to_owned(),
                _ => continue,
            };
            *counts.entry(key).or_insert(0) += 1;
        }
        counts
    };
    let want = by_id(&expected);
    let got = by_id(&report.received);
    for (id, frame) in &want {
        match got.get(id) {
            None => report
                .mismatches
                .push(format!("no frame with id {id}; recorded {frame}")),
            Some(other) if other != frame => report.mismatches.push(format!(
                "the frame with id {id} differs: recorded {frame}, got {other}"
            )),
            Some(_) => {}
        }
    }
    for id in got.keys().filter(|id| !want.contains_key(*id)) {
        report
            .mismatches
            .push(format!("an extra frame with id {id}"));
    }
    let (want, got) = (counts(&expected), counts(&report.received));
    if want != got {
        report.mismatches.push(format!(
            "notification counts differ: recorded {want:?}, got {got:?}"
        ));
    }
}

fn strip(value: &Value, ignore: &[String]) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !ignore.contains(k))
                .map(|(k, v)| (k.clone(), strip(v, ignore)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| strip(v, ignore)).collect()),
        other => other.clone(),
    }
}
