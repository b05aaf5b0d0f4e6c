//! `bridge-fixture-server` at a URL: started with `--https` (or `--http`), it
//! announces itself on stdout, the URL first, then over HTTPS the CA file that a
//! client must trust (`ca-file: PATH`). The tests of the bridge's URL form and of
//! the fixture, the benchmarks and the conformance runner start it here.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};
use tokio::time::Duration;

/// A fixture that announced itself. It stops at the end of its stdin, or when
/// `child` is dropped.
#[derive(Debug)]
pub struct Announced {
    pub child: Child,
    pub url: String,
    /// The CA file of `--https`; `None` for `--http`.
    pub ca_file: Option<String>,
    /// The rest of its stdout (`--print-exchanges` writes each POST there).
    pub stdout: Lines<BufReader<ChildStdout>>,
}

/// Why a fixture did not announce itself.
#[derive(Debug, thiserror::Error)]
pub enum AnnounceError {
    #[error("cannot start the fixture: {0}")]
    Spawn(std::io::Error),
    #[error("the fixture did not announce its URL within {0:?}")]
    Timeout(Duration),
    #[error("the fixture ended its stdout before it announced its URL")]
    Closed,
    #[error("cannot read the fixture's stdout: {0}")]
    Read(std::io::Error),
    #[error("the second line of the fixture names no CA file: {0:?}")]
    NoCaFile(String),
}

/// Starts `command` (the fixture with `--https` or `--http` and its other
/// arguments; its environment and stderr as the caller sets them) with stdin and
/// stdout piped, and reads its announcement, each line within `limit`.
pub async fn start(mut command: Command, limit: Duration) -> Result<Announced, AnnounceError> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(AnnounceError::Spawn)?;
    let stdout = child.stdout.take().ok_or(AnnounceError::Closed)?;
    let mut stdout = BufReader::new(stdout).lines();
    let url = next_line(&mut stdout, limit).await?;
    let ca_file = if url.starts_with("https://") {
        let line = next_line(&mut stdout, limit).await?;
        match line.strip_prefix("ca-file: ") {
            Some(path) => Some(path.to_owned()),
            None => return Err(AnnounceError::NoCaFile(line)),
        }
    } else {
        None
    };
    Ok(Announced {
        child,
        url,
        ca_file,
        stdout,
    })
}

async fn next_line(
    lines: &mut Lines<BufReader<ChildStdout>>,
    limit: Duration,
) -> Result<String, AnnounceError> {
    tokio::time::timeout(limit, lines.next_line())
        .await
        .map_err(|_| AnnounceError::Timeout(limit))?
        .map_err(AnnounceError::Read)?
        .ok_or(AnnounceError::Closed)
}
