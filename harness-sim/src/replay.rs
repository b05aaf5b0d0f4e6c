//! Plays the client side of a recording against a server and compares what
//! the server answers with what was recorded.
//!
//! [`play`] is the one player of recordings: the conformance runner's replay
//! uses it too, with its own comparison and wire checks. Before each recorded
//! client line it waits for the server's responses recorded before that line
//! (to requests already sent) and for the server's requests recorded before it,
//! so that answers to the server's requests go out after the requests. [`replay`]
//! then compares: each response and each server request by its id (equal JSON,
//! with the keys of `ignore_keys` left out everywhere), the number of
//! notifications of each method, and the number of lines that are not JSON.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;
use tokio::time::{Duration, Instant};

use crate::process::{PeerError, PeerOptions, Received, StdioPeer};
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
    let received = play(&mut peer, transcript, options.wait).await?;
    let mut report = ReplayReport {
        sent: count(transcript, Dir::C2s),
        expected: count(transcript, Dir::S2c),
        received: received.into_iter().map(value_of).collect(),
        ..ReplayReport::default()
    };
    peer.close_stdin().await;
    report.exit_code = peer
        .wait_exit(options.exit_within)
        .await
        .and_then(|(status, _)| status.code());
    // Lines written while the server stopped.
    while let Some(received) = peer.try_recv() {
        report.received.push(value_of(payload_of(received)));
    }
    compare(transcript, &mut report, &options.ignore_keys);
    Ok(report)
}

fn count(transcript: &Transcript, dir: Dir) -> usize {
    transcript.entries.iter().filter(|e| e.dir == dir).count()
}

/// Sends the recorded client lines of `recording` to `peer` in order, each after
/// the server's lines that it waits for (see [`awaitable_counts`]); returns what
/// the server wrote until every recorded response and request came (or `wait`
/// passed), with the notifications still on their way.
pub async fn play(
    peer: &mut StdioPeer,
    recording: &Transcript,
    wait: Duration,
) -> Result<Vec<Payload>, PeerError> {
    let waits = awaitable_counts(recording);
    let with_ids = recording
        .entries
        .iter()
        .filter(|e| e.dir == Dir::S2c && has_id(&e.payload))
        .count();
    let mut received = Vec::new();
    for (index, entry) in recording.entries.iter().enumerate() {
        if entry.dir != Dir::C2s {
            continue;
        }
        let count = waits.get(&index).copied().unwrap_or(0);
        receive_until(peer, &mut received, count, wait).await;
        match &entry.payload {
            Payload::Frame(frame) => peer.send(frame).await?,
            Payload::Line(line) => {
                let mut bytes = line.clone().into_bytes();
                bytes.push(b'\n');
                peer.send_raw(&bytes).await?;
            }
        }
    }
    receive_until(peer, &mut received, with_ids, wait).await;
    // The notifications that are still on their way.
    while let Some(line) = peer.recv(Duration::from_millis(150)).await {
        received.push(payload_of(line));
    }
    Ok(received)
}

/// A line of the server as a payload: a frame, or a line that is not JSON.
pub fn payload_of(received: Received) -> Payload {
    match received.raw {
        Some(text) => Payload::Line(text),
        None => Payload::Frame(received.frame),
    }
}

fn value_of(payload: Payload) -> Value {
    match payload {
        Payload::Frame(frame) => frame,
        Payload::Line(text) => Value::String(text),
    }
}

fn has_id(payload: &Payload) -> bool {
    matches!(payload, Payload::Frame(f) if f.get("id").is_some_and(|id| !id.is_null()))
}

/// For each client line (by entry index): how many server lines with an id to
/// wait for before sending it: the responses recorded before it to requests
/// already sent, and the requests of the server recorded before it (the client
/// answers them). Notifications are not waited for, and neither are responses
/// to requests sent only later: the two recorded directions are timed apart, so
/// a fast answer (or its progress) can be recorded before its request.
fn awaitable_counts(recording: &Transcript) -> HashMap<usize, usize> {
    let mut sent: HashSet<String> = HashSet::new();
    let mut waits = HashMap::new();
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
                        // A request of the server, which the client answers.
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

/// Receives until `count` lines with an id came, or `wait` passed.
async fn receive_until(
    peer: &mut StdioPeer,
    received: &mut Vec<Payload>,
    count: usize,
    wait: Duration,
) {
    let deadline = Instant::now() + wait;
    while received.iter().filter(|p| has_id(p)).count() < count {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match peer.recv(remaining).await {
            Some(line) => received.push(payload_of(line)),
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
