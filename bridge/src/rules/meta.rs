//! The `_meta` of upstream requests (R3, C3, O5).
//!
//! Revision 2026-07-28 has no session: each request carries the protocol version,
//! the client's identity and capabilities, and the log level. VS Code's own `_meta`
//! does not go upstream as it is: its progress token stays with the bridge, and only
//! the trace context and the `vscode.` keys pass.

use super::UPSTREAM_PROTOCOL_VERSION;
use crate::wire::pieces::Sink;
use crate::wire::shallow::{ShallowObject, write_json_string};
use serde_json::{Map, Value};
use std::sync::Arc;

type Object = Map<String, Value>;

pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";

/// What the own keys of a request's `_meta` usually take as JSON text.
const OWN_META_BYTES: usize = 512;

/// The `_meta` that every upstream request starts from (R3): made once at initialize.
/// The client info is VS Code's, when it sent a valid one.
pub fn base_meta(client_info: Option<&Value>, upstream_capabilities: Object) -> Object {
    let mut meta = Object::new();
    meta.insert(
        PROTOCOL_VERSION_KEY.into(),
        UPSTREAM_PROTOCOL_VERSION.into(),
    );
    if let Some(client_info) = client_info {
        meta.insert(CLIENT_INFO_KEY.into(), client_info.clone());
    }
    meta.insert(
        CLIENT_CAPABILITIES_KEY.into(),
        Value::Object(upstream_capabilities),
    );
    meta
}

/// The part of `_meta` that every upstream request shares (R3), made once at
/// initialize and kept as JSON text: no request writes it again.
#[derive(Debug, PartialEq)]
pub struct SharedMeta {
    /// The members as JSON text, without the braces.
    text: String,
}

impl SharedMeta {
    pub fn new(members: Object) -> Self {
        // A map of JSON values always serializes.
        let object = serde_json::to_string(&members).unwrap_or_else(|_| "{}".into());
        let text = object
            .strip_prefix('{')
            .and_then(|text| text.strip_suffix('}'))
            .unwrap_or_default()
            .to_owned();
        Self { text }
    }
}

/// The `_meta` of one upstream request (R3): the part that every request shares
/// and the request's own keys, as JSON text. It is written at encode time (see
/// [`RequestMeta::write_into`]), so no request copies the shared part.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    pub shared: Arc<SharedMeta>,
    /// The own members as JSON text, without braces: one buffer, not a map, as
    /// they are only ever written. Shared: a request that may ask for input keeps
    /// its `_meta` for the next round (M2) while the first round's frame is written.
    pub own: Arc<Vec<u8>>,
}

impl RequestMeta {
    /// The `_meta` of a request without keys of its own (server/discover,
    /// subscriptions/listen).
    pub fn shared_only(shared: &Arc<SharedMeta>) -> Self {
        Self {
            shared: shared.clone(),
            own: Arc::default(),
        }
    }

    /// Appends the whole `_meta` as JSON text: the shared keys, then the own keys.
    pub fn write_into<'f>(&self, out: &mut impl Sink<'f>) {
        out.bytes(b"{");
        out.bytes(self.shared.text.as_bytes());
        if !self.own.is_empty() {
            if !self.shared.text.is_empty() {
                out.bytes(b",");
            }
            out.bytes(&self.own);
        }
        out.bytes(b"}");
    }
}

/// The `_meta` of one upstream request (R3): the shared part, the log level when
/// VS Code set one (O5), the bridge's progress token when VS Code asked for progress
/// (C3, O4), and the keys of VS Code's `_meta` that may pass, as VS Code wrote them.
pub fn request_meta(
    shared: &Arc<SharedMeta>,
    log_level: Option<&str>,
    progress_token: Option<u64>,
    client_meta: Option<&ShallowObject<'_>>,
) -> RequestMeta {
    // No key comes twice: the client's keys that pass are neither of the first two.
    // Room for VS Code's keys (a trace context and two ids) without a regrowth.
    let mut own = Vec::with_capacity(OWN_META_BYTES);
    let mut member = |name: &str, json: &[u8]| {
        if !own.is_empty() {
            own.push(b',');
        }
        write_json_string(name, &mut own);
        own.push(b':');
        own.extend_from_slice(json);
    };
    if let Some(level) = log_level {
        member(LOG_LEVEL_KEY, Value::from(level).to_string().as_bytes());
    }
    if let Some(token) = progress_token {
        member(
            PROGRESS_TOKEN_KEY,
            itoa::Buffer::new().format(token).as_bytes(),
        );
    }
    for (key, value) in client_meta.into_iter().flat_map(ShallowObject::iter) {
        if passes_upstream(key) {
            member(key, value.as_bytes());
        }
    }
    RequestMeta {
        shared: shared.clone(),
        own: Arc::new(own),
    }
}

/// The progress token of VS Code's request (C3): any string or number, also `0`.
pub fn client_progress_token(client_meta: Option<&ShallowObject<'_>>) -> Option<Value> {
    let token = client_meta?.get(PROGRESS_TOKEN_KEY)?;
    let string_or_number = token.starts_with(|c: char| c == '"' || c == '-' || c.is_ascii_digit());
    string_or_number
        .then(|| serde_json::from_str(token).ok())
        .flatten()
}

/// Whether a key of VS Code's `_meta` goes upstream (R3): the W3C trace context and
/// the `vscode.` keys, when the key is a valid `_meta` name outside the reserved
/// prefixes.
pub fn passes_upstream(key: &str) -> bool {
    match key {
        "traceparent" | "tracestate" => true,
        _ => key.starts_with("vscode.") && is_valid_meta_key(key) && !is_reserved(key),
    }
}

/// A `_meta` key: an optional prefix (dot-separated labels, then `/`) and a name
/// that starts and ends with a letter or digit, with `-`, `_` and `.` inside.
fn is_valid_meta_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    let valid_name = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let valid_prefix = prefix.is_none_or(|prefix| {
        prefix.split('.').all(|label| {
            !label.is_empty()
                && label.starts_with(|c: char| c.is_ascii_alphabetic())
                && label.ends_with(|c: char| c.is_ascii_alphanumeric())
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    });
    valid_name && valid_prefix
}

/// A prefix whose second label is `modelcontextprotocol` or `mcp` is reserved.
fn is_reserved(key: &str) -> bool {
    let Some((prefix, _)) = key.rsplit_once('/') else {
        return false;
    };
    matches!(
        prefix.split('.').nth(1),
        Some("modelcontextprotocol" | "mcp")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base_members() -> Object {
        base_meta(
            Some(&json!({"name":"Visual Studio Code","version":"1.141.0"})),
            Object::new(),
        )
    }

    fn base() -> Arc<SharedMeta> {
        Arc::new(SharedMeta::new(base_members()))
    }

    fn written(meta: &RequestMeta) -> Value {
        let mut out = Vec::new();
        meta.write_into(&mut out);
        serde_json::from_slice(&out).unwrap()
    }

    fn shallow(value: &Value) -> ShallowObject<'static> {
        ShallowObject::from_map(value.as_object().unwrap())
    }

    #[test]
    fn r3_vscode_tools_call_meta_keeps_trace_and_vscode_keys_only() {
        let client = shallow(&json!({
            "progressToken": "0b9f2c1e-6a57-4c1d-9a3e-5d7f0c2b8a41",
            "vscode.conversationId": "4f1c9a2e", "vscode.requestId": "request_7d3e",
            "traceparent": "00-4bf9-00f0-01", "tracestate": "vscode=1",
            "vscode.mcp/x": 1, "vscode.with space": 2, "other": 3,
            "io.modelcontextprotocol/protocolVersion": "1999-01-01"
        }));
        let meta = request_meta(&base(), Some("info"), Some(17), Some(&client));
        assert_eq!(
            written(&meta),
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name":"Visual Studio Code","version":"1.141.0"},
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/logLevel": "info",
                "progressToken": 17,
                "vscode.conversationId": "4f1c9a2e", "vscode.requestId": "request_7d3e",
                "traceparent": "00-4bf9-00f0-01", "tracestate": "vscode=1"
            })
        );
    }

    #[test]
    fn r3_without_level_token_or_client_meta_only_the_base_goes() {
        assert_eq!(
            request_meta(&base(), None, None, None),
            RequestMeta::shared_only(&base())
        );
        assert_eq!(
            written(&request_meta(&base(), None, None, None)),
            Value::Object(base_members())
        );
        assert_eq!(
            written(&RequestMeta::shared_only(&base())),
            Value::Object(base_members())
        );
    }

    #[test]
    fn the_own_keys_alone_are_one_object() {
        let empty = Arc::new(SharedMeta::new(Object::new()));
        let meta = request_meta(&empty, Some("debug"), Some(0), None);
        assert_eq!(
            written(&meta),
            json!({"io.modelcontextprotocol/logLevel": "debug", "progressToken": 0})
        );
        assert_eq!(written(&RequestMeta::shared_only(&empty)), json!({}));
    }

    #[test]
    fn c3_zero_is_a_progress_token_and_null_is_not() {
        let token = |m: Value| client_progress_token(Some(&shallow(&m)));
        assert_eq!(token(json!({"progressToken": 0})), Some(json!(0)));
        assert_eq!(token(json!({"progressToken": -1.5})), Some(json!(-1.5)));
        assert_eq!(token(json!({"progressToken": "t"})), Some(json!("t")));
        assert_eq!(token(json!({"progressToken": null})), None);
        assert_eq!(token(json!({"progressToken": {}})), None);
        assert_eq!(token(json!({"progressToken": [1]})), None);
        assert_eq!(token(json!({})), None);
        assert_eq!(client_progress_token(None), None);
    }

    #[test]
    fn meta_keys_follow_the_naming_rules() {
        assert!(passes_upstream("vscode.requestId"));
        assert!(passes_upstream("vscode.example/thing"));
        assert!(!passes_upstream("vscode.mcp/thing"));
        assert!(!passes_upstream("vscode."));
        assert!(!passes_upstream("vscode.x-"));
        assert!(!passes_upstream("baggage"));
    }
}
