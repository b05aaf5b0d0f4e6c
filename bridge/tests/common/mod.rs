//! An in-process bridge for tests: VS Code's side is a pair of pipes, the upstream
//! is a scripted [`MemoryPeer`], and the log lines are captured.
#![allow(dead_code)]

use mcp_bridge_vscode::config::{Config, Limits, UpstreamTarget};
use mcp_bridge_vscode::internals::upstream::memory::{MemoryConnector, MemoryPeer};
use mcp_bridge_vscode::internals::upstream::stdio::ExitReport;
use mcp_bridge_vscode::internals::upstream::{LinkEnd, Outgoing, UpstreamEvent};
use mcp_bridge_vscode::internals::wire::frame::Message;
use mcp_bridge_vscode::log::{LineFormat, LogLevel};
use mcp_bridge_vscode::{Exit, serve};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// How long a test waits for a frame before it fails.
pub const WAIT: Duration = Duration::from_secs(5);

/// The initialize of VS Code 1.141 (frames/local-1.141-start.jsonl).
pub fn vscode_initialize(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},
            "tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}},
            "extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},
        "clientInfo":{"name":"Visual Studio Code","version":"1.141.0"}}})
}

/// A discover result of a 2026-07-28 server.
pub fn discover_result(capabilities: Value) -> Value {
    json!({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":capabilities,
        "ttlMs":0,"cacheScope":"public","instructions":"The fixture.",
        "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fixture","version":"1.0.0"}}})
}

/// The client capabilities that the upstream gets for VS Code 1.141 (C2).
pub fn vscode_upstream_capabilities() -> Value {
    json!({"roots":{},"sampling":{},"elicitation":{"form":{},"url":{}},
        "extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}})
}

/// The captured log lines of the bridge.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<String>>>);

impl Logs {
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    pub fn has(&self, line: &str) -> bool {
        self.lines().iter().any(|l| l == line)
    }

    pub fn count_containing(&self, text: &str) -> usize {
        self.lines().iter().filter(|l| l.contains(text)).count()
    }
}

struct LogWriter(Arc<Mutex<Vec<String>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let mut lines = self.0.lock().unwrap();
        lines.extend(text.lines().map(str::to_owned));
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Captures the log lines of this thread (tests run on a current-thread runtime,
/// so the tasks of the bridge log here too).
pub fn capture_logs(level: LogLevel) -> (Logs, tracing::subscriber::DefaultGuard) {
    let logs = Logs::default();
    let sink = logs.0.clone();
    let max = match level {
        LogLevel::Err => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
    };
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(max)
        .event_format(LineFormat)
        .with_writer(move || LogWriter(sink.clone()))
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

pub fn config(limits: Limits) -> Config {
    Config {
        name: None,
        log_level: LogLevel::Debug,
        discover_timeout: Duration::from_secs(60),
        max_line_bytes: 1 << 20,
        upstream: UpstreamTarget::Command {
            program: "/opt/servers/fixture-server.exe".into(),
            args: vec![],
        },
        limits,
    }
}

/// VS Code's end of a bridge in this process.
pub struct Bridge {
    input: Option<DuplexStream>,
    output: Lines<BufReader<DuplexStream>>,
    pub connector: MemoryConnector,
    peers: mpsc::UnboundedReceiver<MemoryPeer>,
    pub exit: JoinHandle<Exit>,
    pub logs: Logs,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Bridge {
    pub fn start() -> Self {
        Self::start_with(config(Limits::default()))
    }

    pub fn start_with(config: Config) -> Self {
        let (logs, guard) = capture_logs(LogLevel::Debug);
        let (connector, peers) = MemoryConnector::new();
        let (input, bridge_input) = tokio::io::duplex(1 << 22);
        let (bridge_output, output) = tokio::io::duplex(1 << 22);
        let shared = Arc::new(connector.clone());
        let exit =
            tokio::spawn(async move { serve(&config, shared, bridge_input, bridge_output).await });
        Self {
            input: Some(input),
            output: BufReader::new(output).lines(),
            connector,
            peers,
            exit,
            logs,
            _guard: guard,
        }
    }

    pub async fn send(&mut self, frame: Value) {
        self.send_line(&frame.to_string()).await;
    }

    pub async fn send_line(&mut self, line: &str) {
        self.send_bytes(line.as_bytes()).await;
    }

    /// One line of raw bytes (for input that is not UTF-8).
    pub async fn send_bytes(&mut self, line: &[u8]) {
        let input = self.input.as_mut().expect("stdin is open");
        input.write_all(line).await.unwrap();
        input.write_all(b"\n").await.unwrap();
    }

    /// The next frame, or `None` when stdout ended.
    pub async fn recv_or_end(&mut self) -> Option<Value> {
        let line = timeout(WAIT, self.output.next_line())
            .await
            .expect("stdout neither wrote nor ended")
            .unwrap()?;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// The next frame the bridge writes to VS Code.
    pub async fn recv(&mut self) -> Value {
        self.recv_within(WAIT).await
    }

    /// The next frame, waiting at most `wait` (long waits for tests with paused time).
    pub async fn recv_within(&mut self, wait: Duration) -> Value {
        let line = timeout(wait, self.output.next_line())
            .await
            .expect("the bridge wrote nothing in time")
            .unwrap()
            .expect("stdout ended");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {line}"))
    }

    /// Nothing arrives for `duration`.
    pub async fn expect_silence(&mut self, duration: Duration) {
        if let Ok(line) = timeout(duration, self.output.next_line()).await {
            panic!("unexpected output: {line:?}");
        }
    }

    /// Sends a request and returns the response.
    pub async fn call(&mut self, frame: Value) -> Value {
        self.send(frame).await;
        self.recv().await
    }

    /// The next upstream connection.
    pub async fn upstream(&mut self) -> Upstream {
        let peer = timeout(WAIT, self.peers.recv())
            .await
            .expect("no connect in time")
            .expect("connector gone");
        Upstream { peer: Some(peer) }
    }

    /// initialize, the discover answer, and notifications/initialized.
    pub async fn initialize(&mut self, capabilities: Value) -> (Value, Upstream) {
        self.send(vscode_initialize(1)).await;
        let mut upstream = self.upstream().await;
        let discover = upstream.recv().await;
        assert_eq!(discover["method"], "server/discover");
        upstream
            .respond(&discover, discover_result(capabilities))
            .await;
        let result = self.recv().await;
        self.send(json!({"method":"notifications/initialized","jsonrpc":"2.0"}))
            .await;
        (result, upstream)
    }

    /// Closes stdin and returns how the bridge ended.
    pub async fn close(mut self) -> Exit {
        drop(self.input.take());
        timeout(Duration::from_secs(30), &mut self.exit)
            .await
            .expect("the bridge did not stop")
            .unwrap()
    }

    pub fn close_stdin(&mut self) {
        drop(self.input.take());
    }
}

/// The scripted upstream server of one connection.
pub struct Upstream {
    peer: Option<MemoryPeer>,
}

impl Upstream {
    pub fn peer(&mut self) -> &mut MemoryPeer {
        self.peer.as_mut().expect("the upstream is gone")
    }

    /// The link ends, as a link without a process ends.
    pub async fn end(&mut self, end: LinkEnd) {
        self.peer
            .take()
            .expect("the upstream is gone")
            .end(end)
            .await;
    }

    /// The next frame from the bridge, as JSON.
    pub async fn recv(&mut self) -> Value {
        let frame = timeout(WAIT, self.peer().frames.recv())
            .await
            .expect("the bridge sent nothing upstream in time")
            .expect("the bridge closed the upstream");
        let mut line = Vec::new();
        frame.encode_into(&mut line);
        serde_json::from_slice(&line).unwrap()
    }

    /// `None` when the bridge ended the upstream's input.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Option<Value>> {
        match timeout(wait, self.peer().frames.recv()).await {
            Err(_) => None,
            Ok(None) => Some(None),
            Ok(Some(frame)) => {
                let mut line = Vec::new();
                frame.encode_into(&mut line);
                Some(Some(serde_json::from_slice(&line).unwrap()))
            }
        }
    }

    /// Sends one frame as the server.
    pub async fn send(&mut self, frame: Value) {
        let message = Message::classify(frame).expect("a valid frame");
        self.peer()
            .events
            .send(UpstreamEvent::Message(message))
            .await
            .unwrap();
    }

    /// A sender of events as the server, for a task that sends on its own.
    pub fn events(&mut self) -> mpsc::Sender<UpstreamEvent> {
        self.peer().events.clone()
    }

    pub async fn send_event(&mut self, event: UpstreamEvent) {
        self.peer().events.send(event).await.unwrap();
    }

    pub async fn respond(&mut self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc":"2.0","id":request["id"],"result":result}))
            .await;
    }

    pub async fn respond_error(&mut self, request: &Value, error: Value) {
        self.send(json!({"jsonrpc":"2.0","id":request["id"],"error":error}))
            .await;
    }

    pub async fn exit(&mut self, report: ExitReport) {
        self.peer
            .take()
            .expect("the upstream is gone")
            .exit(report)
            .await;
    }

    pub fn sent(frame: &Outgoing) -> Value {
        let mut line = Vec::new();
        frame.encode_into(&mut line);
        serde_json::from_slice(&line).unwrap()
    }
}
