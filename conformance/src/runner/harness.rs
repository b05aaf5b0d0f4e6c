//! The steps `harness` (a simulated client of VS Code drives the bridge: its
//! opening, its calls and its stop) and `expect_report` (its report matches).

use super::{Client, Run};
use crate::format::HarnessSpec;
use crate::matchers;
use crate::outcome::{Failure, diff};
use harness_sim::{AnswerPolicy, SimClient, SimOptions};
use serde_json::Value;
use tokio::time::Duration;

impl Run<'_> {
    pub(super) async fn harness(&mut self, line: usize, spec: &HarnessSpec) -> Result<(), Failure> {
        let Client::Raw(peer) = std::mem::replace(&mut self.client, Client::Gone) else {
            return Err(Failure::at(
                line,
                "a transcript has one harness step, before any other use of the bridge",
            ));
        };
        let policy = match &spec.answers {
            Some(answers) => AnswerPolicy::from_json(&answers.to_string())
                .map_err(|e| Failure::at(line, format!("the answers are not valid: {e}")))?,
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

    /// `expect_report`: the report of the harness step matches.
    pub(super) fn expect_report(&mut self, line: usize, expected: &Value) -> Result<(), Failure> {
        let Some(report) = self.report.clone() else {
            return Err(Failure::at(
                line,
                "expect_report needs a harness step before it",
            ));
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
                Err(Failure::at(
                    line,
                    format!("the harness report does not match: {mismatch}"),
                )
                .with_detail(diff(
                    &rendered,
                    &report,
                    &format!("expected (line {line})"),
                    "harness report",
                )))
            }
        }
    }
}
