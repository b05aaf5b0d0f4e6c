//! The wire checks that run on every transcript, whatever its steps say (the
//! list of the reference's `Transcript.verify()`, study section 2.2):
//!
//! Toward VS Code (revision 2025-11-25):
//! - every stdout line is a JSON-RPC 2.0 object (R7);
//! - every response answers one request of the client, and its result validates
//!   against the `$defs` entry of the request's method (errors against `Error`);
//! - notifications are of the methods a 2025-11-25 server may send, and validate;
//! - requests of the bridge have string ids `b-N`, never reused, of the methods
//!   elicitation/create, sampling/createMessage or roots/list, and validate; a
//!   `notifications/cancelled` names a request of the bridge (Q1);
//! - no `resultType`, `ttlMs`, `cacheScope`, `inputRequests` or `requestState`
//!   (R8), no serverInfo or subscriptionId in `_meta`, `nextCursor` only as a
//!   string (R4), no tasks in the initialize result, truthy `items` in every
//!   array schema of a tool and only object output schemas (R6);
//! - every stderr line of the bridge has the form of the contract (R7, LOG).
//!
//! Toward the upstream (revision 2026-07-28):
//! - every request validates against the `$defs` entry of its method, has an id
//!   that the connection never used before, no `task`, only the `_meta` keys of
//!   the revision and the pass-through keys of R3, and client capabilities
//!   without tasks, `roots.listChanged`, `sampling.tools` or `sampling.context`;
//! - the only notification is `notifications/cancelled` of a request sent before;
//! - the bridge sends no responses upstream (a 2026-07-28 server sends no requests).
//!
//! Toward an upstream at a URL (M4): the same checks on every POST that the fixture
//! served, and the rules of HTTP ([`http`]); and the browser of the sign-in
//! ([`browser`]).

mod browser;
mod client;
mod http;
mod upstream;

pub use browser::check_browser;
use client::client_side;
pub use client::is_log_line;
pub use http::{HttpInput, check_http};
use upstream::upstream_side;

use crate::schema::{Revision, Schemas};
use crate::upstream::UpRecord;
use harness_sim::record::Entry;
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

/// One broken rule, with the frame that broke it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireFailure {
    /// The rule, e.g. `R4 nextCursor` or `schema 2025-11-25`.
    pub rule: String,
    pub message: String,
    /// The frame or line, compact.
    pub frame: String,
}

/// What the checks need to know about a run.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Stdout is JSON-RPC (off for `--help` and `--version`).
    pub stdout_json: bool,
    /// Stderr lines have the form of the contract.
    pub log_format: bool,
    /// Stderr lines that the scripted upstream wrote (not the bridge's).
    pub injected_stderr: Vec<String>,
    /// The start of the stderr lines of a server that embeds the bridge (its own
    /// lines, not the bridge's: the contract's "a line without one of these starts
    /// comes from the upstream server").
    pub server_line_prefix: Option<&'static str>,
    /// Stdout speaks revision 2026-07-28: an embedded server whose first message
    /// selected rmcp's own transport (the modern path), where the rules of the
    /// 2025-11-25 face of the bridge do not apply.
    pub modern_stdout: bool,
}

struct Report<'a> {
    failures: Vec<WireFailure>,
    schemas: &'a Schemas,
}

impl Report<'_> {
    fn fail(&mut self, rule: &str, message: impl Into<String>, frame: &Value) {
        self.fail_text(rule, message, &frame.to_string());
    }

    fn fail_text(&mut self, rule: &str, message: impl Into<String>, frame: &str) {
        let mut frame = frame.to_owned();
        if frame.len() > 2000 {
            let mut end = 2000;
            while !frame.is_char_boundary(end) {
                end -= 1;
            }
            frame.truncate(end);
            frame.push_str(" ...");
        }
        self.failures.push(WireFailure {
            rule: rule.into(),
            message: message.into(),
            frame,
        });
    }

    fn validate(&mut self, revision: Revision, def: &str, instance: &Value, frame: &Value) {
        if let Err(error) = self.schemas.validate(revision, def, instance) {
            self.fail(
                &format!("schema {}", revision.name()),
                error.to_string(),
                frame,
            );
        }
    }
}

/// Runs every check on one run's traffic. `entries` is the bridge's side as
/// recorded (c2s, s2c and stderr, in time order); `upstream` the relay's.
pub fn check(
    schemas: &Schemas,
    entries: &[Entry],
    upstream: &[UpRecord],
    options: &CheckOptions,
) -> Vec<WireFailure> {
    let mut report = Report {
        failures: Vec::new(),
        schemas,
    };
    if !options.modern_stdout {
        client_side(&mut report, entries, options);
    }
    upstream_side(&mut report, upstream);
    report.failures
}

/// The key of an id for maps: its JSON text.
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// An id that a line that is not a valid request may still carry (the bridge
/// answers with it when it can find it).
fn recovered_id(line: &str) -> Option<String> {
    static ID: OnceLock<Option<Regex>> = OnceLock::new();
    let regex = ID
        .get_or_init(|| Regex::new(r#""id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)"#).ok())
        .as_ref()?;
    let found = regex.captures(line)?.get(1)?.as_str();
    serde_json::from_str::<Value>(found)
        .ok()
        .map(|id| id_key(&id))
}

#[cfg(test)]
mod tests {
    use super::client::falsy_array_items;
    use super::*;
    use crate::upstream::UpDir;
    use harness_sim::record::{Dir, Payload};
    use serde_json::json;
    use tokio::time::Instant;

    fn schemas() -> Schemas {
        Schemas::load(&crate::paths::transcripts_dir().join("schema")).unwrap()
    }

    fn entry(dir: Dir, frame: Value) -> Entry {
        Entry {
            t_ms: 0.0,
            dir,
            payload: Payload::Frame(frame),
        }
    }

    fn options() -> CheckOptions {
        CheckOptions {
            stdout_json: true,
            log_format: true,
            injected_stderr: Vec::new(),
            server_line_prefix: None,
            modern_stdout: false,
        }
    }

    fn rules(entries: &[Entry], upstream: &[UpRecord]) -> Vec<String> {
        check(&schemas(), entries, upstream, &options())
            .into_iter()
            .map(|f| format!("{}: {}", f.rule, f.message))
            .collect()
    }

    #[test]
    fn a_null_cursor_breaks_r4() {
        let entries = [
            entry(
                Dir::C2s,
                json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":4,"result":{"tools":[],"nextCursor":null}}),
            ),
        ];
        let found = rules(&entries, &[]);
        assert!(
            found.iter().any(|r| r.starts_with("R4 nextCursor")),
            "{found:?}"
        );
    }

    #[test]
    fn a_good_session_passes() {
        let entries = [
            entry(
                Dir::C2s,
                json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":{}}}}}]}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":"b-1","method":"roots/list"}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1"}}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}),
            ),
            Entry {
                t_ms: 0.0,
                dir: Dir::Stderr,
                payload: Payload::Line("mcp-bridge-vscode: bridge: info: x".into()),
            },
        ];
        let upstream = [UpRecord {
            conn: 0,
            dir: UpDir::ToUpstream,
            payload: Payload::Frame(
                json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
                "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},
                "vscode.requestId":"r"}}}),
            ),
            at: Instant::now(),
        }];
        assert_eq!(rules(&entries, &upstream), Vec::<String>::new());
    }

    #[test]
    fn the_rules_of_the_reference_are_checked() {
        let entries = [
            entry(
                Dir::C2s,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":false}}},"outputSchema":{"type":"array"}}],"ttlMs":0}}),
            ),
            entry(Dir::S2c, json!({"jsonrpc":"2.0","id":1,"result":{}})),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","id":2,"method":"roots/list"}),
            ),
            entry(
                Dir::S2c,
                json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}),
            ),
            Entry {
                t_ms: 0.0,
                dir: Dir::S2c,
                payload: Payload::Line("hello".into()),
            },
            Entry {
                t_ms: 0.0,
                dir: Dir::Stderr,
                payload: Payload::Line("loose text".into()),
            },
        ];
        let upstream = [UpRecord {
            conn: 0,
            dir: UpDir::ToUpstream,
            payload: Payload::Frame(
                json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":1}}}),
            ),
            at: Instant::now(),
        }];
        let found = rules(&entries, &upstream).join("\n");
        for rule in [
            "R8 modern member",
            "R6 items",
            "R6 outputSchema",
            "answers no request",
            "Q1 ids",
            "Q1 cancelled",
            "R7 stdout",
            "R7 log line",
            "does not exist in revision 2026-07-28",
        ] {
            assert!(found.contains(rule), "{rule} missing in\n{found}");
        }
    }

    #[test]
    fn only_an_embedding_servers_own_lines_may_leave_the_log_form() {
        let entries = [
            "bridge-embedded-server: stdin ended before a first message",
            "mcp-bridge-vscode: bridge: info: the upstream server is ready",
        ]
        .map(|line| Entry {
            t_ms: 0.0,
            dir: Dir::Stderr,
            payload: Payload::Line(line.into()),
        });
        let with_prefix = CheckOptions {
            server_line_prefix: Some("bridge-embedded-server: "),
            ..options()
        };
        assert!(check(&schemas(), &entries, &[], &with_prefix).is_empty());
        let found: Vec<_> = check(&schemas(), &entries, &[], &options())
            .into_iter()
            .map(|wire| wire.frame)
            .collect();
        assert_eq!(
            found,
            ["bridge-embedded-server: stdin ended before a first message"]
        );
    }

    #[test]
    fn falsy_items_are_found_through_subschemas() {
        let schema = json!({"type":"object","properties":{"a":{"type":"array"},"b":{"anyOf":[{"type":"array","items":0}]},
            "c":{"type":"array","items":{"type":"array","items":null}},"d":{"type":"array","items":{}}}});
        assert_eq!(
            falsy_array_items(&schema, "", 0),
            [
                "/properties/a",
                "/properties/b/anyOf/0",
                "/properties/c/items"
            ]
        );
    }
}
