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

/// The start of `bridge-embedded-server`'s own stderr lines (which path served).
const EMBEDDED_SERVER_LINE: &str = "bridge-embedded-server: ";

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
        let every_stderr: Vec<String> = self
            .earlier
            .iter()
            .flat_map(|earlier| earlier.stderr.iter().cloned())
            .chain(stderr.iter().cloned())
            .collect();
        for (line, regex) in &self.deferred {
            if let Some(found) = every_stderr.iter().find(|l| regex.is_match(l)) {
                failures.push(Failure::at(
                    *line,
                    format!("a stderr line matches /{regex}/: {found:?}"),
                ));
            }
        }
        let mut entries = peer.entries();
        if self.transcript.header.upstream == Upstream::Embedded {
            entries = without_pathless_discover(entries);
        }
        let upstream = self
            .hub
            .as_ref()
            .map(UpstreamHub::records)
            .unwrap_or_default();
        let options = CheckOptions {
            stdout_json: self.transcript.header.stdout_json,
            log_format: self.transcript.header.check_log_format,
            injected_stderr: self.injected_stderr.clone(),
            server_line_prefix: (self.transcript.header.upstream == Upstream::Embedded)
                .then_some(EMBEDDED_SERVER_LINE),
            modern_stdout: self.transcript.header.upstream == Upstream::Embedded
                && !first_sent_is_initialize(&entries),
        };
        let mut wire = checks::check(&self.env.schemas, &entries, &upstream, &options);
        for earlier in &self.earlier {
            wire.extend(checks::check(
                &self.env.schemas,
                &earlier.entries,
                &[],
                &options,
            ));
        }
        if let Some(https) = &self.https {
            let input = checks::HttpInput {
                traffic: https.traffic(),
                static_headers: self.static_headers.clone(),
            };
            wire.extend(checks::check_http(&self.env.schemas, &input));
            let runs = browsers_ended(https).await;
            wire.extend(checks::check_browser(&runs, &every_stderr));
        }
        for wire in wire {
            failures.push(Failure {
                line: None,
                message: format!("wire check {}: {}", wire.rule, wire.message),
                detail: Some(wire.frame),
            });
        }
        if let Some(line) = self.secret_check {
            failures.extend(self.secrets_in_stderr(line, &every_stderr).await);
        }
        failures
    }
}

/// How long a browser script may take to end after the bridge stopped.
const BROWSER_END: Duration = Duration::from_secs(5);

/// The browser runs, once each has ended (or at the time limit).
async fn browsers_ended(
    https: &crate::https_upstream::HttpsUpstream,
) -> Vec<crate::https_upstream::BrowserRun> {
    let deadline = Instant::now() + BROWSER_END;
    loop {
        let runs = https.browser_runs();
        if runs.iter().all(|run| run.verdict.is_some()) || Instant::now() >= deadline {
            return runs;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The entries without the `server/discover` requests that came before the first
/// other message, and their answers: on an embedded server those select no path,
/// and the server answers them itself (revision 2026-07-28, `Discover::Answer`),
/// not the 2025-11-25 face of the bridge that an initialize after them selects.
fn without_pathless_discover(
    entries: Vec<harness_sim::record::Entry>,
) -> Vec<harness_sim::record::Entry> {
    use harness_sim::record::{Dir, Payload};
    let mut discover_ids = Vec::new();
    for entry in &entries {
        let Payload::Frame(frame) = &entry.payload else {
            continue;
        };
        if entry.dir != Dir::C2s {
            continue;
        }
        if frame.get("method").and_then(serde_json::Value::as_str) != Some("server/discover") {
            break;
        }
        if let Some(id) = frame.get("id") {
            discover_ids.push(id.clone());
        }
    }
    entries
        .into_iter()
        .filter(|entry| match &entry.payload {
            Payload::Frame(frame) if entry.dir != Dir::Stderr => {
                let id = frame.get("id");
                let is_request = frame.get("method").is_some();
                let discover =
                    (entry.dir == Dir::C2s && is_request) || (entry.dir == Dir::S2c && !is_request);
                !(discover && id.is_some_and(|id| discover_ids.contains(id)))
            }
            _ => true,
        })
        .collect()
}

/// Whether the first frame that the client sent is initialize: for an embedded
/// server, the path of the connection (a server/discover first selects none).
/// As for the bridge, an initialize is a request only with a string or integer
/// id: with another id it selects rmcp's transport.
fn first_sent_is_initialize(entries: &[harness_sim::record::Entry]) -> bool {
    use harness_sim::record::{Dir, Payload};
    let first = entries
        .iter()
        .filter(|entry| entry.dir == Dir::C2s)
        .find_map(|entry| match &entry.payload {
            Payload::Frame(frame) => frame
                .get("method")
                .and_then(serde_json::Value::as_str)
                .filter(|method| *method != "server/discover")
                .map(|method| (method, frame.get("id"))),
            _ => None,
        });
    matches!(first, Some(("initialize", Some(id))) if id.is_string() || id.is_i64() || id.is_u64())
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

    fn answer(id: i64) -> Entry {
        Entry {
            t_ms: 0.0,
            dir: Dir::S2c,
            payload: Payload::Frame(json!({"jsonrpc":"2.0","id":id,"result":{}})),
        }
    }

    #[test]
    fn the_discover_before_a_path_and_its_answer_leave_the_client_checks() {
        let with_id = |method: &str, id: i64| Entry {
            t_ms: 0.0,
            dir: Dir::C2s,
            payload: Payload::Frame(json!({"jsonrpc":"2.0","id":id,"method":method})),
        };
        let entries = vec![
            with_id("server/discover", 1),
            answer(1),
            with_id("initialize", 2),
            with_id("server/discover", 3),
            answer(3),
        ];
        let kept = super::without_pathless_discover(entries);
        assert_eq!(kept.len(), 3);
        assert!(matches!(&kept[0].payload, Payload::Frame(f) if f["method"] == "initialize"));
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
        for id in [json!(true), json!(1.5), json!(null), json!({})] {
            let initialize = Entry {
                t_ms: 0.0,
                dir: Dir::C2s,
                payload: Payload::Frame(json!({"jsonrpc":"2.0","id":id,"method":"initialize"})),
            };
            assert!(!first_sent_is_initialize(&[initialize]), "{id}");
        }
        let without_id = Entry {
            t_ms: 0.0,
            dir: Dir::C2s,
            payload: Payload::Frame(json!({"jsonrpc":"2.0","method":"initialize"})),
        };
        assert!(!first_sent_is_initialize(&[without_id]));
        let string_id = Entry {
            t_ms: 0.0,
            dir: Dir::C2s,
            payload: Payload::Frame(json!({"jsonrpc":"2.0","id":"i","method":"initialize"})),
        };
        assert!(first_sent_is_initialize(&[string_id]));
    }
}
