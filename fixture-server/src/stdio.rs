//! The executable around [`serve`](crate::serve): stdin and stdout, the `--close-stdout`
//! mode, and the exit code.

use std::time::Duration;

use crate::cli::Options;
use crate::https::options::Transport;
use crate::{Outcome, info};

/// How long `--close-stdout` keeps the process alive.
pub const CLOSE_STDOUT_SLEEP: Duration = Duration::from_secs(120);

/// Runs the server on stdin and stdout, or over HTTP when the options ask; returns the
/// exit code.
pub async fn run(options: Options) -> i32 {
    if options.transport != Transport::Stdio {
        return crate::https::run(
            options.config,
            options.transport,
            options.http,
            options.auth,
        )
        .await;
    }
    if options.close_stdout {
        return close_stdout_and_sleep().await;
    }
    let config = options.config;
    let tools = crate::profiles::catalog(&config);
    info!(
        "stdio",
        "serving MCP 2026-07-28 on stdio with the profile {}: tools {}, prompts {}, resources {}",
        config.profile.name(),
        tools.tools.len(),
        tools.prompts.len(),
        tools.resources.len()
    );
    drop(tools);
    match crate::serve(tokio::io::stdin(), tokio::io::stdout(), config).await {
        Ok(outcome) => {
            if let Outcome::Exit(code) = outcome {
                info!("stdio", "the process exits with code {code}");
            }
            outcome.exit_code()
        }
        Err(e) => {
            crate::error!("stdio", "the server cannot start: {e}");
            1
        }
    }
}

/// The misbehaving server of `--close-stdout`: the client sees the end of stdout at once,
/// but the process keeps running without reading stdin, so the client must stop it.
async fn close_stdout_and_sleep() -> i32 {
    if let Err(e) = close_stdout() {
        crate::error!("stdio", "--close-stdout: stdout did not close: {e}");
        return 1;
    }
    info!(
        "stdio",
        "--close-stdout: stdout is closed; the process sleeps {} s without reading stdin",
        CLOSE_STDOUT_SLEEP.as_secs()
    );
    tokio::time::sleep(CLOSE_STDOUT_SLEEP).await;
    0
}

/// Puts `/dev/null` in place of file descriptor 1. The write end of the client's pipe is
/// then closed in this process (the client reads the end of the stream), without unsafe
/// code: std and nix offer no safe `close(1)`, but a safe `dup2` onto stdout.
#[cfg(unix)]
fn close_stdout() -> std::io::Result<()> {
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    nix::unistd::dup2_stdout(&null).map_err(std::io::Error::from)
}

#[cfg(not(unix))]
fn close_stdout() -> std::io::Result<()> {
    Err(std::io::Error::other(
        "this platform has no safe way to close stdout",
    ))
}
