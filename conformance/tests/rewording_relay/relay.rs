//! The relay process: `--rewording-relay [--no-rewording] [--break row|cause|code]
//! BRIDGE [ARGS...]` starts BRIDGE with ARGS and this process's environment, and
//! stands between it and the runner.
//!
//! - stdin: the bridge's own, handed down (the same bytes, the same end);
//! - stdout and stderr: each a Unix socket pair (as VS Code and the runner give
//!   them), read line by line, each line rewritten ([`crate::rewrite`]) and
//!   written and flushed at once, so no line waits on the next; a client that
//!   stops reading stops the relay's reading, and the bridge's writes back up;
//! - the termination signals (TERM, INT, HUP) go on to the bridge; the bridge
//!   runs in the relay's process group, so a stop of the group reaches both;
//! - the exit: the bridge's code, or its death by a signal, as the relay's own.

use crate::rewrite::{Break, Rewording};
use mcp_conformance::contract_texts::ContractTexts;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::Duration;

/// How long the passing of the lines of a bridge that exited may wait on a read
/// or a write before the relay exits without the rest: the lines are all there at
/// the bridge's exit, so only a client that stopped reading (or a process that
/// holds the bridge's output open) stops them. A line being rewritten is never
/// given up: a busy machine only slows it.
const DRAIN_STILL: Duration = Duration::from_millis(500);

/// How far the two passings of lines are: every read, rewrite and write counts,
/// and the lines between their read and the end of their rewrite.
#[derive(Default)]
struct Progress {
    steps: AtomicU64,
    rewriting: AtomicU64,
}

impl Progress {
    fn step(&self) {
        self.steps.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether the passing is stuck on its input or its output: nothing moved
    /// since `before`, and no line is being rewritten.
    fn stuck_since(&self, before: u64) -> bool {
        self.steps.load(Ordering::Acquire) == before && self.rewriting.load(Ordering::Acquire) == 0
    }
}

/// The relay's command line after `--rewording-relay`.
struct Options {
    rewording: Rewording,
    bridge: OsString,
    args: Vec<OsString>,
}

fn options(mut args: impl Iterator<Item = OsString>) -> Result<Options, String> {
    let mut rewording = Rewording {
        reword: true,
        broken: None,
    };
    loop {
        let arg = args.next().ok_or("the relay needs the bridge's path")?;
        match arg.to_str() {
            Some("--no-rewording") => rewording.reword = false,
            Some("--break") => {
                let name = args.next().unwrap_or_default();
                let name = name.to_string_lossy();
                rewording.broken = Some(
                    Break::parse(&name).ok_or(format!("--break {name}: use row, cause or code"))?,
                );
            }
            _ => {
                return Ok(Options {
                    rewording,
                    bridge: arg,
                    args: args.collect(),
                });
            }
        }
    }
}

/// Runs the relay with the arguments after `--rewording-relay`; never returns.
pub fn main(args: impl Iterator<Item = OsString>) -> ! {
    let options = match options(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("rewording relay: {message}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let status = runtime.block_on(relay(options));
    match status {
        Ok(status) => exit_as(status),
        Err(message) => {
            eprintln!("rewording relay: {message}");
            std::process::exit(1);
        }
    }
}

/// Starts the bridge and passes its lines until it exits; its exit status.
async fn relay(options: Options) -> Result<ExitStatus, String> {
    // Before the bridge starts, so that no signal finds the relay without them.
    let mut signals = Vec::new();
    for kind in [
        SignalKind::terminate(),
        SignalKind::interrupt(),
        SignalKind::hangup(),
    ] {
        let stream = signal(kind).map_err(|error| format!("cannot handle a signal: {error}"))?;
        signals.push((kind, stream));
    }
    let (our_stdout, their_stdout) = pair()?;
    let (our_stderr, their_stderr) = pair()?;
    let mut command = tokio::process::Command::new(&options.bridge);
    command
        .args(&options.args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::from(OwnedFd::from(their_stdout)))
        .stderr(Stdio::from(OwnedFd::from(their_stderr)));
    let mut bridge = command
        .spawn()
        .map_err(|error| format!("cannot start {:?}: {error}", options.bridge))?;
    // The command holds the bridge's ends: the end of its output needs them closed.
    drop(command);
    let pid = bridge.id();
    let rewording = options.rewording;
    // The contract's texts, read while the bridge starts, not at its first line.
    std::thread::spawn(ContractTexts::of_contract);
    let progress = Arc::new(Progress::default());
    let stdout = tokio::task::spawn_blocking({
        let progress = Arc::clone(&progress);
        move || {
            pass_lines(our_stdout, std::io::stdout(), &progress, |line| {
                rewording.stdout_line(line)
            })
        }
    });
    let stderr = tokio::task::spawn_blocking({
        let progress = Arc::clone(&progress);
        move || {
            pass_lines(our_stderr, std::io::stderr(), &progress, |line| {
                rewording.stderr_line(line)
            })
        }
    });
    let [(term, mut terms), (int, mut ints), (hup, mut hups)] =
        <[_; 3]>::try_from(signals).map_err(|_| "three signals")?;
    let status = loop {
        let kind = tokio::select! {
            status = bridge.wait() => break status.map_err(|error| error.to_string())?,
            _ = terms.recv() => term,
            _ = ints.recv() => int,
            _ = hups.recv() => hup,
        };
        forward(pid, kind);
    };
    let passed = async {
        let _ = stdout.await;
        let _ = stderr.await;
    };
    tokio::pin!(passed);
    loop {
        let before = progress.steps.load(Ordering::Acquire);
        let ended = tokio::time::timeout(DRAIN_STILL, &mut passed).await.is_ok();
        if ended || progress.stuck_since(before) {
            return Ok(status);
        }
    }
}

/// One socket pair: the relay's end and the bridge's.
fn pair() -> Result<(UnixStream, UnixStream), String> {
    UnixStream::pair().map_err(|error| format!("cannot make a socket pair: {error}"))
}

/// Each line of `from` (the last one even without its end) rewritten into `to`,
/// flushed at once. A write that fails ends the passing: the relay's end of the
/// bridge's output closes, and the bridge's next write fails as it would have.
fn pass_lines(
    from: UnixStream,
    mut to: impl Write,
    progress: &Progress,
    rewrite: impl Fn(&[u8]) -> Vec<u8>,
) {
    let mut from = BufReader::with_capacity(64 * 1024, from);
    let mut read = Vec::new();
    loop {
        read.clear();
        match from.read_until(b'\n', &mut read) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        progress.rewriting.fetch_add(1, Ordering::AcqRel);
        progress.step();
        let line = rewrite(&read);
        progress.rewriting.fetch_sub(1, Ordering::AcqRel);
        progress.step();
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
        progress.step();
    }
}

/// Sends the signal `kind` on to the bridge.
fn forward(pid: Option<u32>, kind: SignalKind) {
    let Some(pid) = pid.and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    if let Ok(sig) = nix::sys::signal::Signal::try_from(kind.as_raw_value()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
    }
}

/// Ends the relay as the bridge ended: with its code, or by its signal (a shell
/// in place of the relay, with the default actions again, sends it to itself).
///
/// Each line was flushed as it passed; a line that a client that stopped reading
/// still holds up is dropped, as the bridge's would be at its exit.
fn exit_as(status: ExitStatus) -> ! {
    if let Some(code) = status.code() {
        std::process::exit(code);
    }
    let number = status.signal().unwrap_or(9);
    let name = nix::sys::signal::Signal::try_from(number)
        .map(|sig| sig.as_str().trim_start_matches("SIG").to_owned())
        .unwrap_or_else(|_| "KILL".into());
    let error = std::process::Command::new("sh")
        .args(["-c", &format!("kill -s {name} $$")])
        .exec();
    eprintln!("rewording relay: cannot end by the signal {name}: {error}");
    std::process::exit(128 + number);
}
