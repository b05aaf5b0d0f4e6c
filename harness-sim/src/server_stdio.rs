//! The stdin, stdout and stderr that a client gives a server it starts.
//!
//! VS Code starts a stdio server with Node's `child_process.spawn`. On POSIX
//! libuv makes each of the three a Unix socket pair (`uv_socketpair(SOCK_STREAM)`
//! in `uv__process_init_stdio`), and `child.stdin.end()` is a `shutdown(SHUT_WR)`
//! of the socket, after which the handle is closed. A shell, and Rust's
//! `Command`, give pipes. A server can tell the two apart (`fstat`, how the end of
//! input shows in its reactor, the buffer sizes), so the simulators give what
//! VS Code gives by default and pipes on request ([`StdioKind`]). Elsewhere than
//! on unix there are only pipes.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::process::Stdio;
use std::str::FromStr;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// What a server's stdin, stdout and stderr are.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StdioKind {
    /// One Unix socket pair for each, as libuv makes them for VS Code (unix only;
    /// elsewhere pipes).
    SocketPair,
    /// Pipes, as a shell makes them.
    Pipe,
}

impl StdioKind {
    /// Both kinds, for help texts and errors.
    pub const ALL: [StdioKind; 2] = [StdioKind::SocketPair, StdioKind::Pipe];

    /// The name on the command line (`--stdio`) and in reports.
    pub fn name(self) -> &'static str {
        match self {
            StdioKind::SocketPair => "socketpair",
            StdioKind::Pipe => "pipe",
        }
    }
}

impl Default for StdioKind {
    /// What VS Code gives: socket pairs on unix, pipes elsewhere.
    fn default() -> Self {
        if cfg!(unix) {
            StdioKind::SocketPair
        } else {
            StdioKind::Pipe
        }
    }
}

impl serde::Serialize for StdioKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl fmt::Display for StdioKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StdioKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or_else(|| format!("unknown stdio kind {s:?}; use socketpair or pipe"))
    }
}

/// What becomes of the server's stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StderrTo {
    /// Ours to read, of the same kind as stdin and stdout.
    Us,
    /// `/dev/null` (benchmarks: the reading would cost the client time).
    Null,
}

/// Our ends of a started server's stdin, stdout and stderr.
pub struct ServerStdio {
    pub stdin: ServerInput,
    pub stdout: ServerOutput,
    /// With [`StderrTo::Us`].
    pub stderr: Option<ServerOutput>,
}

/// Spawns `command` with stdin, stdout and stderr of `kind` (stdin, stdout and
/// stderr set on `command` before are replaced).
///
/// `command` is taken and dropped here: it holds the server's ends of the socket
/// pairs, and our stdout would never end while a copy of the server's end is open.
pub fn spawn(
    mut command: Command,
    kind: StdioKind,
    stderr: StderrTo,
) -> io::Result<(Child, ServerStdio)> {
    #[cfg(unix)]
    if kind == StdioKind::SocketPair {
        return spawn_with_socket_pairs(command, stderr);
    }
    #[cfg(not(unix))]
    let _pipes_only_here = kind;
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    command.stderr(match stderr {
        StderrTo::Us => Stdio::piped(),
        StderrTo::Null => Stdio::null(),
    });
    let mut child = command.spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(io::Error::other("the pipes of the child were not created"));
    };
    let ends = ServerStdio {
        stdin: ServerInput(Input::Pipe(stdin)),
        stdout: ServerOutput(Output::Pipe(stdout)),
        stderr: child
            .stderr
            .take()
            .map(|e| ServerOutput(Output::PipeErr(e))),
    };
    Ok((child, ends))
}

#[cfg(unix)]
fn spawn_with_socket_pairs(
    mut command: Command,
    stderr: StderrTo,
) -> io::Result<(Child, ServerStdio)> {
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;

    // The server's ends stay blocking, as libuv leaves them; ours join the reactor.
    let (our_stdin, their_stdin) = UnixStream::pair()?;
    let (our_stdout, their_stdout) = UnixStream::pair()?;
    command
        .stdin(Stdio::from(OwnedFd::from(their_stdin)))
        .stdout(Stdio::from(OwnedFd::from(their_stdout)));
    let our_stderr = match stderr {
        StderrTo::Us => {
            let (ours, theirs) = UnixStream::pair()?;
            command.stderr(Stdio::from(OwnedFd::from(theirs)));
            Some(ours)
        }
        StderrTo::Null => {
            command.stderr(Stdio::null());
            None
        }
    };
    let child = command.spawn()?;
    drop(command);
    let ends = ServerStdio {
        stdin: ServerInput(Input::Socket(reactor_socket(our_stdin)?)),
        stdout: ServerOutput(Output::Socket(reactor_socket(our_stdout)?)),
        stderr: match our_stderr {
            Some(socket) => Some(ServerOutput(Output::Socket(reactor_socket(socket)?))),
            None => None,
        },
    };
    Ok((child, ends))
}

#[cfg(unix)]
fn reactor_socket(socket: std::os::unix::net::UnixStream) -> io::Result<tokio::net::UnixStream> {
    socket.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(socket)
}

/// Our end of the server's stdin.
pub struct ServerInput(Input);

enum Input {
    Pipe(ChildStdin),
    #[cfg(unix)]
    Socket(tokio::net::UnixStream),
}

impl ServerInput {
    /// Ends the server's input as Node's `end()` does: a socket is shut down for
    /// writing and then closed, a pipe is closed. An error means that the server
    /// closed its end already: the input is over either way.
    pub async fn end(mut self) {
        let _ = self.shutdown().await;
    }
}

impl AsyncWrite for ServerInput {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Input::Pipe(pipe) => Pin::new(pipe).poll_write(cx, buf),
            #[cfg(unix)]
            Input::Socket(socket) => Pin::new(socket).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Input::Pipe(pipe) => Pin::new(pipe).poll_write_vectored(cx, bufs),
            #[cfg(unix)]
            Input::Socket(socket) => Pin::new(socket).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            Input::Pipe(pipe) => pipe.is_write_vectored(),
            #[cfg(unix)]
            Input::Socket(socket) => socket.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Input::Pipe(pipe) => Pin::new(pipe).poll_flush(cx),
            #[cfg(unix)]
            Input::Socket(socket) => Pin::new(socket).poll_flush(cx),
        }
    }

    /// A socket: `shutdown(SHUT_WR)`, the server reads the end of its input while
    /// the pair stays open until this is dropped. A pipe: nothing until the drop.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Input::Pipe(pipe) => Pin::new(pipe).poll_shutdown(cx),
            #[cfg(unix)]
            Input::Socket(socket) => Pin::new(socket).poll_shutdown(cx),
        }
    }
}

/// Our end of the server's stdout or stderr.
pub struct ServerOutput(Output);

enum Output {
    Pipe(ChildStdout),
    PipeErr(ChildStderr),
    #[cfg(unix)]
    Socket(tokio::net::UnixStream),
}

impl AsyncRead for ServerOutput {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Output::Pipe(pipe) => Pin::new(pipe).poll_read(cx, buf),
            Output::PipeErr(pipe) => Pin::new(pipe).poll_read(cx, buf),
            #[cfg(unix)]
            Output::Socket(socket) => Pin::new(socket).poll_read(cx, buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_from_their_names() {
        for kind in StdioKind::ALL {
            assert_eq!(kind.name().parse::<StdioKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.name());
        }
        assert!(
            "fifo"
                .parse::<StdioKind>()
                .unwrap_err()
                .contains("socketpair")
        );
    }

    #[cfg(unix)]
    #[test]
    fn vs_code_gives_socket_pairs_on_unix() {
        assert_eq!(StdioKind::default(), StdioKind::SocketPair);
    }
}
