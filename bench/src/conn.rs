//! [`Conn`]: a lean connection to one server process, for measurements.
//!
//! [`harness_sim::process::StdioPeer`] keeps and parses every line, which is right for
//! tests and wrong for a benchmark: the client would cost as much as the server it
//! measures. Here one reader task finds the line ends, keeps only the first and the
//! last bytes of each line (the whole line only when asked, for list pages), stamps
//! the time, and hands the id over; the caller writes pre-serialized frames. The
//! server's stdin and stdout are socket pairs or pipes ([`StdioKind`]); its stderr
//! goes to `/dev/null`.

use std::ffi::OsString;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};

use super::BenchError;
use super::scan::{self, Head, Kind};
use harness_sim::proc_mem::{self, Memory};
use harness_sim::server_stdio::{self, ServerInput, ServerOutput, StderrTo, StdioKind};

/// How many first bytes of each line are kept to read its id.
const HEAD_BYTES: usize = 1024;
/// How many last bytes of each line are kept.
const TAIL_BYTES: usize = 64;
/// The read buffer of the reader task.
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// One line of the server.
#[derive(Debug)]
pub struct Reply {
    pub head: Head,
    /// The length of the line without its newline.
    pub len: usize,
    /// When its newline was read.
    pub at: Instant,
    /// The line, when it is at most the `keep` bytes of [`Conn::spawn`].
    pub line: Option<Vec<u8>>,
    /// Its first bytes, for error messages.
    pub first: Vec<u8>,
}

impl Reply {
    /// The start of the line as text, for error messages.
    pub fn excerpt(&self) -> String {
        String::from_utf8_lossy(&self.first[..self.first.len().min(300)]).into_owned()
    }
}

/// A server process with our ends of its stdin and stdout.
pub struct Conn {
    child: Child,
    pid: u32,
    stdin: Option<ServerInput>,
    replies: mpsc::UnboundedReceiver<Reply>,
    /// Just before the process was spawned.
    pub spawned_at: Instant,
    exited: bool,
}

impl Conn {
    /// Starts `argv` in its own process group with stdin and stdout of `stdio`.
    /// Lines up to `keep` bytes are kept whole.
    pub fn spawn(argv: &[OsString], stdio: StdioKind, keep: usize) -> Result<Self, BenchError> {
        Self::spawn_with_env(argv, &[], stdio, keep)
    }

    /// [`spawn`](Self::spawn) with `env` added to the environment of the process
    /// (mcp-remote's CA file and its own state directory).
    pub fn spawn_with_env(
        argv: &[OsString],
        env: &[(OsString, OsString)],
        stdio: StdioKind,
        keep: usize,
    ) -> Result<Self, BenchError> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| BenchError::Setup("an empty command".into()))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(env.iter().map(|(key, value)| (key, value)))
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let spawned_at = Instant::now();
        let (child, ends) =
            server_stdio::spawn(command, stdio, StderrTo::Null).map_err(|error| {
                BenchError::Setup(format!(
                    "cannot start {}: {error}",
                    program.to_string_lossy()
                ))
            })?;
        let pid = child
            .id()
            .ok_or_else(|| BenchError::Setup("the child has no process id".into()))?;
        let (sender, replies) = mpsc::unbounded_channel();
        tokio::spawn(read_lines(ends.stdout, sender, keep));
        Ok(Self {
            child,
            pid,
            stdin: Some(ends.stdin),
            replies,
            spawned_at,
            exited: false,
        })
    }

    /// The process id of the server (not of its children).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The resident memory of the server process now.
    pub fn memory(&self) -> Result<Memory, BenchError> {
        proc_mem::read(self.pid).map_err(|error| BenchError::Io(format!("memory: {error}")))
    }

    /// The resident memory of the server process and of the processes it started
    /// (the upstream of a bridge), summed (see [`proc_mem::read_tree`]).
    pub fn tree_memory(&self) -> Result<Memory, BenchError> {
        proc_mem::read_tree(self.pid).map_err(|error| BenchError::Io(format!("memory: {error}")))
    }

    /// Writes `parts` one after the other (a frame may be split around a large text).
    pub async fn send(&mut self, parts: &[&[u8]]) -> Result<(), BenchError> {
        let stdin = self.stdin.as_mut().ok_or(BenchError::Closed)?;
        for part in parts {
            stdin
                .write_all(part)
                .await
                .map_err(|error| BenchError::Io(format!("write: {error}")))?;
        }
        Ok(())
    }

    /// The next response of the server (requests and notifications are skipped).
    pub async fn response(&mut self, limit: Duration) -> Result<Reply, BenchError> {
        loop {
            let reply = tokio::time::timeout(limit, self.replies.recv())
                .await
                .map_err(|_| BenchError::Timeout(format!("no response in {limit:?}")))?
                .ok_or(BenchError::Closed)?;
            if reply.head.kind != Kind::Message {
                return Ok(reply);
            }
        }
    }

    /// A response that is already there.
    pub fn try_response(&mut self) -> Option<Reply> {
        while let Ok(reply) = self.replies.try_recv() {
            if reply.head.kind != Kind::Message {
                return Some(reply);
            }
        }
        None
    }

    /// The result for request `id`, the only request in flight.
    pub async fn result_of(&mut self, id: i64, limit: Duration) -> Result<Reply, BenchError> {
        let reply = self.response(limit).await?;
        check_result(&reply, Some(id))?;
        Ok(reply)
    }

    /// Ends stdin as Node does (see [`ServerInput::end`]) and returns when.
    pub async fn close_stdin(&mut self) -> Instant {
        if let Some(stdin) = self.stdin.take() {
            stdin.end().await;
        }
        Instant::now()
    }

    /// Waits for the exit of the server; returns when it was seen.
    pub async fn wait_exit(&mut self, limit: Duration) -> Result<Instant, BenchError> {
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(Ok(_status)) => {
                self.exited = true;
                Ok(Instant::now())
            }
            Ok(Err(error)) => Err(BenchError::Io(format!("wait: {error}"))),
            Err(_) => {
                self.kill();
                Err(BenchError::Timeout(format!(
                    "the server did not exit in {limit:?} after the end of its input"
                )))
            }
        }
    }

    /// The end of input and the exit: the stop time.
    pub async fn stop(mut self) -> Result<Duration, BenchError> {
        let closed = self.close_stdin().await;
        let exited = self.wait_exit(Duration::from_secs(15)).await?;
        Ok(exited.saturating_duration_since(closed))
    }

    /// Kills the process group of the server.
    fn kill(&mut self) {
        #[cfg(unix)]
        if let Ok(pid) = i32::try_from(self.pid) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if !self.exited {
            self.kill();
        }
    }
}

/// A result (not an error) for `id` (when given).
pub fn check_result(reply: &Reply, id: Option<i64>) -> Result<(), BenchError> {
    if reply.head.kind != Kind::Result || (id.is_some() && reply.head.id != id) {
        return Err(BenchError::Server(format!(
            "expected the result of request {}, got: {}",
            id.map_or_else(|| "?".to_owned(), |id| id.to_string()),
            reply.excerpt()
        )));
    }
    Ok(())
}

/// The reader task: one [`Reply`] per line, until the end of stdout.
async fn read_lines(stdout: ServerOutput, replies: mpsc::UnboundedSender<Reply>, keep: usize) {
    let mut reader = BufReader::with_capacity(READ_BUFFER_BYTES, stdout);
    let mut line = LineState::new(keep);
    loop {
        let available = match reader.fill_buf().await {
            Ok(bytes) if !bytes.is_empty() => bytes,
            _ => return,
        };
        let (chunk, complete) = match scan::find_newline(available) {
            Some(end) => (&available[..end], true),
            None => (available, false),
        };
        line.push(chunk);
        let used = chunk.len() + usize::from(complete);
        reader.consume(used);
        if complete {
            let reply = line.finish(Instant::now());
            if replies.send(reply).is_err() {
                return;
            }
        }
    }
}

/// The kept parts of the line being read.
struct LineState {
    keep: usize,
    len: usize,
    first: Vec<u8>,
    tail: Vec<u8>,
    whole: Option<Vec<u8>>,
}

impl LineState {
    fn new(keep: usize) -> Self {
        Self {
            keep,
            len: 0,
            first: Vec::with_capacity(HEAD_BYTES),
            tail: Vec::with_capacity(2 * TAIL_BYTES),
            whole: (keep > 0).then(Vec::new),
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        self.len += chunk.len();
        if self.first.len() < HEAD_BYTES {
            let room = HEAD_BYTES - self.first.len();
            self.first
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        if chunk.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail
                .extend_from_slice(&chunk[chunk.len() - TAIL_BYTES..]);
        } else {
            self.tail.extend_from_slice(chunk);
            if self.tail.len() > TAIL_BYTES {
                self.tail.drain(..self.tail.len() - TAIL_BYTES);
            }
        }
        if let Some(whole) = &mut self.whole {
            if self.len <= self.keep {
                whole.extend_from_slice(chunk);
            } else {
                self.whole = None;
            }
        }
    }

    fn finish(&mut self, at: Instant) -> Reply {
        let head = scan::head(&self.first, &self.tail);
        let reply = Reply {
            head,
            len: self.len,
            at,
            line: self.whole.take(),
            first: std::mem::take(&mut self.first),
        };
        *self = Self::new(self.keep);
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_keeps_its_ends_and_a_short_one_is_whole() {
        let mut state = LineState::new(100);
        let start = br#"{"jsonrpc":"2.0","id":5,"result":{"text":""#;
        state.push(start);
        state.push(&[b'a'; 5000]);
        state.push(br#""}}"#);
        let reply = state.finish(Instant::now());
        assert_eq!(reply.head.id, Some(5));
        assert_eq!(reply.len, start.len() + 5000 + 3);
        assert!(reply.line.is_none());
        assert_eq!(reply.first.len(), HEAD_BYTES);

        state.push(br#"{"id":6,"#);
        state.push(br#""result":{}}"#);
        let reply = state.finish(Instant::now());
        assert_eq!(reply.line.as_deref(), Some(&br#"{"id":6,"result":{}}"#[..]));
        assert_eq!(reply.head.kind, Kind::Result);
    }
}
