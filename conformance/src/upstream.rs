//! The runner's end of the relay: it accepts the relay connections of one bridge
//! run, records every upstream frame in both directions, and either gives the
//! scripted answers of the transcript or proxies to a real fixture server.
//!
//! The bridge starts a new upstream at each initialize that it accepts (after a
//! failed server/discover, for example), so a run can have several connections;
//! steps act on the newest.

use harness_sim::record::{Payload, trim_line_end};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Which way an upstream frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpDir {
    /// From the bridge to the upstream server (requests, cancellations).
    ToUpstream,
    /// From the upstream server to the bridge.
    FromUpstream,
}

/// One upstream line, as recorded.
#[derive(Debug, Clone)]
pub struct UpRecord {
    /// The connection, from 0.
    pub conn: usize,
    pub dir: UpDir,
    pub payload: Payload,
    pub at: Instant,
}

/// What happened upstream, for the steps.
#[derive(Debug, Clone)]
pub enum UpEvent {
    /// The bridge started an upstream (the relay connected).
    Connected(usize),
    /// The bridge wrote a line to its upstream.
    Line(usize, Payload),
    /// The bridge ended the upstream's input.
    Eof(usize),
}

/// How the upstream answers.
#[derive(Debug, Clone)]
pub enum Mode {
    /// `exit_at_eof`: exit with code 0 at the end of the input, as a server does;
    /// `ignore_sigterm`: the relay survives a termination signal.
    Scripted {
        exit_at_eof: bool,
        ignore_sigterm: bool,
    },
    /// The fixture executable and its arguments.
    Fixture(PathBuf, Vec<String>),
}

type Writer = Arc<tokio::sync::Mutex<OwnedWriteHalf>>;

/// The listener and the connections of one run.
pub struct UpstreamHub {
    pub port: u16,
    pub token: String,
    events: mpsc::UnboundedReceiver<UpEvent>,
    writers: Arc<Mutex<Vec<Writer>>>,
    log: Arc<Mutex<Vec<UpRecord>>>,
    fixture_stderr: Arc<Mutex<Vec<String>>>,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// The process id of each relay, which leads its process group.
    pids: Arc<Mutex<Vec<u32>>>,
}

impl Drop for UpstreamHub {
    fn drop(&mut self) {
        // The fixture children are killed with their tasks (kill_on_drop).
        if let Ok(tasks) = self.tasks.lock() {
            for task in tasks.iter() {
                task.abort();
            }
        }
        // What a wrong bridge left of an upstream's group (a helper that it did
        // not stop) must not outlive the run.
        for pid in lock(&self.pids).iter() {
            harness_sim::process_group::kill_rest(*pid);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl UpstreamHub {
    /// Listens on a free loopback port.
    pub async fn start(mode: Mode, token: String) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let (sender, events) = mpsc::unbounded_channel();
        let writers: Arc<Mutex<Vec<Writer>>> = Arc::default();
        let log: Arc<Mutex<Vec<UpRecord>>> = Arc::default();
        let fixture_stderr: Arc<Mutex<Vec<String>>> = Arc::default();
        let tasks: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let pids: Arc<Mutex<Vec<u32>>> = Arc::default();
        let accept = tokio::spawn(accept_loop(
            listener,
            mode,
            token.clone(),
            sender,
            Shared {
                writers: writers.clone(),
                log: log.clone(),
                fixture_stderr: fixture_stderr.clone(),
                tasks: tasks.clone(),
                pids: pids.clone(),
            },
        ));
        lock(&tasks).push(accept);
        Ok(Self {
            port,
            token,
            events,
            writers,
            log,
            fixture_stderr,
            tasks,
            pids,
        })
    }

    /// The process ids of the relays so far (each leads its process group).
    pub fn pids(&self) -> Vec<u32> {
        lock(&self.pids).clone()
    }

    /// The next upstream event, or `None` after `deadline`.
    pub async fn next_event(&mut self, deadline: Instant) -> Option<UpEvent> {
        tokio::time::timeout_at(deadline, self.events.recv())
            .await
            .ok()
            .flatten()
    }

    /// Every upstream line so far.
    pub fn records(&self) -> Vec<UpRecord> {
        lock(&self.log).clone()
    }

    /// The stderr lines of the fixture processes.
    pub fn fixture_stderr(&self) -> Vec<String> {
        lock(&self.fixture_stderr).clone()
    }

    /// Sends one command to the newest connection.
    async fn command(&self, line: String) -> Result<(), HubError> {
        let writer = lock(&self.writers)
            .last()
            .cloned()
            .ok_or(HubError::NotStarted)?;
        let mut writer = writer.lock().await;
        writer
            .write_all(line.as_bytes())
            .await
            .map_err(HubError::Gone)
    }

    /// The scripted upstream writes `text` (one line) to the bridge.
    pub async fn send_line(&self, text: &str) -> Result<(), HubError> {
        let conn = lock(&self.writers).len().saturating_sub(1);
        self.command(format!("={text}\n")).await?;
        lock(&self.log).push(UpRecord {
            conn,
            dir: UpDir::FromUpstream,
            payload: Payload::from_line(text.as_bytes()),
            at: Instant::now(),
        });
        Ok(())
    }

    pub async fn stderr(&self, text: &str) -> Result<(), HubError> {
        self.command(format!("#stderr {text}\n")).await
    }

    pub async fn exit(&self, code: i32) -> Result<(), HubError> {
        self.command(format!("#exit {code}\n")).await
    }

    /// The scripted upstream closes its stdout and keeps running.
    pub async fn close_stdout(&self) -> Result<(), HubError> {
        self.command("#close-stdout\n".to_owned()).await
    }

    /// The scripted upstream starts a process in its group that writes `text` to
    /// stderr `clean_up_ms` after a termination signal, and then exits.
    pub async fn grandchild(&self, clean_up_ms: u64, text: &str) -> Result<(), HubError> {
        self.command(format!("#grandchild {clean_up_ms} {text}\n"))
            .await
    }
}

/// Why a scripted upstream cannot do what a step asks.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error("the bridge has not started its upstream")]
    NotStarted,
    #[error("the upstream connection is gone: {0}")]
    Gone(std::io::Error),
}

/// What the accept loop fills in for the hub.
struct Shared {
    writers: Arc<Mutex<Vec<Writer>>>,
    log: Arc<Mutex<Vec<UpRecord>>>,
    fixture_stderr: Arc<Mutex<Vec<String>>>,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    pids: Arc<Mutex<Vec<u32>>>,
}

async fn accept_loop(
    listener: TcpListener,
    mode: Mode,
    token: String,
    events: mpsc::UnboundedSender<UpEvent>,
    shared: Shared,
) {
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        let mut read = BufReader::with_capacity(64 * 1024, read);
        let mut hello = String::new();
        if read.read_line(&mut hello).await.is_err() {
            continue;
        }
        let mut words = hello.split_whitespace();
        if words.next() != Some("HELLO") || words.next() != Some(token.as_str()) {
            // Not our relay.
            continue;
        }
        if let Some(pid) = words.next().and_then(|pid| pid.parse().ok()) {
            lock(&shared.pids).push(pid);
        }
        let writer: Writer = Arc::new(tokio::sync::Mutex::new(write));
        let conn = {
            let mut writers = lock(&shared.writers);
            writers.push(writer.clone());
            writers.len() - 1
        };
        let _ = events.send(UpEvent::Connected(conn));
        let task = match &mode {
            Mode::Scripted {
                exit_at_eof,
                ignore_sigterm,
            } => {
                if *ignore_sigterm {
                    let _ = writer.lock().await.write_all(b"#ignore-sigterm\n").await;
                }
                tokio::spawn(scripted(
                    conn,
                    read,
                    exit_at_eof.then(|| writer.clone()),
                    events.clone(),
                    shared.log.clone(),
                ))
            }
            Mode::Fixture(program, args) => tokio::spawn(proxy(
                conn,
                read,
                writer,
                program.clone(),
                args.clone(),
                events.clone(),
                shared.log.clone(),
                shared.fixture_stderr.clone(),
            )),
        };
        lock(&shared.tasks).push(task);
    }
}

/// Reads the bridge's lines of connection `conn` until their end: each one is
/// recorded, becomes an event for the steps, and goes to `forward` (which stops
/// the reading with `false`); the end becomes the `Eof` event.
async fn record_bridge_lines(
    conn: usize,
    read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    events: &mpsc::UnboundedSender<UpEvent>,
    log: &Mutex<Vec<UpRecord>>,
    mut forward: impl FnMut(&[u8]) -> bool,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match read.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let payload = Payload::from_line(&line);
        lock(log).push(UpRecord {
            conn,
            dir: UpDir::ToUpstream,
            payload: payload.clone(),
            at: Instant::now(),
        });
        let _ = events.send(UpEvent::Line(conn, payload));
        if !forward(&line) {
            break;
        }
    }
    let _ = events.send(UpEvent::Eof(conn));
}

/// Reads the bridge's lines; the steps answer.
async fn scripted(
    conn: usize,
    mut read: BufReader<tokio::net::tcp::OwnedReadHalf>,
    exit_at_eof: Option<Writer>,
    events: mpsc::UnboundedSender<UpEvent>,
    log: Arc<Mutex<Vec<UpRecord>>>,
) {
    record_bridge_lines(conn, &mut read, &events, &log, |_| true).await;
    if let Some(writer) = exit_at_eof {
        let _ = writer.lock().await.write_all(b"#exit 0\n").await;
    }
}

/// Starts a fixture for this connection and passes lines both ways; the exit of
/// the fixture becomes the exit of the relay, with the same code.
#[allow(clippy::too_many_arguments)]
async fn proxy(
    conn: usize,
    mut read: BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: Writer,
    program: PathBuf,
    args: Vec<String>,
    events: mpsc::UnboundedSender<UpEvent>,
    log: Arc<Mutex<Vec<UpRecord>>>,
    fixture_stderr: Arc<Mutex<Vec<String>>>,
) {
    let spawned = tokio::process::Command::new(&program)
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            lock(&fixture_stderr).push(format!(
                "mcp-conformance: cannot start {}: {error}",
                program.display()
            ));
            let _ = writer.lock().await.write_all(b"#exit 1\n").await;
            return;
        }
    };
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return;
    };
    let stderr_task = tokio::spawn({
        let fixture_stderr = fixture_stderr.clone();
        async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                lock(&fixture_stderr).push(line);
            }
        }
    });
    // Fixture stdout to the relay.
    let down = tokio::spawn({
        let writer = writer.clone();
        let log = log.clone();
        async move {
            let mut reader = BufReader::with_capacity(64 * 1024, stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = trim_line_end(&line);
                lock(&log).push(UpRecord {
                    conn,
                    dir: UpDir::FromUpstream,
                    payload: Payload::from_line(text),
                    at: Instant::now(),
                });
                let mut command = Vec::with_capacity(text.len() + 2);
                command.push(b'=');
                command.extend_from_slice(text);
                command.push(b'\n');
                if writer.lock().await.write_all(&command).await.is_err() {
                    break;
                }
            }
        }
    });
    // The relay's lines to the fixture's stdin; its end closes the fixture's stdin.
    let (to_fixture, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(line) = lines.recv().await {
            if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    });
    let up = async {
        record_bridge_lines(conn, &mut read, &events, &log, |line| {
            to_fixture.send(line.to_vec()).is_ok()
        })
        .await;
        drop(to_fixture);
        std::future::pending::<()>().await;
    };
    let status = tokio::select! {
        status = child.wait() => status,
        _ = up => unreachable_pending(),
    };
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), down).await;
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), stderr_task).await;
    let code = match status {
        Ok(status) => status.code().unwrap_or_else(|| signal_code(&status)),
        Err(_) => 1,
    };
    let _ = writer
        .lock()
        .await
        .write_all(format!("#exit {code}\n").as_bytes())
        .await;
}

/// `up` ends only in `pending`; this arm never runs.
fn unreachable_pending() -> std::io::Result<std::process::ExitStatus> {
    Err(std::io::Error::other("the relay pump ended"))
}

/// A fixture killed by a signal: the relay exits with 128 + the signal, as a shell reports it.
fn signal_code(status: &std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    let _ = status;
    1
}
