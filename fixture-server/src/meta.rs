//! The per-request `_meta` of MCP 2026-07-28 (basic/index.mdx §`_meta`).
//!
//! No handshake exists: every request carries its protocol version and the client
//! capabilities for that request, and the server must not take them from earlier
//! requests. [`check`] reads them, and answers the errors of the specification:
//! -32602 when a required key is missing or malformed, -32022 for a protocol version the
//! fixture does not support. [`ClientCaps::require`] gives -32021 when a request needs an
//! input kind that the request did not declare.

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value, json};

/// The only protocol revision of the fixture.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The `supportedVersions` of `server/discover` and of the -32022 error.
pub const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];

const KEY_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const KEY_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const KEY_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const KEY_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const KEY_PROGRESS: &str = "progressToken";

/// The syslog severities of `notifications/message`, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    pub fn parse(text: &str) -> Option<LogLevel> {
        Self::ALL.into_iter().find(|level| level.as_str() == text)
    }
}

/// What a request declared in `io.modelcontextprotocol/clientCapabilities`, as far as
/// the fixture asks for input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCaps {
    pub elicitation_form: bool,
    pub elicitation_url: bool,
    pub sampling: bool,
    pub sampling_tools: bool,
    pub roots: bool,
}

/// An input kind that the fixture may put in `inputRequests`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    ElicitationForm,
    ElicitationUrl,
    Sampling,
    SamplingTools,
    Roots,
}

impl ClientCaps {
    /// -32021 `MissingRequiredClientCapabilityError` unless the request declared every
    /// kind of `needs`; `data.requiredCapabilities` lists the missing ones as a
    /// `ClientCapabilities` object.
    pub fn require(&self, needs: &[Need]) -> Result<(), ErrorData> {
        let mut required = Map::new();
        let mut names = Vec::new();
        for need in needs {
            let (have, name, group, member) = match need {
                Need::ElicitationForm => (
                    self.elicitation_form,
                    "elicitation.form",
                    "elicitation",
                    Some("form"),
                ),
                Need::ElicitationUrl => (
                    self.elicitation_url,
                    "elicitation.url",
                    "elicitation",
                    Some("url"),
                ),
                Need::Sampling => (self.sampling, "sampling", "sampling", None),
                Need::SamplingTools => (
                    self.sampling_tools,
                    "sampling.tools",
                    "sampling",
                    Some("tools"),
                ),
                Need::Roots => (self.roots, "roots", "roots", None),
            };
            if have || names.contains(&name) {
                continue;
            }
            names.push(name);
            let entry = required
                .entry(group)
                .or_insert_with(|| Value::Object(Map::new()));
            if let (Some(member), Value::Object(entry)) = (member, entry) {
                entry.insert(member.into(), json!({}));
            }
        }
        if names.is_empty() {
            return Ok(());
        }
        Err(ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "The request needs client capabilities that it did not declare: {}.",
                names.join(", ")
            ),
            Some(json!({"requiredCapabilities": required})),
        ))
    }
}

/// The checked `_meta` of one request.
#[derive(Clone, Debug)]
pub struct RequestMeta {
    pub client: ClientCaps,
    /// `None`: the server must not send `notifications/message` for the request.
    pub log_level: Option<LogLevel>,
    /// A string or an integer; `None`: no `notifications/progress`.
    pub progress_token: Option<Value>,
}

fn invalid(message: impl Into<String>) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_PARAMS, message.into(), None)
}

/// Reads and checks the `_meta` of a request's params.
///
/// Order of the checks: presence of the two required keys (-32602), then the version
/// (-32022; the other keys may have another shape in another version), then the shape
/// of every key the fixture reads (-32602).
pub fn check(params: Option<&Map<String, Value>>) -> Result<RequestMeta, ErrorData> {
    let meta = match params.and_then(|params| params.get("_meta")) {
        Some(Value::Object(meta)) => meta,
        Some(_) => return Err(invalid("The _meta of the request must be an object.")),
        None => {
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                "The request has no params._meta: every request of MCP 2026-07-28 needs \
                 io.modelcontextprotocol/protocolVersion and \
                 io.modelcontextprotocol/clientCapabilities in params._meta.",
                Some(json!({"missing": [KEY_VERSION, KEY_CAPABILITIES]})),
            ));
        }
    };
    let missing: Vec<&str> = [KEY_VERSION, KEY_CAPABILITIES]
        .into_iter()
        .filter(|key| !meta.contains_key(*key))
        .collect();
    if !missing.is_empty() {
        return Err(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "The _meta of the request has no {}.",
                missing.join(" and no ")
            ),
            Some(json!({"missing": missing})),
        ));
    }
    let version = match meta.get(KEY_VERSION) {
        Some(Value::String(version)) => version,
        _ => return Err(invalid(format!("{KEY_VERSION} must be a string."))),
    };
    if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
        return Err(ErrorData::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "The server does not support the protocol version {version}; it supports {}.",
                SUPPORTED_VERSIONS.join(", ")
            ),
            Some(json!({"supported": SUPPORTED_VERSIONS, "requested": version})),
        ));
    }
    let client = client_caps(meta.get(KEY_CAPABILITIES))?;
    if let Some(info) = meta.get(KEY_CLIENT_INFO) {
        let valid = info.as_object().is_some_and(|info| {
            info.get("name").is_some_and(Value::is_string)
                && info.get("version").is_some_and(Value::is_string)
        });
        if !valid {
            return Err(invalid(format!(
                "{KEY_CLIENT_INFO} must be an object with the strings name and version."
            )));
        }
    }
    let log_level = match meta.get(KEY_LOG_LEVEL) {
        None => None,
        Some(Value::String(text)) => Some(LogLevel::parse(text).ok_or_else(|| {
            invalid(format!(
                "{KEY_LOG_LEVEL} \"{text}\" is not a log level (debug, info, notice, warning, \
                 error, critical, alert, emergency)."
            ))
        })?),
        Some(_) => return Err(invalid(format!("{KEY_LOG_LEVEL} must be a string."))),
    };
    let progress_token = match meta.get(KEY_PROGRESS) {
        None => None,
        Some(token @ Value::String(_)) => Some(token.clone()),
        Some(token @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(token.clone()),
        Some(_) => {
            return Err(invalid(
                "The progressToken of the request must be a string or an integer.",
            ));
        }
    };
    Ok(RequestMeta {
        client,
        log_level,
        progress_token,
    })
}

/// Checks the shape of `ClientCapabilities` (every capability is an object) and reads
/// the input kinds. `elicitation: {}` means form mode only (client/elicitation.mdx).
fn client_caps(value: Option<&Value>) -> Result<ClientCaps, ErrorData> {
    let bad = || {
        invalid(format!(
            "{KEY_CAPABILITIES} is not a valid ClientCapabilities object."
        ))
    };
    let caps = value.and_then(Value::as_object).ok_or_else(bad)?;
    let object = |value: Option<&Value>| -> Result<Option<Map<String, Value>>, ErrorData> {
        match value {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(map.clone())),
            Some(_) => Err(bad()),
        }
    };
    let elicitation = object(caps.get("elicitation"))?;
    let sampling = object(caps.get("sampling"))?;
    let roots = object(caps.get("roots"))?;
    for group in [&elicitation, &sampling].into_iter().flatten() {
        for member in ["form", "url", "tools", "context"] {
            object(group.get(member))?;
        }
    }
    for group in ["experimental", "extensions"] {
        if let Some(map) = object(caps.get(group))?
            && map.values().any(|value| !value.is_object())
        {
            return Err(bad());
        }
    }
    let (form, url) = match &elicitation {
        None => (false, false),
        Some(e) if e.get("form").is_none() && e.get("url").is_none() => (true, false),
        Some(e) => (e.contains_key("form"), e.contains_key("url")),
    };
    Ok(ClientCaps {
        elicitation_form: form,
        elicitation_url: url,
        sampling: sampling.is_some(),
        sampling_tools: sampling.as_ref().is_some_and(|s| s.contains_key("tools")),
        roots: roots.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        let mut params = Map::new();
        params.insert("_meta".into(), meta);
        params
    }

    fn code(meta: Value) -> ErrorCode {
        match check(Some(&params(meta))) {
            Err(error) => error.code,
            Ok(meta) => panic!("accepted: {meta:?}"),
        }
    }

    #[test]
    fn missing_keys_are_invalid_params() {
        assert_eq!(
            check(None).map(|_| ()).unwrap_err().code,
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            code(json!({KEY_VERSION: "2026-07-28"})),
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            code(json!({KEY_CAPABILITIES: {}})),
            ErrorCode::INVALID_PARAMS
        );
    }

    #[test]
    fn another_version_is_unsupported() {
        let error = check(Some(&params(
            json!({KEY_VERSION: "2025-11-25", KEY_CAPABILITIES: {}}),
        )))
        .unwrap_err();
        assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
        );
    }

    #[test]
    fn malformed_values_are_invalid_params() {
        let base = |key: &str, value: Value| {
            let mut meta = json!({KEY_VERSION: "2026-07-28", KEY_CAPABILITIES: {}});
            meta[key] = value;
            code(meta)
        };
        assert_eq!(
            base(KEY_LOG_LEVEL, json!("banana")),
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(base(KEY_PROGRESS, json!(1.5)), ErrorCode::INVALID_PARAMS);
        assert_eq!(
            base(KEY_CAPABILITIES, json!({"roots": true})),
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            base(KEY_CLIENT_INFO, json!({"name": "x"})),
            ErrorCode::INVALID_PARAMS
        );
    }

    #[test]
    fn an_empty_elicitation_object_means_form_only() {
        let meta = check(Some(&params(json!({
            KEY_VERSION: "2026-07-28",
            KEY_CAPABILITIES: {"elicitation": {}, "sampling": {"tools": {}}},
            KEY_LOG_LEVEL: "warning",
            KEY_PROGRESS: 0
        }))))
        .unwrap();
        assert!(meta.client.elicitation_form && !meta.client.elicitation_url);
        assert!(meta.client.sampling_tools && !meta.client.roots);
        assert_eq!(meta.log_level, Some(LogLevel::Warning));
        assert_eq!(meta.progress_token, Some(json!(0)));
    }

    #[test]
    fn missing_capabilities_are_listed_once() {
        let error = ClientCaps::default()
            .require(&[
                Need::ElicitationForm,
                Need::Roots,
                Need::ElicitationUrl,
                Need::Roots,
            ])
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            error.data,
            Some(
                json!({"requiredCapabilities": {"elicitation": {"form": {}, "url": {}}, "roots": {}}})
            )
        );
    }
}
