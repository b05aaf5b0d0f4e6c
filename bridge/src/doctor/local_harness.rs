//! VS Code's Local harness, as doctor plays it in front of the bridge's session:
//! its initialize (revision 2025-11-25, its capabilities), its frames one per
//! line, its answers to the bridge's questions. It asks nobody: a form or a URL
//! of the upstream is cancelled, a sampling request refused, and the roots are
//! none; doctor tells that they were asked. Only the URL of a sign-in of the
//! bridge is opened, with `--sign-in`, as VS Code opens it when the user accepts
//! (through a one-time start URL: the opener never gets the authorization URL).

use super::start_url::{self, Served};
use super::tap::Tap;
use super::texts::open_sign_in;
use crate::auth::browser::Opener;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant, timeout_at};

/// The answer of the bridge to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The result, and the length of its line in bytes.
    Result(Map<String, Value>, usize),
    /// The error object.
    Error(Value),
    /// No answer within the time limit.
    NoAnswer,
}

/// A notification of the bridge, and when it came.
#[derive(Debug, Clone)]
pub struct Notified {
    pub method: String,
    pub at: Instant,
}

/// The client side of an in-process session.
pub struct LocalHarness {
    input: DuplexStream,
    output: Lines<BufReader<DuplexStream>>,
    next_id: u64,
    pub notifications: Vec<Notified>,
    /// The questions of the bridge (elicitation, sampling, roots), and what
    /// doctor answered.
    pub questions: Vec<String>,
    /// The output ended: the session stopped.
    pub closed: bool,
    /// With `--sign-in`: how the URL of a later sign-in opens (none: `--no-browser`,
    /// the URL goes to stderr).
    pub sign_in_urls: Option<Option<Opener>>,
    /// The URL of the upstream, for the lines of a start URL.
    pub server_url: String,
    /// The upstream side of the session: it tells the URL elicitations that the
    /// bridge's own sign-in asked from those of the upstream.
    pub tap: Tap,
    /// The start URLs that doctor serves for the sign-ins it opened, and the news
    /// of one that got a second request.
    started: Vec<Served>,
    start_reuse: mpsc::UnboundedSender<()>,
    start_reused: mpsc::UnboundedReceiver<()>,
}

/// Why doctor cancelled a request: the start URL of its sign-in got a second request.
const START_REUSED: &str = "doctor cancelled the request: the start URL of its sign-in received a second request, so the sign-in stopped";

/// The name that the upstream and the lines of the bridge see.
pub const CLIENT_NAME: &str = "mcp-bridge-vscode doctor";

impl LocalHarness {
    /// `input` is what the session reads, `output` what it writes.
    pub fn new(input: DuplexStream, output: DuplexStream) -> Self {
        let (start_reuse, start_reused) = mpsc::unbounded_channel();
        Self {
            input,
            output: BufReader::new(output).lines(),
            next_id: 1,
            notifications: Vec::new(),
            questions: Vec::new(),
            closed: false,
            sign_in_urls: None,
            server_url: String::new(),
            tap: Tap::default(),
            started: Vec::new(),
            start_reuse,
            start_reused,
        }
    }

    /// The params of the Local harness's initialize: revision 2025-11-25, roots,
    /// sampling, and elicitation in both modes (reference: clients.md, "Initialize").
    pub fn initialize_params() -> Map<String, Value> {
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "roots": {"listChanged": true},
                "sampling": {},
                "elicitation": {"form": {}, "url": {}}
            },
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}
        });
        params.as_object().cloned().unwrap_or_default()
    }

    /// Sends a request and waits until `deadline` for its answer; what else comes
    /// meanwhile is recorded or answered.
    pub async fn request(
        &mut self,
        method: &str,
        params: Map<String, Value>,
        deadline: Instant,
    ) -> Reply {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.write(&frame).await.is_err() {
            return Reply::NoAnswer;
        }
        loop {
            let next = tokio::select! {
                biased;
                Some(()) = self.start_reused.recv() => {
                    return self.cancel(id).await;
                }
                next = read_frame(&mut self.output, &mut self.closed, deadline) => next,
            };
            let Some((frame, length)) = next else {
                return Reply::NoAnswer;
            };
            if frame.get("method").is_none() && frame.get("id") == Some(&json!(id)) {
                if let Some(Value::Object(result)) = frame.get("result") {
                    return Reply::Result(result.clone(), length);
                }
                return Reply::Error(frame.get("error").cloned().unwrap_or(Value::Null));
            }
            self.on_other(frame).await;
        }
    }

    /// A start URL that doctor opened got a second request: another program of
    /// the host possibly opened it, so the sign-in stops, as a start's does. The
    /// request `id` that waits for it is cancelled, which ends its sign-in in the
    /// link; the error is doctor's own (a cancelled request gets no answer).
    async fn cancel(&mut self, id: u64) -> Reply {
        let _ = self
            .write(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": START_REUSED}}),
            )
            .await;
        Reply::Error(json!({"code": -32800, "message": START_REUSED}))
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str) {
        let _ = self
            .write(&json!({"method": method, "jsonrpc": "2.0"}))
            .await;
    }

    /// Reads until `deadline` or until `enough` says that the notifications so far
    /// are enough.
    pub async fn wait(&mut self, deadline: Instant, enough: impl Fn(&[Notified]) -> bool) {
        while !enough(&self.notifications) {
            let Some((frame, _)) = self.read(deadline).await else {
                return;
            };
            self.on_other(frame).await;
        }
    }

    /// Ends the input of the session (VS Code closes stdin). The start URLs that
    /// doctor served end with it.
    pub async fn close(mut self) {
        let _ = self.input.shutdown().await;
    }

    /// A URL elicitation of a sign-in of the bridge, with `--sign-in`: the URL
    /// opens as VS Code opens it after the user's accept, through a one-time start
    /// URL ([`start_url`]); with `--no-browser` it is written for the user. Only
    /// an elicitation that the bridge's link asked itself is one (the tap saw it
    /// go by: its id and URL); one of the upstream, whatever its message, is not.
    fn opens_sign_in(&mut self, params: &Value) -> bool {
        let Some(opener) = self.sign_in_urls.clone() else {
            return false;
        };
        let Some(url) = self.tap.take_own_sign_in(params) else {
            return false;
        };
        let reuse = self.start_reuse.clone();
        match opener.map(|opener| start_url::open(&opener, &url, &self.server_url, reuse)) {
            Some(Ok(served)) => self.started.push(served),
            _ => eprintln!("{}", open_sign_in(&url)),
        }
        true
    }

    async fn write(&mut self, frame: &Value) -> std::io::Result<()> {
        let mut line = frame.to_string();
        line.push('\n');
        self.input.write_all(line.as_bytes()).await
    }

    /// The next frame, with the length of its line.
    async fn read(&mut self, deadline: Instant) -> Option<(Map<String, Value>, usize)> {
        read_frame(&mut self.output, &mut self.closed, deadline).await
    }

    /// A notification is recorded; a question of the bridge is answered as a
    /// user who is not there would: nothing accepted, nothing shared.
    async fn on_other(&mut self, frame: Map<String, Value>) {
        let Some(method) = frame.get("method").and_then(Value::as_str) else {
            return;
        };
        let method = method.to_owned();
        let Some(id) = frame.get("id").cloned() else {
            self.notifications.push(Notified {
                method,
                at: Instant::now(),
            });
            return;
        };
        let params = frame.get("params").cloned().unwrap_or(Value::Null);
        let (answer, asked) = match method.as_str() {
            "elicitation/create" if self.opens_sign_in(&params) => (
                json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept"}}),
                "the URL of a sign-in, opened",
            ),
            "elicitation/create" => (
                json!({"jsonrpc": "2.0", "id": id, "result": {"action": "cancel"}}),
                "a form or a URL, cancelled",
            ),
            "roots/list" => (
                json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}}),
                "the roots, none given",
            ),
            "ping" => (json!({"jsonrpc": "2.0", "id": id, "result": {}}), "a ping"),
            _ => (
                json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32000,
                    "message": "doctor answers no question of the server"
                }}),
                "a sampling request or another question, refused",
            ),
        };
        self.questions.push(format!("{method}: {asked}"));
        let _ = self.write(&answer).await;
    }
}

/// The next frame of the session's output, with the length of its line; `closed`
/// once the output ended.
async fn read_frame(
    output: &mut Lines<BufReader<DuplexStream>>,
    closed: &mut bool,
    deadline: Instant,
) -> Option<(Map<String, Value>, usize)> {
    if *closed {
        return None;
    }
    loop {
        match timeout_at(deadline, output.next_line()).await {
            Err(_) => return None,
            Ok(Ok(Some(line))) => {
                if let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(&line) {
                    return Some((frame, line.len()));
                }
            }
            Ok(_) => {
                *closed = true;
                return None;
            }
        }
    }
}

/// A deadline `limit` from now.
pub fn deadline(limit: Duration) -> Instant {
    Instant::now() + limit
}
