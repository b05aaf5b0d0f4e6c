//! What a server gets as stdin, stdout and stderr: Unix socket pairs by default,
//! one pair each, as VS Code (libuv) gives them on POSIX, and pipes on request;
//! and the end of stdin as Node makes it (a shutdown of the writing side, then
//! the close), which the server reads as the end of its input while its stdout
//! stays open.
#![cfg(unix)]

use crate::common;

use harness_sim::StdioPeer;
use harness_sim::process::{PeerOptions, StdioKind};
use tokio::time::Duration;

const LIMIT: Duration = Duration::from_secs(10);

/// A server that prints what its fds 0, 1 and 2 are (`sock`, `fifo` or `other`)
/// and whether they are three different files, then exits (`harness-sim
/// stdio-probe`).
fn probe() -> Vec<String> {
    vec![common::harness_sim(), "stdio-probe".into()]
}

fn spawn(command: &[String], stdio: StdioKind) -> StdioPeer {
    let options = PeerOptions {
        stdio,
        ..PeerOptions::default()
    };
    StdioPeer::spawn_with(command, options).expect("the server starts")
}

/// The first stdout line of `peer` as text.
async fn first_line(peer: &mut StdioPeer) -> String {
    let received = peer.recv(LIMIT).await.expect("the server prints a line");
    received.raw.expect("a line of text, not JSON")
}

#[tokio::test]
async fn a_server_gets_a_socket_pair_for_each_stream_by_default() {
    let mut peer = StdioPeer::spawn(&probe()).unwrap();
    assert_eq!(peer.stdio(), StdioKind::SocketPair);
    assert_eq!(first_line(&mut peer).await, "sock sock sock distinct");
    let (status, _) = peer.wait_exit(LIMIT).await.unwrap();
    assert_eq!(status.code(), Some(0), "{:?}", peer.stderr_lines());
}

#[tokio::test]
async fn a_server_gets_pipes_with_the_option() {
    let mut peer = spawn(&probe(), StdioKind::Pipe);
    assert_eq!(peer.stdio(), StdioKind::Pipe);
    assert_eq!(first_line(&mut peer).await, "fifo fifo fifo distinct");
    let (status, _) = peer.wait_exit(LIMIT).await.unwrap();
    assert_eq!(status.code(), Some(0), "{:?}", peer.stderr_lines());
}

/// A server that reads its stdin to the end, then writes two lines on stdout
/// (the second after a pause) and one on stderr, and exits with 7.
fn reads_to_the_end_then_writes() -> Vec<String> {
    let script = r#"
import sys, time
data = sys.stdin.buffer.read()
print("end of input after %d bytes" % len(data), flush=True)
time.sleep(0.2)
print("still writing", flush=True)
sys.stderr.write("stderr too\n")
sys.exit(7)
"#;
    vec!["python3".into(), "-c".into(), script.into()]
}

async fn ending_stdin_gives_the_end_of_input_and_stdout_stays_open(stdio: StdioKind) {
    let mut peer = spawn(&reads_to_the_end_then_writes(), stdio);
    peer.send_raw(b"{\"jsonrpc\":\"2.0\"}\n").await.unwrap();
    assert!(
        peer.recv(Duration::from_millis(300)).await.is_none(),
        "{stdio}: the server waits for the end of its input"
    );
    peer.close_stdin().await;
    assert_eq!(
        first_line(&mut peer).await,
        "end of input after 18 bytes",
        "{stdio}"
    );
    assert_eq!(first_line(&mut peer).await, "still writing", "{stdio}");
    let (status, after_the_end) = peer.wait_exit(LIMIT).await.unwrap();
    assert_eq!(status.code(), Some(7), "{stdio}");
    // The exit time counts from the end of stdin (the stop reports rely on it).
    assert!(
        after_the_end >= Duration::from_millis(200) && after_the_end < Duration::from_secs(5),
        "{stdio}: {after_the_end:?}"
    );
    assert!(peer.wait_stderr_closed(LIMIT).await, "{stdio}");
    assert_eq!(peer.stderr_lines(), ["stderr too"], "{stdio}");
    // Stdout ends with the server: no copy of its end is left open with us.
    for _ in 0..100 {
        if peer.stdout_closed() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(peer.stdout_closed(), "{stdio}: stdout never ended");
    assert!(
        matches!(
            peer.send_raw(b"late\n").await,
            Err(harness_sim::process::PeerError::StdinClosed)
        ),
        "{stdio}: stdin is ours no more"
    );
}

#[tokio::test]
async fn the_end_of_a_socket_pair_stdin_is_the_end_of_input_while_stdout_stays_open() {
    ending_stdin_gives_the_end_of_input_and_stdout_stays_open(StdioKind::SocketPair).await;
}

#[tokio::test]
async fn the_close_of_a_pipe_stdin_is_the_end_of_input_while_stdout_stays_open() {
    ending_stdin_gives_the_end_of_input_and_stdout_stays_open(StdioKind::Pipe).await;
}

/// After the shutdown of our writing side, our end is closed too, as Node closes
/// the handle right after `end()`: a write of the server into its own stdin (a
/// socket is two-way) then fails with EPIPE. A shutdown alone would take it.
#[tokio::test]
async fn ending_a_socket_pair_stdin_also_closes_our_end() {
    let script = r#"
import os, sys, time
sys.stdin.buffer.read()
time.sleep(0.2)
try:
    os.write(0, b"x")
    print("written", flush=True)
except OSError as error:
    print("closed", error.errno, flush=True)
"#;
    let mut peer = StdioPeer::spawn(&["python3".into(), "-c".into(), script.into()]).unwrap();
    peer.close_stdin().await;
    assert_eq!(
        first_line(&mut peer).await,
        format!("closed {}", nix::errno::Errno::EPIPE as i32)
    );
    let (status, _) = peer.wait_exit(LIMIT).await.unwrap();
    assert_eq!(status.code(), Some(0), "{:?}", peer.stderr_lines());
}

async fn tapped_probe(stdio: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tap.jsonl");
    let mut command = vec![
        common::harness_sim(),
        "tap".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    if let Some(kind) = stdio {
        command.extend(["--stdio".into(), kind.into()]);
    }
    command.push("--".into());
    command.extend(probe());
    let mut peer = StdioPeer::spawn(&command).unwrap();
    let line = first_line(&mut peer).await;
    let (status, _) = peer.wait_exit(LIMIT).await.unwrap();
    assert_eq!(status.code(), Some(0), "{:?}", peer.stderr_lines());
    line
}

#[tokio::test]
async fn the_tap_gives_the_server_socket_pairs_by_default_and_pipes_on_request() {
    assert_eq!(tapped_probe(None).await, "sock sock sock distinct");
    assert_eq!(tapped_probe(Some("pipe")).await, "fifo fifo fifo distinct");
}

#[tokio::test]
async fn the_run_of_a_profile_takes_the_stdio_option() {
    // The probe is no MCP server: the session fails, but the probe has told what
    // its stdin is, which the JSON report does not hold; so it tells in a file.
    let dir = tempfile::tempdir().unwrap();
    let told = dir.path().join("probe.txt");
    let told_path = told.display().to_string();
    for (args, expected) in [(&[][..], "sock"), (&["--stdio", "pipe"][..], "fifo")] {
        let mut command = tokio::process::Command::new(common::harness_sim());
        command
            .args(["local-1.141", "--timeout", "2", "--json"])
            .args(args)
            .args([
                "--",
                &common::harness_sim(),
                "stdio-probe",
                "--write",
                &told_path,
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let status = tokio::time::timeout(LIMIT, command.status())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}: the session failed");
        let line = std::fs::read_to_string(&told).unwrap();
        assert_eq!(line.split(' ').next(), Some(expected), "{args:?}: {line}");
    }
    let bad = tokio::process::Command::new(common::harness_sim())
        .args(["local-1.141", "--stdio", "fifo", "--", "true"])
        .stderr(std::process::Stdio::null())
        .status()
        .await
        .unwrap();
    assert_eq!(bad.code(), Some(2), "an unknown kind is a usage error");
}
