//! After the last step: the end of stdin (when no step ended it), the frames that
//! no step expected, the deferred stderr checks, and the wire checks of
//! everything both sides wrote.

use super::{Client, Run, recv_kept, shown};
use crate::checks::{self, CheckOptions};
use crate::format::Upstream;
use crate::outcome::Failure;
use crate::upstream::UpstreamHub;
use tokio::time::{Duration, Instant};

/// How long the bridge may take to stop after the last step.
const FINAL_STOP: Duration = Duration::from_secs(10);

impl Run<'_> {
    /// After the steps: the end of stdin, the frames nobody expected, the
    /// deferred stderr checks and the wire checks.
    pub(super) async fn finish(&mut self, steps_passed: bool) -> Vec<Failure> {
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
