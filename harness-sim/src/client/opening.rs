//! The opening sequences.
//!
//! Local: `initialize` (id 1); when the result declares logging,
//! `logging/setLevel info` before `notifications/initialized`; then
//! `prompts/list` (if declared) and `tools/list` (if declared) in the same
//! tick, without waiting for the setLevel result. No resources/list.
//! Copilot: `server/discover` (id 0) with the `_meta` of 2026-07-28. A usable
//! result takes the modern path (`subscriptions/listen` when the server
//! declares tool list changes, then tools/list). An error, an unusable result
//! or no answer within the time limit (no cancel of id 0) falls back to
//! `initialize` (id 1), `notifications/initialized` and, about 120 ms later
//! ([`crate::Profile::tools_list_delay`]), tools/list only.

use serde_json::{Value, json};
use tokio::time::{Duration, Instant};

use super::listing::{ListKind, error_display};
use super::{EventKind, Negotiated, Pending, SimClient, SimError, WirePath, frames};
use crate::profile::{Harness, MODERN_VERSION};

/// The line VS Code's Output channel shows while the initialize answer is
/// outstanding (mcpServerRequestHandler.ts `create`, an IntervalTimer).
pub const INITIALIZE_WAIT_LOG_LINE: &str =
    "Waiting for server to respond to `initialize` request...";
/// How often the Local harness writes [`INITIALIZE_WAIT_LOG_LINE`].
pub const INITIALIZE_WAIT_LOG_EVERY: Duration = Duration::from_secs(5);

impl SimClient {
    /// Runs the profile's opening sequence (and the first lists) and returns
    /// what was negotiated.
    pub async fn start(&mut self) -> Result<Negotiated, SimError> {
        match self.profile.harness() {
            Harness::Local => self.start_local().await,
            Harness::Copilot => self.start_copilot().await,
        }
    }

    async fn initialize(&mut self) -> Result<Value, SimError> {
        let id = self.take_id();
        let request = self.profile.initialize_request(id);
        self.pending.insert(
            id,
            Pending::Await {
                method: "initialize".into(),
            },
        );
        self.peer.send(&request).await?;
        let response = self.wait_initialize(id).await?;
        if let Some(error) = response.get("error") {
            return Err(SimError::Rpc {
                method: "initialize".into(),
                display: error_display(error),
                error: error.clone(),
            });
        }
        match response.get("result") {
            Some(result) if result.get("capabilities").is_some_and(Value::is_object) => {
                Ok(result.clone())
            }
            _ => Err(SimError::Invalid {
                method: "initialize".into(),
                message: "the result has no capabilities object (R1)".into(),
            }),
        }
    }

    /// Waits for the initialize answer. The Local harness logs
    /// [`INITIALIZE_WAIT_LOG_LINE`] every 5 s while it waits; copilot-cli has
    /// no such line.
    async fn wait_initialize(&mut self, id: i64) -> Result<Value, SimError> {
        let limit = self.options.initialize_timeout;
        if !self.profile.is_local() {
            return self.wait_response(id, limit).await;
        }
        let deadline = Instant::now() + limit;
        let mut next_log = Instant::now() + INITIALIZE_WAIT_LOG_EVERY;
        loop {
            let wait = next_log
                .min(deadline)
                .saturating_duration_since(Instant::now());
            match self.wait_response(id, wait).await {
                Err(SimError::Timeout { .. }) => {}
                other => return other,
            }
            if Instant::now() >= next_log {
                self.log(EventKind::WaitingForInitialize {
                    log_line: INITIALIZE_WAIT_LOG_LINE.into(),
                });
                next_log += INITIALIZE_WAIT_LOG_EVERY;
            }
            if Instant::now() >= deadline {
                return Err(SimError::Timeout {
                    method: "initialize".into(),
                    id,
                    after: limit,
                });
            }
        }
    }

    fn negotiate(&mut self, negotiated: Negotiated) -> Negotiated {
        self.log(EventKind::Negotiated {
            path: match negotiated.path {
                WirePath::Legacy => "legacy".into(),
                WirePath::Modern => "modern".into(),
            },
            protocol_version: negotiated.protocol_version.clone(),
            server_info: negotiated.server_info.clone(),
        });
        self.negotiated = Some(negotiated.clone());
        negotiated
    }

    async fn start_local(&mut self) -> Result<Negotiated, SimError> {
        let result = self.initialize().await?;
        let capabilities = result.get("capabilities").cloned().unwrap_or_default();
        let negotiated = self.negotiate(legacy(&result, None));
        if capabilities.get("logging").is_some() {
            // _sendLogLevelToServer: the Output channel's default level Info.
            self.set_log_level("info").await?;
        }
        let initialized = frames::notification(Harness::Local, "notifications/initialized", None);
        self.peer.send(&initialized).await?;
        // _populateLiveData: prompts then tools, in the same tick.
        let prompts = if capabilities.get("prompts").is_some() {
            Some(self.begin_local_list(ListKind::Prompts).await?)
        } else {
            None
        };
        let tools = if capabilities.get("tools").is_some() {
            Some(self.begin_local_list(ListKind::Tools).await?)
        } else {
            None
        };
        // A list failure (the R4 loop, an error) is in the log; the session goes on.
        for (kind, generation) in [(ListKind::Prompts, prompts), (ListKind::Tools, tools)] {
            if let Some(generation) = generation {
                match self.wait_local_list(kind, generation).await {
                    Ok(_) | Err(SimError::List(_)) => {}
                    Err(other) => return Err(other),
                }
            }
        }
        Ok(negotiated)
    }

    async fn start_copilot(&mut self) -> Result<Negotiated, SimError> {
        let Some(discover) = self.profile.discover_request() else {
            return Err(SimError::NotStarted);
        };
        let id = self.take_id();
        self.pending.insert(
            id,
            Pending::Await {
                method: "server/discover".into(),
            },
        );
        self.peer.send(&discover).await?;
        let limit = self.options.discover_timeout;
        let outcome = match self.wait_response(id, limit).await {
            Ok(response) => discover_outcome(&response),
            Err(SimError::Timeout { .. }) => {
                // No cancel of id 0; a late answer is ignored (C4).
                self.pending.insert(id, Pending::LateDiscover);
                Discover::Legacy(format!("no answer in {}", seconds(limit)))
            }
            Err(other) => return Err(other),
        };
        match outcome {
            Discover::Modern(result) => {
                self.log(EventKind::Discover {
                    outcome: "result".into(),
                });
                self.start_modern(&result).await
            }
            Discover::Legacy(why) => {
                self.log(EventKind::Discover {
                    outcome: why.clone(),
                });
                let result = self.initialize().await?;
                let negotiated = self.negotiate(legacy(&result, Some(why)));
                let initialized =
                    frames::notification(Harness::Copilot, "notifications/initialized", None);
                self.peer.send(&initialized).await?;
                if negotiated.capabilities.get("tools").is_some() {
                    // copilot-cli lists 60-300 ms later; frames that come meanwhile are handled.
                    self.idle(self.options.tools_list_delay).await?;
                    match self.list_sequential(ListKind::Tools).await {
                        Ok(_) | Err(SimError::List(_)) => {}
                        Err(other) => return Err(other),
                    }
                }
                Ok(negotiated)
            }
        }
    }

    async fn start_modern(&mut self, result: &Value) -> Result<Negotiated, SimError> {
        let capabilities = result.get("capabilities").cloned().unwrap_or_default();
        let negotiated = self.negotiate(Negotiated {
            path: WirePath::Modern,
            protocol_version: Some(MODERN_VERSION.into()),
            capabilities: capabilities.clone(),
            server_info: result
                .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
                .cloned()
                .unwrap_or(Value::Null),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            discover: Some("result".into()),
        });
        if capabilities.pointer("/tools/listChanged") == Some(&json!(true)) {
            let id = self.take_id();
            let token = self.take_progress();
            let params = frames::sorted(json!({
                "_meta": frames::with_progress_token(&self.modern_meta, token),
                "notifications": {"toolsListChanged": true}
            }));
            self.pending.insert(id, Pending::Listen);
            self.listen_id = Some(id);
            self.peer
                .send(&frames::request(id, "subscriptions/listen", params))
                .await?;
        }
        if capabilities.get("tools").is_some() {
            match self.list_sequential(ListKind::Tools).await {
                Ok(_) | Err(SimError::List(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(negotiated)
    }
}

enum Discover {
    Modern(Value),
    Legacy(String),
}

/// A discover result is usable when it has capabilities and supports 2026-07-28.
fn discover_outcome(response: &Value) -> Discover {
    if let Some(error) = response.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        return Discover::Legacy(format!("error {code}"));
    }
    let Some(result) = response.get("result") else {
        return Discover::Legacy("unusable result".into());
    };
    let supports = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|v| v.as_str() == Some(MODERN_VERSION)));
    if supports && result.get("capabilities").is_some_and(Value::is_object) {
        Discover::Modern(result.clone())
    } else {
        Discover::Legacy("unusable result".into())
    }
}

fn legacy(result: &Value, discover: Option<String>) -> Negotiated {
    Negotiated {
        path: WirePath::Legacy,
        protocol_version: result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        capabilities: result.get("capabilities").cloned().unwrap_or_default(),
        server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
        discover,
    }
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}
