//! `--print-exchanges`: each POST that the endpoint reads goes to stdout as one line,
//! `exchange: {"post":N,"headers":{...},"body":...}`, after the lines that announce
//! the server. A runner of transcripts reads them to check what a client sent over
//! HTTP (its headers and its JSON-RPC message), as it reads the frames of stdio.
//!
//! Header names are lowercase; a name that comes twice has its values joined by
//! ", ". The credential of `Authorization` is never printed: only its scheme and
//! `[redacted]`.

use std::io::Write;

use hyper::HeaderMap;
use serde_json::{Map, Value, json};

/// The line of one POST.
pub fn line(post: u64, headers: &HeaderMap, body: &[u8]) -> String {
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
    let body = serde_json::from_slice::<Value>(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    format!(
        "exchange: {}",
        json!({"post": post, "headers": shown, "body": body})
    )
}

/// Writes the line of one POST to stdout. A stdout that fails loses the line only:
/// the request is still served.
pub fn print(post: u64, headers: &HeaderMap, body: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", line(post, headers, body));
    let _ = stdout.flush();
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
    fn a_body_that_is_not_json_is_shown_as_text() {
        let line = line(1, &HeaderMap::new(), b"not json");
        assert_eq!(
            line,
            r#"exchange: {"post":1,"headers":{},"body":"not json"}"#
        );
    }
}
