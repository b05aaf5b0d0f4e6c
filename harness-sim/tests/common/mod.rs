//! Helpers shared by the integration tests of harness-sim.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;

use harness_sim::client::{SimClient, SimOptions};
use harness_sim::{AnswerPolicy, Profile, StdioPeer};
use serde_json::{Value, json};
use tokio::time::Duration;

/// The harness-sim executable of this package.
pub fn harness_sim() -> String {
    env!("CARGO_BIN_EXE_harness-sim").to_owned()
}

/// The copies of `shared/reference/vscode/frames/` in `tests/vscode-frames/`.
pub fn frames_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vscode-frames")
}

/// A frame file by name.
pub fn frame_file(name: &str) -> PathBuf {
    frames_dir().join(name)
}

/// The command of the scripted server playing `files` (frame files or paths).
pub fn script_command(files: &[PathBuf]) -> Vec<String> {
    let mut command = vec![harness_sim(), "script-server".to_owned()];
    command.extend(files.iter().map(|f| f.display().to_string()));
    command
}

/// Writes a script (frame-file format) of `entries` (dir, frame).
pub fn script(entries: &[(&str, Value)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    for (d, frame) in entries {
        writeln!(file, "{}", json!({"dir": d, "frame": frame})).unwrap();
    }
    (dir, path)
}

/// An initialize result with `capabilities`, from a server named `scripted`.
pub fn init_result(id: i64, capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "serverInfo": {"name": "scripted", "version": "1"}}})
}

/// The opening of the Copilot harness against a scripted server of revision
/// 2025-11-25: `server/discover` refused, `initialize` with `capabilities`, then
/// `notifications/initialized`.
pub fn copilot_opening(capabilities: Value) -> Vec<(&'static str, Value)> {
    vec![
        ("c2s", json!({})),
        (
            "s2c",
            json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "Method not found"}}),
        ),
        ("c2s", json!({})),
        ("s2c", init_result(1, capabilities)),
        ("c2s", json!({})),
    ]
}

/// Options for tests: short timeouts and stop timers.
pub fn test_options(profile: Profile) -> SimOptions {
    let mut options = SimOptions::for_profile(profile);
    options.request_timeout = Duration::from_secs(10);
    options.initialize_timeout = Duration::from_secs(10);
    options.discover_timeout = Duration::from_secs(5);
    options.stop.term_after = options.stop.term_after.min(Duration::from_secs(3));
    options.stop.kill_after = options.stop.kill_after.min(Duration::from_secs(4));
    options
}

/// A client of `profile` on `command`.
pub fn client(profile: Profile, command: &[String], policy: AnswerPolicy) -> SimClient {
    let peer = StdioPeer::spawn(command).expect("the server starts");
    SimClient::with_options(profile, peer, policy, test_options(profile))
}

/// A client of `profile` on the scripted server playing the frame files `names`.
pub fn scripted(profile: Profile, names: &[&str], policy: AnswerPolicy) -> SimClient {
    let files: Vec<PathBuf> = names.iter().map(|n| frame_file(n)).collect();
    client(profile, &script_command(&files), policy)
}

/// The c2s frames of frame files, in order.
pub fn c2s_frames(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .flat_map(|n| {
            let t = harness_sim::record::Transcript::read(&frame_file(n)).expect("frame file");
            t.frames(harness_sim::record::Dir::C2s)
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Replaces the values that vary per run (UUIDs, trace ids) by placeholders.
pub fn normalize(frames: &[Value]) -> Vec<Value> {
    frames.iter().map(|f| normalize_one(f.clone())).collect()
}

fn normalize_one(mut value: Value) -> Value {
    if let Some(meta) = value
        .pointer_mut("/params/_meta")
        .and_then(Value::as_object_mut)
    {
        for (key, placeholder) in [
            ("vscode.conversationId", "[conversation-id]"),
            ("vscode.requestId", "[request-id]"),
            ("traceparent", "[traceparent]"),
        ] {
            if meta.contains_key(key) {
                meta.insert(key.into(), Value::String(placeholder.into()));
            }
        }
        if meta.get("progressToken").is_some_and(Value::is_string) {
            meta.insert("progressToken".into(), Value::String("[uuid]".into()));
        }
    }
    value
}

/// Compact JSON text of each frame, for exact comparisons (key order included).
pub fn texts(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect()
}

/// Fails with a readable diff of two frame lists.
pub fn assert_same_frames(got: &[Value], want: &[Value]) {
    let (got, want) = (texts(&normalize(got)), texts(&normalize(want)));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "frame {i} differs");
    }
    assert_eq!(
        got.len(),
        want.len(),
        "frame counts differ:\n got {got:#?}\nwant {want:#?}"
    );
}

/// The fixture server executable (built when missing).
pub fn fixture() -> String {
    workspace_bin::path("bridge-fixture-server", "bridge-fixture-server")
        .expect("bridge-fixture-server")
        .display()
        .to_string()
}

/// The bridge executable (built when missing).
pub fn bridge() -> String {
    workspace_bin::path("mcp-bridge-vscode", "mcp-bridge-vscode")
        .expect("mcp-bridge-vscode")
        .display()
        .to_string()
}

/// `mcp-bridge-vscode -- bridge-fixture-server`.
pub fn bridge_command() -> Vec<String> {
    vec![bridge(), "--".into(), fixture()]
}

/// The text of a call result, or a panic naming the outcome.
pub fn result_text(outcome: &harness_sim::CallOutcome) -> String {
    outcome
        .text()
        .unwrap_or_else(|| panic!("not a result: {outcome:?}"))
        .to_owned()
}

/// The policy of the end-to-end tests: accept forms and URLs, answer sampling, one root.
pub fn accepting_policy() -> AnswerPolicy {
    AnswerPolicy::new()
        .accept_form(serde_json::json!({"name": "Ada", "age": 36}))
        .url(harness_sim::answers::UrlAnswer::Accept)
        .sampling_text("Hello!")
        .root("ws", "file:///tmp/ws")
}
