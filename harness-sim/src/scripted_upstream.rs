//! A scripted upstream of revision 2026-07-28 that misbehaves as a process: it
//! exits before an answer, kills itself, writes lines that are not frames, leaves
//! a grandchild in its process group, ignores the termination signal or cleans up
//! after it, writes after the end of its input, or stops reading. The process tests
//! of the bridge put it behind the real bridge executable.
//!
//! `harness-sim scripted-upstream SCRIPT` (hidden) takes the script as JSON
//! ([`UpstreamScript`]). It writes `upstream pid <pid>` on stderr first (the pid is
//! its process group: the bridge starts it as a group leader), runs `start`, then
//! reads one request a line: `server/discover` gets `on_discover` (by default a
//! 2026-07-28 discover result with the tools capability), the Nth other request
//! gets `calls[N]` (counted from 1; by default `ok`, the text result `ok N`).
//! Notifications are read and dropped. At the end of its input it runs `at_end`
//! and exits 0.

use std::collections::BTreeMap;
use std::process::Stdio;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Stdout};
use tokio::time::Duration;

/// What the scripted upstream does, when.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamScript {
    /// Before the first line is read.
    #[serde(default)]
    pub start: Vec<Action>,
    /// For `server/discover`, instead of the discover result.
    #[serde(default)]
    pub on_discover: Option<Vec<Action>>,
    /// For the Nth request other than `server/discover` (from 1), instead of `ok`.
    #[serde(default)]
    pub calls: BTreeMap<u32, Vec<Action>>,
    /// At the end of its input, before the exit with 0.
    #[serde(default)]
    pub at_end: Vec<Action>,
    /// Whether it writes `upstream pid <pid>` first (a grandchild does not).
    #[serde(default = "yes")]
    pub pid_line: bool,
}

fn yes() -> bool {
    true
}

/// One step of a script. In texts and frames, the string `{id}` is the id of the
/// request being answered and `{n}` the number of the call.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// The text result `ok <n>`.
    Ok,
    /// A frame.
    Send(Value),
    /// A line as it is (not necessarily JSON).
    Raw(String),
    /// A line on stderr.
    Stderr(String),
    /// Waits.
    SleepMs(u64),
    /// Exits with this code at once.
    Exit(i32),
    /// Kills itself with SIGKILL.
    KillSelf,
    /// From now on the termination signal does not end the process.
    IgnoreTerm,
    /// From now on the termination signal runs these actions, beside whatever the
    /// script is doing, and then exits (with 0, or the code of an action that
    /// ends the process): a process that cleans up before it exits.
    OnTerm(Vec<Action>),
    /// Starts another scripted upstream with this script (JSON), in its process
    /// group, without its stdin and stdout (it shares stderr), and does not wait
    /// for it.
    Spawn(Value),
}

/// Runs the script of `text`; returns the exit code.
pub async fn run(text: &str) -> i32 {
    let script: UpstreamScript = match serde_json::from_str(text) {
        Ok(script) => script,
        Err(error) => {
            stderr_line(&format!(
                "harness-sim scripted-upstream: the script is not valid: {error}"
            ));
            return 2;
        }
    };
    let mut upstream = Upstream {
        stdout: tokio::io::stdout(),
        #[cfg(unix)]
        ignored: Vec::new(),
    };
    if script.pid_line {
        stderr_line(&format!("upstream pid {}", std::process::id()));
    }
    if let Err(code) = upstream.run(&script.start, &Value::Null, 0).await {
        return code;
    }
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    let mut calls = 0;
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(request) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id").cloned() else {
            continue;
        };
        let done = if request["method"] == "server/discover" {
            match &script.on_discover {
                Some(actions) => upstream.run(actions, &id, calls).await,
                None => upstream.send(&discover_result(&id)).await,
            }
        } else {
            calls += 1;
            match script.calls.get(&calls) {
                Some(actions) => upstream.run(actions, &id, calls).await,
                None => upstream.run(&[Action::Ok], &id, calls).await,
            }
        };
        if let Err(code) = done {
            return code;
        }
    }
    match upstream.run(&script.at_end, &Value::Null, calls).await {
        Ok(()) => 0,
        Err(code) => code,
    }
}

struct Upstream {
    stdout: Stdout,
    /// The termination signal, caught and never acted on while this lives.
    #[cfg(unix)]
    ignored: Vec<tokio::signal::unix::Signal>,
}

impl Upstream {
    /// Runs `actions` for the request `id`, the call `n`; `Err` with the exit code
    /// when the process must end.
    async fn run(&mut self, actions: &[Action], id: &Value, n: u32) -> Result<(), i32> {
        for action in actions {
            match action {
                Action::Ok => {
                    let text = format!("ok {n}");
                    self.send(&json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}))
                        .await?;
                }
                Action::Send(frame) => self.send(&fill_frame(frame, id, n)).await?,
                Action::Raw(text) => self.write(&fill(text, id, n)).await?,
                Action::Stderr(text) => stderr_line(&fill(text, id, n)),
                Action::SleepMs(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
                Action::Exit(code) => std::process::exit(*code),
                Action::KillSelf => kill_self(),
                Action::IgnoreTerm => self.ignore_term(),
                Action::OnTerm(cleanup) => on_term(cleanup.clone()),
                Action::Spawn(script) => spawn(script)?,
            }
        }
        Ok(())
    }

    async fn send(&mut self, frame: &Value) -> Result<(), i32> {
        self.write(&frame.to_string()).await
    }

    async fn write(&mut self, line: &str) -> Result<(), i32> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let written = async {
            self.stdout.write_all(&bytes).await?;
            self.stdout.flush().await
        };
        written.await.map_err(|error| {
            stderr_line(&format!(
                "harness-sim scripted-upstream: a write failed: {error}"
            ));
            1
        })
    }

    fn ignore_term(&mut self) {
        #[cfg(unix)]
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => self.ignored.push(signal),
            Err(error) => stderr_line(&format!("harness-sim scripted-upstream: {error}")),
        }
    }
}

/// Writes `text` and its newline to stderr in one write. The bridge and the other
/// processes of the group share this stderr: `eprintln!` writes the text and the
/// newline apart, and a line of another process between the two would spoil both.
fn stderr_line(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(format!("{text}\n").as_bytes());
}

/// Runs `cleanup` at the termination signal, then exits.
fn on_term(cleanup: Vec<Action>) {
    #[cfg(unix)]
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::spawn(async move {
                terminate.recv().await;
                let code = match run_cleanup(cleanup).await {
                    Ok(()) => 0,
                    Err(code) => code,
                };
                std::process::exit(code);
            });
        }
        Err(error) => stderr_line(&format!("harness-sim scripted-upstream: {error}")),
    }
    #[cfg(not(unix))]
    drop(cleanup);
}

/// The actions of [`on_term`], with a stdout of their own.
#[cfg(unix)]
async fn run_cleanup(cleanup: Vec<Action>) -> Result<(), i32> {
    let mut upstream = Upstream {
        stdout: tokio::io::stdout(),
        ignored: Vec::new(),
    };
    upstream.run(&cleanup, &Value::Null, 0).await
}

/// The discover result of a 2026-07-28 server named `scripted` with tools.
fn discover_result(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
        "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}}})
}

/// `text` with `{id}` as the request's id (as JSON) and `{n}` as the call number.
fn fill(text: &str, id: &Value, n: u32) -> String {
    text.replace("{id}", &id.to_string())
        .replace("{n}", &n.to_string())
}

/// `frame` with every string `"{id}"` replaced by the request's id.
fn fill_frame(frame: &Value, id: &Value, n: u32) -> Value {
    match frame {
        Value::String(text) if text == "{id}" => id.clone(),
        Value::String(text) => Value::String(fill(text, id, n)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill_frame(v, id, n)).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| (key.clone(), fill_frame(value, id, n)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn kill_self() {
    #[cfg(unix)]
    let _ = nix::sys::signal::kill(nix::unistd::getpid(), nix::sys::signal::Signal::SIGKILL);
    std::process::exit(137);
}

fn spawn(script: &Value) -> Result<(), i32> {
    let text = script.to_string();
    let program = std::env::current_exe().map_err(|error| {
        stderr_line(&format!("harness-sim scripted-upstream: {error}"));
        1
    })?;
    std::process::Command::new(program)
        .args(["scripted-upstream", &text])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|error| {
            stderr_line(&format!(
                "harness-sim scripted-upstream: cannot start the grandchild: {error}"
            ));
            1
        })
}
