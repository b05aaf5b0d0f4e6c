//! The ends that VS Code gives the bridge. libuv starts a stdio server with the
//! ends of Unix socket pairs on POSIX and ends stdin with a shutdown of its
//! writing side; a shell gives pipes and closes them. Both kinds must serve, stop
//! at the end of stdin, and see that end even when the session no longer reads.

use crate::pipes;

use harness_sim::server_stdio::{self, ServerInput, ServerOutput, StderrTo, StdioKind};
use pipes::{EXCHANGE, bridge_exe, fixture_exe, initialize_frame};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::Child;
use tokio::task::JoinHandle;

struct Bridge {
    child: Child,
    /// Taken when stdin ends.
    stdin: Option<ServerInput>,
    stdout: Lines<BufReader<ServerOutput>>,
    stderr: JoinHandle<Vec<String>>,
}

/// Starts `mcp-bridge-vscode -- bridge-fixture-server` with stdio of `kind`, as the
/// simulators start a server.
fn start(kind: StdioKind) -> Bridge {
    let mut command = tokio::process::Command::new(bridge_exe());
    command.arg("--").arg(fixture_exe()).kill_on_drop(true);
    let (child, ends) =
        server_stdio::spawn(command, kind, StderrTo::Us).expect("the bridge starts");
    let mut stderr_lines = BufReader::new(ends.stderr.expect("stderr is ours")).lines();
    let stderr = tokio::spawn(async move {
        let mut lines = Vec::new();
        while let Ok(Some(line)) = stderr_lines.next_line().await {
            lines.push(line);
        }
        lines
    });
    Bridge {
        child,
        stdin: Some(ends.stdin),
        stdout: BufReader::new(ends.stdout).lines(),
        stderr,
    }
}

impl Bridge {
    fn input(&mut self) -> &mut ServerInput {
        self.stdin.as_mut().expect("stdin is open")
    }

    async fn send(&mut self, frame: &Value) {
        let mut line = serde_json::to_vec(frame).unwrap();
        line.push(b'\n');
        self.input().write_all(&line).await.unwrap();
    }

    /// The response with `id`, skipping notifications.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(EXCHANGE, self.stdout.next_line())
                .await
                .expect("the bridge answers")
                .unwrap()
                .expect("stdout stays open");
            let frame: Value = serde_json::from_str(&line).expect("stdout has only JSON-RPC");
            if frame["id"] == id {
                return frame;
            }
        }
    }

    /// Ends stdin as the client does: a shutdown of the writing side for a socket
    /// (libuv's `end()`), and the close of a pipe. Returns when it ended.
    async fn end_stdin(&mut self) -> tokio::time::Instant {
        self.stdin.take().expect("stdin is open").end().await;
        tokio::time::Instant::now()
    }

    /// The exit code; after `limit`, a failure that shows stderr.
    async fn exit_within(&mut self, limit: Duration) -> Option<i32> {
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(status) => status.unwrap().code(),
            Err(_) => {
                self.child.start_kill().unwrap();
                panic!(
                    "no exit in {limit:?}; stderr: {:?}",
                    self.stderr_lines().await
                );
            }
        }
    }

    /// Every line of stderr, once the bridge has exited.
    async fn stderr_lines(&mut self) -> Vec<String> {
        (&mut self.stderr).await.unwrap()
    }
}

async fn serves_a_call_and_stops_at_the_end_of_stdin(kind: StdioKind) {
    let mut bridge = start(kind);
    bridge.send(&initialize_frame()).await;
    let result = bridge.response(1).await;
    assert_eq!(
        result["result"]["serverInfo"]["name"],
        "bridge-fixture-server"
    );
    bridge
        .send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    bridge
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
            "params":{"name":"add","arguments":{"a":2,"b":3}}}))
        .await;
    assert_eq!(
        bridge.response(2).await["result"]["content"][0]["text"],
        "5"
    );
    let ended = bridge.end_stdin().await;
    assert_eq!(bridge.exit_within(Duration::from_secs(5)).await, Some(0));
    let after = ended.elapsed();
    assert!(after < Duration::from_secs(2), "{kind:?}: {after:?}");
}

#[tokio::test]
async fn over_socket_pairs_as_vs_code_gives_them_the_bridge_serves_and_stops() {
    serves_a_call_and_stops_at_the_end_of_stdin(StdioKind::SocketPair).await;
}

#[tokio::test]
async fn over_pipes_as_a_shell_gives_them_the_bridge_serves_and_stops() {
    serves_a_call_and_stops_at_the_end_of_stdin(StdioKind::Pipe).await;
}

/// A client that stops reading stdout, sends on until the bridge reads no more, and
/// then ends stdin: the session waits on its output and the reader on the full
/// queue of events, with lines still unread before the end. The end is seen
/// anyway, the watchdog starts, and the bridge exits.
async fn a_client_that_stops_reading_is_stopped_by_the_watchdog(kind: StdioKind) {
    let mut bridge = start(kind);
    bridge.send(&initialize_frame()).await;
    bridge.response(1).await;
    bridge
        .send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    // From here on, stdout is never read.
    let mut pings = 0u64;
    loop {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}}\n",
            pings + 2
        );
        let write = bridge.input().write_all(line.as_bytes());
        match tokio::time::timeout(Duration::from_millis(500), write).await {
            Ok(written) => written.expect("the bridge reads its stdin"),
            // Every buffer between the two is full.
            Err(_) => break,
        }
        pings += 1;
        assert!(pings < 1_000_000, "the bridge never stopped reading");
    }
    // The last line may be cut: the bridge never gets that far.
    let ended = bridge.end_stdin().await;
    let code = bridge.exit_within(Duration::from_secs(15)).await;
    let after = ended.elapsed();
    assert_eq!(code, Some(0));
    assert!(
        after < Duration::from_secs(10),
        "{kind:?}: {after:?} after {pings} pings"
    );
    let lines = bridge.stderr_lines().await;
    assert!(
        lines.iter().any(|l| l == "mcp-bridge-vscode: vscode: warning: the bridge did not stop in 8 s after the end of stdin, thus it stops now"),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_client_that_stops_reading_stdout_and_then_ends_a_socket_pair_is_stopped() {
    a_client_that_stops_reading_is_stopped_by_the_watchdog(StdioKind::SocketPair).await;
}

#[tokio::test]
async fn a_client_that_stops_reading_stdout_and_then_closes_a_pipe_is_stopped() {
    a_client_that_stops_reading_is_stopped_by_the_watchdog(StdioKind::Pipe).await;
}
