//! A small MCP 2026-07-28 client for the tests: it starts the real executable with
//! pipes, writes requests with the per-request `_meta`, reads every frame of stdout, and
//! validates each one against the vendored schema (see `schema`).

pub mod schema;

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// The protocol version of every request.
pub const VERSION: &str = "2026-07-28";
/// How long a test waits for one frame or for the exit.
pub const WAIT: Duration = Duration::from_secs(10);

/// Every input kind a client can declare.
pub fn all_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}})
}

/// The `_meta` of a request with these client capabilities.
pub fn meta(caps: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "fixture-tests", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// The `serverInfo` the fixture puts in every result.
pub fn server_info() -> Value {
    json!({"name": "bridge-fixture-server", "version": env!("CARGO_PKG_VERSION")})
}

/// A running `bridge-fixture-server` and the client side of its pipes.
pub struct Fixture {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: mpsc::UnboundedReceiver<Value>,
    stashed: VecDeque<Value>,
    methods: Arc<Mutex<HashMap<String, String>>>,
    violations: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
    next_id: i64,
    /// The client capabilities of requests sent with [`Fixture::request`].
    pub caps: Value,
}

impl Fixture {
    /// Starts the executable with `args`.
    pub async fn start(args: &[&str]) -> Fixture {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bridge-fixture-server"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the fixture starts");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, frames) = mpsc::unbounded_channel();
        let methods: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        let violations: Arc<Mutex<Vec<String>>> = Arc::default();
        let (methods_in, violations_in) = (Arc::clone(&methods), Arc::clone(&violations));
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let frame: Value = match serde_json::from_str(&line) {
                    Ok(frame) => frame,
                    Err(e) => {
                        violations_in
                            .lock()
                            .unwrap()
                            .push(format!("stdout line is not JSON ({e}): {line}"));
                        continue;
                    }
                };
                let errors = schema::check_frame(&frame, |id| {
                    methods_in.lock().unwrap().get(&id.to_string()).cloned()
                });
                if !errors.is_empty() {
                    violations_in
                        .lock()
                        .unwrap()
                        .push(format!("{line}\n  {}", errors.join("\n  ")));
                }
                let _ = tx.send(frame);
            }
        });
        let stderr_text: Arc<Mutex<String>> = Arc::default();
        let stderr_in = Arc::clone(&stderr_text);
        let stderr_done = tokio::spawn(async move {
            let mut text = String::new();
            let mut reader = BufReader::new(stderr);
            let _ = reader.read_to_string(&mut text).await;
            stderr_in.lock().unwrap().push_str(&text);
        });
        Fixture {
            stdin: child.stdin.take(),
            child,
            frames,
            stashed: VecDeque::new(),
            methods,
            violations,
            stderr: stderr_text,
            stderr_done: Some(stderr_done),
            next_id: 0,
            caps: all_caps(),
        }
    }

    /// Panics when a frame so far did not validate.
    pub fn assert_valid(&self) {
        let violations = self.violations.lock().unwrap();
        assert!(
            violations.is_empty(),
            "frames that do not validate against the 2026-07-28 schema:\n{}",
            violations.join("\n")
        );
    }

    /// Writes one raw line (a line end is added).
    pub async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// A fresh request id.
    pub fn new_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// Sends a request whose params are given as is (with or without `_meta`).
    pub async fn send_raw_request(&mut self, id: Value, method: &str, params: Option<Value>) {
        self.methods
            .lock()
            .unwrap()
            .insert(id.to_string(), method.to_owned());
        let mut frame = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            frame["params"] = params;
        }
        self.send_line(&frame.to_string()).await;
    }

    /// Sends a request with the `_meta` of [`Fixture::caps`] added to `params`, and
    /// `extra_meta` merged into that `_meta`; returns its id.
    pub async fn send_request_with(
        &mut self,
        method: &str,
        params: Value,
        extra_meta: Value,
    ) -> Value {
        let id = self.new_id();
        let mut params = match params {
            Value::Object(params) => params,
            _ => Map::new(),
        };
        let mut meta = meta(&self.caps);
        if let (Value::Object(meta), Value::Object(extra)) = (&mut meta, extra_meta) {
            meta.extend(extra);
        }
        params.insert("_meta".into(), meta);
        self.send_raw_request(id.clone(), method, Some(Value::Object(params)))
            .await;
        id
    }

    /// Sends a request with the standard `_meta`; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Value {
        self.send_request_with(method, params, json!({})).await
    }

    /// Sends `notifications/cancelled` for `id`.
    pub async fn cancel(&mut self, id: &Value) {
        let frame = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the test cancels it"},
        });
        self.send_line(&frame.to_string()).await;
    }

    /// The next frame of stdout.
    pub async fn next(&mut self) -> Value {
        if let Some(frame) = self.stashed.pop_front() {
            return frame;
        }
        let frame = tokio::time::timeout(WAIT, self.frames.recv())
            .await
            .expect("a frame within 10 s")
            .expect("stdout is still open");
        self.assert_valid();
        frame
    }

    /// The frames up to the response to `id`: the frames before it, and the response.
    pub async fn until_response(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let frame = self.next().await;
            if frame.get("id") == Some(id) && frame.get("method").is_none() {
                return (before, frame);
            }
            before.push(frame);
        }
    }

    /// Sends a request and returns its response; frames before it are kept for
    /// [`Fixture::next`].
    pub async fn exchange_with(
        &mut self,
        method: &str,
        params: Value,
        extra_meta: Value,
    ) -> (Vec<Value>, Value) {
        let id = self.send_request_with(method, params, extra_meta).await;
        self.until_response(&id).await
    }

    /// The `result` of a request that must succeed, with its `_meta.serverInfo` checked
    /// and removed (and `_meta` removed when nothing else is in it).
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let (before, response) = self.exchange_with(method, params, json!({})).await;
        self.stashed.extend(before);
        result_of(response)
    }

    /// The `error` of a request that must fail.
    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let (before, response) = self.exchange_with(method, params, json!({})).await;
        self.stashed.extend(before);
        response
            .get("error")
            .cloned()
            .unwrap_or_else(|| panic!("{method} did not fail: {response}"))
    }

    /// The result of `tools/call`.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// The result of `tools/call` of `name` with `inputResponses` and no `requestState`.
    pub async fn call_with_responses(&mut self, name: &str, responses: Value) -> Value {
        self.result(
            "tools/call",
            json!({"name": name, "inputResponses": responses}),
        )
        .await
    }

    /// The text of the one text block of a complete `tools/call` result.
    pub async fn call_text(&mut self, name: &str, arguments: Value) -> String {
        let result = self.call(name, arguments).await;
        text_of(&result)
    }

    /// Asserts that no frame comes within `duration`.
    pub async fn assert_quiet(&mut self, duration: Duration) {
        assert!(
            self.stashed.is_empty(),
            "frames are waiting: {:?}",
            self.stashed
        );
        if let Ok(frame) = tokio::time::timeout(duration, self.frames.recv()).await {
            panic!("an unexpected frame: {frame:?}");
        }
    }

    /// Closes stdin (the end of input for the server).
    pub async fn close_stdin(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.shutdown().await;
        }
    }

    /// Every frame until stdout ends.
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut frames: Vec<Value> = self.stashed.drain(..).collect();
        loop {
            match tokio::time::timeout(WAIT, self.frames.recv()).await {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(_) => panic!("stdout did not end within 10 s"),
            }
        }
        self.assert_valid();
        frames
    }

    /// Waits for the exit (at most 10 s) and returns the exit code.
    pub async fn exit_code(&mut self) -> i32 {
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("the fixture exits within 10 s")
            .expect("wait");
        status.code().expect("an exit code, not a signal")
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the process.
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }

    /// All of stderr (after the process ended).
    pub async fn stderr(&mut self) -> String {
        if let Some(done) = self.stderr_done.take() {
            let _ = tokio::time::timeout(WAIT, done).await;
        }
        self.stderr.lock().unwrap().clone()
    }
}

/// The result of a successful response, with `_meta.serverInfo` checked and removed.
pub fn result_of(response: Value) -> Value {
    let mut result = response
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("not a result: {response}"));
    let meta = result
        .get_mut("_meta")
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("a result without _meta: {response}"));
    assert_eq!(
        meta.remove("io.modelcontextprotocol/serverInfo"),
        Some(server_info()),
        "serverInfo in the _meta of {response}"
    );
    if meta.is_empty() {
        result.as_object_mut().unwrap().remove("_meta");
    }
    result
}

/// The text of the one text block of a complete `CallToolResult`.
pub fn text_of(result: &Value) -> String {
    assert_eq!(result["resultType"], "complete", "not complete: {result}");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "one content block: {result}");
    assert_eq!(content[0]["type"], "text");
    content[0]["text"].as_str().expect("text").to_owned()
}

/// The methods of frames, for asserting an order.
pub fn methods(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .map(|frame| match frame.get("method") {
            Some(method) => method.as_str().unwrap_or_default().to_owned(),
            None => format!("response {}", frame["id"]),
        })
        .collect()
}
