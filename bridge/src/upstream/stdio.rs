//! The upstream server as a child process over stdio.
//!
//! The child runs in its own process group (on Windows: a job object of its own), so
//! that a stop reaches the processes it starts too. Its stderr is the bridge's
//! stderr: VS Code shows both in the Output channel (`doctor` passes it through a
//! [`StderrTail`], which keeps its last lines). The session writes a frame to the
//! child's stdin itself when stdin takes
//! it at once ([`WriteThrough`]), and reads its stdout itself ([`StdoutEvents`]);
//! two tasks serve the link: one writes the frames that stdin could not take at
//! once, and one waits for the child's exit and reports it after the last frame.
//! The exit of the child ends the session ("When the upstream server stops"); the
//! lines about the child (the `mcp_stdio` scope) are written here.

use super::stderr_tail::StderrTail;
use super::{
    ConnectError, Connector, LARGE_RESULT_BYTES, LinkContext, LinkEnd, Outgoing, OutgoingSink,
    UpstreamControl, UpstreamEvent, UpstreamEvents, UpstreamLink, event_of_line,
};
use crate::catalogue::{StartWarning, StdioExit, UpstreamStopped};
use crate::log::emit;
use crate::wire::line_reader::LineReader;
use crate::wire::write_through::{AtEnd, Job, WriteThrough};
use std::ffi::OsString;
use std::fmt;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{Instant, timeout};
use tokio_util::sync::CancellationToken;

/// How long the exit report waits for the last frames of an exited child.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);

/// How often the bridge looks whether the processes of a group have ended.
const GROUP_POLL: Duration = Duration::from_millis(10);

/// Starts `program` with `args` at each connect.
#[derive(Debug, Clone)]
pub struct StdioConnector {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub max_line_bytes: usize,
    /// How long the child may take to exit after its stdin closed (shutdown_grace).
    pub grace: Duration,
    /// `doctor`: the child's stderr goes through the bridge, which keeps its last
    /// lines; else the child writes to the bridge's stderr itself.
    pub stderr_tail: Option<StderrTail>,
}

impl Connector for StdioConnector {
    fn connect(&self, context: LinkContext) -> Result<UpstreamLink, ConnectError> {
        let mut command = Command::new(super::program::resolve(&self.program));
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if self.stderr_tail.is_some() {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .spawn()
            .map_err(|error| ConnectError::Spawn(error.to_string()))?;
        let group = ProcessGroup::of(&child);
        if let (Some(tail), Some(stderr)) = (&self.stderr_tail, child.stderr.take()) {
            context.tasks.spawn(tail.clone().read(stderr));
        }
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ConnectError::Spawn(
                "the pipes of the child were not created".into(),
            ));
        };
        let (jobs, queue) = mpsc::unbounded_channel();
        let stdin = WriteThrough::new(stdin);
        let (stdout_closed, stdout_end) = oneshot::channel();
        let (exit_sender, exit_report) = oneshot::channel();
        let (exited_sender, exited) = watch::channel(None);
        let stop_asked = CancellationToken::new();
        let tasks = &context.tasks;
        // At the end of input a 2026-07-28 server exits.
        tasks.spawn(stdin.clone().write_queued(queue, AtEnd::Shutdown));
        tasks.spawn(supervise(
            child,
            Reports {
                stdout_end,
                report_exit: exit_sender,
                exited: exited_sender,
                stop_asked: stop_asked.clone(),
            },
            group.clone(),
            self.grace,
        ));
        let stdout = StdoutEvents {
            lines: LineReader::new(stdout, self.max_line_bytes),
            announced: None,
            stdout_closed: Some(stdout_closed),
            exit_report,
        };
        let control = Arc::new(ChildControl {
            group,
            exited,
            stop_asked,
        });
        Ok(UpstreamLink {
            sender: Box::new(StdinSink { jobs, stdin }),
            events: stdout.into_stream(),
            control,
            discover_extra: Duration::ZERO,
        })
    }
}

/// The child's stdin, written by the session while stdin takes the frames at once.
struct StdinSink {
    jobs: mpsc::UnboundedSender<Job<ChildStdin, Outgoing>>,
    stdin: WriteThrough<ChildStdin>,
}

impl fmt::Debug for StdinSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdinSink").finish_non_exhaustive()
    }
}

impl OutgoingSink for StdinSink {
    fn send(&self, frame: Outgoing) {
        // A send fails only once the writer task has ended on a broken stdin: the
        // exit of the child follows.
        let queue = |job| {
            let _ = self.jobs.send(job);
        };
        if let Some(frame) = self.stdin.write_now(frame, queue) {
            self.stdin.queue(frame, queue);
        }
    }
}

/// The child's stdout, read by the session itself, one event per line, each line
/// read once ([`event_of_line`]), and after its end the exit of the child.
struct StdoutEvents {
    lines: LineReader<ChildStdout>,
    /// A large result whose announcement went before it.
    announced: Option<UpstreamEvent>,
    /// Tells [`supervise`] that stdout ended; `None` once it did.
    stdout_closed: Option<oneshot::Sender<()>>,
    /// The last event, from [`supervise`]: after the last line, or while stdout is
    /// still open when the child exited and the lines stopped coming.
    exit_report: oneshot::Receiver<UpstreamEvent>,
}

impl StdoutEvents {
    fn into_stream(self) -> UpstreamEvents {
        let stream = futures::stream::unfold(Some(self), |events| async move {
            let mut events = events?;
            let event = events.next().await?;
            // The exit is the last event.
            let more = !matches!(event, UpstreamEvent::Ended(_));
            Some((event, more.then_some(events)))
        });
        UpstreamEvents::new(stream)
    }

    /// `None` when the supervisor is gone without its report (it panicked): the
    /// session ends the link as one that closed.
    async fn next(&mut self) -> Option<UpstreamEvent> {
        if let Some(result) = self.announced.take() {
            return Some(result);
        }
        while self.stdout_closed.is_some() {
            let line = tokio::select! {
                biased;
                line = self.lines.next_line() => line,
                exit = &mut self.exit_report => return exit.ok(),
            };
            let Ok(Some(line)) = line else {
                if let Some(closed) = self.stdout_closed.take() {
                    let _ = closed.send(());
                }
                break;
            };
            let Some(event) = event_of_line(line) else {
                continue;
            };
            // The one-level reading keeps no copy and no tree of the result: the
            // announcement still comes before the session builds anything of it.
            if let UpstreamEvent::Result(result) = &event
                && result.len() >= LARGE_RESULT_BYTES
                && result.is_complete()
            {
                // The session takes the announcement before it asks for the next
                // event: no one waits for `seen`.
                let (seen, _) = oneshot::channel();
                let id = result.id();
                self.announced = Some(event);
                return Some(UpstreamEvent::LargeResult { id, seen });
            }
            return Some(event);
        }
        (&mut self.exit_report).await.ok()
    }
}

/// What [`supervise`] hears from the link and tells it.
struct Reports {
    /// Resolves at the end of stdout, and when the session dropped the link.
    stdout_end: oneshot::Receiver<()>,
    /// The exit, as the last event of the link.
    report_exit: oneshot::Sender<UpstreamEvent>,
    /// The exit, for [`ChildControl`].
    exited: watch::Sender<Option<ExitReport>>,
    /// The session asked the child to stop ([`ChildControl::shutdown`]).
    stop_asked: CancellationToken,
}

impl Reports {
    /// Whether the session wants to hear of the exit: it still reads the link's
    /// events and did not ask for the stop (a stop it asked for is no news for the
    /// Output channel).
    fn session_listens(&self) -> bool {
        !self.report_exit.is_closed() && !self.stop_asked.is_cancelled()
    }
}

/// Waits for the child to end and reports it after its last frame.
///
/// A child that closes its stdout but keeps running can never answer again: after
/// `grace` the bridge stops it, and reports the exit like any other.
async fn supervise(mut child: Child, mut reports: Reports, group: ProcessGroup, grace: Duration) {
    let status = tokio::select! {
        status = child.wait() => {
            let _ = timeout(DRAIN_AFTER_EXIT, &mut reports.stdout_end).await;
            status
        }
        _ = &mut reports.stdout_end => match timeout(grace, child.wait()).await {
            Ok(status) => status,
            Err(_) => {
                if reports.session_listens() {
                    emit!(StartWarning::StdoutClosed);
                }
                group.stop(&mut child, grace).await
            }
        },
    };
    // The processes that the child started go with it. Then the group id is
    // forgotten: once the group is empty, the system may give its id to another.
    group.stop_the_rest(grace).await;
    group.forget();
    let report = report_of(status);
    reports.exited.send_replace(Some(report.clone()));
    if reports.session_listens() {
        log_exit(&report);
    }
    let _ = reports.report_exit.send(exit_event(&report));
}

/// How the upstream process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitReport {
    Code(i32),
    Signal(i32),
    /// The exit status could not be read.
    Unknown(String),
}

impl ExitReport {
    /// `exit code 3`, `signal 9`: the form of the `mcp_stdio` line.
    pub fn short(&self) -> String {
        match self {
            Self::Code(code) => format!("exit code {code}"),
            Self::Signal(signal) => format!("signal {signal}"),
            Self::Unknown(error) => format!("unknown status: {error}"),
        }
    }
}

/// `code 3` or `signal 9`: the form of the bridge's error line
/// ("the upstream server exited with code 3").
impl fmt::Display for ExitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Code(code) => write!(f, "code {code}"),
            Self::Signal(signal) => write!(f, "signal {signal}"),
            Self::Unknown(error) => write!(f, "an unknown status ({error})"),
        }
    }
}

/// The `mcp_stdio` line of a process that exited while the session listens; the
/// line of the bridge comes after it.
pub fn log_exit(report: &ExitReport) {
    emit!(StdioExit::Exited {
        exit: &report.short()
    });
}

/// The last event of a process that exited: an end that ends the session (the
/// bridge never starts the upstream again).
pub fn exit_event(report: &ExitReport) -> UpstreamEvent {
    UpstreamEvent::Ended(LinkEnd::Stopped(UpstreamStopped::Exited {
        exit: report.to_string(),
    }))
}

fn report_of(status: std::io::Result<ExitStatus>) -> ExitReport {
    match status {
        Ok(status) => match status.code() {
            Some(code) => ExitReport::Code(code),
            None => {
                #[cfg(unix)]
                {
                    use std::os::unix::process::ExitStatusExt;
                    if let Some(signal) = status.signal() {
                        return ExitReport::Signal(signal);
                    }
                }
                ExitReport::Unknown(status.to_string())
            }
        },
        Err(error) => ExitReport::Unknown(error.to_string()),
    }
}

/// Stops a child through its process group.
#[derive(Debug)]
struct ChildControl {
    group: ProcessGroup,
    exited: watch::Receiver<Option<ExitReport>>,
    stop_asked: CancellationToken,
}

impl ChildControl {
    async fn wait_exit(&self, limit: Duration) -> bool {
        let mut exited = self.exited.clone();
        timeout(limit, exited.wait_for(Option::is_some))
            .await
            .is_ok()
    }
}

#[async_trait::async_trait]
impl UpstreamControl for ChildControl {
    async fn shutdown(&self, grace: Duration) {
        self.stop_asked.cancel();
        if self.wait_exit(grace).await {
            return;
        }
        self.group.signal(Signal::Terminate);
        if self.wait_exit(grace).await {
            return;
        }
        self.group.signal(Signal::Kill);
        self.wait_exit(grace).await;
    }

    fn kill_now(&self) {
        if self.exited.borrow().is_none() {
            self.group.signal(Signal::Kill);
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Terminate,
    Kill,
}

/// The process group of a child (its own id, as it leads the group).
#[derive(Debug, Clone)]
struct ProcessGroup {
    id: Option<u32>,
}

impl ProcessGroup {
    fn of(child: &Child) -> Self {
        let id = child.id();
        if let Some(id) = id {
            groups::register(id, child);
        }
        Self { id }
    }

    fn signal(&self, signal: Signal) {
        if let Some(id) = self.id {
            groups::signal(id, signal);
        }
    }

    fn forget(&self) {
        if let Some(id) = self.id {
            groups::unregister(id);
        }
    }

    /// After the exit of the child: a termination signal to the processes it
    /// started, and a kill after `grace` to those that ignore it.
    async fn stop_the_rest(&self, grace: Duration) {
        let Some(id) = self.id else {
            return;
        };
        groups::signal(id, Signal::Terminate);
        let deadline = Instant::now() + grace;
        while !groups::is_empty(id) {
            if Instant::now() >= deadline {
                groups::signal(id, Signal::Kill);
                return;
            }
            tokio::time::sleep(GROUP_POLL).await;
        }
    }

    /// Termination signal, `grace`, kill: for a child that no longer answers.
    async fn stop(&self, child: &mut Child, grace: Duration) -> std::io::Result<ExitStatus> {
        self.signal(Signal::Terminate);
        if let Ok(status) = timeout(grace, child.wait()).await {
            return status;
        }
        self.signal(Signal::Kill);
        let _ = child.start_kill();
        child.wait().await
    }
}

/// Kills every upstream process group of this process at once: for the watchdog
/// and for an internal error, when no task may be able to do it any more.
pub fn kill_all_groups() {
    groups::kill_all();
}

#[cfg(unix)]
mod groups {
    use super::Signal;
    use nix::sys::signal::{Signal as NixSignal, killpg};
    use nix::unistd::Pid;
    use std::sync::Mutex;

    static GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

    pub(super) fn register(id: u32, _child: &tokio::process::Child) {
        if let Ok(mut groups) = GROUPS.lock() {
            groups.push(id);
        }
    }

    pub(super) fn unregister(id: u32) {
        if let Ok(mut groups) = GROUPS.lock() {
            groups.retain(|&group| group != id);
        }
    }

    pub(super) fn signal(id: u32, signal: Signal) {
        let signal = match signal {
            Signal::Terminate => NixSignal::SIGTERM,
            Signal::Kill => NixSignal::SIGKILL,
        };
        if let Ok(id) = i32::try_from(id) {
            // A group that is already gone (ESRCH) is what we want.
            let _ = killpg(Pid::from_raw(id), signal);
        }
    }

    /// Whether no process is left in the group.
    pub(super) fn is_empty(id: u32) -> bool {
        match i32::try_from(id) {
            Ok(id) => matches!(
                killpg(Pid::from_raw(id), None),
                Err(nix::errno::Errno::ESRCH)
            ),
            Err(_) => true,
        }
    }

    /// Whether the last-resort kill would reach the group `id`.
    #[cfg(test)]
    pub(super) fn is_registered(id: u32) -> bool {
        GROUPS.lock().is_ok_and(|groups| groups.contains(&id))
    }

    pub(super) fn kill_all() {
        let ids = GROUPS
            .lock()
            .map(|groups| groups.clone())
            .unwrap_or_default();
        for id in ids {
            signal(id, Signal::Kill);
        }
    }
}

#[cfg(windows)]
mod groups {
    //! A job object stands for the process group: the child goes into a job of its
    //! own right after its start, and the processes that it starts from then on are
    //! in the job too. The job kills its processes when its handle closes: when the
    //! bridge stops the group, and when the bridge itself ends, however it ends.
    //! Windows has no termination signal that a process without a console of its own
    //! can catch, so the termination step and the kill both close the job. A child
    //! that could not be put in a job (a system without nested jobs) is stopped
    //! alone, by `kill_on_drop` and the explicit kill of the child.
    use super::Signal;
    use std::sync::Mutex;
    use win32job::{ExtendedLimitInfo, Job};

    static JOBS: Mutex<Vec<(u32, Job)>> = Mutex::new(Vec::new());

    pub(super) fn register(id: u32, child: &tokio::process::Child) {
        let Some(handle) = child.raw_handle() else {
            return;
        };
        let mut limits = ExtendedLimitInfo::new();
        limits.limit_kill_on_job_close();
        let Ok(job) = Job::create_with_limit_info(&limits) else {
            return;
        };
        // The handle of a running child stays open while `child` lives.
        if job.assign_process(handle as isize).is_ok()
            && let Ok(mut jobs) = JOBS.lock()
        {
            jobs.push((id, job));
        }
    }

    /// Closes the job of `id`: its processes are killed.
    fn close(id: u32) {
        let job = JOBS.lock().ok().and_then(|mut jobs| {
            let at = jobs.iter().position(|(job_id, _)| *job_id == id)?;
            Some(jobs.swap_remove(at))
        });
        drop(job);
    }

    pub(super) fn unregister(id: u32) {
        close(id);
    }

    pub(super) fn signal(id: u32, _signal: Signal) {
        close(id);
    }

    /// The ids of the processes in the job of `id`; none once it is closed.
    pub(super) fn process_ids(id: u32) -> Vec<usize> {
        JOBS.lock()
            .ok()
            .and_then(|jobs| {
                let (_, job) = jobs.iter().find(|(job_id, _)| *job_id == id)?;
                job.query_process_id_list().ok()
            })
            .unwrap_or_default()
    }

    pub(super) fn is_empty(id: u32) -> bool {
        process_ids(id).is_empty()
    }

    #[cfg(test)]
    pub(super) fn is_registered(id: u32) -> bool {
        JOBS.lock()
            .is_ok_and(|jobs| jobs.iter().any(|(job_id, _)| *job_id == id))
    }

    pub(super) fn kill_all() {
        let jobs = JOBS
            .lock()
            .map(|mut jobs| std::mem::take(&mut *jobs))
            .unwrap_or_default();
        drop(jobs);
    }
}

#[cfg(not(any(unix, windows)))]
mod groups {
    //! Without process groups or job objects, `kill_on_drop` and the explicit kill
    //! of the child stop it.
    use super::Signal;

    pub(super) fn register(_id: u32, _child: &tokio::process::Child) {}
    pub(super) fn unregister(_id: u32) {}
    pub(super) fn signal(_id: u32, _signal: Signal) {}
    pub(super) fn is_empty(_id: u32) -> bool {
        true
    }
    pub(super) fn kill_all() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The panic hook and the last-resort watchdog kill the groups of the
    /// registry (`kill_all_groups`): a child's group is there from its start until
    /// the bridge forgets it after its exit. (Not `kill_all` itself here: it would
    /// kill the upstreams of the other tests of this process.)
    #[cfg(unix)]
    #[tokio::test]
    async fn a_child_s_group_is_known_to_the_last_resort_kill_until_it_is_forgotten() {
        let mut child = tokio::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let id = child.id().unwrap();
        let group = ProcessGroup::of(&child);
        assert!(groups::is_registered(id));
        child.kill().await.unwrap();
        group.forget();
        assert!(!groups::is_registered(id));
    }

    /// The image name of the process `pid` that Windows runs (`PING.EXE`), from
    /// tasklist; `None` when it runs no such process.
    #[cfg(windows)]
    fn windows_process_name(pid: usize) -> Option<String> {
        let output = std::process::Command::new("tasklist")
            .args(["/FI", &format!("PID eq {pid}"), "/FO", "CSV", "/NH"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let line = text
            .lines()
            .find(|line| line.contains(&format!("\"{pid}\"")))?;
        Some(line.split(',').next()?.trim_matches('"').to_owned())
    }

    /// On Windows the job of the child stands for its process group: what the
    /// child started is in the job, and the stop after the child's exit ends it.
    #[cfg(windows)]
    #[tokio::test]
    async fn on_windows_the_job_of_the_child_stops_the_processes_it_started() {
        // cmd.exe starts ping.exe and waits for it: a child with a grandchild.
        let mut child = tokio::process::Command::new("cmd")
            .args(["/d", "/c", "ping -n 120 127.0.0.1 >nul"])
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let id = child.id().unwrap();
        let group = ProcessGroup::of(&child);
        assert!(groups::is_registered(id));
        let deadline = Instant::now() + Duration::from_secs(20);
        let grandchild = loop {
            let ping = groups::process_ids(id).into_iter().find(|&pid| {
                windows_process_name(pid).is_some_and(|name| name.eq_ignore_ascii_case("ping.exe"))
            });
            if let Some(ping) = ping {
                break ping;
            }
            assert!(Instant::now() < deadline, "ping.exe never joined the job");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        // The child alone ends: its grandchild goes on, in the job.
        child.kill().await.unwrap();
        assert!(windows_process_name(grandchild).is_some());
        assert!(!groups::is_empty(id));
        group.stop_the_rest(Duration::from_secs(5)).await;
        group.forget();
        assert!(!groups::is_registered(id));
        let deadline = Instant::now() + Duration::from_secs(10);
        while windows_process_name(grandchild).is_some() {
            assert!(Instant::now() < deadline, "ping.exe outlived its job");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn result_line(line: &str) -> Option<crate::wire::raw::ResultLine> {
        match event_of_line(crate::wire::line_reader::Line::Complete(
            line.as_bytes().to_vec(),
        )) {
            Some(UpstreamEvent::Result(result)) => Some(result),
            _ => None,
        }
    }

    #[test]
    fn only_complete_results_are_announced() {
        let big = "x".repeat(100);
        let complete = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"{big}"}}],"resultType":"complete"}}}}"#
        );
        let complete = result_line(&complete).unwrap();
        assert_eq!((complete.id(), complete.is_complete()), (7, true));
        let old_server = format!(r#"{{"jsonrpc":"2.0","result":{{"content":"{big}"}},"id":8}}"#);
        let old_server = result_line(&old_server).unwrap();
        assert_eq!((old_server.id(), old_server.is_complete()), (8, true));
        let input = format!(
            r#"{{"jsonrpc":"2.0","id":9,"result":{{"inputRequests":{{"a":"{big}"}},"resultType":"input_required"}}}}"#
        );
        assert!(!result_line(&input).unwrap().is_complete());
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"x"}"#,
            "[1]",
            "{",
        ] {
            assert!(result_line(line).is_none(), "{line}");
        }
    }
}
