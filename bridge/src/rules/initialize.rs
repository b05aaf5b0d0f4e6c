//! The initialize result that VS Code gets, made from the discover result (R1, O10, O11).

use super::capabilities::initialize_capabilities;
use super::results::{ResultKind, result_kind};
use super::{CLIENT_PROTOCOL_VERSION, SERVER_INFO_KEY, UPSTREAM_PROTOCOL_VERSION};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The members of `Implementation` that VS Code reads (O10).
const SERVER_INFO_MEMBERS: [&str; 6] = [
    "name",
    "title",
    "version",
    "icons",
    "description",
    "websiteUrl",
];

/// The identity of the bridge when the upstream server sends none (R1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FallbackIdentity {
    pub name: String,
    pub version: String,
}

/// The fallback name (R1, M4): `--name`, else the default name of the upstream
/// target (the file name of the command without its extension, or the host of the
/// URL). VS Code makes the ids of the tools from this name.
pub fn fallback_name(name_option: Option<&str>, target_name: Option<String>) -> String {
    if let Some(name) = name_option.filter(|name| !name.is_empty()) {
        return name.to_owned();
    }
    target_name
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "mcp-bridge-vscode".to_owned())
}

/// A discover result that the bridge can use (R1): complete, and for revision
/// 2026-07-28.
pub fn check_discover(result: &Object) -> Result<(), DiscoverRefusal> {
    match result_kind(result) {
        ResultKind::Complete => {}
        ResultKind::InputRequired => return Err(DiscoverRefusal::AskedForInput),
        ResultKind::Unknown(kind) => return Err(DiscoverRefusal::UnknownResultType(kind)),
    }
    match result.get("supportedVersions").and_then(Value::as_array) {
        None => Err(DiscoverRefusal::NoVersions),
        Some(versions) if versions.iter().any(|v| v == UPSTREAM_PROTOCOL_VERSION) => Ok(()),
        Some(versions) => Err(DiscoverRefusal::OtherVersions(
            versions
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}

/// Why a discover result is of no use: the `discover_failed` detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoverRefusal {
    #[error("the upstream server asked for input in answer to server/discover")]
    AskedForInput,
    #[error("the discover result has the resultType {0}")]
    UnknownResultType(String),
    #[error("the discover result has no supportedVersions")]
    NoVersions,
    #[error("the upstream server supports only the revisions {0}")]
    OtherVersions(String),
}

/// The initialize result (R1): `protocolVersion` 2025-11-25 (VS Code ignores it),
/// the capabilities of the discover result without tasks (O11), `serverInfo` from the
/// upstream's `_meta` or the fallback, and `instructions` (O10).
pub fn initialize_result(discover: &Object, fallback: &FallbackIdentity) -> Object {
    let none = Object::new();
    let capabilities = initialize_capabilities(
        discover
            .get("capabilities")
            .and_then(Value::as_object)
            .unwrap_or(&none),
    );
    let mut result = Object::new();
    result.insert("protocolVersion".into(), CLIENT_PROTOCOL_VERSION.into());
    result.insert("capabilities".into(), Value::Object(capabilities));
    result.insert(
        "serverInfo".into(),
        Value::Object(server_info(discover, fallback)),
    );
    if let Some(instructions) = discover.get("instructions").filter(|i| i.is_string()) {
        result.insert("instructions".into(), instructions.clone());
    }
    result
}

/// The upstream's `Implementation` when it has a name and a version, with only the
/// members that VS Code reads; else the fallback.
fn server_info(discover: &Object, fallback: &FallbackIdentity) -> Object {
    let upstream = discover
        .get("_meta")
        .and_then(|meta| meta.get(SERVER_INFO_KEY))
        .and_then(Value::as_object)
        .filter(|info| {
            info.get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| !name.is_empty())
                && info.get("version").is_some_and(Value::is_string)
        });
    match upstream {
        Some(info) => SERVER_INFO_MEMBERS
            .iter()
            .filter_map(|&name| info.get(name).map(|value| (name.to_owned(), value.clone())))
            .collect(),
        None => {
            let mut info = Object::new();
            info.insert("name".into(), fallback.name.clone().into());
            info.insert("version".into(), fallback.version.clone().into());
            info
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fallback() -> FallbackIdentity {
        FallbackIdentity {
            name: "my-server".into(),
            version: "0.1.0".into(),
        }
    }

    fn obj(value: Value) -> Object {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn r1_o10_result_from_a_discover_result_with_server_info() {
        let discover = obj(json!({
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "ttlMs": 0, "cacheScope": "public",
            "capabilities": {"tools": {"listChanged": true}, "tasks": {}},
            "instructions": "Use the tools.",
            "_meta": {"io.modelcontextprotocol/serverInfo": {
                "name": "fixture", "title": "Fixture", "version": "1.2.3", "extra": true,
                "icons": [{"src": "data:image/png;base64,AA=="}], "websiteUrl": "https://example.com"}}
        }));
        assert_eq!(
            Value::Object(initialize_result(&discover, &fallback())),
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"logging": {}, "tools": {"listChanged": true}},
                "serverInfo": {"name": "fixture", "title": "Fixture", "version": "1.2.3",
                               "icons": [{"src": "data:image/png;base64,AA=="}], "websiteUrl": "https://example.com"},
                "instructions": "Use the tools."
            })
        );
    }

    #[test]
    fn r1_without_server_info_the_fallback_names_the_server() {
        for discover in [
            json!({"capabilities": {}}),
            json!({"capabilities": {}, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": ""}}}),
            json!({"capabilities": {}, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "x"}}}),
            json!({"_meta": {"io.modelcontextprotocol/serverInfo": "x"}, "instructions": 5}),
        ] {
            let result = initialize_result(&obj(discover), &fallback());
            assert_eq!(
                result["serverInfo"],
                json!({"name": "my-server", "version": "0.1.0"})
            );
            assert_eq!(result["capabilities"], json!({"logging": {}}));
            assert!(!result.contains_key("instructions"));
        }
    }

    #[test]
    fn r1_fallback_name_is_the_option_or_the_name_of_the_target() {
        let target = || Some("bridge-fixture-server".to_owned());
        assert_eq!(fallback_name(Some("demo"), target()), "demo");
        assert_eq!(fallback_name(None, target()), "bridge-fixture-server");
        assert_eq!(fallback_name(Some(""), target()), "bridge-fixture-server");
        assert_eq!(
            fallback_name(None, Some(String::new())),
            "mcp-bridge-vscode"
        );
        assert_eq!(fallback_name(None, None), "mcp-bridge-vscode");
    }
}
