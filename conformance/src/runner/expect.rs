//! The steps that read what the bridge writes on stdout, and its exit: a frame
//! (`expect`), a set of frames in any order, a line that is not JSON, silence,
//! and the exit code.

use super::{Run, at, recv_kept, shown};
use crate::launch::recv;
use crate::matchers;
use crate::outcome::{Failure, diff};
use harness_sim::process::Received;
use regex::Regex;
use serde_json::Value;
use tokio::time::{Duration, Instant};

impl Run<'_> {
    /// The next frame on stdout; a text line or the end of stdout fails.
    pub(super) async fn next_frame(
        &mut self,
        line: usize,
        deadline: Instant,
    ) -> Result<Value, Failure> {
        let ignore = self.transcript.header.ignore_notifications.clone();
        let peer = self.peer().map_err(at(line))?;
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

    pub(super) fn check_frame(
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

    pub(super) async fn expect_unordered(
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

    /// `expect_raw`: the next stdout line is not JSON and matches `regex`.
    pub(super) async fn expect_raw(
        &mut self,
        line: usize,
        regex: &Regex,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let fail = |message: String| Failure::at(line, message);
        let peer = self.peer().map_err(at(line))?;
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

    /// An `expect_raw_block` in the contract's terms: every stdout line to the
    /// end of stdout is not JSON, and together they name each of `names`.
    pub(super) async fn expect_raw_names(
        &mut self,
        line: usize,
        names: &[String],
        deadline: Instant,
    ) -> Result<(), Failure> {
        let fail = |message: String| Failure::at(line, message);
        let peer = self.peer().map_err(at(line))?;
        let mut text = String::new();
        while let Some(received) = recv(peer, deadline).await {
            match received.raw {
                Some(raw) => {
                    text.push_str(&raw);
                    text.push('\n');
                }
                None => {
                    return Err(fail(format!(
                        "expected a text line, got the frame {}",
                        received.frame
                    )));
                }
            }
        }
        if !peer.stdout_closed() {
            return Err(fail("stdout did not end in time".to_owned()));
        }
        let missing: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|name| !text.contains(name))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(fail(format!("stdout does not name {}", missing.join(", ")))
                .with_detail(format!("stdout:\n{text}")))
        }
    }

    /// `expect_silence_ms`: no frame for `ms` milliseconds.
    pub(super) async fn expect_silence(&mut self, line: usize, ms: u64) -> Result<(), Failure> {
        let until = Instant::now() + Duration::from_millis(ms);
        let ignore = self.transcript.header.ignore_notifications.clone();
        let peer = self.peer().map_err(at(line))?;
        match recv_kept(peer, until, &ignore).await {
            None => Ok(()),
            Some(received) => Err(Failure::at(
                line,
                format!("expected no frame for {ms} ms, got {}", shown(&received)),
            )),
        }
    }

    /// `expect_exit`: the bridge exits with `code` within `within_ms`.
    pub(super) async fn expect_exit(
        &mut self,
        line: usize,
        code: i32,
        within_ms: u64,
    ) -> Result<(), Failure> {
        let within = Duration::from_millis(within_ms);
        let peer = self.peer().map_err(at(line))?;
        let waited = peer.wait_exit(within).await;
        self.exited = waited.is_some();
        match waited {
            Some((status, _)) if status.code() == Some(code) => Ok(()),
            Some((status, after)) => Err(Failure::at(
                line,
                format!(
                    "the bridge exited with {status} after {} ms, expected the exit code {code}",
                    after.as_millis()
                ),
            )),
            None => Err(Failure::at(
                line,
                format!(
                    "the bridge did not exit within {within_ms} ms (expected the exit code {code})"
                ),
            )),
        }
    }
}

fn lines_of(frames: &[Value]) -> String {
    frames
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}
