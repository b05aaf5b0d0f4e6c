//! The wire checks of the URL form (M4): the POSTs that the fixture over HTTPS
//! served go through the checks of every upstream frame ([`super::upstream`]), and
//! every HTTP request of either origin of the fixture through the rules of
//! Streamable HTTP and of the contract's URL form:
//!
//! - every POST to the MCP URL carries `MCP-Protocol-Version: 2026-07-28` and
//!   `Mcp-Method` (the listen stream's POST included); a served POST's `Mcp-Method`
//!   is its message's method, and its `Mcp-Name` the name (or URI) of a call, a
//!   prompt or a read, and nothing else;
//! - each static header (`--header`, `--header-env`) goes with every POST to the
//!   MCP URL and with nothing else;
//! - an access token (`Authorization: Bearer`) goes only to the MCP URL, and once a
//!   bridge has one, every later POST of that bridge carries one.

use super::{Report, WireFailure};
use crate::https_upstream::Traffic;
use crate::schema::Schemas;
use crate::upstream::{UpDir, UpRecord};
use base64::Engine;
use harness_sim::record::Payload;
use serde_json::Value;

/// The revision of the headers.
const REVISION: &str = "2026-07-28";

/// What the HTTP checks look at.
#[derive(Debug, Clone, Default)]
pub struct HttpInput {
    pub traffic: Traffic,
    /// The static headers of each bridge process (0, 1, ...): the lowercase name and
    /// the value as the fixture prints it (`Scheme [redacted]` for `Authorization`).
    pub static_headers: Vec<Vec<(String, String)>>,
}

/// The checks of the URL form's traffic.
pub fn check_http(schemas: &Schemas, input: &HttpInput) -> Vec<WireFailure> {
    let mut report = Report {
        failures: Vec::new(),
        schemas,
    };
    let upstream: Vec<UpRecord> = input
        .traffic
        .exchanges
        .iter()
        .map(|(process, exchange)| UpRecord {
            conn: *process,
            dir: UpDir::ToUpstream,
            payload: Payload::Frame(exchange.get("body").cloned().unwrap_or(Value::Null)),
            at: tokio::time::Instant::now(),
        })
        .collect();
    super::upstream::upstream_side(&mut report, &upstream);
    for (_, exchange) in &input.traffic.exchanges {
        served_post(&mut report, exchange);
    }
    let processes = input
        .traffic
        .requests
        .iter()
        .map(|(process, _)| *process + 1)
        .max()
        .unwrap_or(0);
    for process in 0..processes {
        let requests: Vec<&Value> = input
            .traffic
            .requests
            .iter()
            .filter(|(p, _)| *p == process)
            .map(|(_, request)| request)
            .collect();
        let statics = input
            .static_headers
            .get(process)
            .map(Vec::as_slice)
            .unwrap_or_default();
        requests_of_one_bridge(&mut report, &requests, statics);
    }
    report.failures
}

fn header<'a>(record: &'a Value, name: &str) -> Option<&'a str> {
    record.get("headers")?.get(name)?.as_str()
}

/// Whether a request is a POST to the MCP URL.
fn is_mcp_post(request: &Value) -> bool {
    request.get("origin").and_then(Value::as_str) == Some("resource")
        && request.get("method").and_then(Value::as_str) == Some("POST")
        && request.get("path").and_then(Value::as_str) == Some("/mcp")
}

fn requests_of_one_bridge(
    report: &mut Report<'_>,
    requests: &[&Value],
    statics: &[(String, String)],
) {
    let mut has_token = false;
    for request in requests {
        let bearer = header(request, "authorization").is_some_and(|a| a.starts_with("Bearer "));
        if !is_mcp_post(request) {
            if bearer {
                report.fail(
                    "HTTP bearer",
                    "an access token went to another URL than the MCP URL",
                    request,
                );
            }
            for (name, _) in statics {
                if header(request, name).is_some() {
                    report.fail(
                        "HTTP static header",
                        format!("the static header {name} went to another URL than the MCP URL"),
                        request,
                    );
                }
            }
            continue;
        }
        if header(request, "mcp-protocol-version") != Some(REVISION) {
            report.fail(
                "HTTP revision headers",
                format!("a POST without MCP-Protocol-Version: {REVISION}"),
                request,
            );
        }
        if header(request, "mcp-method").is_none() {
            report.fail(
                "HTTP revision headers",
                "a POST without Mcp-Method",
                request,
            );
        }
        for (name, value) in statics {
            if header(request, name) != Some(value.as_str()) {
                report.fail(
                    "HTTP static header",
                    format!("a POST without the static header {name}: {value}"),
                    request,
                );
            }
        }
        let authorized = header(request, "authorization").is_some();
        if has_token && !authorized {
            report.fail(
                "HTTP bearer",
                "a POST without the access token that the bridge has",
                request,
            );
        }
        has_token |= bearer;
    }
}

/// The member of `params` that `Mcp-Name` carries, for the methods that have one.
fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// A header value as the revision encodes it, read back: the text itself, or the
/// UTF-8 text of its `=?base64?...?=` form.
fn decoded(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_owned()),
    }
}

/// The headers of a served POST against its message.
fn served_post(report: &mut Report<'_>, exchange: &Value) {
    let body = exchange.get("body").unwrap_or(&Value::Null);
    let Some(method) = body.get("method").and_then(Value::as_str) else {
        return;
    };
    if header(exchange, "mcp-method") != Some(method) {
        report.fail(
            "HTTP revision headers",
            format!("the Mcp-Method of a POST of {method} is not its method"),
            exchange,
        );
    }
    let expected = name_member(method).and_then(|member| {
        body.get("params")
            .and_then(|params| params.get(member))
            .and_then(Value::as_str)
    });
    let given = header(exchange, "mcp-name").map(decoded);
    match (expected, given) {
        (Some(name), Some(Some(given))) if given == name => {}
        (None, None) => {}
        (Some(name), _) => report.fail(
            "HTTP revision headers",
            format!("a POST of {method} without Mcp-Name: {name}"),
            exchange,
        ),
        (None, Some(_)) => report.fail(
            "HTTP revision headers",
            format!("a POST of {method} with an Mcp-Name"),
            exchange,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas() -> Schemas {
        Schemas::load(&crate::paths::transcripts_dir().join("schema")).unwrap()
    }

    fn post(headers: Value) -> Value {
        json!({"origin":"resource","method":"POST","path":"/mcp","headers":headers,"status":200})
    }

    fn rules(input: &HttpInput) -> Vec<String> {
        check_http(&schemas(), input)
            .into_iter()
            .map(|f| format!("{}: {}", f.rule, f.message))
            .collect()
    }

    fn revision(method: &str) -> Value {
        json!({"mcp-protocol-version":"2026-07-28","mcp-method":method})
    }

    #[test]
    fn a_good_session_passes() {
        let mut headers = revision("tools/call");
        headers["mcp-name"] = json!("=?base64?w6k=?=");
        headers["x-team"] = json!("blue");
        headers["authorization"] = json!("Bearer [redacted]");
        let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"é","_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}});
        let input = HttpInput {
            traffic: Traffic {
                exchanges: vec![(0, json!({"post":1,"headers":headers.clone(),"body":body}))],
                requests: vec![
                    (
                        0,
                        json!({"origin":"authorization","method":"POST","path":"/token","headers":{"authorization":"Basic [redacted]"},"status":200}),
                    ),
                    (0, post(headers)),
                ],
            },
            static_headers: vec![vec![("x-team".into(), "blue".into())]],
        };
        assert_eq!(rules(&input), Vec::<String>::new());
    }

    #[test]
    fn each_rule_of_the_url_form_is_checked() {
        let mut with_token = revision("tools/list");
        with_token["authorization"] = json!("Bearer [redacted]");
        with_token["x-team"] = json!("blue");
        let input = HttpInput {
            traffic: Traffic {
                exchanges: vec![
                    (
                        0,
                        json!({"post":1,"headers":revision("tools/list"),"body":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}}),
                    ),
                    (
                        0,
                        json!({"post":2,"headers":revision("tools/list"),"body":{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}}),
                    ),
                ],
                requests: vec![
                    (0, post(with_token)),
                    (0, post(json!({"mcp-method":"tools/list","x-team":"blue"}))),
                    (
                        0,
                        json!({"origin":"authorization","method":"POST","path":"/token","headers":{"authorization":"Bearer [redacted]","x-team":"blue"},"status":200}),
                    ),
                ],
            },
            static_headers: vec![vec![("x-team".into(), "blue".into())]],
        };
        let found = rules(&input).join("\n");
        for rule in [
            "the Mcp-Method of a POST of tools/call is not its method",
            "a POST of tools/call without Mcp-Name: a",
            "the bridge used the upstream request id 1 again",
            "a POST without MCP-Protocol-Version",
            "a POST without the access token that the bridge has",
            "an access token went to another URL than the MCP URL",
            "the static header x-team went to another URL than the MCP URL",
        ] {
            assert!(found.contains(rule), "{rule} missing in\n{found}");
        }
        let without_static = HttpInput {
            traffic: Traffic {
                exchanges: Vec::new(),
                requests: vec![(0, post(revision("ping")))],
            },
            static_headers: vec![vec![("x-team".into(), "blue".into())]],
        };
        assert_eq!(
            rules(&without_static),
            ["HTTP static header: a POST without the static header x-team: blue"]
        );
    }

    #[test]
    fn each_bridge_process_has_its_own_ids_and_tokens() {
        let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}});
        let mut token = revision("tools/list");
        token["authorization"] = json!("Bearer [redacted]");
        let input = HttpInput {
            traffic: Traffic {
                exchanges: vec![
                    (
                        0,
                        json!({"post":1,"headers":revision("tools/list"),"body":body}),
                    ),
                    (
                        1,
                        json!({"post":2,"headers":revision("tools/list"),"body":body}),
                    ),
                ],
                requests: vec![(0, post(token)), (1, post(revision("tools/list")))],
            },
            static_headers: Vec::new(),
        };
        assert_eq!(rules(&input), Vec::<String>::new());
    }
}
