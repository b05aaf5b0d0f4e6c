//! The executable around a session: stdin and stdout, the connector of the
//! configured upstream, and the handling of an internal error.

use crate::config::{Config, UpstreamTarget};
use crate::log::VSCODE;
use crate::session::{Exit, serve_with, watchdog_line};
use crate::upstream::Connector;
use crate::upstream::stdio::{StdioConnector, kill_all_groups};
#[cfg(unix)]
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;
#[cfg(unix)]
use tokio::io::Interest;
use tokio::io::{AsyncRead, AsyncWrite};

/// The connector of the configured upstream.
pub fn connector(config: &Config) -> Arc<dyn Connector> {
    match &config.upstream {
        UpstreamTarget::Command { program, args } => Arc::new(StdioConnector {
            program: program.clone(),
            args: args.clone(),
            max_line_bytes: config.max_line_bytes,
            grace: config.limits.shutdown_grace,
        }),
    }
}

/// Serves VS Code on stdin and stdout.
pub async fn run_stdio(config: &Config) -> Exit {
    let backstop = last_resort_watchdog(config.limits.watchdog + LAST_RESORT_AFTER);
    serve_with(
        config,
        connector(config),
        client_input(),
        client_output(),
        Box::pin(client_input_hangup()),
        backstop,
    )
    .await
}

/// How long after the watchdog the last-resort watchdog acts.
const LAST_RESORT_AFTER: Duration = Duration::from_secs(1);

/// The session's watchdog is a timer of the runtime, and the runtime has one
/// thread: if that thread were ever stuck, no timer of it could fire. This one is
/// an OS thread, armed at the end of stdin, that stops the bridge a moment after
/// the session's watchdog would have, as the contract's watchdog does.
fn last_resort_watchdog(after: Duration) -> Box<dyn FnOnce() + Send> {
    Box::new(move || {
        std::thread::spawn(move || {
            // Real time on purpose: this thread must act when the runtime cannot.
            #[allow(clippy::disallowed_methods)]
            std::thread::sleep(after);
            write_line(&crate::log::line(
                VSCODE,
                &tracing::Level::WARN,
                &watchdog_line(after - LAST_RESORT_AFTER),
            ));
            kill_all_groups();
            std::process::exit(0);
        });
    })
}

/// Stdin. VS Code gives the bridge pipes; tokio's `stdin()` does each read on a
/// blocking thread, while a pipe can wait in the reactor like the upstream's pipes
/// do, which saves two thread hops per frame. A file or a terminal keeps `stdin()`.
fn client_input() -> Box<dyn AsyncRead + Send + Unpin> {
    #[cfg(unix)]
    if let Some(pipe) = stdin_pipe() {
        return Box::new(pipe);
    }
    Box::new(tokio::io::stdin())
}

/// A new descriptor of stdin, in the reactor, when stdin is a pipe.
#[cfg(unix)]
fn stdin_pipe() -> Option<tokio::net::unix::pipe::Receiver> {
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()
}

/// Resolves when VS Code has closed its end of the stdin pipe, while lines may
/// still wait unread in it: the pipe reports the hangup before its data is read.
/// Never for a file or a terminal. The descriptor is a second one of the same
/// pipe, registered only when this is first polled.
async fn client_input_hangup() {
    #[cfg(unix)]
    if let Some(pipe) = stdin_pipe() {
        // Readable is also reported for data, which is left to the reader: the
        // readiness is cleared without a read, and only the closed side ends the wait.
        while let Ok(ready) = pipe.ready(Interest::READABLE).await {
            if ready.is_read_closed() {
                return;
            }
            let _ = pipe.try_io(|| Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
        }
    }
    std::future::pending().await
}

/// Stdout, as a pipe in the reactor when it is one. Not when stderr is the same
/// pipe (`2>&1`): the non-blocking mode would then reach the log lines too, which
/// must never fail.
fn client_output() -> Box<dyn AsyncWrite + Send + Unpin> {
    #[cfg(unix)]
    if !stdout_is_stderr()
        && let Some(pipe) = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok())
    {
        return Box::new(pipe);
    }
    Box::new(tokio::io::stdout())
}

/// Whether stdout and stderr are one file (when unsure: yes).
#[cfg(unix)]
fn stdout_is_stderr() -> bool {
    use std::os::unix::fs::MetadataExt;
    let identity = |fd: std::os::fd::BorrowedFd<'_>| {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        let metadata = file.metadata().ok()?;
        Some((metadata.dev(), metadata.ino()))
    };
    match (
        identity(std::io::stdout().as_fd()),
        identity(std::io::stderr().as_fd()),
    ) {
        (Some(out), Some(err)) => out == err,
        _ => true,
    }
}

/// A panic in any task is an internal error: one line, the upstream stops, exit 1.
/// Without this, a panicked task could leave the session waiting forever.
pub fn exit_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        write_line(&crate::log::line(
            VSCODE,
            &tracing::Level::ERROR,
            &format!("the bridge stopped because of an internal error: {message}{location}"),
        ));
        kill_all_groups();
        std::process::exit(1);
    }));
}

/// One line on stderr, outside the logger. A stderr that is gone is no reason to
/// fail: these lines come on the way out.
fn write_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
