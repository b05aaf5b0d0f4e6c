//! The request headers of Streamable HTTP 2026-07-28: `Origin` (DNS rebinding),
//! `Accept`, `Content-Type`, and the request metadata headers `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name`, checked against the body (streamable-http.mdx §Request
//! Metadata, §Server Validation; WIRE-DIFF §8.2).
//!
//! A `tools/call` of a tool whose input schema marks parameters with `x-mcp-header`
//! also needs their `Mcp-Param-<name>` headers ([`check_params`], §Custom Headers
//! from Tool Parameters); any other `Mcp-Param-*` header is ignored as the spec asks.

use base64::Engine;
use hyper::HeaderMap;
use hyper::header::{ACCEPT, CONTENT_TYPE, ORIGIN};
use serde_json::{Map, Value};

/// The JSON-RPC code `HeaderMismatch`: a required header is missing, does not match the
/// body, or holds characters that are not allowed.
pub const HEADER_MISMATCH: i32 = -32020;

const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const METHOD: &str = "mcp-method";
const NAME: &str = "mcp-name";
const KEY_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Why the metadata headers of a request do not fit its body; the message goes to the
/// client with [`HEADER_MISMATCH`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderMismatch {
    #[error("Header mismatch: the request has no MCP-Protocol-Version header.")]
    NoVersion,
    #[error(
        "Header mismatch: MCP-Protocol-Version header value '{header}' does not match body value '{body}'."
    )]
    Version { header: String, body: String },
    #[error("Header mismatch: the request has no Mcp-Method header.")]
    NoMethod,
    #[error(
        "Header mismatch: Mcp-Method header value '{header}' does not match body value '{body}'."
    )]
    Method { header: String, body: String },
    #[error("Header mismatch: a {0} request needs an Mcp-Name header.")]
    NoName(String),
    #[error("Header mismatch: the Mcp-Name header is not valid =?base64?...?= text.")]
    NameNotBase64,
    #[error(
        "Header mismatch: Mcp-Name header value '{header}' does not match body value '{body}'."
    )]
    Name { header: String, body: String },
    #[error(
        "Header mismatch: the header Mcp-Param-{header} is sent, but the argument '{parameter}' has no value."
    )]
    ParamWithoutValue { header: String, parameter: String },
    #[error("Header mismatch: the argument '{parameter}' needs the header Mcp-Param-{header}.")]
    NoParam { header: String, parameter: String },
    #[error("Header mismatch: the header Mcp-Param-{0} is not valid =?base64?...?= text.")]
    ParamNotBase64(String),
    #[error(
        "Header mismatch: Mcp-Param-{header} header value '{header_value}' does not match body value '{body}'."
    )]
    Param {
        header: String,
        header_value: String,
        body: String,
    },
    #[error("Header mismatch: the header {0} is repeated.")]
    Repeated(String),
    #[error("Header mismatch: the header {0} holds characters that are not allowed.")]
    NotAllowed(String),
}

/// Whether an `Origin` header, when present, names a loopback page: a page of another
/// host must not reach a local server (security: DNS rebinding).
pub fn origin_allowed(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some(rest) = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
    else {
        return false;
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        v6.split_once(']').map(|(host, _)| host)
    } else {
        rest.split(':').next()
    };
    matches!(host, Some("localhost" | "127.0.0.1" | "::1"))
}

/// Whether `Accept` lists both `application/json` and `text/event-stream` (wildcards
/// count): a client MUST accept both kinds of response.
pub fn accepts_both(headers: &HeaderMap) -> bool {
    let mut json = false;
    let mut sse = false;
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        for range in value.split(',') {
            let media = range
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            match media.as_str() {
                "*/*" => (json, sse) = (true, true),
                "application/*" | "application/json" => json = true,
                "text/*" | "text/event-stream" => sse = true,
                _ => {}
            }
        }
    }
    json && sse
}

/// Whether the body is declared JSON, or not declared at all (no rule of the spec asks
/// for the header; a body declared as something else is refused).
pub fn content_type_allowed(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return true;
    };
    value.to_str().is_ok_and(|value| {
        value
            .split(';')
            .next()
            .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// Checks the metadata headers of a request against its `method` and `params`. The
/// error text names the header; the caller answers 400 with [`HEADER_MISMATCH`].
pub fn check_request(
    headers: &HeaderMap,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Result<(), HeaderMismatch> {
    let version = single(headers, PROTOCOL_VERSION)?.ok_or(HeaderMismatch::NoVersion)?;
    let body_version = params
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get(KEY_VERSION))
        .and_then(Value::as_str);
    // A body without a version gets -32602 from the check of _meta, not a mismatch.
    if let Some(body_version) = body_version
        && body_version != version
    {
        return Err(HeaderMismatch::Version {
            header: version,
            body: body_version.to_owned(),
        });
    }
    let header_method = single(headers, METHOD)?.ok_or(HeaderMismatch::NoMethod)?;
    if header_method != method {
        return Err(HeaderMismatch::Method {
            header: header_method,
            body: method.to_owned(),
        });
    }
    let name_member = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return Ok(()),
    };
    let header_name =
        single(headers, NAME)?.ok_or_else(|| HeaderMismatch::NoName(method.to_owned()))?;
    let header_name = decode(&header_name).ok_or(HeaderMismatch::NameNotBase64)?;
    let body_name = params
        .and_then(|params| params.get(name_member))
        .and_then(Value::as_str);
    if body_name != Some(header_name.as_str()) {
        return Err(HeaderMismatch::Name {
            header: header_name,
            body: body_name.unwrap_or("(none)").to_owned(),
        });
    }
    Ok(())
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against its `arguments`, for
/// each parameter of `schema` marked with `x-mcp-header`: a value in the body needs
/// its header, with the same text (plain, or in the `=?base64?...?=` sentinel, which
/// must be valid padded Base64); no value (absent or null) needs no header.
pub fn check_params(
    headers: &HeaderMap,
    schema: &Map<String, Value>,
    arguments: Option<&Map<String, Value>>,
) -> Result<(), HeaderMismatch> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (parameter, property) in properties {
        let Some(header) = property.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let name = format!("mcp-param-{}", header.to_ascii_lowercase());
        let sent = single(headers, &name)?;
        let value = arguments
            .and_then(|arguments| arguments.get(parameter))
            .filter(|value| !value.is_null());
        let expected = match value {
            Some(Value::String(text)) => text.clone(),
            Some(scalar @ (Value::Bool(_) | Value::Number(_))) => scalar.to_string(),
            Some(_) => continue,
            None if sent.is_some() => {
                return Err(HeaderMismatch::ParamWithoutValue {
                    header: header.to_owned(),
                    parameter: parameter.clone(),
                });
            }
            None => continue,
        };
        let sent = sent.ok_or_else(|| HeaderMismatch::NoParam {
            header: header.to_owned(),
            parameter: parameter.clone(),
        })?;
        let decoded =
            decode(&sent).ok_or_else(|| HeaderMismatch::ParamNotBase64(header.to_owned()))?;
        if decoded != expected {
            return Err(HeaderMismatch::Param {
                header: header.to_owned(),
                header_value: decoded,
                body: expected,
            });
        }
    }
    Ok(())
}

/// The one value of a header: `None` when absent; an error when repeated or when it
/// holds characters outside visible ASCII, space and tab.
fn single(headers: &HeaderMap, name: &str) -> Result<Option<String>, HeaderMismatch> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(HeaderMismatch::Repeated(name.to_owned()));
    }
    let text = value
        .to_str()
        .map_err(|_| HeaderMismatch::NotAllowed(name.to_owned()))?;
    Ok(Some(text.to_owned()))
}

/// Decodes the Base64 sentinel `=?base64?...?=` (markers case-sensitive); other text
/// is the value itself.
fn decode(value: &str) -> Option<String> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Some(value.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;
    use serde_json::json;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn mcp_param_headers_must_match_the_marked_arguments() {
        let schema = params(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "query": {"type": "string"},
        }}));
        let args = params(json!({"region": "Hello", "priority": 3, "query": "q"}));
        let check = |pairs: &[(&'static str, &'static str)], args: &Map<String, Value>| {
            check_params(&headers(pairs), &schema, Some(args)).map_err(|e| e.to_string())
        };
        let both = [("mcp-param-region", "Hello"), ("mcp-param-priority", "3")];
        assert_eq!(check(&both, &args), Ok(()));
        let encoded = [
            ("mcp-param-region", "=?base64?SGVsbG8=?="),
            ("mcp-param-priority", "3"),
        ];
        assert_eq!(check(&encoded, &args), Ok(()));
        for bad in ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="] {
            let pairs = [("mcp-param-region", bad), ("mcp-param-priority", "3")];
            assert_eq!(
                check(&pairs, &args),
                Err("Header mismatch: the header Mcp-Param-Region is not valid =?base64?...?= text.".into())
            );
        }
        assert_eq!(
            check(&[("mcp-param-priority", "3")], &args),
            Err("Header mismatch: the argument 'region' needs the header Mcp-Param-Region.".into())
        );
        assert_eq!(
            check(&[("mcp-param-region", "World"), ("mcp-param-priority", "3")], &args),
            Err("Header mismatch: Mcp-Param-Region header value 'World' does not match body value 'Hello'.".into())
        );
        // No value in the body: no header; a header without a value is a mismatch.
        let region_only = params(json!({"region": "Hello", "priority": null}));
        assert_eq!(
            check(&[("mcp-param-region", "Hello")], &region_only),
            Ok(())
        );
        assert!(
            check(&both, &region_only)
                .unwrap_err()
                .to_string()
                .contains("has no value")
        );
        // The literal text of an incomplete sentinel is the value itself.
        let literal = params(json!({"region": "=?base64?SGVsbG8="}));
        assert_eq!(
            check(&[("mcp-param-region", "=?base64?SGVsbG8=")], &literal),
            Ok(())
        );
    }

    #[test]
    fn only_loopback_origins_pass() {
        for ok in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:8080",
        ] {
            assert!(origin_allowed(&headers(&[("origin", ok)])), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://localhost.evil.example",
            "file://",
        ] {
            assert!(!origin_allowed(&headers(&[("origin", bad)])), "{bad}");
        }
        assert!(origin_allowed(&HeaderMap::new()));
    }

    #[test]
    fn accept_must_list_both_types() {
        assert!(accepts_both(&headers(&[(
            "accept",
            "application/json, text/event-stream"
        )])));
        assert!(accepts_both(&headers(&[("accept", "*/*")])));
        assert!(accepts_both(&headers(&[
            ("accept", "application/json;q=0.9"),
            ("accept", "text/event-stream")
        ])));
        assert!(!accepts_both(&headers(&[("accept", "application/json")])));
        assert!(!accepts_both(&HeaderMap::new()));
    }

    #[test]
    fn the_name_header_may_be_base64_and_must_match() {
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        let body = params(json!({"name": "Hello, 世界", "_meta": meta}));
        let good = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ]);
        assert_eq!(check_request(&good, "tools/call", Some(&body)), Ok(()));
        let wrong = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ]);
        let error = check_request(&wrong, "tools/call", Some(&body))
            .unwrap_err()
            .to_string();
        assert!(error.contains("'echo' does not match"), "{error}");
        let missing = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
        ]);
        assert!(check_request(&missing, "tools/call", Some(&body)).is_err());
    }

    #[test]
    fn version_and_method_must_match_the_body() {
        let body =
            params(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}));
        let old = headers(&[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/list"),
        ]);
        assert!(
            check_request(&old, "tools/list", Some(&body))
                .unwrap_err()
                .to_string()
                .contains("MCP-Protocol-Version")
        );
        let other = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "prompts/list"),
        ]);
        assert!(
            check_request(&other, "tools/list", Some(&body))
                .unwrap_err()
                .to_string()
                .contains("Mcp-Method")
        );
        let none = headers(&[("mcp-method", "tools/list")]);
        assert!(
            check_request(&none, "tools/list", Some(&body))
                .unwrap_err()
                .to_string()
                .contains("no MCP-Protocol-Version")
        );
        let twice = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
            ("mcp-method", "tools/list"),
        ]);
        assert!(
            check_request(&twice, "tools/list", Some(&body))
                .unwrap_err()
                .to_string()
                .contains("repeated")
        );
    }
}
