//! `harness-sim tap`: sits between a real client (VS Code) and a server,
//! passes every byte through unchanged, and writes both directions with times
//! into a recording (see [`crate::record`]; secrets redacted there only).
//!
//! In `.vscode/mcp.json`, put `harness-sim` as the command and
//! `["tap", "--out", "/abs/session.jsonl", "--", "<server>", "<args>..."]` as
//! the args. The tap forwards SIGTERM and SIGINT to the server, ends the
//! server's stdin when its own stdin ends, and exits with the server's code.
//! It gives the server what VS Code would give it: Unix socket pairs by default
//! (see [`crate::server_stdio`]), ended as Node ends them.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::time::{Duration, Instant};

use crate::record::{Dir, Entry, Header, Payload, RecordError, Writer};
use crate::server_stdio::{self, StderrTo, StdioKind};

/// Why the tap could not run.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// No server command.
    #[error("the server command is empty")]
    EmptyCommand,
    /// The server could not start.
    #[error("cannot start {0}: {1}")]
    Spawn(String, std::io::Error),
    /// The recording could not be written.
    #[error("cannot write the recording: {0}")]
    Record(#[from] RecordError),
}

/// The recording shared by the three pumps.
#[derive(Clone)]
struct Recorder {
    started: Instant,
    writer: Arc<Mutex<Option<Writer>>>,
}

impl Recorder {
    fn record(&self, dir: Dir, line: &[u8]) {
        let entry = Entry {
            t_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            dir,
            payload: Payload::from_line(line),
        };
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = writer.as_mut()
            && let Err(error) = w.write(&entry)
        {
            // A full disk must not break the session: stop recording, keep passing.
            eprintln!("harness-sim tap: the recording stopped: {error}");
            *writer = None;
        }
    }
}

/// Runs the tap with the server's stdio of `stdio`; returns the exit code (the
/// server's, or 128 + its signal).
pub async fn run_tap(out: &Path, command: &[String], stdio: StdioKind) -> Result<i32, TapError> {
    let (program, args) = command.split_first().ok_or(TapError::EmptyCommand)?;
    let writer = Writer::create(out, Some(&Header::now("harness-sim tap", command)))?;
    let mut server = Command::new(program);
    server.args(args);
    let (mut child, ends) = server_stdio::spawn(server, stdio, StderrTo::Us)
        .map_err(|e| TapError::Spawn(program.clone(), e))?;
    let recorder = Recorder {
        started: Instant::now(),
        writer: Arc::new(Mutex::new(Some(writer))),
    };
    let (child_in, child_out) = (ends.stdin, ends.stdout);
    let Some(child_err) = ends.stderr else {
        return Err(TapError::Spawn(
            program.clone(),
            std::io::ErrorKind::BrokenPipe.into(),
        ));
    };
    let up = tokio::spawn(pump(
        tokio::io::stdin(),
        child_in,
        Dir::C2s,
        recorder.clone(),
    ));
    let down = tokio::spawn(pump(
        child_out,
        tokio::io::stdout(),
        Dir::S2c,
        recorder.clone(),
    ));
    let err = tokio::spawn(pump(
        child_err,
        tokio::io::stderr(),
        Dir::Stderr,
        recorder.clone(),
    ));
    let status = wait_forwarding_signals(&mut child).await;
    // The server's output ends with it (bounded: a grandchild may keep the pipes).
    let _ = tokio::time::timeout(Duration::from_secs(2), down).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), err).await;
    up.abort();
    let code = match status {
        Some(status) => exit_code(status),
        None => 1,
    };
    Ok(code)
}

/// Copies lines from `from` to `to` unchanged, recording each one.
async fn pump<R, W>(from: R, mut to: W, dir: Dir, recorder: Recorder)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, from);
    let mut line = Vec::with_capacity(8 * 1024);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        recorder.record(dir, &line);
        if to.write_all(&line).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    // The end of the client's stdin becomes the end of the server's stdin: a
    // shutdown of the writing side of a socket, then the close (the drop of `to`).
    let _ = to.shutdown().await;
}

#[cfg(unix)]
async fn wait_forwarding_signals(
    child: &mut tokio::process::Child,
) -> Option<std::process::ExitStatus> {
    use tokio::signal::unix::{SignalKind, signal};
    let pid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .map(nix::unistd::Pid::from_raw);
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return child.wait().await.ok();
    };
    loop {
        tokio::select! {
            status = child.wait() => return status.ok(),
            _ = term.recv() => forward(pid, nix::sys::signal::Signal::SIGTERM),
            _ = int.recv() => forward(pid, nix::sys::signal::Signal::SIGINT),
        }
    }
}

#[cfg(unix)]
fn forward(pid: Option<nix::unistd::Pid>, signal: nix::sys::signal::Signal) {
    if let Some(pid) = pid {
        let _ = nix::sys::signal::kill(pid, signal);
    }
}

#[cfg(not(unix))]
async fn wait_forwarding_signals(
    child: &mut tokio::process::Child,
) -> Option<std::process::ExitStatus> {
    child.wait().await.ok()
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return 128 + signal;
    }
    1
}
