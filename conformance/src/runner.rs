//! Runs one transcript against the bridge executable.
//!
//! The bridge runs as VS Code runs it: a child process with pipes, its upstream
//! command being the relay (`mcp-conformance relay PORT TOKEN`), so that the
//! runner sees both sides. Steps run in order; each expectation waits until its
//! frame comes or its time limit passes. After the last step the runner ends the
//! bridge's stdin (when the transcript did not), fails on every frame that no
//! step expected, and runs the wire checks on everything both sides wrote.

use crate::checks::{self, CheckOptions};
use crate::format::{Body, HarnessSpec, Step, StepKind, Transcript, Upstream};
use crate::launch::{recv, start_bridge};
use crate::matchers::{self, Captures};
use crate::outcome::{Failure, Outcome, diff};
use crate::upstream::{UpEvent, UpstreamHub};

pub use crate::launch::Env;
use harness_sim::process::{Received, StdioPeer};
use harness_sim::record::Payload;
use harness_sim::{AnswerPolicy, Profile, SimClient, SimOptions};
use regex::Regex;
use serde_json::{Map, Value, json};
use tokio::time::{Duration, Instant};

/// How long the bridge may take to stop after the last step.
const FINAL_STOP: Duration = Duration::from_secs(10);

/// Runs a transcript of steps or a recording.
pub async fn run(transcript: &Transcript, env: &Env) -> Outcome {
    let started = Instant::now();
    if transcript.header.needs_test_faults && !env.bins.bridge_has_test_faults() {
        return not_run(
            transcript,
            "it needs the test faults of a debug build of the bridge",
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
    captures: Captures,
    /// stderr lines before this index are behind the last match.
    stderr_pos: usize,
    injected_stderr: Vec<String>,
    deferred: Vec<(usize, Regex)>,
    exited: bool,
    report: Option<Value>,
    step_start: Instant,
}

impl<'a> Run<'a> {
    async fn start(transcript: &'a Transcript, env: &'a Env) -> Result<Self, Failure> {
        let launched = start_bridge(transcript, env)
            .await
            .map_err(|message| Failure::at(1, message))?;
        Ok(Self {
            transcript,
            env,
            client: Client::Raw(Box::new(launched.peer)),
            hub: launched.hub,
            https: launched.https,
            captures: Captures::default(),
            stderr_pos: 0,
            injected_stderr: Vec::new(),
            deferred: Vec::new(),
            exited: false,
            report: None,
            step_start: Instant::now(),
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

    fn timeout(&self, step: &Step) -> Duration {
        Duration::from_millis(step.within_ms.unwrap_or(self.transcript.header.timeout_ms))
    }

    fn peer(&mut self) -> Result<&mut StdioPeer, String> {
        self.client
            .peer()
            .ok_or_else(|| "the bridge is not running".to_owned())
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
        let fail = |message: String| Failure::at(line, message);
        let deadline = self.step_start + self.timeout(step);
        match &step.kind {
            StepKind::Send(frame) => {
                let frame = matchers::substitute(frame, &self.captures).map_err(fail)?;
                self.send(&frame).await.map_err(fail)
            }
            StepKind::SendRaw(text) => {
                let text = matchers::substitute_text(text, &self.captures).map_err(fail)?;
                let mut bytes = text.into_bytes();
                bytes.push(b'\n');
                let peer = self.peer().map_err(fail)?;
                peer.send_raw(&bytes)
                    .await
                    .map_err(|e| fail(format!("send_raw: {e}")))
            }
            StepKind::SendRepeated { text, count } => {
                for seq in 1..=*count {
                    self.captures.set("seq", Value::from(seq));
                    let text = matchers::substitute_text(text, &self.captures).map_err(fail)?;
                    let mut bytes = text.into_bytes();
                    bytes.push(b'\n');
                    let peer = self.peer().map_err(fail)?;
                    peer.send_raw(&bytes)
                        .await
                        .map_err(|e| fail(format!("send_raw (time {seq} of {count}): {e}")))?;
                }
                Ok(())
            }
            StepKind::StopReadingStdout => {
                self.peer().map_err(fail)?.stop_reading_stdout();
                Ok(())
            }
            StepKind::SendProfile { frame, id } => {
                let profile = self
                    .transcript
                    .header
                    .client
                    .ok_or_else(|| fail("no client profile".into()))?;
                let frame = profile_frame(profile, frame, *id).map_err(fail)?;
                self.send(&frame).await.map_err(fail)
            }
            StepKind::Handshake {
                profile,
                discover,
                initialized,
            } => {
                let profile = profile
                    .or(self.transcript.header.client)
                    .ok_or_else(|| fail("no client profile".into()))?;
                self.handshake(line, profile, discover.as_ref(), *initialized, deadline)
                    .await
            }
            StepKind::Expect(expected) => {
                let actual = self.next_frame(line, deadline).await?;
                self.check_frame(line, expected, &actual, "bridge stdout")
            }
            StepKind::ExpectUnordered(expected) => {
                self.expect_unordered(line, expected, deadline).await
            }
            StepKind::ExpectRaw(regex) => {
                let peer = self.peer().map_err(fail)?;
                match recv(peer, deadline).await {
                    Some(Received {
                        raw: Some(text), ..
                    }) if regex.is_match(&text) => Ok(()),
                    Some(Received {
                        raw: Some(text), ..
                    }) => Err(fail(format!(
                        "the stdout line {text:?} does not match /{regex}/"
                    ))),
                    Some(received) => Err(fail(format!(
                        "expected a text line, got the frame {}",
                        received.frame
                    ))),
                    None => Err(fail(format!("no stdout line in time (expected /{regex}/)"))),
                }
            }
            StepKind::ExpectSilence(ms) => {
                let until = Instant::now() + Duration::from_millis(*ms);
                let ignore = self.transcript.header.ignore_notifications.clone();
                let peer = self.peer().map_err(fail)?;
                match recv_kept(peer, until, &ignore).await {
                    None => Ok(()),
                    Some(received) => Err(fail(format!(
                        "expected no frame for {ms} ms, got {}",
                        shown(&received)
                    ))),
                }
            }
            StepKind::UpstreamExpect(expected) => {
                self.upstream_expect(line, expected, deadline).await
            }
            StepKind::UpstreamExpectHttp(expected) => {
                self.http_expect(line, expected, deadline).await
            }
            StepKind::ExpectProxy(regex) => self.expect_proxy(line, regex, deadline).await,
            StepKind::RunBridge { args, code, stderr } => {
                self.run_bridge(line, args, *code, stderr, deadline).await
            }
            StepKind::ExpectNoProxy => {
                let log = self.proxy_log(line)?;
                match log.is_empty() {
                    true => Ok(()),
                    false => Err(fail(format!(
                        "the proxy opened tunnels: {}",
                        log.join("; ")
                    ))),
                }
            }
            StepKind::UpstreamExpectEof => self.upstream_eof(line, deadline).await,
            StepKind::ExpectUpstreamGone => self.upstream_gone(line, deadline).await,
            StepKind::UpstreamSend(frame) => {
                let frame = matchers::substitute(frame, &self.captures).map_err(fail)?;
                self.hub()
                    .map_err(fail)?
                    .send_line(&frame.to_string())
                    .await
                    .map_err(fail)
            }
            StepKind::UpstreamRaw(text) => {
                let text = matchers::substitute_text(text, &self.captures).map_err(fail)?;
                self.hub()
                    .map_err(fail)?
                    .send_line(&text)
                    .await
                    .map_err(fail)
            }
            StepKind::UpstreamStderr(text) => {
                self.injected_stderr.push(text.clone());
                self.hub().map_err(fail)?.stderr(text).await.map_err(fail)
            }
            StepKind::UpstreamExit(code) => {
                self.hub().map_err(fail)?.exit(*code).await.map_err(fail)
            }
            StepKind::ExpectStderr(text) => {
                let text = text.clone();
                self.expect_stderr(
                    line,
                    deadline,
                    &format!("the stderr line {text:?}"),
                    move |l| l == text,
                )
                .await
            }
            StepKind::ExpectStderrMatch(regex) => {
                let regex = regex.clone();
                self.expect_stderr(
                    line,
                    deadline,
                    &format!("a stderr line that matches /{regex}/"),
                    move |l| regex.is_match(l),
                )
                .await
            }
            StepKind::ExpectNoStderrMatch(regex) => {
                self.deferred.push((line, regex.clone()));
                Ok(())
            }
            StepKind::Sleep(ms) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                Ok(())
            }
            StepKind::OpenUrl(url) => {
                let url = crate::matchers::substitute(url, &self.captures).map_err(fail)?;
                let url = url
                    .as_str()
                    .ok_or_else(|| fail("open_url needs a string".into()))?;
                let https = self
                    .https
                    .as_ref()
                    .ok_or_else(|| fail("open_url needs an https_fixture upstream".into()))?;
                https.open(url).await.map_err(fail)
            }
            StepKind::CloseStdin => {
                self.peer().map_err(fail)?.close_stdin().await;
                Ok(())
            }
            StepKind::ExpectExit { code, within_ms } => {
                let within = Duration::from_millis(*within_ms);
                let peer = self.peer().map_err(fail)?;
                let waited = peer.wait_exit(within).await;
                self.exited = waited.is_some();
                match waited {
                    Some((status, _)) if status.code() == Some(*code) => Ok(()),
                    Some((status, after)) => Err(fail(format!(
                        "the bridge exited with {status} after {} ms, expected the exit code {code}",
                        after.as_millis()
                    ))),
                    None => Err(fail(format!(
                        "the bridge did not exit within {within_ms} ms (expected the exit code {code})"
                    ))),
                }
            }
            StepKind::Harness(spec) => self.harness(line, spec).await,
            StepKind::ExpectReport(expected) => {
                let Some(report) = self.report.clone() else {
                    return Err(fail("expect_report needs a harness step before it".into()));
                };
                let mut captures = self.captures.clone();
                match matchers::check(expected, &report, &mut captures) {
                    Ok(()) => {
                        self.captures = captures;
                        Ok(())
                    }
                    Err(mismatch) => {
                        let rendered = matchers::render(expected, Some(&report), &self.captures)
                            .unwrap_or(Value::Null);
                        Err(
                            fail(format!("the harness report does not match: {mismatch}"))
                                .with_detail(diff(
                                    &rendered,
                                    &report,
                                    &format!("expected (line {line})"),
                                    "harness report",
                                )),
                        )
                    }
                }
            }
        }
    }

    fn hub(&self) -> Result<&UpstreamHub, String> {
        self.hub
            .as_ref()
            .ok_or_else(|| "the transcript has no upstream".to_owned())
    }

    async fn send(&mut self, frame: &Value) -> Result<(), String> {
        let peer = self.peer()?;
        peer.send(frame).await.map_err(|e| format!("send: {e}"))
    }

    /// The next frame on stdout; a text line or the end of stdout fails.
    async fn next_frame(&mut self, line: usize, deadline: Instant) -> Result<Value, Failure> {
        let ignore = self.transcript.header.ignore_notifications.clone();
        let peer = self.peer().map_err(|m| Failure::at(line, m))?;
        match recv_kept(peer, deadline, &ignore).await {
            Some(Received {
                raw: None, frame, ..
            }) => Ok(frame),
            Some(Received {
                raw: Some(text), ..
            }) => Err(Failure::at(
                line,
                format!("expected a frame, got a stdout line that is not JSON: {text:?}"),
            )),
            None if peer.stdout_closed() => {
                Err(Failure::at(line, "expected a frame, but stdout ended"))
            }
            None => Err(Failure::at(
                line,
                "expected a frame, but the bridge wrote nothing in time",
            )),
        }
    }

    fn check_frame(
        &mut self,
        line: usize,
        expected: &Value,
        actual: &Value,
        side: &str,
    ) -> Result<(), Failure> {
        let mut captures = self.captures.clone();
        match matchers::check(expected, actual, &mut captures) {
            Ok(()) => {
                self.captures = captures;
                Ok(())
            }
            Err(mismatch) => {
                let rendered =
                    matchers::render(expected, Some(actual), &self.captures).unwrap_or(Value::Null);
                Err(
                    Failure::at(line, format!("the frame on {side} differs: {mismatch}"))
                        .with_detail(diff(
                            &rendered,
                            actual,
                            &format!("expected (line {line})"),
                            &format!("actual ({side})"),
                        )),
                )
            }
        }
    }

    async fn expect_unordered(
        &mut self,
        line: usize,
        expected: &[Value],
        deadline: Instant,
    ) -> Result<(), Failure> {
        let mut actual = Vec::new();
        for _ in expected {
            actual.push(self.next_frame(line, deadline).await?);
        }
        // Small sets: try each expectation against the frames not yet taken.
        let mut taken = vec![false; actual.len()];
        for want in expected {
            let found = actual.iter().enumerate().find(|(index, frame)| {
                !taken[*index] && matchers::check(want, frame, &mut self.captures.clone()).is_ok()
            });
            match found {
                Some((index, frame)) => {
                    taken[index] = true;
                    let _ = matchers::check(want, frame, &mut self.captures);
                }
                None => {
                    return Err(
                        Failure::at(line, format!("no frame of the set matches {want}"))
                            .with_detail(format!("the frames:\n{}", lines_of(&actual))),
                    );
                }
            }
        }
        Ok(())
    }

    async fn upstream_expect(
        &mut self,
        line: usize,
        expected: &Value,
        deadline: Instant,
    ) -> Result<(), Failure> {
        if self.https.is_some() {
            let record = serde_json::json!({"$partial": true, "body": expected});
            return self.http_expect(line, &record, deadline).await;
        }
        let observing = !self.transcript.header.upstream.is_scripted();
        loop {
            let hub = self
                .hub
                .as_mut()
                .ok_or_else(|| Failure::at(line, "no upstream"))?;
            match hub.next_event(deadline).await {
                Some(UpEvent::Connected(_)) => continue,
                Some(UpEvent::Line(_, Payload::Frame(frame))) => {
                    if observing
                        && matchers::check(expected, &frame, &mut self.captures.clone()).is_err()
                    {
                        continue;
                    }
                    return self.check_frame(
                        line,
                        expected,
                        &frame,
                        "the bridge's upstream output",
                    );
                }
                Some(UpEvent::Line(_, Payload::Line(text))) => {
                    return Err(Failure::at(
                        line,
                        format!("the bridge wrote a line that is not JSON upstream: {text:?}"),
                    ));
                }
                Some(UpEvent::Eof(_)) if observing => continue,
                Some(UpEvent::Eof(_)) => {
                    return Err(Failure::at(
                        line,
                        format!(
                            "expected an upstream frame matching {expected}, but the bridge ended the upstream's input"
                        ),
                    ));
                }
                None => {
                    return Err(Failure::at(
                        line,
                        format!("the bridge sent nothing upstream in time (expected {expected})"),
                    ));
                }
            }
        }
    }

    /// The next POST of the bridge to the fixture over HTTPS that matches
    /// `expected` (a record `{"post":N,"headers":{...},"body":...}`); the others
    /// pass by, as the frames of a fixture on stdio do.
    async fn http_expect(
        &mut self,
        line: usize,
        expected: &Value,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let mut seen = Vec::new();
        loop {
            let https = self
                .https
                .as_mut()
                .ok_or_else(|| Failure::at(line, "no upstream over HTTPS"))?;
            let Some(record) = https.next_exchange(deadline).await else {
                return Err(Failure::at(
                    line,
                    format!("no POST of the bridge matches {expected} in time"),
                )
                .with_detail(format!("the POSTs that passed:\n{}", seen.join("\n"))));
            };
            if matchers::check(expected, &record, &mut self.captures.clone()).is_ok() {
                return self.check_frame(line, expected, &record, "the bridge's POSTs");
            }
            seen.push(record.to_string());
        }
    }

    /// Runs a second bridge process to its end and checks its exit code and its
    /// whole stderr.
    async fn run_bridge(
        &mut self,
        line: usize,
        args: &[String],
        code: i32,
        stderr: &[String],
        deadline: Instant,
    ) -> Result<(), Failure> {
        let https = self
            .https
            .as_ref()
            .ok_or_else(|| Failure::at(line, "no upstream over HTTPS"))?;
        let mut command = tokio::process::Command::new(&self.env.bins.bridge);
        command
            .args(args.iter().map(|arg| https.resolve(arg)))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        command.envs(crate::launch::bridge_environment(
            self.env,
            &self.transcript.header,
            Some(https),
        ));
        let output = tokio::time::timeout_at(deadline, command.output())
            .await
            .map_err(|_| Failure::at(line, "the second bridge process did not end in time"))?
            .map_err(|e| Failure::at(line, format!("cannot start the second bridge: {e}")))?;
        let got: Vec<String> = String::from_utf8_lossy(&output.stderr)
            .lines()
            .map(str::to_owned)
            .collect();
        if output.status.code() != Some(code) || got != stderr {
            return Err(Failure::at(
                line,
                format!(
                    "the second bridge process exited with {:?} (expected {code}) or wrote another stderr",
                    output.status.code()
                ),
            )
            .with_detail(format!(
                "expected stderr:\n{}\nactual stderr:\n{}",
                stderr.join("\n"),
                got.join("\n")
            )));
        }
        Ok(())
    }

    fn proxy_log(&self, line: usize) -> Result<Vec<String>, Failure> {
        self.https
            .as_ref()
            .and_then(|https| https.proxy_log())
            .ok_or_else(|| Failure::at(line, "no proxy runs"))
    }

    /// A line of the proxy's log matches before `deadline`.
    async fn expect_proxy(
        &mut self,
        line: usize,
        regex: &Regex,
        deadline: Instant,
    ) -> Result<(), Failure> {
        loop {
            let log = self.proxy_log(line)?;
            if log.iter().any(|entry| regex.is_match(entry)) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Failure::at(
                    line,
                    format!("no line of the proxy's log matches /{regex}/"),
                )
                .with_detail(format!("the proxy's log:\n{}", log.join("\n"))));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn upstream_eof(&mut self, line: usize, deadline: Instant) -> Result<(), Failure> {
        let observing = !self.transcript.header.upstream.is_scripted();
        loop {
            let hub = self
                .hub
                .as_mut()
                .ok_or_else(|| Failure::at(line, "no upstream"))?;
            match hub.next_event(deadline).await {
                Some(UpEvent::Eof(_)) => return Ok(()),
                Some(UpEvent::Connected(_)) => continue,
                Some(UpEvent::Line(_, _)) if observing => continue,
                Some(UpEvent::Line(_, payload)) => {
                    let shown = match payload {
                        Payload::Frame(frame) => frame.to_string(),
                        Payload::Line(text) => text,
                    };
                    return Err(Failure::at(
                        line,
                        format!("expected the end of the upstream's input, got {shown}"),
                    ));
                }
                None => {
                    return Err(Failure::at(
                        line,
                        "the bridge did not end the upstream's input in time",
                    ));
                }
            }
        }
    }

    /// Waits until no process is left in the group of any relay.
    async fn upstream_gone(&mut self, line: usize, deadline: Instant) -> Result<(), Failure> {
        let pids = self.hub.as_ref().map(UpstreamHub::pids).unwrap_or_default();
        if pids.is_empty() {
            return Err(Failure::at(line, "the bridge started no upstream"));
        }
        loop {
            let alive: Vec<u32> = pids
                .iter()
                .copied()
                .filter(|pid| !harness_sim::process_group::is_gone(*pid))
                .collect();
            if alive.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Failure::at(
                    line,
                    format!(
                        "the process group of the upstream is still there (group ids {alive:?})"
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn expect_stderr(
        &mut self,
        line: usize,
        deadline: Instant,
        what: &str,
        matches: impl Fn(&str) -> bool,
    ) -> Result<(), Failure> {
        loop {
            let lines = self
                .peer()
                .map_err(|m| Failure::at(line, m))?
                .stderr_lines();
            if let Some(offset) = lines.iter().skip(self.stderr_pos).position(|l| matches(l)) {
                self.stderr_pos += offset + 1;
                return Ok(());
            }
            if Instant::now() >= deadline {
                let recent: Vec<&String> = lines.iter().skip(self.stderr_pos).collect();
                return Err(
                    Failure::at(line, format!("{what} did not come in time")).with_detail(format!(
                        "stderr after the last matched line:\n{}",
                        recent
                            .iter()
                            .map(|l| l.as_str())
                            .collect::<Vec<_>>()
                            .join("\n")
                    )),
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn handshake(
        &mut self,
        line: usize,
        profile: Profile,
        discover: Option<&Value>,
        initialized: bool,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let fail = |message: String| Failure::at(line, message);
        let id = profile.first_id().max(1);
        self.send(&profile.initialize_request(id))
            .await
            .map_err(fail)?;
        if let Some(discover) = discover {
            self.upstream_expect(
                line,
                &json!({"jsonrpc":"2.0","id":"$capture:handshake.discover","method":"server/discover","params":{"_meta":"$object"}}),
                deadline,
            )
            .await?;
            let mut result = Map::new();
            result.insert("resultType".into(), "complete".into());
            result.insert("supportedVersions".into(), json!(["2026-07-28"]));
            result.insert("capabilities".into(), json!({}));
            result.insert("ttlMs".into(), 0.into());
            result.insert("cacheScope".into(), "public".into());
            for (key, value) in discover.as_object().into_iter().flatten() {
                result.insert(key.clone(), value.clone());
            }
            let id = self
                .captures
                .get("handshake.discover")
                .cloned()
                .unwrap_or(Value::Null);
            let frame = json!({"jsonrpc":"2.0","id":id,"result":result});
            self.hub()
                .map_err(fail)?
                .send_line(&frame.to_string())
                .await
                .map_err(fail)?;
        }
        let response = self.next_frame(line, deadline).await?;
        self.check_frame(
            line,
            &json!({"jsonrpc":"2.0","id":id,"result":{"$partial":true,"protocolVersion":"2025-11-25","capabilities":"$object","serverInfo":"$object"}}),
            &response,
            "bridge stdout",
        )?;
        self.captures
            .set("handshake.result", response["result"].clone());
        if initialized {
            let frame = profile_frame(profile, "initialized", None).map_err(fail)?;
            self.send(&frame).await.map_err(fail)?;
        }
        Ok(())
    }

    async fn harness(&mut self, line: usize, spec: &HarnessSpec) -> Result<(), Failure> {
        let fail = |message: String| Failure::at(line, message);
        let Client::Raw(peer) = std::mem::replace(&mut self.client, Client::Gone) else {
            return Err(fail(
                "a transcript has one harness step, before any other use of the bridge".into(),
            ));
        };
        let policy = match &spec.answers {
            Some(answers) => AnswerPolicy::from_json(&answers.to_string())
                .map_err(|e| fail(format!("the answers are not valid: {e}")))?,
            None => AnswerPolicy::new(),
        };
        let timeout = Duration::from_millis(self.transcript.header.timeout_ms);
        // No copilot-cli wait before tools/list: the transcripts check frames, not
        // client timing, and the run must stay quick.
        let mut options = SimOptions::for_profile(spec.profile).no_delay();
        options.initialize_timeout = timeout;
        options.request_timeout = timeout;
        let mut client = SimClient::with_options(spec.profile, *peer, policy, options);
        let mut records = Vec::new();
        let mut error = None;
        match client.start().await {
            Ok(_) => {
                for (tool, arguments) in &spec.calls {
                    match client.call_tool(tool, arguments.clone()).await {
                        Ok(outcome) => records.push(harness_sim::report::CallRecord {
                            tool: tool.clone(),
                            arguments: arguments.clone(),
                            outcome,
                        }),
                        Err(e) => {
                            error = Some(format!("{tool}: {e}"));
                            break;
                        }
                    }
                }
                if error.is_none() {
                    let settle = Duration::from_millis(spec.settle_ms);
                    if let Err(e) = client.settle(settle, settle * 10).await {
                        error = Some(e.to_string());
                    }
                }
            }
            Err(e) => error = Some(e.to_string()),
        }
        client.stop().await;
        self.exited = client
            .peer_mut()
            .wait_exit(Duration::from_millis(100))
            .await
            .is_some();
        let report = harness_sim::report::Report::of(&client, records, error);
        let mut json = report.to_json();
        // The times of the events vary from run to run.
        if let Some(events) = json.get_mut("events").and_then(Value::as_array_mut) {
            for event in events {
                if let Some(object) = event.as_object_mut() {
                    object.shift_remove("t_ms");
                }
            }
        }
        self.report = Some(json);
        self.client = Client::Sim(Box::new(client));
        Ok(())
    }

    /// After the steps: the end of stdin, the frames nobody expected, the
    /// deferred stderr checks and the wire checks.
    async fn finish(&mut self, steps_passed: bool) -> Vec<Failure> {
        let mut failures = Vec::new();
        let strict = matches!(self.client, Client::Raw(_)) && self.transcript.header.stdout_json;
        let Some(peer) = self.client.peer() else {
            return failures;
        };
        if !self.exited {
            peer.close_stdin().await;
            if peer.wait_exit(FINAL_STOP).await.is_none() {
                failures.push(Failure {
                    line: None,
                    message: format!(
                        "the bridge did not stop within {} s after the end of stdin (R7)",
                        FINAL_STOP.as_secs()
                    ),
                    detail: None,
                });
                peer.kill_tree();
            }
        }
        // Lines still on their way after the exit.
        let _ = peer.wait_stderr_closed(Duration::from_secs(2)).await;
        let mut extra = Vec::new();
        let ignore = &self.transcript.header.ignore_notifications;
        while let Some(received) =
            recv_kept(peer, Instant::now() + Duration::from_millis(200), ignore).await
        {
            extra.push(shown(&received));
        }
        if strict && steps_passed && !extra.is_empty() {
            failures.push(Failure {
                line: None,
                message: format!(
                    "the bridge wrote {} frame(s) that no step expected",
                    extra.len()
                ),
                detail: Some(extra.join("\n")),
            });
        }
        let stderr = peer.stderr_lines();
        for (line, regex) in &self.deferred {
            if let Some(found) = stderr.iter().find(|l| regex.is_match(l)) {
                failures.push(Failure::at(
                    *line,
                    format!("a stderr line matches /{regex}/: {found:?}"),
                ));
            }
        }
        let entries = peer.entries();
        let upstream = self
            .hub
            .as_ref()
            .map(UpstreamHub::records)
            .unwrap_or_default();
        let options = CheckOptions {
            stdout_json: self.transcript.header.stdout_json,
            log_format: self.transcript.header.check_log_format,
            injected_stderr: self.injected_stderr.clone(),
            modern_stdout: self.transcript.header.upstream == Upstream::Embedded
                && !first_sent_is_initialize(&entries),
        };
        for wire in checks::check(&self.env.schemas, &entries, &upstream, &options) {
            failures.push(Failure {
                line: None,
                message: format!("wire check {}: {}", wire.rule, wire.message),
                detail: Some(wire.frame),
            });
        }
        failures
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

fn lines_of(frames: &[Value]) -> String {
    frames
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A frame of a client profile: `initialize`, `discover` or `initialized`.
pub fn profile_frame(profile: Profile, name: &str, id: Option<i64>) -> Result<Value, String> {
    match name {
        "initialize" => Ok(profile.initialize_request(id.unwrap_or(profile.first_id().max(1)))),
        "discover" => {
            let mut frame = profile
                .discover_request()
                .ok_or_else(|| format!("the profile {profile} sends no server/discover"))?;
            if let Some(id) = id {
                frame["id"] = id.into();
            }
            Ok(frame)
        }
        // VS Code builds notifications as {...n, jsonrpc}; copilot-cli (rmcp) puts jsonrpc first.
        "initialized" if profile.is_local() => {
            Ok(json!({"method":"notifications/initialized","jsonrpc":"2.0"}))
        }
        "initialized" => Ok(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
        other => Err(format!(
            "the profile frame {other:?} is not known: use initialize, discover or initialized"
        )),
    }
}

/// Whether the first frame that the client sent is initialize: for an embedded
/// server, the path of the connection (a server/discover first selects none).
fn first_sent_is_initialize(entries: &[harness_sim::record::Entry]) -> bool {
    use harness_sim::record::{Dir, Payload};
    entries
        .iter()
        .filter(|entry| entry.dir == Dir::C2s)
        .find_map(|entry| match &entry.payload {
            Payload::Frame(frame) => frame
                .get("method")
                .and_then(serde_json::Value::as_str)
                .filter(|method| *method != "server/discover"),
            _ => None,
        })
        == Some("initialize")
}

#[cfg(test)]
mod tests {
    use super::first_sent_is_initialize;
    use harness_sim::record::{Dir, Entry, Payload};
    use serde_json::json;

    fn sent(method: &str) -> Entry {
        Entry {
            t_ms: 0.0,
            dir: Dir::C2s,
            payload: Payload::Frame(json!({"jsonrpc":"2.0","id":1,"method":method})),
        }
    }

    #[test]
    fn the_path_of_an_embedded_run_is_its_first_message_after_any_discover() {
        assert!(first_sent_is_initialize(&[sent("initialize")]));
        assert!(first_sent_is_initialize(&[
            sent("server/discover"),
            sent("initialize")
        ]));
        assert!(!first_sent_is_initialize(&[
            sent("server/discover"),
            sent("tools/call")
        ]));
        assert!(!first_sent_is_initialize(&[sent("tools/call")]));
        assert!(!first_sent_is_initialize(&[]));
    }
}
