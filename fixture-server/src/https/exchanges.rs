//! `--print-exchanges`: each POST that the endpoint reads goes to stdout as one line,
//! `exchange: {"post":N,"headers":{...},"body":...}`, after the lines that announce
//! the server. A runner of transcripts reads them to check what a client sent over
//! HTTP (its headers and its JSON-RPC message), as it reads the frames of stdio.
//!
//! An exchange is a POST that the endpoint serves: a POST refused before it is
//! served (no token, a step-up, `--fail-status`) has none, since its request goes
//! again or fails without an answer of the server.
//!
//! Besides, every HTTP request of any path, on the origin of `/mcp` and on the origin
//! of `--separate-authorization-server`, gets one line once it is answered,
//! `http: {"origin":"resource"|"authorization","method":M,"path":P,"headers":{...},"status":S}`
//! (the path without its query, which holds the secrets of a sign-in): what a runner
//! needs to check where a client sends its headers and its token.
//!
//! Header names are lowercase; a name that comes twice has its values joined by
//! ", ". The credential of `Authorization` is never printed: only its scheme and
//! `[redacted]`.

use std::io::Write;

use hyper::{HeaderMap, Request, StatusCode};
use serde_json::{Map, Value, json};

/// The headers of a request as the lines show them.
fn shown(headers: &HeaderMap) -> Map<String, Value> {
    let mut shown = Map::new();
    for name in headers.keys() {
        let values: Vec<String> = headers
            .get_all(name)
            .iter()
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .collect();
        let mut value = values.join(", ");
        if name == hyper::header::AUTHORIZATION {
            let scheme = value.split(' ').next().unwrap_or_default().to_owned();
            value = format!("{scheme} [redacted]");
        }
        shown.insert(name.as_str().to_owned(), Value::String(value));
    }
    shown
}

/// The line of one POST.
pub fn line(post: u64, headers: &HeaderMap, body: &[u8]) -> String {
    let body = serde_json::from_slice::<Value>(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    format!(
        "exchange: {}",
        json!({"post": post, "headers": shown(headers), "body": body})
    )
}

/// Writes the line of one POST to stdout. A stdout that fails loses the line only:
/// the request is still served.
pub fn print(post: u64, headers: &HeaderMap, body: &[u8]) {
    write_line(&line(post, headers, body));
}

fn write_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// The origin that a request reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The origin of `/mcp` (and of its protected resource metadata).
    Resource,
    /// The origin of `--separate-authorization-server`.
    Authorization,
}

impl Origin {
    fn name(self) -> &'static str {
        match self {
            Self::Resource => "resource",
            Self::Authorization => "authorization",
        }
    }
}

/// A request as it came, kept until its answer: its `http:` line.
pub struct Seen {
    record: Map<String, Value>,
}

impl Seen {
    pub fn of<B>(origin: Origin, request: &Request<B>) -> Seen {
        let mut record = Map::new();
        record.insert("origin".into(), json!(origin.name()));
        record.insert("method".into(), json!(request.method().as_str()));
        record.insert("path".into(), json!(request.uri().path()));
        record.insert("headers".into(), Value::Object(shown(request.headers())));
        Seen { record }
    }

    /// The line, with the status of the answer.
    pub fn line(mut self, status: StatusCode) -> String {
        self.record.insert("status".into(), json!(status.as_u16()));
        format!("http: {}", Value::Object(self.record))
    }

    pub fn print(self, status: StatusCode) {
        write_line(&self.line(status));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn a_line_has_the_headers_and_the_message_and_no_credential() {
        let mut headers = HeaderMap::new();
        headers.insert("Mcp-Method", HeaderValue::from_static("tools/call"));
        headers.insert(
            "Authorization",
            HeaderValue::from_static("Bearer secret-token-1"),
        );
        headers.append("x-twice", HeaderValue::from_static("a"));
        headers.append("x-twice", HeaderValue::from_static("b"));
        let line = line(
            3,
            &headers,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        );
        assert!(!line.contains("secret-token-1"));
        let value: Value = serde_json::from_str(line.strip_prefix("exchange: ").unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"post": 3, "headers": {"mcp-method": "tools/call", "authorization": "Bearer [redacted]", "x-twice": "a, b"},
                "body": {"jsonrpc":"2.0","id":1,"method":"tools/call"}})
        );
    }

    #[test]
    fn an_http_line_has_the_origin_the_path_without_query_and_no_credential() {
        let request = Request::post("/token?code=secret-code")
            .header("Authorization", "Basic c2VjcmV0")
            .body(())
            .unwrap();
        let line = Seen::of(Origin::Authorization, &request).line(StatusCode::OK);
        assert!(!line.contains("secret"), "{line}");
        let value: Value = serde_json::from_str(line.strip_prefix("http: ").unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"origin": "authorization", "method": "POST", "path": "/token",
                "headers": {"authorization": "Basic [redacted]"}, "status": 200})
        );
    }

    #[test]
    fn a_body_that_is_not_json_is_shown_as_text() {
        let line = line(1, &HeaderMap::new(), b"not json");
        assert_eq!(
            line,
            r#"exchange: {"post":1,"headers":{},"body":"not json"}"#
        );
    }
}
