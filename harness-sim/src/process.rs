//! [`StdioPeer`]: a server process over its stdio, as an MCP client sees it.
//!
//! The simulators, the process tests and the conformance runner all need the
//! same things from a child process: send lines, receive lines with the time
//! they arrived, see stderr as it comes, close stdin, signal, and measure how
//! long the server took to exit. Every line in both directions is kept with its
//! time (see [`crate::record`]) so that a session can be written as a recording.
//!
//! On unix the child runs in its own process group, so that [`StdioPeer::kill_tree`]
//! reaches the processes it started and [`StdioPeer::group_gone`] can tell that
//! none is left. Its stdin, stdout and stderr are Unix socket pairs, as VS Code
//! gives them, or pipes ([`PeerOptions::stdio`], [`crate::server_stdio`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{Notify, mpsc};
use tokio::time::{Duration, Instant};

use crate::record::{Dir, Entry, Header, Payload, RecordError, Transcript};
pub use crate::server_stdio::StdioKind;
use crate::server_stdio::{ServerInput, ServerOutput, StderrTo};

/// The proxy variables that the bridge reads (Q10). A test never lets a bridge
/// inherit them from the runner: it sets the ones it means.
pub const PROXY_VARIABLES: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// How to start a [`StdioPeer`].
#[derive(Clone, Debug)]
pub struct PeerOptions {
    /// Keep every line with its time. Benchmarks turn it off to save the copies.
    pub record: bool,
    /// Extra environment variables of the child.
    pub env: Vec<(OsString, OsString)>,
    /// Variables of this process that the child must not inherit (removed before
    /// `env` is applied): a test of the proxy variables must not meet the runner's.
    pub env_remove: Vec<OsString>,
    /// The working directory of the child.
    pub cwd: Option<PathBuf>,
    /// Put the child in its own process group (unix).
    pub own_process_group: bool,
    /// Socket pairs (VS Code, the default on unix) or pipes.
    pub stdio: StdioKind,
}

impl Default for PeerOptions {
    fn default() -> Self {
        Self {
            record: true,
            env: Vec::new(),
            env_remove: Vec::new(),
            cwd: None,
            own_process_group: true,
            stdio: StdioKind::default(),
        }
    }
}

/// One line from the server's stdout.
#[derive(Clone, Debug)]
pub struct Received {
    /// When the line was read.
    pub at: Instant,
    /// The line parsed as JSON; `Value::Null` when the line is not JSON (see `raw`).
    pub frame: Value,
    /// The text of the line (without its end) when it is not JSON, else `None`.
    pub raw: Option<String>,
}

impl Received {
    /// Whether the line was JSON.
    pub fn is_json(&self) -> bool {
        self.raw.is_none()
    }
}

/// Why the peer failed.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The command is empty.
    #[error("the server command is empty")]
    EmptyCommand,
    /// The command could not be started.
    #[error("cannot start {command}: {error}")]
    Spawn {
        /// The program.
        command: String,
        /// The OS error.
        error: std::io::Error,
    },
    /// Stdin is closed (by us or because the server exited).
    #[error("the stdin of the server is closed")]
    StdinClosed,
    /// A write to stdin failed.
    #[error("cannot write to the server: {0}")]
    Write(std::io::Error),
    /// Waiting for the process failed.
    #[error("cannot wait for the server: {0}")]
    Wait(std::io::Error),
}

/// State shared with the reader tasks.
struct Shared {
    started: Instant,
    record: bool,
    entries: Mutex<Vec<Entry>>,
    stderr: Mutex<Vec<String>>,
    stderr_changed: Notify,
    stderr_closed: AtomicBool,
    stdout_closed: AtomicBool,
    /// Set by [`StdioPeer::stop_reading_stdout`]: the reader takes no more lines.
    stdout_stopped: AtomicBool,
}

impl Shared {
    fn push(&self, at: Instant, dir: Dir, payload: Payload) {
        if !self.record {
            return;
        }
        let t_ms = at.saturating_duration_since(self.started).as_secs_f64() * 1000.0;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.push(Entry { t_ms, dir, payload });
    }
}

/// A server process with our ends of its stdin, stdout and stderr.
pub struct StdioPeer {
    command: Vec<String>,
    child: Child,
    pid: Option<u32>,
    stdio: StdioKind,
    stdin: Option<ServerInput>,
    lines: mpsc::UnboundedReceiver<Received>,
    shared: Arc<Shared>,
    stdin_closed_at: Option<Instant>,
    exit: Option<(ExitStatus, Instant)>,
}

impl StdioPeer {
    /// Starts `command` (argv) with default options.
    pub fn spawn(command: &[String]) -> Result<Self, PeerError> {
        Self::spawn_with(command, PeerOptions::default())
    }

    /// Starts `command` (argv).
    pub fn spawn_with(command: &[String], options: PeerOptions) -> Result<Self, PeerError> {
        let (program, args) = command.split_first().ok_or(PeerError::EmptyCommand)?;
        let mut cmd = Command::new(program);
        cmd.args(args).kill_on_drop(true);
        for key in &options.env_remove {
            cmd.env_remove(key);
        }
        for (key, value) in &options.env {
            cmd.env(key, value);
        }
        if let Some(cwd) = &options.cwd {
            cmd.current_dir(cwd);
        }
        #[cfg(unix)]
        if options.own_process_group {
            cmd.process_group(0);
        }
        let (child, ends) =
            crate::server_stdio::spawn(cmd, options.stdio, StderrTo::Us).map_err(|error| {
                PeerError::Spawn {
                    command: program.clone(),
                    error,
                }
            })?;
        let started = Instant::now();
        let shared = Arc::new(Shared {
            started,
            record: options.record,
            entries: Mutex::new(Vec::new()),
            stderr: Mutex::new(Vec::new()),
            stderr_changed: Notify::new(),
            stderr_closed: AtomicBool::new(false),
            stdout_closed: AtomicBool::new(false),
            stdout_stopped: AtomicBool::new(false),
        });
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(read_stdout(ends.stdout, tx, Arc::clone(&shared)));
        if let Some(stderr) = ends.stderr {
            tokio::spawn(read_stderr(stderr, Arc::clone(&shared)));
        }
        Ok(Self {
            command: command.to_vec(),
            pid: child.id(),
            stdio: options.stdio,
            stdin: Some(ends.stdin),
            child,
            lines,
            shared,
            stdin_closed_at: None,
            exit: None,
        })
    }

    /// The command (argv) of the server.
    pub fn command(&self) -> &[String] {
        &self.command
    }

    /// The process id of the child (and of its process group on unix).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// What the child's stdin, stdout and stderr are.
    pub fn stdio(&self) -> StdioKind {
        self.stdio
    }

    /// When the child started.
    pub fn started(&self) -> Instant {
        self.shared.started
    }

    /// Sends one frame as one line.
    pub async fn send(&mut self, frame: &Value) -> Result<(), PeerError> {
        let mut line = serde_json::to_vec(frame).map_err(|e| PeerError::Write(e.into()))?;
        line.push(b'\n');
        self.write(&line).await?;
        self.shared
            .push(Instant::now(), Dir::C2s, Payload::Frame(frame.clone()));
        Ok(())
    }

    /// Sends bytes as they are (one or more lines, or a partial line), for
    /// hostile-input tests and for pre-serialized frames.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), PeerError> {
        self.write(bytes).await?;
        if self.shared.record {
            let at = Instant::now();
            for line in bytes.split_inclusive(|b| *b == b'\n') {
                self.shared.push(at, Dir::C2s, Payload::from_line(line));
            }
        }
        Ok(())
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), PeerError> {
        let stdin = self.stdin.as_mut().ok_or(PeerError::StdinClosed)?;
        stdin.write_all(bytes).await.map_err(PeerError::Write)?;
        stdin.flush().await.map_err(PeerError::Write)
    }

    /// The next stdout line, or `None` after `timeout` or at the end of stdout.
    pub async fn recv(&mut self, timeout: Duration) -> Option<Received> {
        tokio::time::timeout(timeout, self.lines.recv())
            .await
            .unwrap_or_default()
    }

    /// The next stdout line if one is already there.
    pub fn try_recv(&mut self) -> Option<Received> {
        self.lines.try_recv().ok()
    }

    /// Stops reading the child's stdout for good, as a client that hangs: once the
    /// pipe is full, the child's writes to stdout wait. The lines read before stay.
    pub fn stop_reading_stdout(&mut self) {
        self.shared.stdout_stopped.store(true, Ordering::Release);
    }

    /// Whether stdout has ended and every line was taken.
    pub fn stdout_closed(&self) -> bool {
        self.shared.stdout_closed.load(Ordering::Acquire) && self.lines.is_empty()
    }

    /// The stderr lines so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.shared
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Waits until a stderr line matches `pred`; returns it, or `None` after `timeout`
    /// or at the end of stderr.
    pub async fn wait_stderr(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&str) -> bool,
    ) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.shared.stderr_changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(line) = self.stderr_lines().into_iter().find(|l| pred(l)) {
                return Some(line);
            }
            if self.shared.stderr_closed.load(Ordering::Acquire) {
                return None;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return None;
            }
        }
    }

    /// Waits for the end of stderr: every process that held it has exited.
    pub async fn wait_stderr_closed(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.shared.stderr_changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.shared.stderr_closed.load(Ordering::Acquire) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    /// Ends stdin as Node does (the shutdown of a socket's writing side and its
    /// close, or the close of a pipe). The stop time of [`StdioPeer::wait_exit`]
    /// is measured from here.
    pub async fn close_stdin(&mut self) {
        if let Some(stdin) = self.stdin.take() {
            stdin.end().await;
        }
        if self.stdin_closed_at.is_none() {
            self.stdin_closed_at = Some(Instant::now());
        }
    }

    /// When stdin was closed.
    pub fn stdin_closed_at(&self) -> Option<Instant> {
        self.stdin_closed_at
    }

    /// Sends SIGTERM to the direct child (as VS Code 1.140-1.142 does).
    pub fn terminate(&mut self) {
        self.signal_child(Signal::Term);
    }

    /// Sends SIGTERM to the process group of the child.
    pub fn terminate_group(&mut self) {
        self.signal_group(Signal::Term);
    }

    /// Kills the child and every process of its group (SIGKILL).
    pub fn kill_tree(&mut self) {
        self.signal_group(Signal::Kill);
        if self.exit.is_none() {
            // Reaches the child also when it left our group.
            let _ = self.child.start_kill();
        }
    }

    fn signal_child(&mut self, signal: Signal) {
        if self.has_exited() {
            return;
        }
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal.nix());
            return;
        }
        // Without signals, a stop of any kind is a kill.
        #[cfg(not(unix))]
        let _ = signal;
        let _ = self.child.start_kill();
    }

    fn signal_group(&mut self, signal: Signal) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal.nix());
            return;
        }
        #[cfg(not(unix))]
        let _ = signal;
        if !self.has_exited() {
            let _ = self.child.start_kill();
        }
    }

    /// Whether the child was reaped (without waiting).
    fn has_exited(&mut self) -> bool {
        if self.exit.is_some() {
            return true;
        }
        if let Ok(Some(status)) = self.child.try_wait() {
            self.exit = Some((status, Instant::now()));
            return true;
        }
        false
    }

    /// Waits up to `timeout` for the exit of the child. Returns its status and
    /// the time from the close of stdin (or from the start when stdin is still
    /// open) to the exit.
    pub async fn wait_exit(&mut self, timeout: Duration) -> Option<(ExitStatus, Duration)> {
        if self.exit.is_none() {
            match tokio::time::timeout(timeout, self.child.wait()).await {
                Ok(Ok(status)) => self.exit = Some((status, Instant::now())),
                Ok(Err(_)) | Err(_) => return None,
            }
        }
        let (status, at) = self.exit?;
        let from = self.stdin_closed_at.unwrap_or(self.shared.started);
        Some((status, at.saturating_duration_since(from)))
    }

    /// When the child exited, if it was seen to exit.
    pub fn exited_at(&self) -> Option<Instant> {
        self.exit.map(|(_, at)| at)
    }

    /// Whether no process of the child's process group is left (unix); elsewhere
    /// whether the child exited.
    pub fn group_gone(&mut self) -> bool {
        #[cfg(unix)]
        if let Some(pid) = self.pid {
            return self.has_exited() && crate::process_group::is_gone(pid);
        }
        self.has_exited()
    }

    /// Waits up to `timeout` until [`StdioPeer::group_gone`].
    pub async fn wait_group_gone(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.group_gone() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Every line so far, both directions and stderr, with times.
    pub fn entries(&self) -> Vec<Entry> {
        self.shared
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The frames sent so far, in order.
    pub fn sent_frames(&self) -> Vec<Value> {
        self.frames(Dir::C2s)
    }

    /// The frames received so far, in order.
    pub fn received_frames(&self) -> Vec<Value> {
        self.frames(Dir::S2c)
    }

    fn frames(&self, dir: Dir) -> Vec<Value> {
        self.shared
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|e| e.dir == dir)
            .filter_map(|e| e.payload.frame().cloned())
            .collect()
    }

    /// The session as a recording with a header naming `source`.
    pub fn transcript(&self, source: &str) -> Transcript {
        let mut header = Header::now(source, &self.command);
        header.recorded = recorded_at(self.shared.started);
        Transcript {
            header: Some(header),
            note: None,
            entries: self.entries(),
        }
    }

    /// Writes the session as a recording (see [`crate::record`]).
    pub fn write_transcript(
        &self,
        path: &std::path::Path,
        source: &str,
    ) -> Result<(), RecordError> {
        self.transcript(source).write(path)
    }
}

impl Drop for StdioPeer {
    fn drop(&mut self) {
        // A test that fails half-way must not leave servers behind.
        if !self.has_exited() {
            self.kill_tree();
        }
    }
}

/// The wall-clock time of a `tokio::time::Instant` in the past, as RFC 3339.
fn recorded_at(started: Instant) -> String {
    let ago = Instant::now().saturating_duration_since(started);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let then = now.saturating_sub(ago);
    crate::record::rfc3339_utc(then.as_secs(), then.subsec_millis())
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
impl Signal {
    fn nix(self) -> nix::sys::signal::Signal {
        match self {
            Signal::Term => nix::sys::signal::Signal::SIGTERM,
            Signal::Kill => nix::sys::signal::Signal::SIGKILL,
        }
    }
}

async fn read_stdout(
    stdout: ServerOutput,
    tx: mpsc::UnboundedSender<Received>,
    shared: Arc<Shared>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::with_capacity(8 * 1024);
    loop {
        buf.clear();
        let read = reader.read_until(b'\n', &mut buf).await;
        if shared.stdout_stopped.load(Ordering::Acquire) {
            // A client that hangs: the line that came after the stop is never taken,
            // and nothing reads the pipe any more, until the peer goes.
            tx.closed().await;
            return;
        }
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let at = Instant::now();
        let payload = Payload::from_line(&buf);
        if shared.record {
            shared.push(at, Dir::S2c, payload.clone());
        }
        let received = match payload {
            Payload::Frame(frame) => Received {
                at,
                frame,
                raw: None,
            },
            Payload::Line(text) => Received {
                at,
                frame: Value::Null,
                raw: Some(text),
            },
        };
        if tx.send(received).is_err() {
            break;
        }
    }
    shared.stdout_closed.store(true, Ordering::Release);
}

async fn read_stderr(stderr: ServerOutput, shared: Arc<Shared>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(crate::record::trim_line_end(&buf)).into_owned();
        shared.push(Instant::now(), Dir::Stderr, Payload::Line(line.clone()));
        shared
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
        shared.stderr_changed.notify_waiters();
    }
    shared.stderr_closed.store(true, Ordering::Release);
    shared.stderr_changed.notify_waiters();
}
