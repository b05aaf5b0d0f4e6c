//! The steps of the upstream's side: what the bridge writes upstream (a frame,
//! the end of the upstream's input, the end of its process group), and what a
//! scripted upstream writes to the bridge (a frame, a raw line, a stderr line,
//! its exit).

use super::{Run, at};
use crate::matchers;
use crate::outcome::Failure;
use crate::upstream::{UpEvent, UpstreamHub};
use harness_sim::record::Payload;
use serde_json::Value;
use tokio::time::{Duration, Instant};

impl Run<'_> {
    pub(super) async fn upstream_expect(
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

    pub(super) async fn upstream_eof(
        &mut self,
        line: usize,
        deadline: Instant,
    ) -> Result<(), Failure> {
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
    pub(super) async fn upstream_gone(
        &mut self,
        line: usize,
        deadline: Instant,
    ) -> Result<(), Failure> {
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

    /// `upstream_send`: the scripted upstream writes a frame to the bridge.
    pub(super) async fn upstream_send(
        &mut self,
        line: usize,
        frame: &Value,
    ) -> Result<(), Failure> {
        let frame = matchers::substitute(frame, &self.captures).map_err(at(line))?;
        self.hub()
            .map_err(at(line))?
            .send_line(&frame.to_string())
            .await
            .map_err(at(line))
    }

    /// `upstream_raw`: the scripted upstream writes a line as it is.
    pub(super) async fn upstream_raw(&mut self, line: usize, text: &str) -> Result<(), Failure> {
        let text = matchers::substitute_text(text, &self.captures).map_err(at(line))?;
        self.hub()
            .map_err(at(line))?
            .send_line(&text)
            .await
            .map_err(at(line))
    }

    /// `upstream_stderr`: the scripted upstream writes a line on its stderr.
    pub(super) async fn upstream_stderr(&mut self, line: usize, text: &str) -> Result<(), Failure> {
        self.injected_stderr.push(text.to_owned());
        self.hub()
            .map_err(at(line))?
            .stderr(text)
            .await
            .map_err(at(line))
    }

    /// `upstream_close_stdout`: the scripted upstream closes its stdout and keeps
    /// running.
    pub(super) async fn upstream_close_stdout(&mut self, line: usize) -> Result<(), Failure> {
        self.hub()
            .map_err(at(line))?
            .close_stdout()
            .await
            .map_err(at(line))
    }

    /// `upstream_grandchild`: the scripted upstream starts a process in its group
    /// whose line at its termination signal is the upstream's, not the bridge's.
    pub(super) async fn upstream_grandchild(
        &mut self,
        line: usize,
        clean_up_ms: u64,
        text: &str,
    ) -> Result<(), Failure> {
        self.injected_stderr.push(text.to_owned());
        self.hub()
            .map_err(at(line))?
            .grandchild(clean_up_ms, text)
            .await
            .map_err(at(line))
    }

    /// `upstream_exit`: the scripted upstream exits with `code`.
    pub(super) async fn upstream_exit(&mut self, line: usize, code: i32) -> Result<(), Failure> {
        self.hub()
            .map_err(at(line))?
            .exit(code)
            .await
            .map_err(at(line))
    }
}
