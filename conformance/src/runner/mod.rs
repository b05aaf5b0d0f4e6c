//! Runs one transcript against the bridge executable.
//!
//! The bridge runs as VS Code runs it: a child process with pipes, its upstream
//! command being the relay (`mcp-conformance relay PORT TOKEN`), so that the
//! runner sees both sides. Steps run in order; each expectation waits until its
//! frame comes or its time limit passes. After the last step the runner ends the
//! bridge's stdin (when the transcript did not), fails on every frame that no
//! step expected, and runs the wire checks on everything both sides wrote.
//!
//! One file per kind of step: `send.rs` (what goes to the bridge's stdin),
//! `expect.rs` (what comes on its stdout, and its exit), `handshake.rs`,
//! `upstream.rs` (the upstream's side of a scripted or observed upstream),
//! `http.rs` (the POSTs of the URL form, the browser, the proxy),
//! `second_bridge.rs` (a second bridge process to its end), `restart.rs` (the
//! server started again, and the browser runs of the sign-in), `stderr.rs`,
//! `harness.rs` (a simulated client and its report), and `finish.rs` (what
//! runs after the last step).

mod expect;
mod finish;
mod handshake;
mod harness;
mod http;
mod ports;
mod restart;
mod second_bridge;
mod secrets;
mod send;
mod stderr;
mod upstream;

use crate::format::{Body, Step, StepKind, Transcript};
use crate::launch::{recv, start_bridge};
use crate::matchers::Captures;
use crate::outcome::{Failure, Outcome};
use crate::upstream::UpstreamHub;

pub use crate::launch::Env;
use harness_sim::SimClient;
use harness_sim::process::{Received, StdioPeer};
use regex::Regex;
pub use send::{ProfileFrameError, profile_frame};
use serde_json::Value;
use tokio::time::{Duration, Instant};

/// Why a step cannot reach the bridge or its upstream (its expectations fail
/// with their own messages, the parts it uses with their own errors).
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error("the bridge is not running")]
    NotRunning,
    #[error("the transcript has no upstream")]
    NoUpstream,
    #[error("send: {0}")]
    Send(harness_sim::process::PeerError),
}

/// The failure at `line` of an error of its step.
fn at<E: std::fmt::Display>(line: usize) -> impl Fn(E) -> Failure {
    move |error| Failure::at(line, error.to_string())
}

/// Runs a transcript of steps or a recording.
pub async fn run(transcript: &Transcript, env: &Env) -> Outcome {
    let started = Instant::now();
    if transcript.header.needs_test_faults && !env.bins.bridge_has_test_faults() {
        return not_run(
            transcript,
            "it needs the test faults of a debug build of the bridge",
        );
    }
    let missing = crate::secret_service::missing_tools();
    if transcript.header.secret_service && !missing.is_empty() {
        return not_run(
            transcript,
            &format!(
                "it needs a Secret Service of its own, and this machine lacks {}",
                missing.join(", ")
            ),
        );
    }
    let (failures, context) = match &transcript.body {
        Body::Steps(steps) => match Run::start(transcript, env).await {
            Ok(mut run) => {
                let failures = run.steps(steps).await;
                (failures, run.stderr_tail())
            }
            Err(failure) => (vec![failure], None),
        },
        Body::Recording(recording) => (
            crate::replay::replay(transcript, recording, env).await,
            None,
        ),
    };
    Outcome {
        display: transcript.display.clone(),
        name: transcript.header.name.clone(),
        items: transcript.header.items.clone(),
        milestone: transcript.header.milestone.clone(),
        failures,
        elapsed_ms: started.elapsed().as_millis(),
        context,
        skipped: None,
        credits_items: credits_items(transcript),
    }
}

/// The outcome of a transcript that did not run, and why: never a pass.
pub fn not_run(transcript: &Transcript, why: &str) -> Outcome {
    Outcome {
        display: transcript.display.clone(),
        name: transcript.header.name.clone(),
        items: transcript.header.items.clone(),
        milestone: transcript.header.milestone.clone(),
        failures: Vec::new(),
        elapsed_ms: 0,
        context: None,
        skipped: Some(why.into()),
        credits_items: credits_items(transcript),
    }
}

/// Only transcripts whose expectations come from the contract count for the
/// matrix; a recording of harness-sim only replays what the bridge once wrote.
fn credits_items(transcript: &Transcript) -> bool {
    matches!(transcript.body, Body::Steps(_))
}

/// The bridge process: driven by the steps, or by a simulated client.
enum Client {
    Raw(Box<StdioPeer>),
    Sim(Box<SimClient>),
    /// Only while the peer moves into a simulated client.
    Gone,
}

impl Client {
    fn peer(&mut self) -> Option<&mut StdioPeer> {
        match self {
            Self::Raw(peer) => Some(peer),
            Self::Sim(client) => Some(client.peer_mut()),
            Self::Gone => None,
        }
    }
}

struct Run<'a> {
    transcript: &'a Transcript,
    env: &'a Env,
    client: Client,
    hub: Option<UpstreamHub>,
    https: Option<crate::https_upstream::HttpsUpstream>,
    secret_service: Option<crate::secret_service::SecretService>,
    captures: Captures,
    /// stderr lines before this index are behind the last match.
    stderr_pos: usize,
    injected_stderr: Vec<String>,
    deferred: Vec<(usize, Regex)>,
    exited: bool,
    report: Option<Value>,
    step_start: Instant,
    /// The bridge processes that `restart_bridge` stopped, for the final checks.
    earlier: Vec<restart::EarlierBridge>,
    /// The static headers of each bridge process of the URL form (0, 1, ...).
    static_headers: Vec<Vec<(String, String)>>,
    /// The line of `expect_no_secret_in_stderr`, checked after the last step.
    secret_check: Option<usize>,
}

impl<'a> Run<'a> {
    async fn start(transcript: &'a Transcript, env: &'a Env) -> Result<Self, Failure> {
        let launched = start_bridge(transcript, env).await.map_err(at(1))?;
        let static_headers = match &launched.https {
            Some(https) => {
                let args: Vec<String> = transcript
                    .header
                    .bridge_args
                    .iter()
                    .map(|arg| https.resolve(arg))
                    .collect();
                let variables =
                    crate::launch::bridge_environment(env, &transcript.header, Some(https));
                vec![crate::static_headers::static_headers(&args, &variables)]
            }
            None => Vec::new(),
        };
        Ok(Self {
            transcript,
            env,
            client: Client::Raw(Box::new(launched.peer)),
            hub: launched.hub,
            https: launched.https,
            secret_service: launched.secret_service,
            captures: Captures::default(),
            stderr_pos: 0,
            injected_stderr: Vec::new(),
            deferred: Vec::new(),
            exited: false,
            report: None,
            step_start: Instant::now(),
            earlier: Vec::new(),
            static_headers,
            secret_check: None,
        })
    }

    /// The last stderr lines of the bridge and of the fixture, for a failure report.
    fn stderr_tail(&mut self) -> Option<String> {
        let mut lines: Vec<String> = Vec::new();
        if let Some(peer) = self.client.peer() {
            lines.extend(peer.stderr_lines());
        }
        if let Some(hub) = &self.hub {
            lines.extend(hub.fixture_stderr());
        }
        if let Some(https) = &self.https {
            lines.extend(https.stderr());
        }
        let tail: Vec<String> = lines.iter().rev().take(20).rev().cloned().collect();
        (!tail.is_empty()).then(|| tail.join("\n"))
    }

    /// A regex of a step with the placeholders of the fixture over HTTPS in place
    /// (`$AUTH_PORT`, a port the run chose), as their values spell them.
    fn resolved(&self, line: usize, regex: &Regex) -> Result<Regex, Failure> {
        let pattern = self.resolved_text(regex.as_str());
        if pattern == regex.as_str() {
            return Ok(regex.clone());
        }
        Regex::new(&pattern).map_err(at(line))
    }

    /// A text of a step with the names of the implementation's paths
    /// (`$TOKEN_DIR`, `$KEYCHAIN_SERVICE`) and the placeholders of the fixture
    /// over HTTPS in place.
    fn resolved_text(&self, text: &str) -> String {
        let text = self.env.product_paths.resolve(text);
        match &self.https {
            Some(https) => https.resolve(&text),
            None => text,
        }
    }

    fn timeout(&self, step: &Step) -> Duration {
        Duration::from_millis(step.within_ms.unwrap_or(self.transcript.header.timeout_ms))
    }

    fn peer(&mut self) -> Result<&mut StdioPeer, StepError> {
        self.client.peer().ok_or(StepError::NotRunning)
    }

    fn hub(&self) -> Result<&UpstreamHub, StepError> {
        self.hub.as_ref().ok_or(StepError::NoUpstream)
    }

    /// The fixture over HTTPS of the transcript, for a step at `line` that needs it.
    fn https_at(&self, line: usize) -> Result<&crate::https_upstream::HttpsUpstream, Failure> {
        self.https
            .as_ref()
            .ok_or_else(|| Failure::at(line, "no upstream over HTTPS"))
    }

    async fn send(&mut self, frame: &Value) -> Result<(), StepError> {
        let peer = self.peer()?;
        peer.send(frame).await.map_err(StepError::Send)
    }

    async fn steps(&mut self, steps: &[Step]) -> Vec<Failure> {
        let mut failures = Vec::new();
        for step in steps {
            self.step_start = Instant::now();
            if let Err(failure) = self.step(step).await {
                failures.push(failure);
                break;
            }
        }
        failures.extend(self.finish(failures.is_empty()).await);
        failures
    }

    async fn step(&mut self, step: &Step) -> Result<(), Failure> {
        let line = step.line;
        let deadline = self.step_start + self.timeout(step);
        match &step.kind {
            StepKind::Send(frame) => self.send_frame(line, frame).await,
            StepKind::SendRaw { text, line_end } => self.send_raw(line, text, *line_end).await,
            StepKind::SendRepeated { text, count } => self.send_repeated(line, text, *count).await,
            StepKind::StopReadingStdout => {
                self.peer().map_err(at(line))?.stop_reading_stdout();
                Ok(())
            }
            StepKind::SendProfile { frame, id } => self.send_profile(line, frame, *id).await,
            StepKind::Handshake {
                profile,
                discover,
                initialized,
            } => {
                self.handshake(line, *profile, discover.as_ref(), *initialized, deadline)
                    .await
            }
            StepKind::Expect(expected) => {
                let actual = self.next_frame(line, deadline).await?;
                self.check_frame(line, expected, &actual, "bridge stdout")
            }
            StepKind::ExpectUnordered(expected) => {
                self.expect_unordered(line, expected, deadline).await
            }
            StepKind::ExpectRaw(regex) => self.expect_raw(line, regex, deadline).await,
            StepKind::ExpectRawBlock(regexes) => {
                for regex in regexes {
                    self.expect_raw(line, regex, deadline).await?;
                }
                Ok(())
            }
            StepKind::ExpectRawNames(names) => self.expect_raw_names(line, names, deadline).await,
            StepKind::ExpectSilence(ms) => self.expect_silence(line, *ms).await,
            StepKind::UpstreamExpect(expected) => {
                self.upstream_expect(line, expected, deadline).await
            }
            StepKind::UpstreamExpectHttp(expected) => {
                self.http_expect(line, expected, deadline).await
            }
            StepKind::ExpectProxy(regex) => {
                let regex = self.resolved(line, regex)?;
                self.expect_proxy(line, &regex, deadline).await
            }
            StepKind::ExpectNoProxy => self.expect_no_proxy(line),
            StepKind::RunBridge {
                args,
                code,
                stderr,
                shapes,
            } => {
                self.run_bridge(line, args, *code, stderr, shapes.as_deref(), deadline)
                    .await
            }
            StepKind::Run { command, stdout } => {
                self.run_command(line, command, stdout.as_deref(), deadline)
                    .await
            }
            StepKind::RestartBridge { args, env } => self.restart_bridge(line, args, env).await,
            StepKind::ExpectHttpRequests { request, count } => {
                self.expect_http_requests(line, request, *count, deadline)
                    .await
            }
            StepKind::StopSecretService => match self.secret_service.as_mut() {
                Some(service) => service.stop_daemon().await.map_err(at(line)),
                None => Err(Failure::at(line, "no Secret Service runs")),
            },
            StepKind::ExpectBrowserRuns(count) => {
                self.expect_browser_runs(line, *count, deadline).await
            }
            StepKind::ExpectFreePortClosed(ms) => self.expect_free_port_closed(line, *ms).await,
            StepKind::UpstreamExpectEof => self.upstream_eof(line, deadline).await,
            StepKind::ExpectUpstreamGone => self.upstream_gone(line, deadline).await,
            StepKind::UpstreamSend(frame) => self.upstream_send(line, frame).await,
            StepKind::UpstreamRaw(text) => self.upstream_raw(line, text).await,
            StepKind::UpstreamStderr(text) => self.upstream_stderr(line, text).await,
            StepKind::UpstreamExit(code) => self.upstream_exit(line, *code).await,
            StepKind::UpstreamCloseStdout => self.upstream_close_stdout(line).await,
            StepKind::UpstreamGrandchild {
                clean_up_ms,
                stderr,
            } => self.upstream_grandchild(line, *clean_up_ms, stderr).await,
            StepKind::ExpectStderr(text) => {
                let text = self.resolved_text(text);
                self.expect_stderr(
                    line,
                    deadline,
                    &format!("the stderr line {text:?}"),
                    move |l| l == text,
                )
                .await
            }
            StepKind::ExpectStderrMatch(regex) => {
                let regex = self.resolved(line, regex)?;
                self.expect_stderr(
                    line,
                    deadline,
                    &format!("a stderr line that matches /{regex}/"),
                    move |l| regex.is_match(l),
                )
                .await
            }
            StepKind::ExpectNoStderrMatch(regex) => {
                let regex = self.resolved(line, regex)?;
                self.deferred.push((line, regex));
                Ok(())
            }
            StepKind::ExpectNoSecretInStderr => {
                self.secret_check = Some(line);
                Ok(())
            }
            StepKind::Sleep(ms) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                Ok(())
            }
            StepKind::OpenUrl(url) => self.open_url(line, url).await,
            StepKind::CloseStdin => {
                self.peer().map_err(at(line))?.close_stdin().await;
                Ok(())
            }
            StepKind::ExpectExit { code, within_ms } => {
                self.expect_exit(line, *code, *within_ms).await
            }
            StepKind::Harness(spec) => self.harness(line, spec).await,
            StepKind::ExpectReport(expected) => self.expect_report(line, expected),
        }
    }
}

/// The next stdout line that is not an ignored notification.
async fn recv_kept(peer: &mut StdioPeer, deadline: Instant, ignore: &[String]) -> Option<Received> {
    loop {
        let received = recv(peer, deadline).await?;
        let ignored = received.raw.is_none()
            && received.frame.get("id").is_none()
            && received
                .frame
                .get("method")
                .and_then(Value::as_str)
                .is_some_and(|method| ignore.iter().any(|i| i == method));
        if !ignored {
            return Some(received);
        }
    }
}

fn shown(received: &Received) -> String {
    match &received.raw {
        Some(text) => format!("the text line {text:?}"),
        None => received.frame.to_string(),
    }
}
