//! The stop sequences (with shortened timers), the second stop of VS Code, and the tap: byte-for-byte
//! pass-through, the recording with redaction, and its replay.

use crate::common;

use harness_sim::client::{SimClient, StopStep, StopTimers};
use harness_sim::record::{Dir, Payload, REDACTED, Transcript};
use harness_sim::replay::{ReplayOptions, replay};
use harness_sim::{AnswerPolicy, Profile, StdioPeer};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Duration, Instant};

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

async fn stop_with(
    profile: Profile,
    command: Vec<String>,
    timers: StopTimers,
) -> harness_sim::client::StopReport {
    let peer = StdioPeer::spawn(&command).unwrap();
    let mut client = SimClient::new(profile, peer, AnswerPolicy::new());
    client.options_mut().stop = timers;
    // Give the shell time to set its traps.
    tokio::time::sleep(Duration::from_millis(100)).await;
    client.stop().await
}

const SHORT: StopTimers = StopTimers {
    term_after: Duration::from_millis(300),
    kill_after: Duration::from_millis(1500),
    reap_within: Duration::from_secs(5),
};

#[tokio::test]
async fn local_stop_ends_a_server_that_exits_at_the_end_of_stdin() {
    let report = stop_with(Profile::Local141, vec!["cat".into()], StopTimers::LOCAL).await;
    assert_eq!(report.step, StopStep::EndOfInput);
    assert_eq!(report.exit_code, Some(0));
    assert!(report.exited_after_ms.unwrap() < 2000.0, "{report:?}");
    assert!(report.group_gone);
}

#[tokio::test]
async fn local_stop_sends_sigterm_to_a_server_that_ignores_the_end_of_stdin() {
    let report = stop_with(
        Profile::Local141,
        sh("trap 'exit 7' TERM; while :; do sleep 0.05; done"),
        SHORT,
    )
    .await;
    assert_eq!(report.step, StopStep::Terminated, "{report:?}");
    assert_eq!(report.exit_code, Some(7));
    let after = report.exited_after_ms.unwrap();
    assert!((300.0..1500.0).contains(&after), "{report:?}");
    assert!(report.group_gone);
}

#[tokio::test]
async fn local_stop_kills_the_tree_of_a_server_that_ignores_sigterm() {
    let report = stop_with(
        Profile::Local141,
        sh("trap '' TERM; sleep 30 & while :; do sleep 0.05; done"),
        SHORT,
    )
    .await;
    assert_eq!(report.step, StopStep::Killed, "{report:?}");
    assert_eq!(report.exit_signal, Some(9));
    assert!(report.exited_after_ms.unwrap() >= 1500.0);
    assert!(
        report.group_gone,
        "the background sleep is killed with the group"
    );
}

/// A server that ignores the end of stdin and SIGTERM, with a child of its own.
const STUBBORN: &str = "trap '' TERM; sleep 30 & while :; do sleep 1; done";

/// Runs the Local stop of a stubborn server with `timers`, and a second stop
/// `second_after` later; returns the report and how long the stop took.
async fn stop_twice(
    timers: StopTimers,
    second_after: Duration,
) -> (harness_sim::client::StopReport, Duration) {
    let peer = StdioPeer::spawn(&sh(STUBBORN)).unwrap();
    let mut client = SimClient::new(Profile::Local141, peer, AnswerPolicy::new());
    client.options_mut().stop = timers;
    let second_stop = client.second_stop();
    // Give the shell time to set its trap.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    let (report, ()) = tokio::join!(client.stop(), async {
        tokio::time::sleep(second_after).await;
        second_stop.stop();
    });
    (report, started.elapsed())
}

#[tokio::test]
async fn local_second_stop_during_the_grace_time_kills_the_tree_at_once() {
    // VS Code's own timers: SIGTERM only at 10 s, the kill at 20 s.
    let (report, took) = stop_twice(StopTimers::LOCAL, Duration::from_millis(300)).await;
    assert_eq!(report.step, StopStep::KilledAtSecondStop, "{report:?}");
    assert_eq!(report.exit_signal, Some(9), "{report:?}");
    let after = report.exited_after_ms.unwrap();
    assert!((300.0..2000.0).contains(&after), "{report:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        report.group_gone,
        "the background sleep is killed with the tree"
    );
}

#[tokio::test]
async fn local_second_stop_after_sigterm_kills_before_the_kill_timer() {
    // SIGTERM (ignored) at 300 ms, the kill timer at 1.5 s, the second stop at 700 ms.
    let (report, _) = stop_twice(SHORT, Duration::from_millis(700)).await;
    assert_eq!(report.step, StopStep::KilledAtSecondStop, "{report:?}");
    let after = report.exited_after_ms.unwrap();
    assert!((700.0..1500.0).contains(&after), "{report:?}");
    assert!(report.group_gone);
}

#[tokio::test]
async fn copilot_stop_sends_sigterm_before_the_end_of_stdin() {
    let report = stop_with(Profile::Copilot092, vec!["cat".into()], StopTimers::COPILOT).await;
    assert_eq!(report.step, StopStep::Terminated, "{report:?}");
    assert_eq!(report.exit_signal, Some(15), "SIGTERM came first");
    let report = stop_with(
        Profile::Copilot092,
        sh("trap '' TERM; while :; do sleep 0.05; done"),
        StopTimers::COPILOT,
    )
    .await;
    assert_eq!(report.step, StopStep::Killed, "{report:?}");
    let after = report.exited_after_ms.unwrap();
    assert!((250.0..2000.0).contains(&after), "{report:?}");
}

#[tokio::test]
async fn the_peer_reports_stderr_as_it_comes_and_exit_times() {
    let mut peer = StdioPeer::spawn(&sh(
        "echo one >&2; read line; echo \"$line\"; echo two >&2; exit 3",
    ))
    .unwrap();
    assert_eq!(
        peer.wait_stderr(Duration::from_secs(5), |l| l == "one")
            .await
            .as_deref(),
        Some("one")
    );
    peer.send_raw(b"not json\n").await.unwrap();
    let received = peer.recv(Duration::from_secs(5)).await.unwrap();
    assert_eq!(received.raw.as_deref(), Some("not json"));
    peer.close_stdin().await;
    let (status, _) = peer.wait_exit(Duration::from_secs(5)).await.unwrap();
    assert_eq!(status.code(), Some(3));
    assert!(peer.wait_stderr_closed(Duration::from_secs(5)).await);
    assert_eq!(peer.stderr_lines(), vec!["one", "two"]);
    let dirs: Vec<Dir> = peer.entries().iter().map(|e| e.dir).collect();
    assert_eq!(dirs.iter().filter(|d| **d == Dir::Stderr).count(), 2);
    assert!(peer.wait_group_gone(Duration::from_secs(2)).await);
}

/// What goes through the tap: odd spacing, unicode, a line that is not JSON,
/// secrets, and a last line without its end.
fn session_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,  \"method\":\"initialize\",\"params\":{\"z\":1,\"a\":\"\xc3\xa9\xe2\x9c\x93\"}}\n");
    bytes.extend_from_slice(b"this is not JSON\r\n");
    bytes.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"params\":{\"headers\":{\"Authorization\":\"Bearer s3cret\"},\"access_token\":\"t0k\",\"code\":\"c0de\"}}\n",
    );
    bytes.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"m\"}}\n",
    );
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(b"{\"last\":true}");
    bytes
}

#[tokio::test]
async fn the_tap_passes_bytes_through_and_its_recording_replays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tap.jsonl");
    let mut child = tokio::process::Command::new(common::harness_sim())
        .arg("tap")
        .arg("--out")
        .arg(&out)
        .args(["--", "cat"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = session_bytes();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&input).await.unwrap();
    drop(stdin);
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut output)
        .await
        .unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(output, input, "the tap changed the bytes");

    let transcript = Transcript::read(&out).unwrap();
    let header = transcript.header.clone().unwrap();
    assert_eq!(header.source, "harness-sim tap");
    assert_eq!(header.command, vec!["cat".to_string()]);
    let c2s: Vec<&Payload> = transcript
        .entries
        .iter()
        .filter(|e| e.dir == Dir::C2s)
        .map(|e| &e.payload)
        .collect();
    let s2c: Vec<&Payload> = transcript
        .entries
        .iter()
        .filter(|e| e.dir == Dir::S2c)
        .map(|e| &e.payload)
        .collect();
    assert_eq!(c2s.len(), 6);
    assert_eq!(c2s, s2c, "cat echoes every line");
    assert_eq!(c2s[1], &Payload::Line("this is not JSON".into()));
    let secret = c2s[2].frame().unwrap();
    assert_eq!(
        secret["params"]["headers"]["Authorization"],
        json!(REDACTED)
    );
    assert_eq!(secret["params"]["access_token"], json!(REDACTED));
    assert_eq!(secret["params"]["code"], json!(REDACTED));
    assert_eq!(c2s[3].frame().unwrap()["error"]["code"], json!(-32601));
    assert!(!std::fs::read_to_string(&out).unwrap().contains("s3cret"));
    let times: Vec<f64> = transcript.entries.iter().map(|e| e.t_ms).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1] + 5.0), "{times:?}");

    let report = replay(&transcript, &["cat".to_string()], &ReplayOptions::default())
        .await
        .unwrap();
    assert!(report.matches(), "{:?}", report.mismatches);
    assert_eq!(report.sent, 6);
    assert_eq!(report.exit_code, Some(0));
}

#[tokio::test]
async fn the_tap_forwards_sigterm_and_exits_with_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tap.jsonl");
    let command = vec![
        common::harness_sim(),
        "tap".into(),
        "--out".into(),
        out.display().to_string(),
        "--".into(),
        "sh".into(),
        "-c".into(),
        "trap 'echo bye >&2; exit 5' TERM; while :; do sleep 0.05; done".into(),
    ];
    let mut peer = StdioPeer::spawn(&command).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    peer.terminate();
    let (status, _) = peer.wait_exit(Duration::from_secs(5)).await.unwrap();
    assert_eq!(status.code(), Some(5));
    // The exit can come before the reader of stderr has its last line.
    assert!(peer.wait_stderr_closed(Duration::from_secs(5)).await);
    assert_eq!(peer.stderr_lines(), vec!["bye"]);
    let transcript = Transcript::read(&out).unwrap();
    assert_eq!(
        transcript.entries.last().unwrap().payload,
        Payload::Line("bye".into())
    );
}
