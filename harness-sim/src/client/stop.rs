//! The stop sequences of the two clients.
//!
//! Local (node/mcpStdioStateHandler.ts): close stdin; after 10 s SIGTERM to the
//! direct child; after 20 s a forced kill of the tree; times counted from the
//! end of stdin. Copilot (observed): SIGTERM first, the end of stdin ~1 ms
//! later, and a server that ignores both is gone within 250 ms (killed).
//! A second `stop()` of VS Code during the Local sequence kills the tree at
//! once ([`SecondStop`]). The timers are parameters so that tests can shorten them.

use std::process::ExitStatus;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::watch;
use tokio::time::{Duration, Instant};

use crate::process::StdioPeer;
use crate::profile::Harness;

/// When the stop sequence escalates, counted from its first step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopTimers {
    /// Local: when SIGTERM goes to the direct child.
    pub term_after: Duration,
    /// When the tree is killed.
    pub kill_after: Duration,
    /// How long to wait for the exit after the kill.
    pub reap_within: Duration,
}

impl StopTimers {
    /// VS Code 1.140-1.142: 10 s and 20 s after the end of stdin.
    pub const LOCAL: StopTimers = StopTimers {
        term_after: Duration::from_secs(10),
        kill_after: Duration::from_secs(20),
        reap_within: Duration::from_secs(5),
    };
    /// copilot-cli: SIGTERM at once (EOF 1 ms later), kill after 250 ms.
    pub const COPILOT: StopTimers = StopTimers {
        term_after: Duration::ZERO,
        kill_after: Duration::from_millis(250),
        reap_within: Duration::from_secs(5),
    };

    /// The timers of `harness`.
    pub fn of(harness: Harness) -> StopTimers {
        match harness {
            Harness::Local => Self::LOCAL,
            Harness::Copilot => Self::COPILOT,
        }
    }
}

/// Which step of the sequence ended the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopStep {
    /// It exited before any signal (Local: after the end of stdin).
    EndOfInput,
    /// It exited after SIGTERM.
    Terminated,
    /// It was killed.
    Killed,
    /// Local: it was killed at once by a second stop (see [`SecondStop`]).
    KilledAtSecondStop,
    /// It did not exit even after the kill.
    NotExited,
}

/// How the server stopped.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StopReport {
    /// `local` or `copilot`.
    pub sequence: String,
    /// The step that ended it.
    pub step: StopStep,
    /// Milliseconds from the first step (Local: the end of stdin; Copilot: SIGTERM) to the exit.
    pub exited_after_ms: Option<f64>,
    /// The exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it, on unix.
    pub exit_signal: Option<i32>,
    /// Whether no process of its process group is left.
    pub group_gone: bool,
}

impl StopReport {
    /// One line for the report.
    pub fn describe(&self) -> String {
        let how = match (self.exit_code, self.exit_signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "no exit".into(),
        };
        let when = self
            .exited_after_ms
            .map(|ms| format!("{ms:.0} ms"))
            .unwrap_or_else(|| "never".into());
        let step = match self.step {
            StopStep::EndOfInput => "after the end of stdin",
            StopStep::Terminated => "after SIGTERM",
            StopStep::Killed => "after the kill of the tree",
            StopStep::KilledAtSecondStop => "after the kill of the tree at a second stop",
            StopStep::NotExited => "not even after the kill",
        };
        let group = if self.group_gone {
            "no process of its group is left"
        } else {
            "processes of its group are left"
        };
        format!("the server exited {step} in {when} ({how}); {group}")
    }
}

/// VS Code's second `stop()` during the shutdown of a stdio server
/// (mcpStdioStateHandler.ts): the Local sequence kills the whole tree at once
/// instead of waiting for its 10 s and 20 s timers.
///
/// Take it with [`crate::SimClient::second_stop`] and call [`SecondStop::stop`]
/// from another task while [`crate::SimClient::stop`] runs. A call that comes
/// before the sequence starts counts too: the sequence then kills right after
/// it closed stdin. copilot-cli kills within 250 ms anyway and ignores it.
#[derive(Clone, Debug)]
pub struct SecondStop {
    requested: Arc<watch::Sender<bool>>,
}

impl SecondStop {
    pub(crate) fn new() -> Self {
        Self {
            requested: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Stops again: the running Local stop sequence kills the tree at once.
    pub fn stop(&self) {
        self.requested.send_replace(true);
    }

    /// Resolves when the second stop came (never when it does not).
    async fn came(&self) {
        let mut requested = self.requested.subscribe();
        if requested.wait_for(|stop| *stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The second stop came before the server exited.
struct SecondStopCame;

/// Runs the stop sequence of `harness` on `peer`.
pub async fn stop(
    peer: &mut StdioPeer,
    harness: Harness,
    timers: StopTimers,
    second_stop: &SecondStop,
) -> StopReport {
    match harness {
        Harness::Local => stop_local(peer, timers, second_stop).await,
        Harness::Copilot => stop_copilot(peer, timers).await,
    }
}

async fn stop_local(
    peer: &mut StdioPeer,
    timers: StopTimers,
    second_stop: &SecondStop,
) -> StopReport {
    peer.close_stdin().await;
    let t0 = peer.stdin_closed_at().unwrap_or_else(Instant::now);
    let (step, status) = match escalate_local(peer, timers, t0, second_stop).await {
        Ok(ended) => ended,
        Err(SecondStopCame) => {
            // killTree(pid, true) at once, as VS Code does on a second stop().
            peer.kill_tree();
            let exit = peer.wait_exit(timers.reap_within).await;
            (StopStep::KilledAtSecondStop, exit.map(|(status, _)| status))
        }
    };
    finish(peer, "local", step, t0, status).await
}

/// The timers of the Local sequence after the end of stdin: SIGTERM to the
/// direct child, then the forced kill of the tree.
async fn escalate_local(
    peer: &mut StdioPeer,
    timers: StopTimers,
    t0: Instant,
    second_stop: &SecondStop,
) -> Result<(StopStep, Option<ExitStatus>), SecondStopCame> {
    if let Some(status) = exit_before(peer, t0 + timers.term_after, second_stop).await? {
        return Ok((StopStep::EndOfInput, Some(status)));
    }
    peer.terminate();
    if let Some(status) = exit_before(peer, t0 + timers.kill_after, second_stop).await? {
        return Ok((StopStep::Terminated, Some(status)));
    }
    peer.kill_tree();
    let exit = peer.wait_exit(timers.reap_within).await;
    Ok((StopStep::Killed, exit.map(|(status, _)| status)))
}

/// The exit status if the server exits before `deadline`, `Ok(None)` if it
/// does not, `Err` if the second stop comes first.
async fn exit_before(
    peer: &mut StdioPeer,
    deadline: Instant,
    second_stop: &SecondStop,
) -> Result<Option<ExitStatus>, SecondStopCame> {
    tokio::select! {
        biased;
        exit = peer.wait_exit(until(deadline)) => Ok(exit.map(|(status, _)| status)),
        () = second_stop.came() => Err(SecondStopCame),
    }
}

async fn stop_copilot(peer: &mut StdioPeer, timers: StopTimers) -> StopReport {
    let t0 = Instant::now();
    peer.terminate();
    tokio::time::sleep(Duration::from_millis(1)).await;
    peer.close_stdin().await;
    let mut step = StopStep::Terminated;
    let mut exit = peer.wait_exit(until(t0 + timers.kill_after)).await;
    if exit.is_none() {
        step = StopStep::Killed;
        peer.kill_tree();
        exit = peer.wait_exit(timers.reap_within).await;
    }
    finish(peer, "copilot", step, t0, exit.map(|(status, _)| status)).await
}

fn until(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

async fn finish(
    peer: &mut StdioPeer,
    sequence: &str,
    step: StopStep,
    t0: Instant,
    status: Option<ExitStatus>,
) -> StopReport {
    let step = if status.is_none() {
        StopStep::NotExited
    } else {
        step
    };
    let exited_after_ms = peer
        .exited_at()
        .map(|at| at.saturating_duration_since(t0).as_secs_f64() * 1000.0);
    let group_gone = peer.wait_group_gone(Duration::from_secs(1)).await;
    StopReport {
        sequence: sequence.into(),
        step,
        exited_after_ms,
        exit_code: status.and_then(|s| s.code()),
        exit_signal: status.and_then(signal_of),
        group_gone,
    }
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}
